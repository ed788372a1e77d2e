"""The plan workbook of the serving request (`workbook plan catalog/requests/serve-70b-chat.yaml`): xlsx, PDF
and Markdown written, every workbook rule and `workbook verify` with both engines pass, the serving columns'
checks pass, and after a LibreOffice recalculation the Recommendation's serving plan reads the search's figures;
an arrival rate x2 in the plan column breaks its TPOT check live."""

from __future__ import annotations

import re

import subprocess
from pathlib import Path

import pytest

from tests.export.helpers import words_past_right_margin
from tests.planner.helpers import assert_book_passes_rules_and_verifies, planned_once, recommendation_recalculated
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]
REQUEST = "catalog/requests/serve-70b-chat.yaml"
ERRORS = ("#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "Err:")


@pytest.fixture(scope="module")
def planned():
    return planned_once(REQUEST, "serve-70b-chat")


def test_writes_xlsx_pdf_and_markdown_with_the_serving_plan(planned):
    xlsx, data = planned
    rec = data["serving"]["recommended"]
    assert xlsx.is_file() and Path(data["pdf"]).is_file()
    md = Path(data["markdown"]).read_text()
    assert f"**{rec['num_gpus']} x H800**" in md and f"${rec['usd_per_month']:,.0f}" in md
    assert "## Recommendation" not in md  # no training asked
    text = subprocess.run(["pdftotext", "-layout", data["pdf"], "-"], capture_output=True, text=True, check=True).stdout
    assert "The serving plan" in text and "46,720" in text and not [e for e in ERRORS if e in text]
    assert words_past_right_margin(Path(data["pdf"])) == []  # the Recommendation's subtitle wraps, not clipped
    # the subtitle prints whole (it wraps, whatever its line breaks)
    assert "column's Inference, KV Cache and Cost rows; the best plan of every other GPU beside it." in " ".join(
        text.split())


def test_json_markdown_and_recommendation_carry_the_tco_of_the_serving_fleet(planned):
    """A serving-only plan's ``tco`` is its recommended serving column's: the TCO owns the serving GPUs in use (28,
    the plan's GPUs) in whole servers (4 of 8), the rent beside it is the plan's $/month x 12, the owned cost of a
    training run is left out; the Markdown prints it and the Recommendation sheet (and the PDF) links to it."""
    import openpyxl

    from tests.planner.helpers import CATALOG, assert_tco_is_the_workbooks
    from workbook.writer.planbook_serving import BUY_TITLE, buy_rows

    xlsx, data = planned
    tco, rec = data["tco"], data["serving"]["recommended"]
    assert tco["scenario"] == rec["scenario"] and tco["gpu"] == "h800" and tco["purpose"] == "serving"
    assert tco["tco_gpus_owned"] == rec["num_gpus"] == 32 and tco["tco_nodes"] == 4
    assert tco["tco_server_capex_usd"] == 4 * CATALOG.defaults.value("server_capex_usd")
    assert tco["tco_rent_per_year_usd"] == pytest.approx(12 * rec["usd_per_month"], rel=1e-12)
    assert 0 < tco["tco_vs_rent_frac"] and "self_build_total_usd" not in tco and data["serving_tco"] is None
    assert_tco_is_the_workbooks(xlsx, data)
    assert "Buying the serving fleet instead of renting it: its 32 H800 GPUs in use in 4 whole servers" in \
        Path(data["markdown"]).read_text()
    ws = openpyxl.load_workbook(xlsx, data_only=True)["Recommendation"]
    shown = {c.value: ws[f"B{c.row}"].value for (c,) in ws.iter_rows(min_col=1, max_col=1)}
    assert BUY_TITLE in shown and len(buy_rows()) >= 12
    for label, name, _ in buy_rows():
        assert shown[label] == tco[name], name
    text = subprocess.run(["pdftotext", "-layout", data["pdf"], "-"], capture_output=True, text=True, check=True).stdout
    assert BUY_TITLE in text and f"${tco['tco_total_usd']:,.0f}" in text


def test_serving_book_passes_every_rule_and_verifies(planned):
    assert_book_passes_rules_and_verifies(planned[0])


def test_recommendation_reads_the_plan_live_and_a_doubled_load_fails_tpot(planned, tmp_path):
    xlsx, data = planned
    rec = data["serving"]["recommended"]
    v, d = recommendation_recalculated(xlsx, tmp_path, "inference.arrival_rate_rps", 2 * rec["load_rps"])

    assert v("GPUs (TP x EP x replicas)") == 32 and v("Replicas (serving groups)") == 8
    assert v("Load carried, all replicas") == pytest.approx(20)
    assert v("TTFT under the load") == pytest.approx(rec["ttft_ms"], rel=1e-9)
    assert v("TPOT under the load") == pytest.approx(rec["tpot_ms"], rel=1e-9)
    assert v("Serving cost per 1M output tokens") == pytest.approx(rec["usd_per_1M_tokens"], rel=1e-9)
    from workbook.writer.planbook_serving import MONTH_LABEL

    assert v(MONTH_LABEL) == pytest.approx(rec["usd_per_month"], rel=1e-12)
    assert v("Serving checks failed (load, TTFT, TPOT, memory)") == 0
    # twice the load on the same 7 groups: TPOT (or the load) fails, live
    assert d("Serving checks failed (load, TTFT, TPOT, memory)") >= 1
    assert d("Load per group") == pytest.approx(2 * rec["group_rate_rps"], rel=1e-12)
    # the same 7 groups own the same fleet: the owned TCO does not move with the load on them
    tco = "TCO over the horizon (capex + opex x years)"
    assert v(tco) == pytest.approx(data["tco"]["tco_total_usd"], rel=1e-12) and d(tco) == v(tco)


def _breakdown(xlsx: Path) -> dict[str, tuple[str, object]]:
    """Cost Breakdown label -> (the link's formula, its cached value)."""
    import openpyxl

    f = openpyxl.load_workbook(xlsx)["Cost Breakdown"]
    v = openpyxl.load_workbook(xlsx, data_only=True)["Cost Breakdown"]
    return {str(f.cell(r, 1).value): (str(f.cell(r, 2).value), v.cell(r, 2).value)
            for r in range(1, f.max_row + 1) if f.cell(r, 1).value and f.cell(r, 2).value is not None}


def test_cost_breakdown_of_a_serving_plan_leaves_the_training_run_out(planned):
    """No training was asked, so the Cost Breakdown shows no training-run rows (the column would compute them
    from the training defaults) and rents the serving fleet instead: a live link to the Cost sheet."""
    from workbook.planner.serving_search import HOURS_PER_MONTH
    from workbook.writer.planbook import _TRAINING_RUN, breakdown_blocks

    xlsx, data = planned
    rows = _breakdown(xlsx)
    training_labels = {label for _, block in breakdown_blocks(True) for label, name, _ in block if name in _TRAINING_RUN}
    assert len(training_labels) == 9 and not training_labels & set(rows)
    formula, cached = rows["Serving fleet rented, per hour"]
    assert formula.startswith('=IF(MIN(1,Plan!') and ',"input error",Cost!' in formula  # a live link to Cost
    assert cached * HOURS_PER_MONTH == pytest.approx(data["serving"]["recommended"]["usd_per_month"], rel=1e-9)
    assert "Power (buy)" in _sheet_texts(xlsx) and "Recurring over the run (buy)" not in _sheet_texts(xlsx)
    assert "TCO over the horizon (capex + opex x years)" in rows


def _sheet_texts(xlsx: Path) -> set[str]:
    import openpyxl

    ws = openpyxl.load_workbook(xlsx)["Cost Breakdown"]
    return {str(c.value) for row in ws.iter_rows() for c in row if isinstance(c.value, str)}


def test_sensitivity_of_a_serving_plan_shows_the_serving_drivers_first(planned):
    """The Sensitivity sheet opens on the serving block (cost per month and per 1M output tokens at -/+ the step),
    the training block below it is titled as not asked for, and its tornados chart the serving cost, not training."""
    import openpyxl

    from tests.planner.helpers import chart_titles
    from workbook.writer import UNASKED_TRAINING_TITLE
    from workbook.writer.line_items import BLOCK_TITLES

    xlsx, data = planned
    ws = openpyxl.load_workbook(xlsx, data_only=True)["Sensitivity"]
    labels = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1)]
    first = next(r for r, v in enumerate(labels, 1) if v and str(v).startswith(("Serving sensitivity", "Training")))
    assert labels[first - 1] == BLOCK_TITLES["serving_sensitivity"]
    assert labels.index(UNASKED_TRAINING_TITLE) > first
    keys = {ws.cell(r, 5).value: ws.cell(r, 6).value for r in range(1, ws.max_row + 1)}
    rec = data["serving"]["recommended"]
    assert keys["srv_sens_month_usd"] == pytest.approx(rec["usd_per_month"], rel=1e-12)
    assert keys["srv_sens_sized_flag"] == 1 and (keys["srv_sens_replicas_low"], keys["srv_sens_replicas_high"]) == (6, 9)
    titles = [t for t, _ in chart_titles(xlsx) if t.startswith("Tornado")]
    assert len(titles) == 2 and "serving cost per month" in titles[0] and "per 1M output tokens" in titles[1]
    text = subprocess.run(["pdftotext", "-layout", data["pdf"], "-"], capture_output=True, text=True, check=True).stdout
    assert "Tornado: serving cost per month" in text and "Tornado: training days" not in text


def test_assumptions_of_a_serving_plan_list_its_serving_inputs_not_training_ones(planned):
    import openpyxl

    ws = openpyxl.load_workbook(planned[0])["Assumptions"]
    rows = {ws.cell(r, 6).value: (ws.cell(r, 2).value, ws.cell(r, 4).value) for r in range(5, ws.max_row + 1)
            if ws.cell(r, 6).value is not None}  # the inputs (the provenance block below them has no key)
    assert not [k for k in rows if k.startswith(("training.", "storage."))] and "cost.budget_usd" not in rows
    for key in ("inference.arrival_rate_rps", "inference.ttft_target_ms", "inference.tpot_target_ms",
                "inference.prompt_tokens", "inference.output_tokens"):
        formula, source = rows[key]
        assert str(formula).startswith("=Plan!") and source == "request serve-70b-chat", key
    # the replicas are the planner's choice, not the request's (issue 23)
    formula, source = rows["inference.replicas"]
    assert str(formula).startswith("=Plan!") and source.startswith("chosen by the planner's layout search"), source
    assert "cost.gpu_hour_usd" in rows and "cost.storage_usd_per_TB_month" in rows


def test_a_serving_plans_storage_is_the_weights_it_serves(planned):
    """The serving fleet keeps the model's weights (BF16, 141 GB), not the training dataset and checkpoints."""
    xlsx, data = planned
    rows = _breakdown(xlsx)
    formula, tb = rows["Storage kept (the model weights served, one copy)"]
    assert ',"input error",TCO!' in formula and tb == pytest.approx(0.141107412992, rel=1e-12)
    assert data["tco"]["tco_storage_TB"] == tb and data["tco"]["tco_storage_per_year_usd"] < 100
    assert rows["Storage"][1] == pytest.approx(tb * 30 * 12, rel=1e-12)  # $30 per TB-month by default


def test_gpu_price_x2_doubles_the_serving_sensitivity_live(planned, tmp_path):
    """Finance doubles the recommended column's GPU-hour price: after a LibreOffice recalculation the serving
    cost per month and every change of the cost on the Sensitivity sheet double; the replicas do not move."""
    import shutil

    from tests.shared import recalculated
    from tests.writer.edits import EditBook, Layout, Recalc

    xlsx, data = planned
    edited = tmp_path / "price_x2.xlsx"
    shutil.copyfile(xlsx, edited)
    b = EditBook(edited)
    b.plan("cost.gpu_hour_usd", 0, 2 * data["serving"]["recommended"]["gpu_hour_usd"])
    b.save()
    values = recalculated([xlsx, edited], "libreoffice")  # the plan itself: once per session
    lay = Layout(xlsx)
    one, two = Recalc(values[xlsx], lay), Recalc(values[edited], lay)
    for key in ("srv_sens_month_usd", "srv_sens_1M_usd", "srv_sens_price_dmonth_high_usd",
                "srv_sens_load_dmonth_high_usd", "srv_sens_load_dmonth_low_usd", "srv_sens_output_d1M_low_usd"):
        a = one.get("Sensitivity", key, 0)
        assert a != 0 and two.get("Sensitivity", key, 0) == pytest.approx(2 * a, rel=1e-9), key
    assert one.get("Sensitivity", "srv_sens_month_usd", 0) == pytest.approx(
        data["serving"]["recommended"]["usd_per_month"], rel=1e-9)
    assert two.get("Sensitivity", "srv_sens_replicas_high", 0) == one.get("Sensitivity", "srv_sens_replicas_high", 0)


def test_a_blank_input_reads_input_error_on_the_plan_sheets_never_an_error_value(planned, tmp_path):
    # finance blanks the prompt length of the recommended column: the Recommendation's and Cost Breakdown's
    # figures read "input error" (TTFT under the load would be #DIV/0!), the inputs shown stay as typed
    import shutil

    from tests.writer.edits import EditBook
    from workbook.engines import recalculate_many
    from workbook.writer.summary import INPUT_ERROR_TEXT

    xlsx, data = planned
    edited = tmp_path / "blank.xlsx"
    shutil.copyfile(xlsx, edited)
    b = EditBook(edited)
    b.plan("inference.prompt_tokens", 0, None)
    b.plan("inference.prompt_tokens", 1, None)  # the compared plan too: then no figure of the sheet stands
    b.save()
    values = recalculate_many([edited], "libreoffice")[edited]
    plan_sheets = ("Recommendation", "Cost Breakdown", "Assumptions")
    shown = {k: v for k, v in values.items() if k[0] in plan_sheets}
    assert not [k for k, v in shown.items() if isinstance(v, str) and v.startswith("#")]
    rec = {k: v for k, v in shown.items() if k[0] == "Recommendation"}
    assert sum(v == INPUT_ERROR_TEXT for v in rec.values()) >= 10
    assert "h800" in rec.values() and 2000 in rec.values()  # the GPU and the TTFT target: inputs, as typed
    # every figure that is not an input shown as typed reads "input error": none keeps a plausible number
    # (the monthly cost and the year table were computed beside the guarded links and showed numbers)
    import openpyxl

    ws = openpyxl.load_workbook(xlsx)["Recommendation"]
    computed = [c.coordinate for row in ws.iter_rows() for c in row  # formulas reading a sheet other than Plan
                if isinstance(c.value, str) and c.value.startswith("=")
                and "!" in re.sub(r"Plan![$A-Z0-9]+", "", c.value)]
    assert len(computed) >= 30
    # the live title (A1, a text naming what fails: the input in error) is no figure
    assert {k: values[("Recommendation", k)] for k in computed
            if values[("Recommendation", k)] != INPUT_ERROR_TEXT and k != "A1"} == {}
    assert values[("Recommendation", "A1")].startswith("Not feasible: H800 x ")


def test_pdf_order_with_a_one_page_cover_and_recommendation_and_no_training_rows(planned):
    """The serving plan's PDF: Cover (1 page), Recommendation (1 page: the serving plan, its owned alternative and
    the serving plans compared beside it), then the other sheets in order; the first two pages print no training
    rows."""
    from tests.export.helpers import sheet_of_each_page
    from workbook.export.pdf import sheet_names
    from workbook.writer.planbook import pdf_sheets

    xlsx, data = planned
    order = pdf_sheets(sheet_names(xlsx))
    sheets = sheet_of_each_page(Path(data["pdf"]), order)
    assert list(dict.fromkeys(sheets)) == order and order[:4] == ["Cover", "Recommendation", "Assumptions",
                                                                   "Sensitivity"]
    assert sheets.count("Cover") == 1 and sheets.count("Recommendation") == 1
    first = subprocess.run(["pdftotext", "-layout", "-f", "1", "-l", "2", data["pdf"], "-"], capture_output=True,
                           text=True, check=True).stdout
    for want in ("The serving plan (co-located)", "The serving fleet bought", "Why this option: the alternatives",
                 "Cost per month (USD)", "$46,720"):
        assert want in first, want
    assert "training" not in first.lower()


def test_scenarios_of_a_serving_plan_base_low_high_and_the_other_gpu(planned):
    """The Scenarios sheet of the serving plan: Base is the recommended fleet, Low / High move its price and the
    utilisation by the sensitivity step (rent x (1 -/+ s), cost per 1M tokens x price / utilisation), the fleet and
    its latencies unchanged; the other GPU's plan beside with the same rows (recalculated alike: the verify test)."""
    import openpyxl

    from workbook.writer.planbook_scenarios import FIRST, HEAD, SHEET
    from workbook.writer.planbook_scenarios_serving import ROWS

    xlsx, data = planned
    ws = openpyxl.load_workbook(xlsx, data_only=True)[SHEET]
    cols = [{k: ws.cell(HEAD + 2 + n, FIRST + 1 + c).value for n, (k, _, _) in enumerate(ROWS)} for c in range(4)]
    base, low, high, other = cols
    rec, s = data["serving"]["recommended"], 0.2
    assert ws.cell(HEAD + 1, FIRST + 1).value == f"Base: H800 x {rec['num_gpus']}, rent"
    assert base["gpus"] == rec["num_gpus"] and base["month"] == pytest.approx(rec["usd_per_month"], rel=1e-12)
    assert low["month"] == pytest.approx(base["month"] * (1 + s), rel=1e-12)
    assert high["month"] == pytest.approx(base["month"] * (1 - s), rel=1e-12)
    assert low["per_1m"] == pytest.approx(base["per_1m"] * (1 + s) / (1 - s), rel=1e-12)
    assert (low["gpus"], low["tpot"], high["ttft"]) == (base["gpus"], base["tpot"], base["ttft"])
    assert ws.cell(HEAD + 1, FIRST + 4).value.startswith("H20 x ") and other["gpus"] != base["gpus"]
