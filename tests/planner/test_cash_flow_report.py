"""workbook.planner.cash_flow_report: the plan's ``cash_flow`` data (by fiscal year and by month) and the Markdown's
table, from one scenario's calculation."""

from __future__ import annotations

import pytest

from workbook.calc import compute
from workbook.catalog import load_catalog
from workbook.planner.cash_flow_report import COLUMNS, cash_flow_data, markdown_years, start_text, usd
from workbook.scenario.load import load_scenario

CATALOG = load_catalog()
PLAN = load_scenario("catalog/scenarios/17.9.4-70b-plan-h800.yaml")


def test_data_by_fiscal_year_and_month_are_the_calculations():
    q = compute(PLAN, CATALOG)
    cf = cash_flow_data(PLAN.name, q)
    assert cf["months"] == len(cf["by_month"]) == 36
    assert [y["fiscal_year"] for y in cf["by_fiscal_year"]] == [2027, 2028, 2029]  # the empty fourth year left out
    assert sum(y["rent_usd"] for y in cf["by_fiscal_year"]) == pytest.approx(q["cf_rent_total_usd"], rel=1e-12)
    assert cf["by_month"][0]["first_day"] == "2027-01-01" and cf["by_month"][-1]["first_day"] == "2029-12-01"
    assert cf["by_month"][0]["capex_usd"] == q["tco_capex_usd"]
    assert start_text(cf) == "January 2027"


def test_markdown_rows_end_with_the_totals():
    q = compute(PLAN.model_copy(update={"cost": PLAN.cost.model_copy(update={"fiscal_year_start_month": 10})}),
                CATALOG)
    rows = markdown_years(cash_flow_data(PLAN.name, q))
    assert [r["fiscal_year"] for r in rows] == ["FY2027", "FY2028", "FY2029", "FY2030", "Total"]
    assert [r["months"] for r in rows] == [9, 12, 12, 3, 36]
    assert all(len(r["cells"]) == len(COLUMNS) for r in rows)
    assert rows[-1]["cells"][0] == usd(q["cf_rent_total_usd"])


def test_usd_puts_the_sign_first():
    assert usd(-4937053.4) == "-$4,937,053" and usd(1520640) == "$1,520,640"
