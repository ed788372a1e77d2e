"""Sensitivity sheet: one-way sensitivity of the training cost and days to GPU price, throughput per GPU
(MFU), tokens, sequence length and power price at -/+ the sensitivity step; the switching values at
which the plan exactly meets its budget or its deadline; the contingency; owned hardware by year (yearly power,
depreciation, multi-year TCO: the buy side of the plan's ask) (issue 9, spec 17.5.3, 17.5.9, 17.9.3, 17.9.4).

Reads the Cost sheet's cost and days and the Models sheet's attention share from ctx.q. A switching value
of 0 means none: no budget set, or the driver does not move that measure (docs/planner.md).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import ownership as own
from workbook.reference import sensitivity as sv

_S = "one-way sensitivity, -/+ the step"
#: (key, label) of the drivers, in the sheet's order
DRIVERS = [("price", "GPU-hour price"), ("thr", "Throughput per GPU (MFU)"), ("tokens", "Training tokens"),
           ("seq", "Sequence length (approx.)"), ("power", "Power price (owned, TCO)")]
#: drivers that move the days
DAY_DRIVERS = ["thr", "tokens", "seq"]

QUANTITIES = [
    Q("sens_step_frac", "fraction", "Sensitivity step in use (each driver -/+ this share)", _S),
    Q("sens_cost_usd", "USD", "Training cost of the plan (rental, at the actual duration)", "17.5.9"),
    Q("sens_days", "days", "Training days of the plan (time model in use)", "17.5.3"),
    Q("sens_tco_usd", "USD", "Owned-hardware cost of the run (self-build power + depreciation)", "17.5.9"),
    Q("sens_seq_share_frac", "fraction", "Attention share of FLOPs per token that S moves (0 with the MFU time model)",
      "17.3.7"),
    Q("sens_budget_usd", "USD", "Budget (0 = none)", "17.9.4"),
    *[Q(f"sens_{d}_dcost_low_usd", "USD", f"{lab} -step: change of the cost", _S,
        note="power: change of the owned cost") for d, lab in DRIVERS],
    *[Q(f"sens_{d}_dcost_high_usd", "USD", f"{lab} +step: change of the cost", _S,
        note="power: change of the owned cost") for d, lab in DRIVERS],
    *[Q(f"sens_{d}_days_low", "days", f"{lab} -step: training days", _S) for d, lab in DRIVERS if d in DAY_DRIVERS],
    *[Q(f"sens_{d}_days_high", "days", f"{lab} +step: training days", _S) for d, lab in DRIVERS if d in DAY_DRIVERS],
    *[Q(f"sens_{d}_swing_usd", "USD", f"{lab}: cost swing (high minus low, absolute)", _S) for d, lab in DRIVERS],
    *[Q(f"sens_{d}_swing_days", "days", f"{lab}: days swing (absolute)", _S) for d, lab in DRIVERS
      if d in DAY_DRIVERS],
    Q("sens_price_switch_budget_usd_per_gpu_hour", "USD/GPU-h", "Switching value: GPU-hour price at the budget "
      "check (budget / the larger of the run's and the target window's GPU-hours)", _S),
    Q("sens_thr_switch_budget_tokens_per_s_per_gpu", "tokens/s", "Switching value: throughput per GPU at the budget",
      _S),
    Q("sens_thr_switch_deadline_tokens_per_s_per_gpu", "tokens/s", "Switching value: throughput per GPU at the "
      "deadline", _S),
    Q("sens_mfu_switch_deadline_frac", "fraction", "Switching value: MFU at the deadline (MFU x days / target)", _S),
    Q("sens_overhead_switch_deadline_x", "x", "Switching value: wall-clock overhead factor at the deadline "
      "(overhead x target / days)", _S),
    Q("sens_tokens_switch_budget", "tokens", "Switching value: training tokens at the budget", _S),
    Q("sens_tokens_switch_deadline", "tokens", "Switching value: training tokens at the deadline "
      "(tokens x target / days)", _S),
    Q("sens_seq_switch_budget_tokens", "tokens", "Switching value: sequence length at the budget (approx.)", _S,
      note="0 = S does not move it; below 0 = no S reaches it"),
    Q("sens_seq_switch_deadline_tokens", "tokens", "Switching value: sequence length at the deadline (approx.)", _S,
      note="0 = S does not move it; below 0 = no S reaches it"),
    Q("sens_power_switch_budget_usd_per_kWh", "USD/kWh", "Switching value: power price at which the owned cost "
      "of the run meets the budget", _S, note="below 0 = depreciation alone exceeds the budget"),
    Q("sens_contingency_frac", "fraction", "Contingency in use", _S),
    Q("sens_contingency_usd", "USD", "Contingency on the training cost (apart from it)", _S),
    Q("sens_cost_with_contingency_usd", "USD", "Training cost plus contingency", _S),
    Q("own_power_per_year_usd", "USD/year", "Book T8, servers and GPU power only: power with PUE per year, GPUs "
      "procured at TDP 24/7", "17.9.3"),
    Q("own_depreciation_per_year_usd", "USD/year", "Book T8, servers only: depreciation per year (server capex / "
      "years; the TCO sheet adds the network)", "17.9.3"),
    Q("own_tco_usd", "USD", "Book T8, servers and GPU power only over the depreciation period (not the TCO: the TCO "
      "sheet adds network, storage, staff, support)", "17.9.3"),
]


def _lows_highs(s: float, cost: float, days: float, a: float, power: float) -> dict[str, float]:
    out: dict[str, float] = {}
    for sign, tag in ((-1, "low"), (1, "high")):
        f = sign * s
        out[f"sens_price_dcost_{tag}_usd"] = sv.scaled(cost, f) - cost
        out[f"sens_thr_dcost_{tag}_usd"] = sv.inverse_scaled(cost, f) - cost
        out[f"sens_tokens_dcost_{tag}_usd"] = sv.scaled(cost, f) - cost
        out[f"sens_seq_dcost_{tag}_usd"] = sv.seq_scaled(cost, f, a) - cost
        out[f"sens_power_dcost_{tag}_usd"] = sv.tco_at_power(power, 0.0, f) - power
        out[f"sens_thr_days_{tag}"] = sv.inverse_scaled(days, f)
        out[f"sens_tokens_days_{tag}"] = sv.scaled(days, f)
        out[f"sens_seq_days_{tag}"] = sv.seq_scaled(days, f, a)
    for d, _ in DRIVERS:
        out[f"sens_{d}_swing_usd"] = abs(out[f"sens_{d}_dcost_high_usd"] - out[f"sens_{d}_dcost_low_usd"])
    for d in DAY_DRIVERS:
        out[f"sens_{d}_swing_days"] = abs(out[f"sens_{d}_days_high"] - out[f"sens_{d}_days_low"])
    return out


def compute(ctx: Context) -> dict[str, float]:
    """Sensitivity quantities of one scenario."""
    c, t, q = ctx.s.cost, ctx.s.training, ctx.q
    s, cost, days = float(c.sensitivity_frac), q["train_cost_usd"], q["train_days_actual"]
    # the step model and a measured rate count attention FLOPs per token; 6PD (MFU given) has none
    a = q["attn_share_of_fwd_frac"] * (ctx.s.training.time_model != "mfu")
    power, dep = q["self_build_power_usd"], q["self_build_depreciation_usd"]
    budget = float(c.budget_usd) if c.budget_usd is not None else 0.0
    target, thr = float(t.target_days), q["train_tokens_per_s_per_gpu"]
    has = budget > 0

    def if_budget(f) -> float:
        return f() if has else 0.0

    return {
        "sens_step_frac": s, "sens_cost_usd": cost, "sens_days": days, "sens_tco_usd": q["self_build_total_usd"],
        "sens_seq_share_frac": a, "sens_budget_usd": budget,
        **_lows_highs(s, cost, days, a, power),
        "sens_price_switch_budget_usd_per_gpu_hour": if_budget(
            lambda: sv.price_switch_usd_per_gpu_hour(
                budget_usd=budget, gpu_hours=max(q["train_gpu_hours"], q["train_gpu_hours_target"]))),
        "sens_thr_switch_budget_tokens_per_s_per_gpu": if_budget(
            lambda: sv.inverse_switch(value=thr, limit=budget, measure=cost)),
        "sens_thr_switch_deadline_tokens_per_s_per_gpu": sv.inverse_switch(value=thr, limit=target, measure=days),
        "sens_mfu_switch_deadline_frac": sv.inverse_switch(value=q["train_mfu"], limit=target, measure=days),
        "sens_overhead_switch_deadline_x": sv.proportional_switch(value=float(t.overhead_factor), limit=target,
                                                                  measure=days),
        "sens_tokens_switch_budget": if_budget(lambda: sv.proportional_switch(value=t.tokens, limit=budget,
                                                                              measure=cost)),
        "sens_tokens_switch_deadline": sv.proportional_switch(value=t.tokens, limit=target, measure=days),
        "sens_seq_switch_budget_tokens": if_budget(lambda: sv.seq_switch(seq_len=t.seq_len, attn_share_frac=a,
                                                                         limit=budget, measure=cost)),
        "sens_seq_switch_deadline_tokens": sv.seq_switch(seq_len=t.seq_len, attn_share_frac=a, limit=target,
                                                         measure=days),
        "sens_power_switch_budget_usd_per_kWh": if_budget(lambda: sv.power_switch_usd_per_kWh(
            electricity_usd_per_kWh=q["cost_electricity_usd_per_kWh"], power_usd=power, depreciation_usd=dep,
            budget_usd=budget)) if power > 0 else 0.0,
        "sens_contingency_frac": float(c.contingency_frac),
        "sens_contingency_usd": cost * float(c.contingency_frac),
        "sens_cost_with_contingency_usd": cost * (1 + float(c.contingency_frac)),
        **_owned(q),
    }


def _owned(q: dict[str, float]) -> dict[str, float]:
    years, capex = q["cost_depreciation_years"], q["train_capex_usd"]
    power = own.power_per_year_usd(num_gpus=q["train_gpus_billed"], power_usd_per_gpu_hour=q["power_usd_per_gpu_hour"])
    return {"own_power_per_year_usd": power,
            "own_depreciation_per_year_usd": own.depreciation_per_year_usd(capex_usd=capex, years=years),
            "own_tco_usd": own.tco_usd(capex_usd=capex, power_per_year_usd=power, years=years)}
