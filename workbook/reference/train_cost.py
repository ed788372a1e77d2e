"""Training cost (spec 17.5.9): GPU-hours, cloud cost, self-build (power + depreciation),
savings, break-even and the MFU lever. Money in USD.
"""

from __future__ import annotations

from workbook.units import DAYS_PER_YEAR, HOURS_PER_DAY, KILO

#: table 17-65 (spec 17.5.9, 2025 reference): USD per GPU-hour, on-demand and reserved ranges
PRICE_TABLE: dict[str, dict[str, float]] = {
    "H800-80GB": {"on_demand_low": 2.5, "on_demand_high": 4.0, "reserved_low": 1.5, "reserved_high": 2.5},
    "H20-96GB": {"on_demand_low": 1.0, "on_demand_high": 1.8, "reserved_low": 0.6, "reserved_high": 1.0},
    "A100-80GB": {"on_demand_low": 2.0, "on_demand_high": 3.5, "reserved_low": 1.0, "reserved_high": 1.8},
    "A100-40GB": {"on_demand_low": 1.5, "on_demand_high": 2.5, "reserved_low": 0.8, "reserved_high": 1.5},
}
#: prices used by the worked examples (spec 17.5.9)
EXAMPLE_PRICE_USD_PER_GPU_HOUR = {"on_demand": 3.0, "reserved": 2.0, "lora_example": 2.5,
                                  "negotiated_low": 1.2, "negotiated_high": 1.5}
#: table 17-67 (spec 17.5.9): TCO constants
TCO_CONSTANTS: dict[str, float] = {
    "power_usd_per_GPU_day": 1.7,
    "cooling_pct_of_power_low": 30,
    "cooling_pct_of_power_high": 50,
    "IB_switch_usd_min": 50000,
    "storage_cloud_usd_per_GB_month_low": 0.02,
    "storage_cloud_usd_per_GB_month_high": 0.10,
    "storage_self_usd_per_GB_month_low": 0.01,
    "storage_self_usd_per_GB_month_high": 0.05,
    "self_build_wins_utilisation_pct": 60,
    "self_build_wins_years": 1,
    "H800_capex_usd": 25000,
    "depreciation_years": 3,
}


def _nonneg(**values: float) -> None:
    for name, v in values.items():
        if v is None or v < 0:
            raise ValueError(f"{name} must be >= 0, got {v!r}")


def gpu_hours(*, num_gpus: float, days: float) -> float:
    """GPU-hours = N * days * 24 (spec 17.5.9)."""
    _nonneg(num_gpus=num_gpus, days=days)
    return num_gpus * days * HOURS_PER_DAY


def cloud_cost_usd(*, gpu_hours: float, gpu_hour_usd: float) -> float:
    """Cost = GPU-hours * price (spec 17.5.9)."""
    _nonneg(gpu_hours=gpu_hours, gpu_hour_usd=gpu_hour_usd)
    return gpu_hours * gpu_hour_usd


def power_usd_per_gpu_day(*, tdp_W: float, electricity_usd_per_kWh: float, pue: float = 1.0) -> float:
    """Power per GPU-day = TDP_kW * 24 * price * PUE (table 17-67: 0.7*24*0.1 = $1.68)."""
    _nonneg(tdp_W=tdp_W, electricity_usd_per_kWh=electricity_usd_per_kWh, pue=pue)
    return tdp_W / KILO * HOURS_PER_DAY * electricity_usd_per_kWh * pue


def power_cost_usd(*, num_gpus: float, tdp_W: float, days: float, electricity_usd_per_kWh: float,
                   pue: float = 1.0) -> float:
    """Self-build power = N * TDP_kW * 24 * days * price (* PUE for cooling) (spec 17.5.9)."""
    return num_gpus * days * power_usd_per_gpu_day(tdp_W=tdp_W, electricity_usd_per_kWh=electricity_usd_per_kWh,
                                                    pue=pue)


def depreciation_usd(*, num_gpus: float, capex_usd_per_gpu: float, years: float, days: float) -> float:
    """Straight-line depreciation = N * capex / (years * 365) * days (spec 17.5.9)."""
    if years <= 0:
        raise ValueError("years must be positive")
    _nonneg(num_gpus=num_gpus, capex_usd_per_gpu=capex_usd_per_gpu, days=days)
    return num_gpus * capex_usd_per_gpu / (years * DAYS_PER_YEAR) * days


def self_build_cost_usd(*, num_gpus: float, days: float, tdp_W: float, electricity_usd_per_kWh: float,
                        capex_usd_per_gpu: float, years: float, pue: float = 1.0) -> dict[str, float]:
    """Book's self-build cost: power + depreciation only (spec 17.5.9)."""
    p = power_cost_usd(num_gpus=num_gpus, tdp_W=tdp_W, days=days,
                       electricity_usd_per_kWh=electricity_usd_per_kWh, pue=pue)
    d = depreciation_usd(num_gpus=num_gpus, capex_usd_per_gpu=capex_usd_per_gpu, years=years, days=days)
    return {"power_usd": p, "depreciation_usd": d, "total_usd": p + d}


def saving_frac(*, cost_usd: float, baseline_usd: float) -> float:
    """Saving of cost against a baseline: 1 - cost/baseline (spec 17.5.9)."""
    if baseline_usd <= 0:
        raise ValueError("baseline_usd must be positive")
    return 1.0 - cost_usd / baseline_usd


def break_even_count(*, cost_big_usd: float, cost_small_usd: float) -> float:
    """How many small runs (fine-tunes) one big run pays for: C1/C2 (spec 17.5.9)."""
    if cost_small_usd <= 0:
        raise ValueError("cost_small_usd must be positive")
    return cost_big_usd / cost_small_usd


def mfu_saving_frac(*, mfu_old: float, mfu_new: float) -> float:
    """GPU-hours scale as 1/MFU: saving = 1 - MFU_old/MFU_new (spec 17.5.9)."""
    if mfu_new <= 0:
        raise ValueError("mfu_new must be positive")
    return 1.0 - mfu_old / mfu_new


def budget_margin_frac(*, cost_usd: float, budget_usd: float) -> float:
    """(budget - cost) / budget; negative means over budget (spec 17.5.10 step 7)."""
    if budget_usd <= 0:
        raise ValueError("budget_usd must be positive")
    return (budget_usd - cost_usd) / budget_usd
