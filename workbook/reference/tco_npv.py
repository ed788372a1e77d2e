"""Rent vs buy like for like (issue 23 item 3): the present value of the owned cluster's cash flows, net of the
hardware's residual value at the end of the horizon, against the present value of renting the same GPUs 24/7
over the same horizon, at one discount rate. Money in USD.

Convention (year-end discounting): the capex is paid at time 0; each year's opex and each year's rent (the part
year included) at the end of that year, discounted by (1 + r)^-k; the residual value is received at the end of
the horizon, N years (N may end inside a year), discounted by (1 + r)^-N. Both options are costs: the lower
present value is the cheaper option (Brealey, Myers & Allen, Principles of Corporate Finance, ch. 2 and 6).

Residual value: straight line over a useful life to a floor, residual share = MAX(floor, 1 - N / life) of the
capex (hyperscalers depreciate servers over 5-6 years; the floor is the resale or scrap value kept).
"""

from __future__ import annotations

from workbook.reference.train_cost import _nonneg


def discount_factor(*, rate: float, years: float) -> float:
    """(1 + r)^-t: today's value of one dollar t years out."""
    if rate <= -1:
        raise ValueError("rate must be above -1")
    _nonneg(years=years)
    return (1 + rate) ** -years


def residual_frac(*, age_years: float, life_years: float, floor_frac: float) -> float:
    """Share of the capex the hardware is worth at *age_years*: MAX(floor, 1 - age / life) (3 of 5 years: 0.4)."""
    _nonneg(age_years=age_years, floor_frac=floor_frac)
    if life_years <= 0:
        raise ValueError("life_years must be positive")
    return max(floor_frac, 1 - age_years / life_years)


def pv_of_years(*, cash_by_year: list[float], rate: float) -> float:
    """Sum over years k = 1.. of cash_k x (1 + r)^-k (year-end)."""
    return sum(c * discount_factor(rate=rate, years=k) for k, c in enumerate(cash_by_year, start=1))


def npv_owned_usd(*, capex_usd: float, opex_by_year_usd: list[float], residual_usd: float, years: float,
                  rate: float) -> float:
    """Present value of owning: capex (time 0) + discounted opex by year - discounted residual at N years."""
    _nonneg(capex_usd=capex_usd, residual_usd=residual_usd)
    return (capex_usd + pv_of_years(cash_by_year=opex_by_year_usd, rate=rate)
            - residual_usd * discount_factor(rate=rate, years=years))


def npv_rent_usd(*, rent_by_year_usd: list[float], rate: float) -> float:
    """Present value of renting the same GPUs 24/7 over the same years (year-end)."""
    return pv_of_years(cash_by_year=rent_by_year_usd, rate=rate)
