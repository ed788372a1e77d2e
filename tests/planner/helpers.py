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


def planned_once(request_file: str, request_id: str) -> tuple[Path, dict]:
    """:func:`plan_with_cli` of a request file, planned once per test session for every module and xdist worker
    that only reads the plan (tests/shared.py): copy the workbook before editing it."""
    from tests.shared import code_key, key_of, shared

    folder, data = shared(f"plan-{request_id}", key_of(Path(request_file), code_key()),
                          lambda out: plan_with_cli(request_file, out, request_id)[1])
    return folder / f"{request_id}.xlsx", data


def assert_tco_is_the_workbooks(xlsx: Path, data: dict, which: str = "tco") -> None:
    """``--json``'s ``tco`` (or ``serving_tco``) is the cached (calculated) value of every TCO row of its column, by
    name, and the Markdown's TCO table prints each of them with its calc label and unit, and the years in service."""
    import openpyxl

    from tests.writer.edits import Layout
    from workbook.calc.tco_years import SERIES
    from workbook.planner.tco_report import keys, markdown_rows

    tco = data[which]
    lay = Layout(xlsx)
    i = lay.names.index(tco["scenario"])
    wb = openpyxl.load_workbook(xlsx, data_only=True)
    by_year = {k: v for row in tco["by_year"] for k, v in row.items() if k != "year"}
    assert len(by_year) == len(SERIES) * len(tco["by_year"])
    for name, value in {**{k: tco[k] for k in keys(tco["purpose"])}, **by_year}.items():
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


def assert_column_is_serving_plan(q: dict, p) -> None:
    """The full calculation of a serving plan's workbook column gives the search's figures (rel. 1e-12)."""
    from workbook.planner.serving_search import HOURS_PER_MONTH

    assert q["hard_failures_count"] == 0 and q["srv_gpus_in_use"] == p.num_gpus
    for key, want in (("srv_ttft_ms_in_use", p.ttft_ms), ("srv_tpot_ms_in_use", p.tpot_ms),
                      ("srv_tokens_per_s_total_in_use", p.tokens_per_s),
                      ("infer_usd_per_1M_tokens", p.usd_per_1M_tokens),
                      ("srv_kv_tokens", p.kv_tokens_per_gpu), ("srv_weights_per_gpu_GiB", p.weights_per_gpu_GiB)):
        assert q[key] == pytest.approx(want, rel=1e-12), key
    assert q["infer_hourly_cost_usd"] * HOURS_PER_MONTH == pytest.approx(p.usd_per_month, rel=1e-12)


def assert_book_passes_rules_and_verifies(xlsx: Path) -> None:
    """Every workbook rule holds, the Excel lint finds nothing, and `workbook verify` (every installed engine:
    formulas, LibreOffice and Gnumeric) passes, in a fresh process."""
    import openpyxl

    from workbook.audit import rules
    from workbook.lint.excel import lint_xlsx

    wb = openpyxl.load_workbook(xlsx)
    for rule in rules.ALL_RULES:
        assert rule(wb) == [], rule.__name__
    assert [str(f) for f in lint_xlsx(xlsx)] == []
    run = subprocess.run([sys.executable, "-m", "workbook", "verify", str(xlsx)], capture_output=True, text=True)
    assert run.returncode == 0 and "OK" in run.stdout, run.stdout + run.stderr


def recommendation_recalculated(xlsx: Path, tmp_path: Path, key: str, value: float):
    """Readers (label -> value) of the Recommendation sheet's column B after a LibreOffice recalculation,
    of the book and of a copy with the first column's Plan input ``key`` = ``value`` (a label's first row)."""
    import shutil

    import openpyxl

    from tests.shared import recalculated
    from tests.writer.edits import EditBook

    cells: dict[str, str] = {}
    for (c,) in openpyxl.load_workbook(xlsx)["Recommendation"].iter_rows(min_col=1, max_col=1):
        if isinstance(c.value, str):
            cells.setdefault(c.value, f"B{c.row}")
    edited = tmp_path / "edited.xlsx"
    shutil.copyfile(xlsx, edited)
    b = EditBook(edited)
    b.plan(key, 0, value)
    b.save()
    values = recalculated([xlsx, edited], "libreoffice")  # the plan itself: once per session
    return tuple((lambda label, v=values[f]: v[("Recommendation", cells[label])]) for f in (xlsx, edited))


def chart_titles(xlsx: Path) -> list[tuple[str, str]]:
    """(title, chart XML) of every chart in the file, in file order (openpyxl does not read charts back)."""
    import re
    import zipfile

    with zipfile.ZipFile(xlsx) as z:
        xml = [z.read(n).decode() for n in sorted(z.namelist()) if n.startswith("xl/charts/chart")]
    return [(" ".join(re.findall(r"<a:t>([^<]*)</a:t>", x.split("</c:title>")[0])), x) for x in xml if "<c:title>" in x]


def plan_base_with_cli(folder: Path, request_id: str, **changes) -> tuple[Path, dict]:
    """BASE with top-level *changes*, written as a request file in *folder* and planned by :func:`plan_with_cli`."""
    import yaml

    req = folder / f"{request_id}.yaml"
    req.write_text(yaml.safe_dump({**BASE, "request_id": request_id, **changes}))
    return plan_with_cli(str(req), folder / "out", request_id)
