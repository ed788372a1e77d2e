"""Owned hardware by year (spec 17.9.3 T8, 17.5.9): the yearly power bill of the GPUs bought, run 24/7 at TDP
with PUE, the straight-line depreciation per year and the multi-year total cost of ownership. Money in USD."""

from __future__ import annotations

from workbook.units import HOURS_PER_YEAR


def power_per_year_usd(*, num_gpus: float, power_usd_per_gpu_hour: float) -> float:
    """N x (TDP x PUE x price per kWh) x 8760 h: a year of 24/7 power (T8 opex)."""
    return num_gpus * power_usd_per_gpu_hour * HOURS_PER_YEAR


def depreciation_per_year_usd(*, capex_usd: float, years: float) -> float:
    """Straight-line depreciation: capex / years (17.9.3)."""
    return capex_usd / years


def tco_usd(*, capex_usd: float, power_per_year_usd: float, years: float) -> float:
    """Capex + power over the depreciation period (T8: (capex + opex x period) over the period)."""
    return capex_usd + power_per_year_usd * years
