"""Small plan requests for the planner tests (constrained so that each search takes well under a second)."""

from __future__ import annotations

import copy
import math
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


def assert_tco_is_the_workbooks(xlsx: Path, data: dict) -> None:
    """``--json``'s ``tco`` is the cached (calculated) value of every TCO row of its column, by name, and the
    Markdown's TCO table prints each of them with its calc label and unit, and the years in service."""
    import openpyxl

    from tests.writer.edits import Layout
    from workbook.calc.tco_years import SERIES
    from workbook.planner.tco_report import KEYS, markdown_rows

    tco = data["tco"]
    lay = Layout(xlsx)
    i = lay.names.index(tco["scenario"])
    wb = openpyxl.load_workbook(xlsx, data_only=True)
    by_year = {k: v for row in tco["by_year"] for k, v in row.items() if k != "year"}
    assert len(by_year) == len(SERIES) * len(tco["by_year"])
    for name, value in {**{k: tco[k] for k in KEYS}, **by_year}.items():
        sheet = next(s for s, rows in lay.rows.items() if name in rows)
        assert wb[sheet][lay.cell(sheet, name, i)].value == value, name
    md = Path(data["markdown"]).read_text()
    assert f"## Owned cluster (buy): TCO of {tco['scenario']}" in md
    for row in markdown_rows(tco):
        assert f"| {row['label']} | {row['value']} | {row['unit']} | `{row['key']}` |" in md
    assert f"| ${tco['tco_total_usd']:,.0f} | USD | `tco_total_usd` |" in md
    in_service = [row for row in tco["by_year"] if row[f"tco_y{row['year']}_frac"] > 0]
    assert len(in_service) == math.ceil(tco["tco_years"])
    for row in in_service:
        k = row["year"]
        assert (f"| {k} | {row[f'tco_y{k}_frac']:.1%} | "
                f"{'$' + format(tco['tco_capex_usd'], ',.0f') if k == 1 else '-'} | "
                f"${row[f'tco_y{k}_opex_usd']:,.0f} |") in md
