"""A plan request answered: the early estimate, the training search, its recommendation and
alternatives, and the serving status, as one JSON-able dict plus the scenarios of the plan workbook.

``Outcome.data`` is what ``workbook plan --json`` prints and what the later Recommendation,
Sensitivity and PDF steps read (``data["training"]["recommended"]`` and friends);
``Outcome.scenarios`` are the plan workbook's columns (recommended first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbook import __version__
from workbook.errors import InputError
from workbook.calc import compute
from workbook.calc.checks import WARNINGS
from workbook.planner.advice import advise, rejected_summary
from workbook.planner.candidates import model_of
from workbook.planner.estimate import early_estimate
from workbook.planner.request import ModelByCount, PlanRequest
from workbook.planner.search import Evaluated, SearchResult, search
from workbook.planner.serving_report import plans_for_book, serving_data
from workbook.planner.serving_search import ServingResult, plan_scenario, search_serving
from workbook.planner.tco_report import tco_data



@dataclass
class Outcome:
    data: dict[str, Any]
    scenarios: list = field(default_factory=list)
    search: SearchResult | None = None
    serving: ServingResult | None = None


def plan_summary(ev: Evaluated, req: PlanRequest) -> dict[str, Any]:
    """One evaluated layout as the report shows it (figures from the full calculation)."""
    q, lay = ev.q, ev.screened.layout
    s = lay.shape
    return {
        "scenario": ev.scenario.name, "gpu": ev.screened.gpu, "num_gpus": lay.num_gpus, "nodes": q["plan_nodes"],
        "gpus_billed": q["train_gpus_billed"], "tp": s.tp, "cp": s.cp, "pp": s.pp, "dp": lay.dp, "ep": s.ep,
        "micro_batch": s.micro_batch, "grad_accum": lay.grad_accum, "recompute": s.recompute,
        "zero_stage": s.zero_stage, "precision": s.precision, "layout": lay.label(),
        "global_batch_tokens": q["st_tokens_per_step"], "train_days": q["train_days"],
        "target_days": req.target_days, "train_cost_usd": q["train_cost_usd"],
        "train_cost_target_usd": q["train_cost_target_usd"], "gpu_hour_usd": q["gpu_hour_usd"],
        "budget_usd": req.budget_usd, "budget_headroom_usd": q["budget_headroom_usd"] if req.budget_usd else None,
        "memory_per_gpu_GB": q["zero_total_per_gpu_GB"], "memory_headroom_GB": q["zero_hbm_headroom_GB"],
        "mfu": q["train_mfu"], "tokens_per_day": q["train_tokens_per_day"], "comm_share_frac": q["comm_share_frac"],
        "ckpt_interval_steps": q["sto_ckpt_interval_steps"],
        "warnings": [n for n, *_ in WARNINGS if q[n]], "failed": list(ev.failed),
    }


def _book_scenario(req: PlanRequest, est: dict, gpu_id: str, fields: dict):
    """The early estimate as a book-model column (memory_model book, time_model mfu, as 17.9.4)."""
    from workbook.scenario.model import Scenario

    n = int(est["N_chosen"])
    return Scenario.model_validate({
        "name": f"estimate-{gpu_id}-{n}", **fields, "gpu": gpu_id, "purpose": "training",
        "description": f"Early estimate of {req.request_id} (spec 17.9.4 quick path): P = {est['P_total']:.4g}, "
                       f"MFU {est['MFU']:.2f}, TP {int(est['TP'])} x PP {int(est['PP'])} x DP {int(est['DP'])}; "
                       "the column computes with the model's own parameter count",
        "training": {"memory_model": "book", "time_model": "mfu", "tokens": req.tokens, "seq_len": req.training.seq_len,
                     "micro_batch": 1, "grad_accum": int(est["GA"]), "zero_stage": 0, "recompute": "full",
                     "num_gpus": n, "tp": int(est["TP"]), "pp": int(est["PP"]), "mfu": est["MFU"],
                     "target_days": req.target_days, "act_GB": req.early_estimate.act_GB,
                     "runtime_overhead_GB": req.early_estimate.overhead_GB},
        "storage": {"ckpt_bytes_per_param": 10, "fs_write_GBps": req.early_estimate.fs_write_GBps},
        "cost": {"price_basis": req.price_basis, "gpu_hour_usd": req.gpu_hour_usd, "budget_usd": req.budget_usd},
    })


def _estimate_column(req: PlanRequest, catalog, out: Outcome, est: dict, gid: str, fields: dict,
                     rec) -> dict[str, Any]:
    """The early estimate's workbook column, or why it has none (its layout does not fit the model)."""
    book = _book_scenario(req, est, gid, fields)
    try:
        failed = compute(book, catalog)["hard_failures_count"]
    except InputError as err:
        return {"scenario": None, "in_workbook": False, "hard_failures": None,
                "reason": f"the quick path's layout (TP {int(est['TP'])} x PP {int(est['PP'])}) is not one the "
                          f"model takes ({err}); a larger early_estimate.tp gives one"}
    # a feasible plan's workbook holds plans that pass; the estimate joins them when it passes too
    if not rec or not failed:
        out.scenarios.append(book)
    return {"scenario": book.name, "in_workbook": not rec or not failed, "hard_failures": failed}


def _runner_up(res: SearchResult, rec: Evaluated) -> Evaluated | None:
    """The best plan on the recommended GPU with another GPU count or parallel layout."""
    def key(e: Evaluated) -> tuple:
        lay = e.screened.layout
        return (lay.num_gpus, lay.shape.tp, lay.shape.cp, lay.shape.pp, lay.shape.ep)

    for e in res.plans:
        if e.screened.gpu == rec.screened.gpu and key(e) != key(rec):
            return e
    return None


def _request_data(req: PlanRequest) -> dict[str, Any]:
    return {"title": req.title, "request_id": req.request_id, "requester": req.requester,
            "cost_centre": req.cost_centre, "file": req._source_file,
            "model": req.model if isinstance(req.model, str) else req.model.model_dump(mode="json"),
            "tokens": req.tokens, "target_days": req.target_days, "budget_usd": req.budget_usd,
            "candidate_gpus": list(req.candidate_gpus), "price_basis": req.price_basis, "rent_vs_buy": req.rent_vs_buy,
            "fidelity": req.fidelity, "start_date": str(req.start_date) if req.start_date else None}


def _training(req: PlanRequest, catalog, out: Outcome, fields: dict) -> dict[str, Any]:
    res = search(req, catalog)
    out.search = res
    best = res.best_per_gpu()
    data: dict[str, Any] = {
        "status": "feasible" if res.plans else "infeasible",
        "search": {"seconds": res.seconds, "screen_seconds": res.screen_seconds, **res.counts, "screen_feasible": len(res.feasible_screened),
                   "passed": len(res.plans), "rejected": len(res.rejections),
                   "layout_rules": {g: {k: {"count": v[0], "example": v[1]} for k, v in r.removed.items()}
                                    for g, r in res.rules.items()}},
        "rejected": rejected_summary(res),
    }
    if res.plans:
        rec = res.plans[0]
        data["recommended"] = plan_summary(rec, req)
        data["alternatives"] = {g: (plan_summary(best[g], req) if g in best else None)
                                for g in req.candidate_gpus if g != rec.screened.gpu}
        runner = _runner_up(res, rec)
        data["runner_up"] = plan_summary(runner, req) if runner else None
        out.scenarios.append(rec.scenario)
        out.scenarios += [best[g].scenario for g in req.candidate_gpus if g in best and best[g] is not rec]
        if runner:
            out.scenarios.append(runner.scenario)
    else:
        data["recommended"] = None
        data["infeasible"] = advise(req, catalog, res, search)
        closest: dict[str, Evaluated] = {}
        for ev in sorted(res.evaluated, key=lambda e: (len(e.failed), e.q["train_cost_usd"])):
            closest.setdefault(ev.screened.gpu, ev)
        data["closest_failed"] = {g: plan_summary(ev, req) for g, ev in closest.items()}
        out.scenarios += [ev.scenario for ev in closest.values()]
    if req.compare_priced_gpus:
        from workbook.planner.compare import compare_gpus

        data["compared"] = compare_gpus(req, catalog, res, data["recommended"], search, plan_summary)
    return data


def _serving(req: PlanRequest, catalog, out: Outcome, fields: dict) -> dict[str, Any]:
    """The serving search; its recommended plan and the best of every other GPU join the workbook."""
    res = search_serving(req, catalog)
    out.serving = res
    cols = plans_for_book(req, res)
    scs = [plan_scenario(req, p, fields) for p in cols]
    out.scenarios += scs
    return serving_data(req, catalog, res, {id(p): sc.name for p, sc in zip(cols, scs)})


def _training_tco(out: Outcome) -> dict[str, Any] | None:
    """The owned TCO of the recommended training plan (its GPUs billed), from its full calculation; None without."""
    if not out.data["training"].get("recommended") or out.search is None:
        return None
    ev = out.search.plans[0]
    return tco_data(ev.scenario.name, ev.screened.gpu, ev.scenario.purpose, ev.q)


def _serving_tco(out: Outcome, catalog) -> dict[str, Any] | None:
    """The owned TCO of the recommended serving plan: its column (purpose serving) owns its serving GPUs in use,
    in whole servers; from the column's full calculation. None without a serving plan."""
    rec = (out.data.get("serving") or {}).get("recommended")
    if not rec:
        return None
    sc = next(s for s in out.scenarios if s.name == rec["scenario"])
    return tco_data(sc.name, sc.gpu, sc.purpose, compute(sc, catalog))


def _cash_flow(out: Outcome, catalog) -> None:
    """``cash_flow``: the Cash Flow sheet's fiscal years of the plan ``tco`` is of (training, else serving)."""
    from workbook.planner.cash_flow_report import cash_flow_data

    tco = out.data.get("tco")
    if not tco:
        out.data["cash_flow"] = None
        return
    if out.data["training"].get("recommended") and out.search is not None:
        q = out.search.plans[0].q
    else:
        q = compute(next(s for s in out.scenarios if s.name == tco["scenario"]), catalog)
    out.data["cash_flow"] = cash_flow_data(tco["scenario"], q)


def _tco(out: Outcome, catalog) -> None:
    """``tco``: the training plan's TCO, else the serving plan's; ``serving_tco``: the serving plan's beside a
    training plan's (None when ``tco`` is already it, or there is no serving plan)."""
    training, serving = _training_tco(out), _serving_tco(out, catalog)
    out.data["tco"] = training or serving
    out.data["serving_tco"] = serving if training else None


def plan_request(req: PlanRequest, catalog) -> Outcome:
    """Answer a request (never raises for an infeasible one: that is a result)."""
    out = Outcome(data={"tool_version": __version__, "request": _request_data(req)})
    got = model_of(req, catalog)
    model, fields = got if got is not None else (None, None)
    if req.wants_training:
        est = {g: early_estimate(req, catalog.gpu(g), model) for g in req.candidate_gpus}
        out.data["early_estimate"] = est
        if got is None:
            out.data["training"] = {"status": "not searched: the request gives only a parameter count; name a "
                                              "catalogue model or an inline architecture for the layout search"}
        else:
            out.data["training"] = _training(req, catalog, out, fields)
            rec = out.data["training"]["recommended"]
            gid = rec["gpu"] if rec else req.candidate_gpus[0]
            out.data["estimate_column"] = _estimate_column(req, catalog, out, est[gid], gid, fields, rec)
    else:
        out.data["early_estimate"] = None
        out.data["training"] = {"status": "not requested"}
    if req.serving is None:
        out.data["serving"] = {"status": "not requested"}
    elif got is None:
        out.data["serving"] = {"status": "not searched: the request gives only a parameter count; name a catalogue "
                                         "model or an inline architecture for the serving search",
                               "load": req.serving.model_dump()}
    else:
        out.data["serving"] = _serving(req, catalog, out, fields)
    _tco(out, catalog)
    _cash_flow(out, catalog)
    if not out.scenarios:
        out.data["no_workbook"] = ("the request gives only a parameter count (no architecture to lay out)"
                                   if got is None else "no training plan and no serving plan carries the load")
    return out


__all__ = ["Outcome", "plan_request", "plan_summary", "ModelByCount"]
