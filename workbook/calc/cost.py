"""Cost sheet: training cost (actual and target duration), budget, self-build TCO
and break-even, inference cost per 1M output tokens (spec 17.5.9, 17.8.11, 17.9 T8).

Reads train_days (the Step Time sheet's training days in use: the step model, or 6PD at the MFU given) and
the serving figures in use, srv_gpus_in_use and srv_tokens_per_s_total_in_use (Inference sheet: engine
or book model, or the measured throughput), from ctx.q (both earlier in workbook.calc.SHEETS). The GPU-hour price in use is the Plan sheet's
(workbook.calc.price); the resolved scenario holds the same figure.
"""

from __future__ import annotations

import math

from workbook.calc.base import Context, Q
from workbook.reference import infer_cost as ic
from workbook.reference import train_cost
from workbook.units import HOURS_PER_DAY, HOURS_PER_YEAR

QUANTITIES = [
    Q("cost_electricity_usd_per_kWh", "USD/kWh", "Electricity price in use (scenario, else default)", "17.5.9"),
    Q("cost_pue", "x", "PUE in use (scenario, else default)", "17.5.9"),
    Q("cost_server_capex_usd", "USD", "Server capex in use (scenario, else default)", "17.9.3"),
    Q("cost_depreciation_years", "years", "Depreciation period in use (scenario, else default)", "17.9.3"),
    Q("cost_infra_usd_per_1M_tokens", "USD/1M tokens", "Self-host adder in use (scenario, else default)", "17.8.11"),
    Q("train_gpus_billed", "GPUs", "GPUs billed for training (the GPUs procured, spares included)", "17.5.4"),
    Q("spot_saving_frac", "fraction", "Spot saving against on-demand for this GPU (0 if a price is missing)", "17.8.11"),
    Q("train_days_actual", "days", "Training duration in use (time model of the scenario, overhead included)", "17.5.3"),
    Q("train_gpu_hours", "GPU-h", "Training GPU-hours billed at the actual duration", "17.5.9"),
    Q("train_cost_usd", "USD", "Training cloud cost at the actual duration", "17.5.9"),
    Q("train_gpu_hours_target", "GPU-h", "GPU-hours of the procured GPUs reserved for the whole target window", "17.9.4"),
    Q("train_cost_target_usd", "USD", "Cloud cost of the procured GPUs reserved for the target window", "17.9.4"),
    Q("budget_given_flag", "0/1", "A budget is set (1) or not (0)", "17.9.4"),
    Q("budget_headroom_usd", "USD", "Budget minus the larger of actual and target cost (0 when no budget)", "17.9.4"),
    Q("within_budget_flag", "0/1", "Training cost within budget (1 = yes or no budget)", "17.9.4"),
    Q("capex_per_gpu_usd", "USD/GPU", "Owned hardware capex per GPU (server price / GPUs per server)", "17.9.3"),
    Q("train_capex_usd", "USD", "Owned hardware capex for the GPUs procured", "17.9.3"),
    Q("power_usd_per_gpu_hour", "USD/GPU-h", "Electricity per GPU-hour at TDP with PUE", "17.5.9"),
    Q("self_build_power_usd", "USD", "Self-build power cost over the training run", "17.5.9"),
    Q("self_build_depreciation_usd", "USD", "Self-build depreciation over the training run", "17.5.9"),
    Q("self_build_total_usd", "USD", "Self-build cost of the run (power + depreciation)", "17.5.9"),
    Q("self_build_vs_cloud_frac", "fraction", "Self-build cost as a share of the cloud cost of the run", "17.5.9"),
    Q("tco_usd_per_gpu_hour", "USD/GPU-h", "Owned TCO per GPU-hour over the depreciation period (capex + power)", "17.9.3"),
    Q("break_even_gpu_hours", "GPU-h", "GPU-hours of use per GPU after which buying beats renting (0 = never)", "17.9.3"),
    Q("break_even_months_24x7", "months", "Months of 24/7 use per GPU to break even on buying (0 = never)", "17.9.3"),
    Q("infer_hourly_cost_usd", "USD/h", "Serving cost per hour (all serving GPUs in use)", "17.8.11"),
    Q("infer_daily_cost_usd", "USD/day", "Serving cost per day (all serving GPUs)", "17.8.11"),
    Q("infer_tokens_per_s_used", "tokens/s", "Output tokens per second served at the set utilisation (throughput in use)", "17.8.11"),
    Q("infer_tokens_per_day_M", "M tokens/day", "Output tokens served per day at the set utilisation", "17.8.11"),
    Q("infer_usd_per_1M_tokens", "USD/1M tokens", "Serving cost per 1M output tokens at the set utilisation", "17.8.11"),
    Q("infer_usd_per_request", "USD/request", "Serving cost per request (prompt + output tokens at decode throughput)", "17.8.11"),
    Q("api_premium_x", "x", "API price over self-hosted cost per 1M tokens", "17.8.11"),
    Q("infer_breakeven_M_tokens_per_day", "M tokens/day", "Daily volume at which self-hosting matches the API (0 = never)", "17.8.11"),
]


def _finite_or_zero(x: float) -> float:
    return x if math.isfinite(x) else 0.0


def compute(ctx: Context) -> dict[str, float]:
    """Cost quantities of one scenario."""
    c, t, s, g, q = ctx.s.cost, ctx.s.training, ctx.s.inference, ctx.gpu, ctx.q
    price = float(c.gpu_hour_usd)
    billed = float(q["plan_gpus_to_buy"])
    od, spot = g.price_usd_per_gpu_hour("on_demand"), g.price_usd_per_gpu_hour("spot")
    spot_saving = ic.spot_saving_frac(on_demand_usd=od, spot_usd=spot) if od and spot else 0.0

    days = float(q["train_days"])  # the time model in use (Step Time sheet), overhead included
    hours = train_cost.gpu_hours(num_gpus=billed, days=days)
    hours_target = train_cost.gpu_hours(num_gpus=billed, days=t.target_days)
    cost = train_cost.cloud_cost_usd(gpu_hours=hours, gpu_hour_usd=price)
    cost_target = train_cost.cloud_cost_usd(gpu_hours=hours_target, gpu_hour_usd=price)
    budget = c.budget_usd
    headroom = 0.0 if budget is None else budget - max(cost, cost_target)

    capex_gpu = float(c.server_capex_usd) / float(g.gpus_per_node)
    power_h = ic.power_cost_usd_per_gpu_hour(tdp_W=float(g.tdp_W), pue=float(c.pue),
                                             electricity_usd_per_kWh=float(c.electricity_usd_per_kWh))
    sb = train_cost.self_build_cost_usd(num_gpus=billed, days=days, tdp_W=float(g.tdp_W),
                                        electricity_usd_per_kWh=float(c.electricity_usd_per_kWh), capex_usd_per_gpu=capex_gpu,
                                        years=float(c.depreciation_years), pue=float(c.pue))
    months = float(c.depreciation_years) * 12
    tco = ic.tco_usd_per_gpu_hour(capex_usd=capex_gpu, opex_usd_per_month=power_h * HOURS_PER_YEAR / 12, months=months,
                                  num_gpus=1, years=float(c.depreciation_years))
    be_hours = ic.owned_break_even_hours(capex_usd_per_gpu=capex_gpu, gpu_hour_usd=price, opex_usd_per_gpu_hour=power_h)

    n_inf = float(q["srv_gpus_in_use"])
    thr = float(q["srv_tokens_per_s_total_in_use"])
    thr_used = thr * c.utilisation_frac
    per_1M = ic.cost_per_1M_tokens_usd(num_gpus=n_inf, gpu_hour_usd=price, throughput_tok_per_s=thr_used) if thr_used > 0 else 0.0
    return {
        "cost_electricity_usd_per_kWh": float(c.electricity_usd_per_kWh),
        "cost_pue": float(c.pue),
        "cost_server_capex_usd": float(c.server_capex_usd),
        "cost_depreciation_years": float(c.depreciation_years),
        "cost_infra_usd_per_1M_tokens": float(c.infra_usd_per_1M_tokens),
        "train_gpus_billed": billed,
        "spot_saving_frac": spot_saving,
        "train_days_actual": days,
        "train_gpu_hours": hours,
        "train_cost_usd": cost,
        "train_gpu_hours_target": hours_target,
        "train_cost_target_usd": cost_target,
        "budget_given_flag": float(budget is not None),
        "budget_headroom_usd": headroom,
        "within_budget_flag": float(budget is None or headroom >= 0),
        "capex_per_gpu_usd": capex_gpu,
        "train_capex_usd": capex_gpu * billed,
        "power_usd_per_gpu_hour": power_h,
        "self_build_power_usd": sb["power_usd"],
        "self_build_depreciation_usd": sb["depreciation_usd"],
        "self_build_total_usd": sb["total_usd"],
        "self_build_vs_cloud_frac": sb["total_usd"] / cost if cost > 0 else 0.0,
        "tco_usd_per_gpu_hour": tco,
        "break_even_gpu_hours": _finite_or_zero(be_hours),
        "break_even_months_24x7": _finite_or_zero(be_hours / (HOURS_PER_YEAR / 12)),
        "infer_hourly_cost_usd": ic.hourly_cost_usd(num_gpus=n_inf, gpu_hour_usd=price),
        "infer_daily_cost_usd": ic.daily_cost_usd(num_gpus=n_inf, gpu_hour_usd=price),
        "infer_tokens_per_s_used": thr_used,
        "infer_tokens_per_day_M": ic.tokens_per_hour_M(throughput_tok_per_s=thr_used) * HOURS_PER_DAY,
        "infer_usd_per_1M_tokens": per_1M,
        "infer_usd_per_request": ic.cost_per_request_usd(
            prompt_tokens=s.prompt_tokens, output_tokens=s.output_tokens, throughput_tok_per_s=thr_used,
            num_gpus=n_inf, gpu_hour_usd=price) if thr_used > 0 else 0.0,
        "api_premium_x": c.api_usd_per_1M_tokens / per_1M if per_1M > 0 else 0.0,
        "infer_breakeven_M_tokens_per_day": _finite_or_zero(ic.breakeven_M_tokens_per_day(
            num_gpus=n_inf, gpu_hour_usd=price, api_usd_per_1M=c.api_usd_per_1M_tokens,
            infra_usd_per_1M=float(c.infra_usd_per_1M_tokens))),
    }
