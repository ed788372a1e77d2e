"""The plan workbook of the 17.9.4 request (`workbook plan`): its PDF reads the plan's numbers, it passes every
workbook rule and `workbook verify` with both engines, the switching values put the plan exactly at its budget or
deadline after a LibreOffice recalculation, and price x2 doubles the Recommendation's cost."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from tests.export.helpers import words_past_right_margin
from tests.planner.helpers import CATALOG, assert_tco_is_the_workbooks, planned_once
from tests.shared import recalculated
from tests.writer.edits import EditBook, Layout, Recalc
from workbook.audit import rules
from workbook.engines import recalculate_many
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]
REQUEST = "catalog/requests/17.9.4-70b-h800.yaml"
ERRORS = ("#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "Err:")


@pytest.fixture(scope="module")
def planned():
    return planned_once(REQUEST, "17.9.4-70b-h800")


def test_writes_xlsx_pdf_and_markdown(planned):
    xlsx, data = planned
    assert Path(data["pdf"]).is_file() and Path(data["markdown"]).is_file()
    md = Path(data["markdown"]).read_text()
    rec = data["training"]["recommended"]
    assert f"{rec['num_gpus']} x H800" in md and f"${rec['train_cost_usd']:,.0f}" in md


def test_json_and_markdown_carry_the_tco_of_the_recommended_plan(planned):
    """``tco`` is the recommended plan's: the calculation's values (the workbook's cached ones, and compute of the
    scenario the planner gives in this process), the same figures the Recommendation sheet links to."""
    from workbook.calc import compute
    from workbook.planner.plan import plan_request
    from workbook.planner.request import load_request
    from workbook.planner.tco_report import KEYS
    from workbook.writer.planbook import _REC

    xlsx, data = planned
    tco = data["tco"]
    assert tco["scenario"] == data["training"]["recommended"]["scenario"] and tco["gpu"] == "h800"
    assert_tco_is_the_workbooks(xlsx, data)
    out = plan_request(load_request(Path(REQUEST), CATALOG), CATALOG)
    q = compute(out.scenarios[0], CATALOG)
    assert out.scenarios[0].name == tco["scenario"]
    assert {k: tco[k] for k in KEYS} == {k: q[k] for k in KEYS}
    assert all(v == q[k] for row in tco["by_year"] for k, v in row.items() if k != "year")
    # 66 nodes x 8 NICs on 64-port switches: above one leaf, a non-blocking two-tier tree (issue 23)
    assert (tco["tco_nodes"], tco["tco_nic_ports"], tco["tco_switches"]) == (66, 528, 17 + 9)  # leaves + spines
    assert tco["tco_network_capex_usd"] == 26 * 50_000 + 2 * 528 * 2_500  # switches + optics per link
    ws = openpyxl.load_workbook(xlsx, data_only=True)["Recommendation"]
    shown = {c.value: ws[f"B{c.row}"].value for (c,) in ws.iter_rows(min_col=1, max_col=1)}
    linked = [(label, name) for _, rows in _REC for label, name, _ in rows if name in KEYS]
    assert len(linked) >= 10
    for label, name in linked:
        assert shown[label] == tco[name], name


def test_cover_carries_the_request_fields(planned):
    ws = openpyxl.load_workbook(planned[0])["Cover"]
    rows = {r[0].value: r[1].value for r in ws.iter_rows(min_col=1, max_col=2)}
    assert rows["Request id"] == "17.9.4-70b-h800" and rows["Cost centre"] == "ML-RESEARCH"
    assert rows["Prepared by"] == "Planning team" and rows["Reviewed by"] == "-"
    assert rows["Request date"] == "2026-11-30" and rows["Status"] == "Draft"


def test_pdf_prints_the_plans_numbers_and_no_error_values(planned):
    xlsx, data = planned
    text = subprocess.run(["pdftotext", "-layout", data["pdf"], "-"], capture_output=True, text=True,
                          check=True).stdout
    rec = data["training"]["recommended"]
    assert f"{rec['num_gpus']:,}" in text
    assert f"{rec['train_days']:.1f}" in text  # days to one decimal (issue 23)
    assert f"${rec['train_cost_usd']:,.0f}" in text
    assert not [e for e in ERRORS if e in text]
    for sheet in ("Cover", "Recommendation", "Assumptions", "Cost Breakdown", "Sensitivity"):
        assert sheet in text
    assert words_past_right_margin(Path(data["pdf"])) == []  # nothing runs past the printable width


def test_plan_workbook_passes_every_rule(planned):
    from workbook.lint.excel import lint_xlsx

    wb = openpyxl.load_workbook(planned[0])
    for rule in rules.ALL_RULES:
        assert rule(wb) == [], rule.__name__
    assert [str(f) for f in lint_xlsx(planned[0])] == []


def test_plan_workbook_verifies_with_both_engines(planned):
    run = subprocess.run([sys.executable, "-m", "workbook", "verify", str(planned[0])], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK" in run.stdout


def _rec_cell(path: Path, label: str) -> str:
    ws = openpyxl.load_workbook(path)["Recommendation"]
    for (cell,) in ws.iter_rows(min_col=1, max_col=1):
        if cell.value == label:
            return f"B{cell.row}"
    raise LookupError(label)


def test_switching_values_and_price_x2_after_libreoffice_recalculation(planned, tmp_path):
    xlsx, data = planned
    lay = Layout(xlsx)
    q = {}
    base = EditBook(xlsx)
    wb = openpyxl.load_workbook(xlsx, data_only=True)  # the cached values: the reference
    for key in ("sens_price_switch_budget_usd_per_gpu_hour", "sens_tokens_switch_deadline",
                "sens_tokens_switch_budget", "sens_power_switch_budget_usd_per_kWh", "gpu_hour_usd"):
        q[key] = wb[lay_sheet(lay, key)][lay.cell(lay_sheet(lay, key), key, 0)].value
    edits = {"unedited": None,
             "price_x2": ("cost.gpu_hour_usd", 2 * data["training"]["recommended"]["gpu_hour_usd"])}
    # the inputs that get their switching value, typed into copies once it is known
    switch_keys = {"price_switch": "cost.gpu_hour_usd", "tokens_deadline": "training.tokens",
                   "tokens_budget": "training.tokens", "power_switch": "cost.electricity_usd_per_kWh"}
    paths = {}
    for name, edit in edits.items():
        p = tmp_path / f"{name}.xlsx"
        shutil.copyfile(xlsx, p)
        paths[name] = p
        if edit is None:
            continue
        key, value = edit
        b = EditBook(p)
        b.plan(key, 0, value)
        b.save()
    del base
    # the switching values come from the recalculated unedited copy (the reference values are the cached ones)
    values = recalculated(list(paths.values()), "libreoffice")  # the unedited plan: once per session
    rc = {n: Recalc(values[p], lay) for n, p in paths.items()}
    u = rc["unedited"]
    switch = {"price_switch": u.get("Sensitivity", "sens_price_switch_budget_usd_per_gpu_hour", 0),
              "tokens_deadline": u.get("Sensitivity", "sens_tokens_switch_deadline", 0),
              "tokens_budget": u.get("Sensitivity", "sens_tokens_switch_budget", 0),
              "power_switch": u.get("Sensitivity", "sens_power_switch_budget_usd_per_kWh", 0)}
    assert switch["price_switch"] == pytest.approx(q["sens_price_switch_budget_usd_per_gpu_hour"], rel=1e-9)
    for name, value in switch.items():
        p = tmp_path / f"{name}.xlsx"
        shutil.copyfile(xlsx, p)
        b = EditBook(p)
        b.plan(switch_keys[name], 0, value)
        b.save()
    again = recalculate_many([tmp_path / f"{n}.xlsx" for n in switch], "libreoffice")
    at = {n: Recalc(again[tmp_path / f"{n}.xlsx"], lay) for n in switch}
    budget, target = data["request"]["budget_usd"], data["request"]["target_days"]
    # the price at the budget check: the larger of the run's and the target window's cost meets the budget
    assert max(at["price_switch"].get("Cost", "train_cost_usd", 0),
               at["price_switch"].get("Cost", "train_cost_target_usd", 0)) == pytest.approx(budget, rel=1e-12)
    assert at["tokens_deadline"].get("Step Time", "train_days", 0) == pytest.approx(target, rel=1e-9)
    assert at["tokens_budget"].get("Cost", "train_cost_usd", 0) == pytest.approx(budget, rel=1e-9)
    if switch["power_switch"] > 0:
        assert at["power_switch"].get("Cost", "self_build_total_usd", 0) == pytest.approx(budget, rel=1e-9)
    # behaviour: price x2 -> the Recommendation's cost x2
    cell = _rec_cell(xlsx, "Training cost, rented GPUs (opex, the run)")
    before = values[paths["unedited"]][("Recommendation", cell)]
    after = values[paths["price_x2"]][("Recommendation", cell)]
    assert before == pytest.approx(data["training"]["recommended"]["train_cost_usd"], rel=1e-9)
    assert after == pytest.approx(2 * before, rel=1e-12)


def lay_sheet(lay: Layout, key: str) -> str:
    return next(s for s, rows in lay.rows.items() if key in rows)


def test_cost_breakdown_of_a_training_plan_keeps_the_training_run(planned):
    import openpyxl

    from workbook.writer.planbook import _TRAINING_RUN, breakdown_blocks

    xlsx = planned[0]
    ws = openpyxl.load_workbook(xlsx)["Cost Breakdown"]
    labels = {str(c.value) for c in ws["A"] if isinstance(c.value, str)}
    for _, block in breakdown_blocks(True):
        for label, name, _ in block:
            assert label in labels, label
    assert "Serving fleet rented, per hour" not in labels and len(_TRAINING_RUN) == 9
