"""Why a request has no feasible training plan, and the smallest change that would give one.

Each change alone, from the screened layouts that fit in memory (see workbook.planner.search):
more days (the fewest days of a layout within budget), more budget (the lowest billed cost of a
layout that meets the deadline), fewer tokens (days and the actual cost scale with the tokens; the
target-days cost does not), another GPU (the catalogue GPUs the request did not list, searched in
full). Each suggestion is confirmed by searching the changed request again.
"""

from __future__ import annotations

import math
from typing import Any

from workbook.planner.request import PlanRequest

#: a suggested value is padded by this much so that rounding in the confirmation cannot undo it
PAD = 1e-6
#: layouts per GPU the confirmation searches pass to the full calculation at most
CONFIRM_TOP = 20


def check_label(check: str) -> str:
    """The workbook's label of a check (workbook.calc.checks)."""
    from workbook.calc.checks import HARD, WARNINGS

    return {n: label for n, label, *_ in HARD + WARNINGS}.get(check, check)


def rejected_summary(res) -> list[dict[str, Any]]:
    """Rejections by check: how many, and the closest miss (smallest relative excess)."""
    by: dict[str, list] = {}
    for r in res.rejections:
        by.setdefault(r.check, []).append(r)
    out = []
    for check, rows in sorted(by.items(), key=lambda kv: -len(kv[1])):
        best = min(rows, key=lambda r: r.excess_frac)
        out.append({"check": check, "label": check_label(check), "count": len(rows), "closest": {
            "gpu": best.gpu, "layout": best.layout, "value": best.value, "limit": best.limit, "unit": best.unit,
            "excess_frac": best.excess_frac, "stage": best.stage}})
    return out


def why_text(why: list[dict[str, Any]]) -> str:
    """One sentence: which checks the layouts failed, how often, and the closest miss of each."""
    if not why:
        return "no layout the constraints allow"
    parts = []
    for row in why:
        c = row["closest"]
        parts.append(f"{row['count']} failed '{row['label']}' (closest: {c['value']:,.6g} {c['unit']} against "
                     f"{c['limit']:,.6g})")
    return "; ".join(parts)


def _candidates(req: PlanRequest, res) -> dict[str, dict[str, float]]:
    fit = [r for r in res.screened if r.fits and math.isfinite(r.days)]
    budget = req.budget_usd
    out: dict[str, dict[str, float]] = {}
    within = [r for r in fit if budget is None or r.cost_usd <= budget]
    if within and min(r.days for r in within) > req.target_days:  # more days (a layout that fails on another
        d = min(r.days for r in within)                         # check at fewer days is no "more days" change)
        out["target_days"] = {"value": d * (1 + PAD), "change_frac": d / req.target_days - 1}
    on_time = [r for r in fit if r.days <= req.target_days]
    if on_time and budget is not None:
        b = min(r.billed_cost_usd for r in on_time)
        out["budget_usd"] = {"value": b * (1 + PAD), "change_frac": b / budget - 1}
    frac = 0.0
    for r in fit:
        if budget is not None and r.cost_target_usd > budget:
            continue
        f = req.target_days / r.days
        if budget is not None:
            f = min(f, budget / r.cost_usd)
        frac = max(frac, f)
    if 0 < frac < 1:
        out["tokens"] = {"value": req.tokens * frac * (1 - PAD), "change_frac": frac - 1}
    return out


def advise(req: PlanRequest, catalog, res, search) -> dict[str, Any]:
    """Why nothing passed, and the changes (each alone) that give a plan, confirmed by ``search``."""
    changes = []
    for fld, c in sorted(_candidates(req, res).items(), key=lambda kv: abs(kv[1]["change_frac"])):
        changed = req.model_copy(update={fld: c["value"]})
        ok = search(changed, catalog, per_gpu_max=CONFIRM_TOP).plans
        changes.append({"field": fld, "from": getattr(req, fld), "to": c["value"], "change_frac": c["change_frac"],
                        "confirmed": bool(ok), "plan": ok[0].scenario.name if ok else None})
    others = [g for g in catalog.gpus if g not in req.candidate_gpus and g in catalog.efficiency
              and catalog.gpu(g).price_usd_per_gpu_hour(req.price_basis)]
    gpu_options = []
    for g in others:
        found = search(req, catalog, gpus=[g], per_gpu_max=CONFIRM_TOP).plans
        if found:
            gpu_options.append({"gpu": g, "plan": found[0].scenario.name, "num_gpus": found[0].screened.layout.num_gpus,
                                "train_days": found[0].q["train_days"], "train_cost_usd": found[0].q["train_cost_usd"]})
    gpu_options.sort(key=lambda x: x["train_cost_usd"])
    confirmed = [c for c in changes if c["confirmed"]]
    why = rejected_summary(res)
    return {"why": why, "why_text": why_text(why), "changes": changes, "other_gpus": gpu_options,
            "smallest_change": confirmed[0] if confirmed else (
                {"field": "candidate_gpus", "to": gpu_options[0]["gpu"]} if gpu_options else None)}


def change_text(change: dict[str, Any] | None) -> str:
    """One change of :func:`advise` in words: "raise the budget to $17,280 (+17,180.0 %)"; a budget rounded up to
    the dollar, a deadline up to a tenth of a day, tokens down to four significant figures (the words still fix it)."""
    if not change:
        return "none found: no single change of the budget, the deadline, the tokens or the GPU gives a plan"
    f, to = change["field"], change.get("to")
    if f == "candidate_gpus":
        return f"plan on another GPU: {to}"
    if f == "tokens":
        to = _down_4g(to)
    what = {"budget_usd": f"raise the budget to ${math.ceil(to):,.0f}",
            "target_days": f"extend the deadline to {math.ceil(to * 10) / 10:,.1f} days",
            "tokens": f"train on fewer tokens: {to:,.4g}"}.get(f, f"{f}: {to:,.6g}")
    frac = change.get("change_frac")
    confirmed = "" if change.get("confirmed", True) else "; not confirmed by searching again"
    return what + (f" ({frac:+.1%}{confirmed})" if frac is not None else "")


def _down_4g(x: float) -> float:
    """*x* rounded down to four significant figures."""
    if x <= 0:
        return x
    scale = 10 ** (math.floor(math.log10(x)) - 3)
    return math.floor(x / scale) * scale
