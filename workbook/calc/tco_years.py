"""TCO sheet, second block: the owned cluster year by year, years 1..TCO_MAX_YEARS (issue 9, spec 17.9.3 T8):
each year's share in service (1, ..., the part year, then 0), its opex lines (power with PUE, storage, space,
staff, support) and their sum, depreciation, the owned cash (capex in year 1 + opex) and its cumulative sum, and the
rent of the same GPUs 24/7 beside it. Years past the horizon are 0; the cumulative sums stay at the totals.

One series at a time, years in order (rows tco_y<k>_<series>), so a cumulative is the SUM of its series' rows.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import tco
from workbook.scenario.model import TCO_MAX_YEARS

YEARS = range(1, TCO_MAX_YEARS + 1)
#: opex lines: (series, per-year quantity of calc.tco, label)
OPEX = [("power", "tco_power_per_year_usd", "power with PUE (opex)"),
        ("storage", "tco_storage_per_year_usd", "storage (opex)"),
        ("space", "tco_space_per_year_usd", "data-centre space (opex)"),
        ("staff", "tco_staff_per_year_usd", "staff (opex)"),
        ("support", "tco_support_per_year_usd", "support (opex)")]
#: (series, unit, label) in the sheet's order
SERIES = [("frac", "fraction", "share of the year in service (0 = past the horizon)"),
          *[(s, "USD", label) for s, _, label in OPEX],
          ("opex", "USD", "opex (power + storage + space + staff + support)"),
          ("depreciation", "USD", "depreciation (capex / years x share in service)"),
          ("cash", "USD", "owned cash out (capex in year 1 + opex)"),
          ("cumulative", "USD", "owned cash out, cumulative (TCO to date)"),
          ("rent", "USD", "rent alternative (the GPUs owned, 24/7)"),
          ("rent_cumulative", "USD", "rent alternative, cumulative")]


def key(year: int, series: str) -> str:
    """Quantity name of one cell of the table: tco_y<year>_<series>[_usd]."""
    return f"tco_y{year}_{series}" + ("" if series == "frac" else "_usd")


QUANTITIES = [Q(key(k, s), unit, f"Year {k}: {label}", "17.9.3") for s, unit, label in SERIES for k in YEARS]


def compute(ctx: Context) -> dict[str, float]:
    """The per-year table of one scenario (workbook.reference.tco.by_year)."""
    q = ctx.q
    rows = tco.by_year(capex_usd=q["tco_capex_usd"], opex_per_year_usd={s: q[name] for s, name, _ in OPEX},
                       rent_per_year_usd=q["tco_rent_per_year_usd"], years=q["tco_years"], max_years=TCO_MAX_YEARS)
    return {key(k, s): row["frac" if s == "frac" else f"{s}_usd"] for k, row in zip(YEARS, rows) for s, _, _ in SERIES}
