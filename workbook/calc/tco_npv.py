"""TCO sheet, third block: rent vs buy like for like (issue 23 item 3). The discount rate, the residual value of
the hardware at the end of the horizon, each year's discount factor and the present values of the owned opex
and of the rent of the same GPUs 24/7 (the per-year table's rows, workbook.calc.tco_years), and the NPV of each
option over the same horizon: capex at time 0, each year's cash at its end, the residual at N years
(workbook.reference.tco_npv). Both are costs; the lower one is the cheaper option.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.calc.tco_years import YEARS
from workbook.calc.tco_years import key as year_key
from workbook.reference import tco_npv

_S = "issue 23 (NPV, year-end)"


def key(year: int, series: str) -> str:
    """Quantity name of one year's cell: tco_y<year>_<series>."""
    return f"tco_y{year}_{series}"


#: per-year series: (series, unit, label)
SERIES = [("discount", "x", "discount factor (1 + rate)^-year, year-end"),
          ("pv_opex_usd", "USD", "owned opex, present value"),
          ("pv_rent_usd", "USD", "rent alternative, present value")]

QUANTITIES = [
    Q("tco_discount_rate_frac", "fraction", "Discount rate in use (scenario, else default; assumed)", _S),
    Q("tco_residual_life_years", "years", "Useful life of the hardware for its residual value (scenario, else "
      "default)", _S),
    Q("tco_residual_floor_frac", "fraction", "Residual floor: share of capex kept after the useful life (scenario, "
      "else default)", _S),
    Q("tco_residual_frac", "fraction", "Residual share of capex at the horizon: MAX(floor, 1 - years / life) "
      "(estimated)", _S),
    Q("tco_residual_usd", "USD", "Residual value at the horizon: capex x residual share (an inflow)", _S),
    *[Q(key(k, s), unit, f"Year {k}: {label}", _S) for s, unit, label in SERIES for k in YEARS],
    Q("tco_residual_discount", "x", "Discount factor of the residual: (1 + rate)^-years", _S),
    Q("tco_residual_pv_usd", "USD", "Residual value, present value", _S),
    Q("tco_npv_owned_usd", "USD", "NPV of buying (a cost): capex + PV of opex - PV of the residual", _S),
    Q("tco_npv_rent_usd", "USD", "NPV of renting the same GPUs 24/7 over the same horizon (a cost)", _S),
    Q("tco_npv_buy_saving_usd", "USD", "NPV of rent - NPV of buying (above 0: buying is cheaper)", _S),
    Q("tco_buy_cheaper_flag", "0/1", "1 = buying is cheaper by NPV, 0 = renting is", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    """Discounting, residual value and the two NPVs of one scenario."""
    c, q = ctx.s.cost, ctx.q
    rate, years, capex = float(c.discount_rate_frac), q["tco_years"], q["tco_capex_usd"]
    life, floor = float(c.residual_life_years), float(c.residual_floor_frac)
    frac = tco_npv.residual_frac(age_years=years, life_years=life, floor_frac=floor)
    residual = capex * frac
    opex = [q[year_key(k, "opex")] for k in YEARS]
    rent = [q[year_key(k, "rent")] for k in YEARS]
    out = {"tco_discount_rate_frac": rate, "tco_residual_life_years": life, "tco_residual_floor_frac": floor,
           "tco_residual_frac": frac, "tco_residual_usd": residual}
    for k in YEARS:
        d = tco_npv.discount_factor(rate=rate, years=k)
        out[key(k, "discount")] = d
        out[key(k, "pv_opex_usd")] = opex[k - 1] * d
        out[key(k, "pv_rent_usd")] = rent[k - 1] * d
    out["tco_residual_discount"] = tco_npv.discount_factor(rate=rate, years=years)
    out["tco_residual_pv_usd"] = residual * out["tco_residual_discount"]
    owned = tco_npv.npv_owned_usd(capex_usd=capex, opex_by_year_usd=opex, residual_usd=residual, years=years,
                                  rate=rate)
    rented = tco_npv.npv_rent_usd(rent_by_year_usd=rent, rate=rate)
    out.update({"tco_npv_owned_usd": owned, "tco_npv_rent_usd": rented, "tco_npv_buy_saving_usd": rented - owned,
                "tco_buy_cheaper_flag": 1.0 if owned < rented else 0.0})
    return out
