"""A failing plan names the cheapest change that fixes it (issue 23): a request whose budget no layout meets plans
as "Not feasible", its Cover's fix line (live, from the Sensitivity switching value and the rent committed) names a
budget and a GPU-hour price, and the Markdown the planner's smallest change; after a LibreOffice recalculation the
Cover's line reads as cached, and the named budget, or the named price, passes the budget check (half a percent
less budget still fails it)."""

from __future__ import annotations

import math
import re
import shutil

import openpyxl
import pytest

from tests.planner.helpers import plan_base_with_cli
from tests.writer.edits import EditBook, Layout, Recalc
from workbook.engines import recalculate_many
from workbook.engines.libreoffice import find_soffice
from workbook.writer.cover_fix import LABEL, NONE_NEEDED

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    return plan_base_with_cli(tmp_path_factory.mktemp("low-budget"), "low-budget", budget_usd=100)


def _fix_row(ws) -> int:
    return next(r for r in range(1, 40) if ws[f"A{r}"].value == LABEL)


def test_a_budget_failure_names_the_budget_and_the_price_that_fix_it(planned, tmp_path):
    xlsx, data = planned
    change = data["training"]["infeasible"]["smallest_change"]
    assert change["field"] == "budget_usd" and change["confirmed"]
    md = open(data["markdown"]).read()
    assert f"**The cheapest change that fixes it:** raise the budget to ${math.ceil(change['to']):,.0f}" in md
    assert "## Not feasible" in md
    cover = openpyxl.load_workbook(xlsx, data_only=True)["Cover"]
    row = _fix_row(cover)
    text = cover[f"B{row}"].value
    m = re.fullmatch(r"raise the budget to \$([\d,]+), or get a GPU-hour price of \$([\d.]+) or less", text)
    assert m, text
    budget, price = float(m.group(1).replace(",", "")), float(m.group(2))
    assert cover["A1"].value.startswith("Not feasible: ")
    lay = Layout(xlsx)
    edits = {"budget": ("cost.budget_usd", budget), "less": ("cost.budget_usd", budget * 0.995)}
    if price > 0:  # a price that rounds to $0.00 is no fix to test
        edits["price"] = ("cost.gpu_hour_usd", price)
    paths = {}
    for name, (key, value) in edits.items():
        p = tmp_path / f"{name}.xlsx"
        shutil.copyfile(xlsx, p)
        b = EditBook(p)
        b.plan(key, 0, value)
        b.save()
        paths[name] = p
    values = recalculate_many([xlsx, *paths.values()], "libreoffice")
    assert values[xlsx][("Cover", f"B{row}")] == text  # the live line reads as cached
    sheet = next(s for s, rows in lay.rows.items() if "check_within_budget" in rows)
    for name, p in paths.items():
        failed = Recalc(values[p], lay).get(sheet, "check_within_budget", 0)
        assert failed == (1 if name == "less" else 0), name
    if Recalc(values[paths["budget"]], lay).get(sheet, "hard_failures_count", 0) == 0:
        assert values[paths["budget"]][("Cover", f"B{row}")] == NONE_NEEDED
        assert values[paths["budget"]][("Cover", "A1")].startswith("Recommendation: ")


def test_the_failing_one_column_plan_passes_every_rule_and_verifies(planned):
    """Every rule, the lint and `workbook verify` with every installed engine: Gnumeric included, whose INDEX of a
    one-cell range is #REF! (the Cover's master check names a lone scenario's cells themselves)."""
    from tests.planner.helpers import assert_book_passes_rules_and_verifies

    assert_book_passes_rules_and_verifies(planned[0])
