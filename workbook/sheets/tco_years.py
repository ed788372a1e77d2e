"""Line items of the TCO sheet, second block: the owned cluster year by year (workbook.calc.tco_years). Each
series is one run of rows, years in order, so a cumulative is the SUM of its series up to the year and the
years before year k are ROWS of the share rows above it. Years past the horizon give 0 (no IF needed)."""

from __future__ import annotations

from workbook.calc.tco_years import OPEX, YEARS, key


def _items() -> dict[str, str]:
    items: dict[str, str] = {}
    for k in YEARS:  # share of year k in service: MAX(0, MIN(1, N - (k - 1)))
        before = f"ROWS({{{key(1, 'frac')}}}:{{{key(k - 1, 'frac')}}})" if k > 1 else "0"
        items[key(k, "frac")] = f"=MAX(0,MIN(1,{{tco_years}}-{before}))"
    for series, per_year, _ in OPEX:
        for k in YEARS:
            items[key(k, series)] = f"={{{per_year}}}*{{{key(k, 'frac')}}}"
    for k in YEARS:
        items[key(k, "opex")] = f"={{tco_opex_per_year_usd}}*{{{key(k, 'frac')}}}"
    for k in YEARS:
        items[key(k, "depreciation")] = f"={{tco_depreciation_per_year_usd}}*{{{key(k, 'frac')}}}"
    for k in YEARS:  # capex is paid in year 1
        items[key(k, "cash")] = ("={tco_capex_usd}+" if k == 1 else "=") + f"{{{key(k, 'opex')}}}"
    for k in YEARS:
        items[key(k, "cumulative")] = f"=SUM({{{key(1, 'cash')}}}:{{{key(k, 'cash')}}})"
    for k in YEARS:
        items[key(k, "rent")] = f"={{tco_rent_per_year_usd}}*{{{key(k, 'frac')}}}"
    for k in YEARS:
        items[key(k, "rent_cumulative")] = f"=SUM({{{key(1, 'rent')}}}:{{{key(k, 'rent')}}})"
    return items


ITEMS = _items()
