"""Every catalogue GPU against the recommended plan: its best plan, or why it has none, and what it rests on.

A request with ``compare_priced_gpus: true`` also searches every catalogue GPU that is priced for its basis
and is not a candidate (issue 25: procurement compares H100, H200, B200, GB200, MI300X, ... on one basis). Each
row says why the GPU lost: dearer than the recommendation, no layout passing a check (the commonest failure
and its closest miss), not priced for the basis, or cheaper but not among the request's candidates; and how
many of the catalogue values its plan uses are estimates or assumptions (workbook.catalog.provenance).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable, Optional

from workbook.catalog.provenance import provenance_flags
from workbook.planner.advice import rejected_summary


def _priced(req, catalog, gid: str) -> bool:
    return bool(req.gpu_hour_usd or catalog.gpu(gid).price_usd_per_gpu_hour(req.price_basis))


def _why_none(res, gid: str) -> str:
    rows = rejected_summary(SimpleNamespace(rejections=[r for r in res.rejections if r.gpu == gid]))
    if not rows:
        return "no layout the request's constraints allow"
    calc = [r for r in rows if r["closest"]["stage"] == "calc"] or rows
    top = calc[0]
    c = top["closest"]
    return (f"no layout passes '{top['label']}' ({top['count']:,} layouts; closest {c['value']:,.6g} {c['unit']} "
            f"against {c['limit']:,.6g})")


def _flags(catalog, gid: str, model_id: Optional[str], basis: str) -> dict[str, Any]:
    flags = provenance_flags(catalog, gid, model_id, basis)
    return {"count": len(flags), "fields": [f"{f.record}:{f.field}" for f in flags]}


def compare_gpus(req, catalog, res, recommended: Optional[dict], search_fn: Callable,
                 plan_summary: Callable) -> list[dict[str, Any]]:
    """One row per catalogue GPU (candidates from ``res``, the others searched here), recommended first."""
    model_id = req.model if isinstance(req.model, str) else None
    others = [g for g in catalog.gpus if g not in req.candidate_gpus and g in catalog.efficiency
              and _priced(req, catalog, g)]
    extra = search_fn(req, catalog, gpus=others) if others else None
    rec_cost = recommended["train_cost_usd"] if recommended else None
    rows = []
    for gid in catalog.gpus:
        src = res if gid in req.candidate_gpus else extra
        row: dict[str, Any] = {"gpu": gid, "candidate": gid in req.candidate_gpus, "plan": None}
        if gid not in catalog.efficiency:
            row["why"] = "no efficiency record (catalog/efficiency.yaml): not searched"
        elif not _priced(req, catalog, gid):
            row["why"] = f"not priced for {req.price_basis} in the catalogue: not searched"
        else:
            row["rests_on"] = _flags(catalog, gid, model_id, req.price_basis)
            best = src.best_per_gpu().get(gid) if src is not None else None
            if best is None:
                row["why"] = _why_none(src, gid)
            else:
                p = row["plan"] = plan_summary(best, req)
                row["why"] = _verdict(p, recommended, rec_cost, row["candidate"])
        rows.append(row)
    rows.sort(key=lambda r: (r["plan"] is None, r["plan"]["train_cost_usd"] if r["plan"] else 0))
    return rows


def _verdict(p: dict, recommended: Optional[dict], rec_cost: Optional[float], candidate: bool) -> str:
    if recommended is None or rec_cost is None:
        return "passes every check (no candidate GPU has a plan)"
    if p["scenario"] == recommended["scenario"]:
        return "recommended"
    diff = p["train_cost_usd"] / rec_cost - 1
    if diff >= 0:
        return f"dearer: {diff * 100:+.1f} % of the recommended plan's cost"
    why = "is a candidate but ranks lower" if candidate else "not among the request's candidate_gpus"
    return f"cheaper by {-diff * 100:.1f} %, {why}: add it to candidate_gpus to plan on it"


def report_lines(rows: list[dict[str, Any]], basis: str) -> list[str]:
    """The comparison as terminal lines (workbook plan)."""
    priced = sum(1 for r in rows if r["plan"] is not None or "rests_on" in r)
    out = [f"Compared with every catalogue GPU ({priced} priced for {basis}):"]
    for r in rows:
        p = r["plan"]
        head = (f"{r['gpu']} x {p['num_gpus']}: ${p['train_cost_usd']:,.0f}, {p['train_days']:.2f} days"
                if p else r["gpu"])
        rests = r.get("rests_on")
        tail = f"; rests on {rests['count']} estimated or assumed catalogue values" if rests and rests["count"] else ""
        out.append(f"  {head}: {r['why']}{tail}")
    return out
