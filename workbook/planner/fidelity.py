"""How the search models a layout: ``fidelity: measured`` (the default: the step-time model and the
tensor memory model) or ``fidelity: book`` (the book's models, as the end-to-end cases of spec 17.9
use them).

Under ``book`` every layout is a Scenario with ``memory_model: book`` (spec 17.4.5-17.4.8: the
16 B/param ledger split over TP·PP, ZeRO over DP·CP, plus the activations and the overhead the case
states) and ``time_model: mfu`` (6·P·D / (N·peak·MFU), spec T3), and the book's checkpoint convention
(10 B/param, spec T7) written at the early estimate's file-system bandwidth. The MFU is the request's
``book.mfu``, else the early estimate's (``early_estimate.mfu``, else the step-3 lookup at the
estimate's GPU count, iterated once past 1000 GPUs as the book does), one value per GPU: so the days
still fall as DP grows and the search's bisection holds. :class:`workbook.planner.book_screen.BookScreen`
screens these layouts; the full calculation is the same ``workbook.calc.compute``.
"""

from __future__ import annotations

from workbook.planner.request import PlanRequest


def is_book(req: PlanRequest) -> bool:
    return req.fidelity == "book"


def _mfu_key(req: PlanRequest, gpu_id: str) -> tuple:
    """What the MFU depends on (a copy of the request with other tokens, days or MFU shares the cache dict:
    pydantic's model_copy copies private attributes shallowly)."""
    return (gpu_id, req.book_choices.mfu, req.tokens, req.target_days, repr(req.model),
            req.early_estimate.model_dump_json())


def book_mfu(req: PlanRequest, gpu, model) -> float:
    """The MFU of the request's layouts on ``gpu`` (book fidelity); cached on the request."""
    key = _mfu_key(req, gpu.id)
    if key not in req._book_mfu:
        if req.book_choices.mfu is not None:
            req._book_mfu[key] = float(req.book_choices.mfu)
        else:
            from workbook.planner.estimate import early_estimate

            req._book_mfu[key] = float(early_estimate(req, gpu, model)["MFU"])
    return req._book_mfu[key]


def book_act_GB(req: PlanRequest) -> float:
    b = req.book_choices
    return float(b.act_GB if b.act_GB is not None else req.early_estimate.act_GB)


def book_overhead_GB(req: PlanRequest) -> float:
    b = req.book_choices
    return float(b.overhead_GB if b.overhead_GB is not None else req.early_estimate.overhead_GB)


def training_overrides(req: PlanRequest, gpu_id: str) -> dict:
    """The Scenario ``training`` fields book fidelity sets (empty for measured fidelity)."""
    if not is_book(req):
        return {}
    key = _mfu_key(req, gpu_id)
    if key not in req._book_mfu:
        raise ValueError(f"book fidelity: no MFU resolved for GPU {gpu_id!r} (call book_mfu first)")
    return {"memory_model": "book", "time_model": "mfu", "mfu": req._book_mfu[key],
            "act_GB": book_act_GB(req), "runtime_overhead_GB": book_overhead_GB(req)}


def storage_overrides(req: PlanRequest) -> dict:
    """The Scenario ``storage`` fields book fidelity sets (the 17.9 checkpoint convention)."""
    if not is_book(req):
        return {}
    return {"ckpt_bytes_per_param": req.book_choices.ckpt_bytes_per_param,
            "fs_write_GBps": req.early_estimate.fs_write_GBps}


def billed_first(req: PlanRequest, actual_usd: float, target_usd: float) -> float:
    """The leading rank key: 0 for measured fidelity (plans rank by the actual cost); under book fidelity
    the cost the book bills (step 10: N·T_target·price, the actual duration's if longer). With the MFU
    time model the GPU-hours of the actual duration are the same on every GPU count, so only the billed
    window tells a smaller cluster from a larger one."""
    return max(actual_usd, target_usd) if is_book(req) else 0.0
