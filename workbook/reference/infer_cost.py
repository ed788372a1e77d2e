"""Inference cost (spec 17.8.11, family F11) and the 3-year TCO per GPU-hour (spec 17.9 T8)."""

from __future__ import annotations

import math

from workbook.units import GB, HOURS_PER_DAY, HOURS_PER_YEAR, KILO, MB, MILLION, SECONDS_PER_DAY, SECONDS_PER_HOUR

#: API prices, USD per 1M tokens (input, output) (spec 17.8 §2.3, 17.8.11)
API_PRICE_USD_PER_1M = {
    "gpt-4o": (2.50, 10.00),
    "claude-3.5-sonnet": (3.00, 15.00),
    "deepseek-v3": (0.27, 1.10),
    "gpt-4": (None, 30.00),
}
#: self-host infrastructure adder C_infra, USD per 1M tokens (17.8.11)
C_INFRA_USD_PER_1M = 0.50
#: Table 17-124 (inference): (on-demand low, high), (spot low, high), USD per GPU-hour
PRICE_TABLE_17_124 = {
    "h800-80gb": ((2.50, 4.00), (0.80, 1.20)),
    "h20-96gb": ((0.80, 1.50), (0.30, 0.60)),
    "a100-80gb": ((1.50, 2.50), (0.50, 0.80)),
    "a100-40gb": ((1.00, 1.50), (0.30, 0.50)),
}
#: Table 17-65 (training, 17.5.9 cross-reference): (on-demand low, high), (reserved low, high)
PRICE_TABLE_17_65 = {
    "h800": ((2.5, 4.0), (1.5, 2.5)),
    "h20": ((1.0, 1.8), (0.6, 1.0)),
    "a100-80gb": ((2.0, 3.5), (1.0, 1.8)),
    "a100-40gb": ((1.5, 2.5), (0.8, 1.5)),
}
#: book's stated spot saving range (17.8.11)
SPOT_SAVING_RANGE_FRAC = (0.60, 0.70)
#: LoRA adapter size range, MB per adapter (17.8.11)
LORA_ADAPTER_MB = (10.0, 50.0)


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a finite positive number, got {v!r}")


def hourly_cost_usd(*, num_gpus: float, gpu_hour_usd: float) -> float:
    """Cost per hour = N_GPU·price (spec F11)."""
    return num_gpus * gpu_hour_usd


def daily_cost_usd(*, num_gpus: float, gpu_hour_usd: float, hours: float = HOURS_PER_DAY) -> float:
    """Daily cost = N_GPU·price·24 (spec F11)."""
    return hourly_cost_usd(num_gpus=num_gpus, gpu_hour_usd=gpu_hour_usd) * hours


def tokens_per_hour_M(*, throughput_tok_per_s: float) -> float:
    """Millions of tokens per hour = throughput·3600/1e6 (spec F11)."""
    return throughput_tok_per_s * SECONDS_PER_HOUR / MILLION


def cost_per_1M_tokens_usd(*, num_gpus: float, gpu_hour_usd: float, throughput_tok_per_s: float) -> float:
    """Cost per 1M tokens = N_GPU·price/(throughput·3600/1e6) (spec F11)."""
    _pos(throughput_tok_per_s=throughput_tok_per_s)
    return hourly_cost_usd(num_gpus=num_gpus, gpu_hour_usd=gpu_hour_usd) / tokens_per_hour_M(
        throughput_tok_per_s=throughput_tok_per_s
    )


def cost_per_request_usd(
    *, prompt_tokens: float, output_tokens: float, throughput_tok_per_s: float, num_gpus: float, gpu_hour_usd: float
) -> float:
    """Cost per request = (S_in + O)/throughput·N_GPU·price/3600 (spec F11, erratum 18)."""
    _pos(throughput_tok_per_s=throughput_tok_per_s)
    return (prompt_tokens + output_tokens) / throughput_tok_per_s * num_gpus * gpu_hour_usd / SECONDS_PER_HOUR


def breakeven_M_tokens_per_day(
    *, num_gpus: float, gpu_hour_usd: float, api_usd_per_1M: float, infra_usd_per_1M: float = 0.0
) -> float:
    """Break-even volume vs an API: N·price·24/(P_API − C_infra), M tokens/day (spec F11); inf if never."""
    margin = api_usd_per_1M - infra_usd_per_1M
    if margin <= 0:
        return math.inf
    return daily_cost_usd(num_gpus=num_gpus, gpu_hour_usd=gpu_hour_usd) / margin


def spot_saving_frac(*, on_demand_usd: float, spot_usd: float) -> float:
    """Spot saving = 1 − spot/on-demand (spec F11)."""
    _pos(on_demand_usd=on_demand_usd)
    return 1.0 - spot_usd / on_demand_usd


def spot_saving_within(
    *, on_demand_range_usd: tuple[float, float], spot_range_usd: tuple[float, float],
    saving_range_frac: tuple[float, float] = SPOT_SAVING_RANGE_FRAC, tol_frac: float = 1e-9,
) -> bool:
    """Whether the savings at the low and at the high ends of a price table row lie in the stated range (Table 17-124)."""
    lo, hi = saving_range_frac
    savings = [spot_saving_frac(on_demand_usd=o, spot_usd=s) for o, s in zip(on_demand_range_usd, spot_range_usd)]
    return all(lo - tol_frac <= x <= hi + tol_frac for x in savings)


def serving_utilisation_frac(*, demand_tokens_per_day: float, throughput_tok_per_s: float) -> float:
    """Utilisation = demand/(throughput·86400) (spec F11)."""
    _pos(throughput_tok_per_s=throughput_tok_per_s)
    return demand_tokens_per_day / (throughput_tok_per_s * SECONDS_PER_DAY)


def api_premium_x(*, api_usd_per_1M: float, self_host_usd_per_1M: float) -> float:
    """How many times an API costs more than self-hosting (17.8.11 example 1)."""
    _pos(self_host_usd_per_1M=self_host_usd_per_1M)
    return api_usd_per_1M / self_host_usd_per_1M


def lora_extra_GB(*, adapters: int, adapter_MB: float) -> float:
    """Extra memory of resident LoRA adapters, GB (17.8.11: 100 x 10-50 MB = 1-5 GB)."""
    return adapters * adapter_MB * MB / GB


def tco_usd_per_gpu_hour(*, capex_usd: float, opex_usd_per_month: float, months: float, num_gpus: float, years: float = 3.0) -> float:
    """Owned-hardware TCO per GPU-hour = (capex + opex·months)/(N_GPU·years·8760) (spec T8, erratum 28)."""
    _pos(num_gpus=num_gpus, years=years)
    return (capex_usd + opex_usd_per_month * months) / (num_gpus * years * HOURS_PER_YEAR)


def power_cost_usd_per_gpu_hour(*, tdp_W: float, pue: float, electricity_usd_per_kWh: float) -> float:
    """Electricity per GPU-hour at TDP with PUE: W/1000·PUE·$/kWh (T8 opex item)."""
    return tdp_W / KILO * pue * electricity_usd_per_kWh


def owned_break_even_hours(*, capex_usd_per_gpu: float, gpu_hour_usd: float, opex_usd_per_gpu_hour: float) -> float:
    """GPU-hours of use after which buying beats renting: capex/(price − opex); inf if never (spec T8)."""
    margin = gpu_hour_usd - opex_usd_per_gpu_hour
    if margin <= 0:
        return math.inf
    return capex_usd_per_gpu / margin
