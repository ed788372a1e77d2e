"""Small plan requests for the planner tests (constrained so that each search takes well under a second)."""

from __future__ import annotations

import copy

from workbook.catalog import load_catalog
from workbook.planner.request import PlanRequest

CATALOG = load_catalog()

BASE = {
    "title": "test", "request_id": "t-1", "requester": "tests", "cost_centre": "cc",
    "model": "llama-3-8b", "tokens": 2e10, "target_days": 30, "candidate_gpus": ["h100"],
    "price_basis": "on_demand",
    "training": {"seq_len": 4096, "global_batch_tokens": 1048576},
    "constraints": {"max_gpus": 64, "zero_stages": [1], "recompute": ["full"], "micro_batches": [1],
                    "tp": [1, 2], "cp": [1], "pp_max": 4},
}


def request(**changes) -> PlanRequest:
    """BASE with top-level keys replaced and ``constraints`` / ``training`` entries merged."""
    data = copy.deepcopy(BASE)
    for k, v in changes.items():
        if k in ("constraints", "training") and isinstance(v, dict):
            data[k].update(v)
        else:
            data[k] = v
    return PlanRequest.model_validate(data)
