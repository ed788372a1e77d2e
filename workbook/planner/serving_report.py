"""The serving search's answer as the plan's data (``Outcome.data["serving"]``): the recommended
plan, the best of the other kind (co-located or disaggregated), the best per GPU, the rejections
by check with the closest miss, and for an infeasible load
why nothing carries it and the smallest change that would (a looser TTFT or TPOT target, another
catalogue GPU), each confirmed by searching the changed request again.
"""

from __future__ import annotations

import math
from typing import Any

from workbook.planner.request import PlanRequest
from workbook.planner.serving_search import ServingPlan, ServingResult, search_serving

#: a suggested target grows by this factor until the re-search confirms it (a load just above a
#: trickle may need more replicas than max_gpus allows)
STEP_UP = 1.05
#: tries of a suggestion before it is given up
MAX_TRIES = 80
#: significant digits a suggested target is rounded up to
DIGITS = 3

CHECK_LABELS = {
    "serving_weights_fit": "Weights fit in the engine's memory budget per GPU",
    "serving_kv_holds_request": "KV pool holds one full-context request",
    "serving_load_stable": "Group sustains the smallest load",
    "serving_ttft_target": "TTFT target met at the smallest load",
    "serving_tpot_target": "TPOT target met at the smallest load",
    "serving_max_gpus": "Replicas (disaggregated: both pools) within max_gpus",
    "serving_prefill_weights_fit": "Prefill pool: weights fit in the engine's memory budget per GPU",
    "serving_prefill_kv_holds_prompt": "Prefill pool: KV pool holds one prompt",
}


def plan_data(p: ServingPlan, name: str) -> dict[str, Any]:
    """One serving plan as the report shows it."""
    lay = p.layout
    return {"scenario": name, "gpu": lay.gpu, "engine": lay.engine, "tp": lay.tp, "ep": lay.ep,
            "group_gpus": lay.tp * lay.ep, "replicas": p.replicas, "num_gpus": p.num_gpus, "layout": lay.label(),
            "load_rps": p.load_rps, "group_rate_rps": p.group_rate_rps, "max_group_rate_rps": p.max_group_rate_rps,
            "group_batch": p.group_batch, "max_group_batch": p.max_group_batch, "ttft_ms": p.ttft_ms,
            "tpot_ms": p.tpot_ms, "tokens_per_s": p.tokens_per_s, "gpu_hour_usd": p.gpu_hour_usd,
            "usd_per_month": p.usd_per_month, "usd_per_1M_tokens": p.usd_per_1M_tokens,
            "weights_per_gpu_GiB": p.weights_per_gpu_GiB, "kv_tokens": p.kv_tokens_per_gpu,
            "kv_requests": p.kv_requests, "kind": p.kind, "prefill_ep": lay.prefill_ep, "static_wall_s": p.static_wall_s,
            **pools_data(p)}


def pools_data(p: ServingPlan) -> dict[str, Any]:
    """A disaggregated plan's two pools (size_pools); None for a co-located plan. ``replicas`` of a
    disaggregated plan are its decode instances, ``group_*`` figures per decode instance."""
    r = p.pools or {}
    keys = {"prefill_instances": "prefill_instances", "prefill_gpus": "prefill_gpus",
            "prefill_gpus_per_instance": "prefill_gpus_per_instance", "prefill_busy_frac": "prefill_busy_frac",
            "decode_instances": "decode_instances", "decode_gpus": "decode_gpus",
            "decode_gpus_per_instance": "decode_gpus_per_instance", "decode_batch_per_rank": "decode_batch_per_rank"}
    return {k: r.get(v) for k, v in keys.items()}


def rejected_data(res: ServingResult) -> list[dict[str, Any]]:
    """Rejections by check: how many, and the closest miss (smallest relative excess)."""
    by: dict[str, list] = {}
    for r in res.rejections:
        by.setdefault(r.check, []).append(r)
    out = []
    for check, rows in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        best = min(rows, key=lambda r: (r.excess_frac, r.layout))
        out.append({"check": check, "label": CHECK_LABELS[check], "count": len(rows), "closest": {
            "gpu": best.gpu, "layout": best.layout, "value": best.value, "limit": best.limit, "unit": best.unit,
            "excess_frac": best.excess_frac, "detail": best.detail}})
    return out


def _round_up(x: float) -> float:
    e = math.floor(math.log10(x)) - (DIGITS - 1)
    return round(math.ceil(x / 10 ** e - 1e-9) * 10 ** e, max(0, -e))


def _changed(req: PlanRequest, **serving) -> PlanRequest:
    return req.model_copy(update={"serving": req.serving.model_copy(update=serving)})


def _confirm(req: PlanRequest, catalog, field: str, start: float) -> dict[str, Any] | None:
    """The smallest rounded value of ``field`` from ``start`` up whose re-search gives a plan."""
    v = _round_up(start)
    for _ in range(MAX_TRIES):
        res = search_serving(_changed(req, **{field: v}), catalog)
        if res.plans:
            best = res.plans[0]
            return {"field": f"serving.{field}", "from": getattr(req.serving, field), "to": v,
                    "gpu": best.layout.gpu, "layout": best.layout.label(), "replicas": best.replicas,
                    "num_gpus": best.num_gpus, "usd_per_month": best.usd_per_month, "confirmed": True}
        v = _round_up(v * STEP_UP)
    return None


def advise(req: PlanRequest, catalog, res: ServingResult) -> dict[str, Any]:
    """Why no layout carries the load, and the smallest changes that would."""
    sv = req.serving
    target = [r for r in res.rejections if r.ttft_ms is not None]
    changes = []
    ttft_floor = [r.ttft_ms for r in target if r.tpot_ms <= sv.tpot_ms]
    if ttft_floor:
        got = _confirm(req, catalog, "ttft_ms", min(ttft_floor))
        if got:
            changes.append(got)
    tpot_floor = [r.tpot_ms for r in target if r.ttft_ms <= sv.ttft_ms]
    if tpot_floor:
        got = _confirm(req, catalog, "tpot_ms", min(tpot_floor))
        if got:
            changes.append(got)
    other = []
    for gid in sorted(catalog.gpus):
        if gid in req.candidate_gpus or gid not in catalog.efficiency:
            continue
        if req.gpu_hour_usd is None and catalog.gpu(gid).price_usd_per_gpu_hour(req.price_basis) is None:
            continue
        alt = search_serving(req, catalog, gpus=[gid])
        if alt.plans:
            p = alt.plans[0]
            other.append({"gpu": gid, "layout": p.layout.label(), "replicas": p.replicas, "num_gpus": p.num_gpus,
                          "usd_per_month": p.usd_per_month, "usd_per_1M_tokens": p.usd_per_1M_tokens})
    other.sort(key=lambda o: (o["usd_per_month"], o["gpu"]))
    return {"why": rejected_data(res), "changes": changes, "other_gpus": other}


def serving_data(req: PlanRequest, catalog, res: ServingResult, names: dict[int, str]) -> dict[str, Any]:
    """``Outcome.data["serving"]``; ``names`` maps id(plan) to its workbook column name."""
    from workbook.planner.serving_search import engine_id

    data: dict[str, Any] = {
        "status": "feasible" if res.plans else "infeasible", "load": req.serving.model_dump(),
        "engine": engine_id(req), "disaggregation": req.serving.disaggregation,
        "search": {"layouts": res.layouts, "disaggregated": res.disaggregated, "plans": len(res.plans),
                   "rejected": len(res.rejections),
                   "layout_rules": {k: {"count": v[0], "example": v[1]} for k, v in res.removed.items()}},
        "rejected": rejected_data(res), "recommended": None, "other_kind": None, "alternatives": {}}
    if res.plans:
        best, rec = res.best_per_gpu(), res.plans[0]
        data["recommended"] = plan_data(rec, names.get(id(rec), ""))
        other = other_kind(req, res)
        data["other_kind"] = plan_data(other, names.get(id(other), "")) if other else None
        data["alternatives"] = {g: plan_data(best[g], names.get(id(best[g]), "")) if g in best else None
                                for g in req.candidate_gpus if g != rec.layout.gpu}
    else:
        data["infeasible"] = advise(req, catalog, res)
    return data


def other_kind(req: PlanRequest, res: ServingResult) -> ServingPlan | None:
    """The best plan of the kind the recommended plan is not (None when the search sized only one
    kind, ``serving.disaggregation`` off or only, or none of the other kind carries the load)."""
    if not res.plans or req.serving.disaggregation != "auto":
        return None
    rec = res.plans[0]
    return res.best_of_kind("co-located" if rec.layout.disaggregated else "disaggregated")


def plans_for_book(req: PlanRequest, res: ServingResult) -> list[ServingPlan]:
    """The workbook's serving columns: the recommended plan, the best of the other kind, then the
    best of every other GPU."""
    if not res.plans:
        return []
    best = res.best_per_gpu()
    rec = res.plans[0]
    out = [rec, other_kind(req, res)] + [best[g] for g in req.candidate_gpus if g in best and g != rec.layout.gpu]
    return list({id(p): p for p in out if p is not None}.values())  # the other kind may be another GPU's best


__all__ = ["serving_data", "plans_for_book", "other_kind", "plan_data", "pools_data", "rejected_data", "advise", "CHECK_LABELS"]
