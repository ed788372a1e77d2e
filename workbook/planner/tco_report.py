"""The owned cluster's TCO of a recommended plan as the plan's data (``Outcome.data["tco"]``, and
``Outcome.data["serving_tco"]`` for the serving plan of a request that trains too) and as the Markdown's rows: the quantities of workbook.calc.tco (servers, network switches and optics, storage, power
with PUE, space, staff, support, the N-year TCO, all-in per GPU-hour, the rent alternative, contingency), the NPVs
of buying and of renting of workbook.calc.tco_npv, the Cost sheet's TCO
lines the Recommendation shows, and the year-by-year table of workbook.calc.tco_years. A training plan's TCO owns
its GPUs billed, a serving plan's its serving GPUs in use (the TCO sheet's ``tco_gpus_owned`` by purpose); a
serving plan's TCO leaves out the Cost sheet's owned cost of the training run (TRAINING_ONLY).

Every value is the calculation's own (``workbook.calc.compute`` of the workbook's first column, the figures the
workbook's cached values and the verifier's expected values are); names are the quantity names (row keys).
"""

from __future__ import annotations

from typing import Any

from workbook.calc import tco as calc_tco
from workbook.calc import tco_npv as calc_tco_npv
from workbook.calc.tco_years import SERIES, YEARS, key
from workbook.planner.report import usd

#: the Cost sheet's TCO lines the Recommendation and Cost Breakdown sheets show beside calc.tco's
COST_LINES = ("tco_usd_per_gpu_hour", "self_build_total_usd", "break_even_months_24x7")
#: the one-name-per-quantity keys of ``tco`` (the by-year table apart)
#: rent vs buy by NPV (issue 23): calc.tco_npv's rows less its per-year ones
NPV_KEYS = tuple(q.name for q in calc_tco_npv.QUANTITIES if not q.name.startswith("tco_y"))
KEYS = tuple(q.name for q in calc_tco.QUANTITIES) + NPV_KEYS + COST_LINES
#: lines of a training plan's TCO only: the owned cost of the training run (a serving column's is its defaults')
TRAINING_ONLY = ("self_build_total_usd",)
#: the Markdown's year columns: heading, series of calc.tco_years ("capex": tco_capex_usd in year 1)
YEAR_COLUMNS = (("Capex", "capex"), ("Opex", "opex"), ("Depreciation", "depreciation"), ("Cash out", "cash"),
                ("Cumulative", "cumulative"), ("Rent 24/7", "rent"), ("Rent cumulative", "rent_cumulative"))


def keys(purpose: str) -> tuple[str, ...]:
    """The keys of a TCO of a plan of ``purpose``: KEYS, less TRAINING_ONLY when it only serves."""
    return tuple(k for k in KEYS if k not in TRAINING_ONLY) if purpose == "serving" else KEYS


def tco_data(scenario: str, gpu: str, purpose: str, q: dict[str, float]) -> dict[str, Any]:
    """``{"scenario", "gpu", "purpose", <keys(purpose)>: value, "by_year": [{"year": k, tco_y<k>_<series>: value},
    ...]}``."""
    by_year = [{"year": k, **{key(k, s): q[key(k, s)] for s, _, _ in SERIES}} for k in YEARS]
    return {"scenario": scenario, "gpu": gpu, "purpose": purpose, **{k: q[k] for k in keys(purpose)},
            "by_year": by_year}


def fmt(value: float, unit: str) -> str:
    """A value as the Markdown prints it (whole dollars, cents per GPU-hour, percent for a fraction)."""
    if unit in ("USD", "USD/year", "USD/switch", "USD/link", "USD/FTE-year"):
        return usd(value)
    if unit in ("USD/GPU-h", "USD/TB-month", "USD/kW-month"):
        return f"${value:,.2f}"
    if unit == "fraction":
        return f"{value:.1%}"
    if unit in ("count", "nodes", "GPUs"):
        return f"{value:,.0f}"
    if unit in ("years", "x", "0/1"):
        return f"{value:g}"
    return f"{value:,.1f}"


def markdown_rows(tco: dict[str, Any]) -> list[dict[str, str]]:
    """One row per quantity of ``tco``: label and unit of its calc declaration, the value, the key."""
    from workbook.calc import registry

    reg = registry()
    return [{"label": reg[k].q.label, "value": fmt(tco[k], reg[k].q.unit), "unit": reg[k].q.unit, "key": k}
            for k in keys(tco["purpose"])]


def markdown_years(tco: dict[str, Any]) -> list[dict[str, Any]]:
    """The years in service (share > 0): ``{"year", "frac", "cells": [formatted value per YEAR_COLUMNS]}``."""
    out = []
    for row in tco["by_year"]:
        k = row["year"]
        if row[key(k, "frac")] <= 0:
            continue
        cells = [("-" if k > 1 else fmt(tco["tco_capex_usd"], "USD")) if s == "capex" else fmt(row[key(k, s)], "USD")
                 for _, s in YEAR_COLUMNS]
        out.append({"year": k, "frac": fmt(row[key(k, "frac")], "fraction"), "cells": cells})
    return out


__all__ = ["KEYS", "COST_LINES", "TRAINING_ONLY", "keys", "YEAR_COLUMNS", "tco_data", "fmt", "markdown_rows", "markdown_years"]
