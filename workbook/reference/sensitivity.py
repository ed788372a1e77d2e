"""One-way sensitivity of a training plan's cost and duration, and its switching values
(issue 9; spec 17.5.3, 17.5.9, 17.9.4). Plain functions; the Sensitivity sheet's formulas are separate.

The cost is the rental cost of the run, C = N_billed x days x 24 x price (17.5.9); the duration is the
training days in use (17.5.3: days = D x FLOP/token / (N x throughput)). How each driver moves them:

* GPU price p: C scales with p, exactly; days do not move.
* throughput per GPU x (MFU, or the step model's efficiency as a whole): days and C scale with 1/x, exactly.
* tokens D: days and C scale with D, exactly.
* sequence length S: an approximation through the attention share a of the FLOPs per token
  (17.3.7: 2P + 4LSd per token forward): days(S') ~= days x (1 - a + a x S'/S); the MFU time model
  (6PD) has no attention term, so a = 0 there and S does not move it.
* power price e: the owned-hardware cost of the run only (self-build power + depreciation, 17.5.9);
  the rental cost and the days do not move.

A switching value is the driver's value at which the plan exactly meets its budget (C = budget, or
self-build total = budget for power) or its deadline (days = target days).
"""

from __future__ import annotations


def scaled(value: float, frac: float) -> float:
    """value x (1 + frac): price, tokens (exact)."""
    return value * (1 + frac)


def inverse_scaled(value: float, frac: float) -> float:
    """value / (1 + frac): days and cost when the throughput per GPU moves by frac (exact)."""
    return value / (1 + frac)


def seq_scaled(value: float, frac: float, attn_share_frac: float) -> float:
    """value x (1 + a x frac): days and cost when S moves by frac (approximation, attention share a)."""
    return value * (1 + attn_share_frac * frac)


def tco_at_power(power_usd: float, depreciation_usd: float, frac: float) -> float:
    """Self-build cost of the run when the power price moves by frac (power part scales exactly)."""
    return depreciation_usd + power_usd * (1 + frac)


def price_switch_usd_per_gpu_hour(*, budget_usd: float, gpu_hours: float) -> float:
    """price* = budget / GPU-hours billed: the GPU-hour price at which C = budget. The budget check bills the larger
    of the run's and the target window's GPU-hours (spec 17.9.4): pass that larger figure for the check's price."""
    return budget_usd / gpu_hours


def proportional_switch(*, value: float, limit: float, measure: float) -> float:
    """For a driver that the measure is proportional to (tokens vs days or cost): value x limit / measure."""
    return value * limit / measure


def inverse_switch(*, value: float, limit: float, measure: float) -> float:
    """For a driver the measure is inversely proportional to (throughput, MFU): value x measure / limit."""
    return value * measure / limit


def seq_switch(*, seq_len: float, attn_share_frac: float, limit: float, measure: float) -> float:
    """S* with measure x (1 + a (S*/S - 1)) = limit: S x (1 + (limit/measure - 1) / a); 0 when a = 0
    (S does not move the measure). A result <= 0 means no sequence length reaches the limit."""
    if attn_share_frac <= 0:
        return 0.0
    return seq_len * (1 + (limit / measure - 1) / attn_share_frac)


def power_switch_usd_per_kWh(*, electricity_usd_per_kWh: float, power_usd: float, depreciation_usd: float,
                             budget_usd: float) -> float:
    """e* with depreciation + power x e*/e = budget (self-build cost of the run at the budget)."""
    return electricity_usd_per_kWh * (budget_usd - depreciation_usd) / power_usd
