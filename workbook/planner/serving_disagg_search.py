"""Disaggregated candidates of the serving search: separate prefill and decode pools per GPU
(docs/planner.md "Disaggregated candidates"; docs/serving.md "Disaggregated serving").

A candidate is a decode layout (TP x EP, one of ``serving_search.layouts``) and a prefill EP (one
of ``serving_search.ep_choices`` at the same TP, laid out by the same rules). The two pools are sized
by ``reference.serving_disagg.size_pools`` with the keywords the Inference sheet's disaggregated
block (``calc.serving_disagg``) gives it: the decode pool runs the largest whole batch per DP rank
within the TPOT target capped by the rank's KV pool (``serving_load.batch_capacity``, at least 1),
the prefill pool has whole instances for the load, at a busy share whose queue (Pollaczek–Khinchine)
keeps the TTFT within the target; GPUs = both pools, priced as the co-located
candidates are. A concurrency load is carried at the rate that keeps that many requests decoding
(Little's law over the decode pool: rate = concurrency / ((O - 1) x TPOT)).

Checks, each with its value, limit and relative excess, in this order: the decode layout's weights
fit and its KV pool holds one full-context request, one request meets the TPOT target (once per
decode layout); the prefill layout's weights fit and its KV pool holds one prompt, one prefill
step is shorter than the TTFT target (once per prefill layout); both pools within ``max_gpus`` (per candidate).
"""

from __future__ import annotations

from workbook.planner.request import PlanRequest
from workbook.planner.serving_search import (HOURS_PER_MONTH, Group, ServingLayout, ServingPlan, ServingRejection,
                                             ServingResult, weights_room_GiB, ep_choices, group_rule)
from workbook.reference import decode_time as dt
from workbook.reference import infer_cost as ic
from workbook.reference import serving_disagg as sd
from workbook.reference import serving_load as sl
from workbook.units import MS_PER_S


def _reject(gpu: str, label: str, check: str, value: float, limit: float, unit: str, detail: str,
            **targets: float) -> ServingRejection:
    """A rejection; a target miss also gives both figures for the advice (serving_report.advise), the
    other pool's as 0: a decode pool's TPOT does not depend on the TTFT target, nor the prefill's TTFT
    on the TPOT target."""
    r = ServingRejection(gpu, label, check, value, limit, unit, detail=detail)
    r.ttft_ms, r.tpot_ms = targets.get("ttft_ms"), targets.get("tpot_ms")
    return r


class Decode:
    """A decode layout: its group (KV cap per DP rank) or the check it fails."""

    def __init__(self, req: PlanRequest, lay: ServingLayout, catalog, fields: dict):
        self.lay, self.g = lay, Group(req, lay, catalog, fields)
        self.cap = max(self.g.batch_cap, 1.0)
        self.rejection = self._check(req)

    def _check(self, req: PlanRequest) -> ServingRejection | None:
        g, sv, lay = self.g, req.serving, self.lay
        label = f"{lay.gpu} decode TP{lay.tp}" + (f" EP{lay.ep}" if lay.ep > 1 else "") + f" ({lay.engine})"
        if g.cap["kv_budget_GiB"] <= 0:
            return _reject(lay.gpu, label, "serving_weights_fit", g.cap["weights_GiB"], weights_room_GiB(g), "GiB",
                           "decode pool: weights per GPU against the room the engine's memory rule leaves them")
        if g.cap["concurrent_requests"] < 1:
            return _reject(lay.gpu, label, "serving_kv_holds_request", sv.prompt_tokens + sv.output_tokens,
                           g.cap["kv_tokens"], "tokens", "decode pool: one full-context request against the KV pool")
        kw = {k: v for k, v in g.kw.items() if k in ("tp", "ep", "ep_nodes", "redundant_experts", "weight_precision",
                                                    "kv_precision", "ep_overlap_frac")}
        ctx = sl.running_context_tokens(prompt_tokens=g.prompt, output_tokens=g.output,
                                        output_lengths=g.kw["output_lengths"])
        one = dt.decode_step(g.shape, batch=1.0, context_tokens=ctx, hw=g.kw["hw"],
                             engine=g.engine, **kw)["tpot_s"] * MS_PER_S
        if one > sv.tpot_ms:
            return _reject(lay.gpu, label, "serving_tpot_target", one, sv.tpot_ms, "ms",
                           "decode pool: TPOT of one request (no prefill interference)", tpot_ms=one, ttft_ms=0.0)
        return None


class Prefill:
    """A prefill layout (TP x prefill EP): its TTFT or the check it fails."""

    def __init__(self, req: PlanRequest, gpu: str, tp: int, ep: int, engine: str, catalog, fields: dict):
        self.lay = ServingLayout(gpu, tp, ep, engine)
        self.g = Group(req, self.lay, catalog, fields)
        self.rejection = self._check(req)

    def _check(self, req: PlanRequest) -> ServingRejection | None:
        g, sv, lay = self.g, req.serving, self.lay
        label = f"{lay.gpu} prefill TP{lay.tp}" + (f" EP{lay.ep}" if lay.ep > 1 else "") + f" ({lay.engine})"
        if g.cap["kv_budget_GiB"] <= 0:
            return _reject(lay.gpu, label, "serving_prefill_weights_fit", g.cap["weights_GiB"], weights_room_GiB(g),
                           "GiB", "prefill pool: weights per GPU against the room the engine's memory rule leaves them")
        if g.cap["kv_tokens"] < sv.prompt_tokens:
            return _reject(lay.gpu, label, "serving_prefill_kv_holds_prompt", sv.prompt_tokens, g.cap["kv_tokens"],
                           "tokens", "prefill pool: one prompt against the KV pool per GPU")
        pf = sd.prefill_pool_rate(g.shape, hw=g.kw["hw"], engine=g.engine, prompt_tokens=g.prompt, tp=lay.tp,
                                  ep=lay.ep, redundant_experts=g.kw["redundant_experts"],
                                  weight_precision=g.kw["weight_precision"], ep_overlap_frac=g.kw["ep_overlap_frac"])
        ttft = pf["prefill_s"] * MS_PER_S
        if sd.ttft_slack(step_s=pf["prefill_s"], ttft_target_s=sv.ttft_ms / MS_PER_S) <= 0:
            return _reject(lay.gpu, label, "serving_ttft_target", ttft, sv.ttft_ms, "ms",
                           "prefill pool: one prefill step, before any queue (the pool is sized so that the step "
                           "plus the queue's wait meets the target)", ttft_ms=ttft, tpot_ms=0.0)
        return None


def pools(req: PlanRequest, d: Decode, p: Prefill, rate_rps: float | None) -> dict[str, float]:
    """serving_disagg.size_pools of the candidate, with calc.serving_disagg's keywords."""
    g, sv = d.g, req.serving
    return sd.size_pools(g.shape, hw=g.kw["hw"], engine=g.engine, arrival_rate_per_s=rate_rps,
                         prompt_tokens=g.prompt, output_tokens=g.output, decode_batch_cap=d.cap,
                         tpot_target_s=sv.tpot_ms / MS_PER_S, ttft_target_s=sv.ttft_ms / MS_PER_S,
                         cache_hit_frac=0.0, tp=d.lay.tp, ep=d.lay.ep,
                         prefill_ep=p.lay.ep, redundant_experts=g.kw["redundant_experts"],
                         weight_precision=g.kw["weight_precision"], kv_precision=g.kw["kv_precision"],
                         ep_overlap_frac=g.kw["ep_overlap_frac"], gpu_hour_usd=float(g.ctx.s.cost.gpu_hour_usd),
                         refinements=sd.DEFAULT_REFINEMENTS, output_lengths=g.kw["output_lengths"])


def load_rate(req: PlanRequest, d: Decode, p: Prefill) -> float:
    """The arrival rate the pools carry: the request's, or the rate that keeps ``concurrency``
    requests decoding at the pool's TPOT."""
    sv = req.serving
    if sv.requests_per_s is not None:
        return float(sv.requests_per_s)
    tpot = pools(req, d, p, None)["tpot_s"]
    return sv.concurrency / (max(sv.output_tokens - 1.0, 1.0) * tpot)


def evaluate_disaggregated(req: PlanRequest, d: Decode, p: Prefill) -> ServingPlan | ServingRejection:
    """One (decode layout, prefill EP) candidate whose layouts pass: a plan, or the max_gpus rejection."""
    lay = ServingLayout(d.lay.gpu, d.lay.tp, d.lay.ep, d.lay.engine, prefill_ep=p.lay.ep)
    rate = load_rate(req, d, p)
    r = pools(req, d, p, rate)
    n = int(r["total_gpus"])
    if n > req.constraints.max_gpus:
        return ServingRejection(lay.gpu, lay.label(), "serving_max_gpus", n, req.constraints.max_gpus, "GPUs",
                                detail=f"{r['prefill_instances']:.0f} prefill instances of {p.lay.tp * p.lay.ep} GPUs "
                                       f"+ {r['decode_instances']:.0f} decode instances of {d.lay.tp * d.lay.ep}")
    price = float(d.g.ctx.s.cost.gpu_hour_usd)
    tok = r["output_tokens_per_s"]
    n_d = r["decode_instances"]
    per_instance_rate = r["decode_requests_per_instance"] / (max(req.serving.output_tokens - 1.0, 1.0) * r["tpot_s"])
    return ServingPlan(
        layout=lay, replicas=int(n_d), num_gpus=n, load_rps=rate, group_rate_rps=rate / n_d,
        max_group_rate_rps=per_instance_rate, group_batch=r["decode_concurrency"] / n_d,
        max_group_batch=r["decode_requests_per_instance"], ttft_ms=r["ttft_s"] * MS_PER_S,
        tpot_ms=r["tpot_s"] * MS_PER_S, tokens_per_s=tok, gpu_hour_usd=price,
        usd_per_month=ic.hourly_cost_usd(num_gpus=n, gpu_hour_usd=price) * HOURS_PER_MONTH,
        usd_per_1M_tokens=ic.cost_per_1M_tokens_usd(num_gpus=n, gpu_hour_usd=price, throughput_tok_per_s=tok),
        weights_per_gpu_GiB=d.g.cap["weights_GiB"], kv_tokens_per_gpu=d.g.cap["kv_tokens"],
        kv_requests=d.g.cap["concurrent_requests"], pools=r)


def search_disaggregated(req: PlanRequest, model, lays: list[ServingLayout], catalog, fields: dict,
                         res: ServingResult) -> None:
    """Every (decode layout of ``lays``, prefill EP) candidate of one GPU into ``res``: plans, and the
    rejections of the decode layouts, the prefill layouts and the candidates."""
    if not lays:
        return
    gpu = catalog.gpu(lays[0].gpu)
    prefills: dict[tuple[int, int], Prefill] = {}
    for tp in sorted({lay.tp for lay in lays}):
        for ep in ep_choices(req, model, gpu):
            if group_rule(req, gpu, tp, ep) is None:
                pf = prefills[tp, ep] = Prefill(req, gpu.id, tp, ep, lays[0].engine, catalog, fields)
                if pf.rejection:
                    res.rejections.append(pf.rejection)
    for lay in lays:
        d = Decode(req, lay, catalog, fields)
        mine = [p for (tp, _), p in sorted(prefills.items()) if tp == lay.tp]
        res.disaggregated += len(mine)
        if d.rejection:
            res.rejections.append(d.rejection)
            continue
        for p in mine:
            if p.rejection is None:
                got = evaluate_disaggregated(req, d, p)
                (res.plans if isinstance(got, ServingPlan) else res.rejections).append(got)


__all__ = ["search_disaggregated", "evaluate_disaggregated", "pools", "load_rate", "Decode", "Prefill"]
