"""The plan Cover is the ask (issue 23): after a LibreOffice recalculation its first 25 rows, and the PDF's first
page, carry the GPU count, term, cost, budget, headroom and verdict; another GPU picked on Plan retitles it."""

from __future__ import annotations

import shutil
import subprocess

import openpyxl
import pytest

from tests.planner.helpers import planned_once
from tests.shared import recalculated
from tests.writer.edits import EditBook, Layout, Recalc
from workbook.engines import recalculate_many
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]
REQUEST = "catalog/requests/17.9.4-70b-h800.yaml"


@pytest.fixture(scope="module")
def planned():
    return planned_once(REQUEST, "17.9.4-70b-h800")


def _first_rows(values: dict, ws, n: int = 25) -> list[str]:
    """The Cover's first *n* rows (columns A-F) as text lines: recalculated values, else the typed text."""
    lines = []
    for r in range(1, n + 1):
        cells = [values.get(("Cover", f"{c}{r}"), ws[f"{c}{r}"].value) for c in "ABCDEF"]
        lines.append(" | ".join("" if v is None else str(v) for v in cells))
    return lines


def test_cover_first_rows_and_pdf_first_page_are_the_ask(planned, tmp_path):
    xlsx, data = planned
    rec, req = data["training"]["recommended"], data["request"]
    other = tmp_path / "h100.xlsx"
    shutil.copyfile(xlsx, other)
    b = EditBook(other)
    b.plan("gpu", 0, "h100")
    b.save()
    # the switching values on the Cover flip their checks: -/+ 0.5 % passes, then fails
    cached = openpyxl.load_workbook(xlsx, data_only=True)["Sensitivity"]
    lay = Layout(xlsx)
    flips = {}
    for key, switch, check in (("cost.gpu_hour_usd", "sens_price_switch_budget_usd_per_gpu_hour",
                                ("Cost", "within_budget_flag")),
                               ("training.overhead_factor", "sens_overhead_switch_deadline_x",
                                ("Step Time", "train_meets_target_flag"))):
        at = cached[lay.cell("Sensitivity", switch, 0)].value
        for f in (0.995, 1.005):
            p = tmp_path / f"{switch}-{f}.xlsx"
            shutil.copyfile(xlsx, p)
            e = EditBook(p)
            e.plan(key, 0, at * f)
            e.save()
            flips[p] = (check, f < 1)
    values = recalculated([xlsx, other, *flips], "libreoffice")  # the plan itself: once per session
    for p, ((sheet, key), passes) in flips.items():
        assert Recalc(values[p], lay).get(next(s for s, r in lay.rows.items() if key in r), key, 0) == passes, p.name
    wb = openpyxl.load_workbook(xlsx, data_only=True)
    text = "\n".join(_first_rows(values[xlsx], wb["Cover"]))
    headroom = req["budget_usd"] - max(rec["train_cost_usd"], rec["train_cost_target_usd"])
    assert values[xlsx][("Cover", "A1")] == f"Recommendation: H800 x {rec['num_gpus']}, rent"
    for want in (f"Rent {rec['num_gpus']} H800 GPUs", "reserved price, a 1-year commitment",
                 "of a $2.00M budget", "AMBER", "Budget headroom"):
        assert want in text, want
    figures = {wb["Cover"][f"A{r}"].value: values[xlsx].get(("Cover", f"B{r}")) for r in range(1, 26)}
    assert figures["GPUs rented"] == rec["num_gpus"]
    assert figures["Price basis (term)"] == "reserved"
    assert figures["Rent for the run"] == pytest.approx(rec["train_cost_usd"], rel=1e-9)
    assert figures["Budget"] == req["budget_usd"]
    assert figures["Budget headroom"] == pytest.approx(headroom, rel=1e-9)
    assert figures["Budget headroom"] == pytest.approx(figures["Budget"] - next(v for k, v in figures.items() if str(k).startswith("Rent committed (the ask)")))
    assert wb["Cover"]["A1"].value == values[xlsx][("Cover", "A1")]  # the cached title is the recalculated one
    # another GPU in the dropdown retitles the page
    assert values[other][("Cover", "A1")].startswith(("Recommendation: H100 x", "Not feasible: H100 x"))
    page1 = subprocess.run(["pdftotext", "-layout", "-f", "1", "-l", "1", data["pdf"], "-"], capture_output=True,
                           text=True, check=True).stdout
    for want in (f"Rent {rec['num_gpus']} H800 GPUs", "1-year commitment", f"${rec['train_cost_usd']:,.0f}",
                 "$2,000,000", f"${headroom:,.0f}", "AMBER: feasible", "Three largest risks", "Page 1 of"):
        assert want in page1, want


def test_cover_charts_the_rent_against_the_budget_on_its_one_page(planned):
    """The Cover's chart: the rent as columns and the budget as a line, on a value axis from zero, inside the
    printed page (the PDF's first page prints its title and the Cover stays one page)."""
    import re
    import zipfile

    from tests.export.helpers import charts_past_print_area
    from workbook.writer.cover_chart import TITLE

    xlsx, data = planned
    with zipfile.ZipFile(xlsx) as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    mine = [c for c in charts if TITLE in c and "<c:lineChart>" in c]
    assert len(mine) == 1
    chart = mine[0]
    assert "<c:barChart>" in chart and '<c:barDir val="col"/>' in chart and "Cover!$B$" in chart
    assert re.search(r'<c:valAx>.*?<c:min val="0"/>', chart, re.S)  # the cost axis starts at zero
    assert not [c for c in charts_past_print_area(xlsx) if c[0] == "Cover"]
    page1 = subprocess.run(["pdftotext", "-layout", "-f", "1", "-l", "1", data["pdf"], "-"], capture_output=True,
                           text=True, check=True).stdout
    assert TITLE in page1 and "Budget" in page1 and "Page 1 of" in page1


def test_pdf_order_one_page_cover_and_recommendation_and_training_rows_only(planned):
    """Cover (1 page), Recommendation (1 page), Assumptions, Sensitivity, Cash Flow (when the workbook has it), Cost
    Breakdown, TCO, Checks, Rejected, Glossary; the training plan's Sensitivity pages print no serving rows; the
    glossary explains the terms."""
    from tests.export.helpers import sheet_of_each_page
    from workbook.export.pdf import sheet_names
    from workbook.writer.planbook import pdf_sheets

    xlsx, data = planned
    text = subprocess.run(["pdftotext", "-layout", data["pdf"], "-"], capture_output=True, text=True,
                          check=True).stdout
    pages = text.split("\f")[:-1] if text.endswith("\f") else text.split("\f")
    order = pdf_sheets(sheet_names(xlsx))
    sheets = sheet_of_each_page(data["pdf"], order)
    assert list(dict.fromkeys(sheets)) == order
    assert sheets.count("Cover") == 1 and sheets.count("Recommendation") == 1
    sens = "".join(p for p, s in zip(pages, sheets) if s == "Sensitivity")
    assert "serving" not in sens.lower() and "Tornado: training days" in sens
    glossary = "".join(p for p, s in zip(pages, sheets) if s == "Glossary")
    for term in ("TP", "PP", "DP", "CP", "EP", "ZeRO", "MFU", "TTFT", "TPOT"):
        assert f"\n{term} " in glossary or glossary.startswith(term) or f" {term} " in glossary, term


def test_the_cover_counts_the_estimated_or_assumed_values_the_plan_rests_on(planned):
    """Issue 25: a plan never silently rests on a guess. The Cover counts the catalogue values of the recommended
    plan that are estimates or assumptions and names their records (the Assumptions sheet lists each)."""
    from workbook.catalog import load_catalog
    from workbook.catalog.provenance import provenance_flags

    xlsx, data = planned
    flags = provenance_flags(load_catalog(), data["training"]["recommended"]["gpu"], "llama-3-70b", "reserved")
    assert flags, "the 17.9.4 plan rests on estimated values (the comparison says so); this test needs one"
    cover = openpyxl.load_workbook(xlsx)["Cover"]
    text = " ".join(str(c.value) for row in cover.iter_rows() for c in row if c.value is not None)
    assert f"{len(flags)} catalogue value(s) estimated or assumed, listed on Assumptions" in text
    assert flags[0].record in text


def test_a_blank_required_input_reads_input_error_on_the_cover_never_value(planned, tmp_path):
    """Finance clears a required input (the contingency) on Plan: after a LibreOffice recalculation the title names
    the input, and every other figure of the Cover's first page reads "input error", none #VALUE!."""
    from workbook.writer.input_guard import INPUT_ERROR_TEXT

    xlsx, _ = planned
    edited = tmp_path / "blank.xlsx"
    shutil.copy(xlsx, edited)
    book = EditBook(edited)
    book.plan("cost.contingency_frac", 0, None)
    book.save()
    values = recalculate_many([edited], "libreoffice")[edited]
    cover = {k: v for k, v in values.items() if k[0] == "Cover"}
    assert "INPUT ERROR" in str(cover[("Cover", "A1")]) and "Contingency" in str(cover[("Cover", "A1")])
    assert cover[("Cover", "A2")] == INPUT_ERROR_TEXT
    errors = {k: v for k, v in cover.items() if isinstance(v, str) and v.startswith("#")}
    assert not errors, errors
