"""Small plan requests for the planner tests (constrained so that each search takes well under a second)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

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


def assert_screen_is_calc(res) -> None:
    """The screen gives the full calculation's memory, days and costs on every evaluated layout."""
    assert res.evaluated
    for ev in res.evaluated:
        r, q = ev.screened, ev.q
        assert r.memory_GB == pytest.approx(q["zero_total_per_gpu_GB"], rel=1e-12)
        assert r.days == pytest.approx(q["train_days"], rel=1e-12)
        assert r.cost_usd == pytest.approx(q["train_cost_usd"], rel=1e-12)
        assert r.cost_target_usd == pytest.approx(q["train_cost_target_usd"], rel=1e-12)


def plan_with_cli(request_file: str, out: Path, request_id: str) -> tuple[Path, dict]:
    """`workbook plan REQUEST -o OUT --json` in a fresh process: (the plan workbook, the JSON answer)."""
    run = subprocess.run([sys.executable, "-m", "workbook", "plan", request_file, "-o", str(out), "--json"],
                         capture_output=True, text=True, check=True)
    return out / f"{request_id}.xlsx", json.loads(run.stdout)
