"""Line items of the Cost sheet: training cost (actual and target duration), budget, self-build and owned-hardware
TCO / break-even, inference cost per 1M output tokens (spec 17.5.9, 17.8.11 F11, 17.9 T8).

The GPU-hour price in use is on Plan (workbook/sheets/price.py). Money in USD. A blank budget cell
(cost.budget_usd left null) means no budget.
"""

from __future__ import annotations

CONSTANTS = [
    ("cost_months_per_year", 12.0, "month/yr", "Months per year", "definition"),
]

_N = "{train_gpus_billed}"

#: cost inputs that take the Defaults sheet's value when left blank
_DEFAULTED = ["electricity_usd_per_kWh", "pue", "server_capex_usd", "depreciation_years", "infra_usd_per_1M_tokens"]

ITEMS = {
    **{f"cost_{f}": f"=IF(ISBLANK({{cost.{f}}}),d_{f},{{cost.{f}}})" for f in _DEFAULTED},
    "train_gpus_billed": "={plan_gpus_to_buy}",
    # F11: spot saving = 1 - spot/on-demand (0 when the catalogue has no spot or no on-demand price)
    "spot_saving_frac": "=IF({gpu_price_spot_usd_per_gpu_hour}*{gpu_price_on_demand_usd_per_gpu_hour}>0,"
    "1-{gpu_price_spot_usd_per_gpu_hour}/{gpu_price_on_demand_usd_per_gpu_hour},0)",
    # the training days in use (Step Time sheet: the step model, or 17.5.3 C / (N * peak * MFU) x overhead)
    # the job runs on its N GPUs; the bill covers the GPUs procured (_N, spares and whole nodes included)
    "train_days_actual": "={train_days}",
    # 17.5.9: GPU-hours = N * days * 24; cost = GPU-hours * price
    "train_gpu_hours": f"={_N}*{{train_days_actual}}*c_hours_per_day",
    "train_cost_usd": "={train_gpu_hours}*{gpu_hour_usd}",
    "train_gpu_hours_target": f"={_N}*{{training.target_days}}*c_hours_per_day",
    "train_cost_target_usd": "={train_gpu_hours_target}*{gpu_hour_usd}",
    # 17.9.4 budget check
    "budget_given_flag": "=IF(ISBLANK({cost.budget_usd}),0,1)",
    "budget_headroom_usd": "=IF({budget_given_flag}=1,{cost.budget_usd}-MAX({train_cost_usd},{train_cost_target_usd}),0)",
    "within_budget_flag": "=IF({budget_headroom_usd}>=0,1,0)",
    # 17.9.3 / T8 owned hardware
    "capex_per_gpu_usd": "={cost_server_capex_usd}/{gpu_gpus_per_node}",
    "train_capex_usd": f"={{capex_per_gpu_usd}}*{_N}",
    "power_usd_per_gpu_hour": "={gpu_tdp_W}/c_kilo*{cost_pue}*{cost_electricity_usd_per_kWh}",
    # 17.5.9 self-build: power N * TDP_kW * 24 * days * $/kWh (x PUE); depreciation N * capex / (years * 365) * days
    "self_build_power_usd": f"={_N}*{{train_days_actual}}*c_hours_per_day*{{power_usd_per_gpu_hour}}",
    "self_build_depreciation_usd": f"={_N}*{{capex_per_gpu_usd}}/({{cost_depreciation_years}}*c_days_per_year)"
    "*{train_days_actual}",
    "self_build_total_usd": "={self_build_power_usd}+{self_build_depreciation_usd}",
    "self_build_vs_cloud_frac": "=IF({train_cost_usd}>0,{self_build_total_usd}/{train_cost_usd},0)",
    # T8: (capex + opex over the period) / (GPUs x years x 8760 h), one GPU
    "tco_usd_per_gpu_hour": "=({capex_per_gpu_usd}+{power_usd_per_gpu_hour}*c_hours_per_year*{cost_depreciation_years})"
    "/({cost_depreciation_years}*c_hours_per_year)",
    # buying beats renting after capex / (price - power) GPU-hours; 0 = never
    "break_even_gpu_hours": "=IF({gpu_hour_usd}>{power_usd_per_gpu_hour},"
    "{capex_per_gpu_usd}/({gpu_hour_usd}-{power_usd_per_gpu_hour}),0)",
    "break_even_months_24x7": "={break_even_gpu_hours}/(c_hours_per_year/c_cost_months_per_year)",
    # F11 serving cost
    # the serving GPUs and throughput in use (Inference sheet: engine or book model, or the measured tokens/s)
    "infer_hourly_cost_usd": "={srv_gpus_in_use}*{gpu_hour_usd}",
    "infer_daily_cost_usd": "={infer_hourly_cost_usd}*c_hours_per_day",
    "infer_tokens_per_s_used": "={srv_tokens_per_s_total_in_use}*{cost.utilisation_frac}",
    "infer_tokens_per_day_M": "={infer_tokens_per_s_used}*c_s_per_day/c_mega",
    "infer_usd_per_1M_tokens": "=IF({infer_tokens_per_s_used}>0,"
    "{infer_hourly_cost_usd}/({infer_tokens_per_s_used}*c_s_per_hour/c_mega),0)",
    # erratum 18: (S_in + O) / throughput x N_GPU x price / 3600
    "infer_usd_per_request": "=IF({infer_tokens_per_s_used}>0,({inference.prompt_tokens}+{inference.output_tokens})"
    "/{infer_tokens_per_s_used}*{infer_hourly_cost_usd}/c_s_per_hour,0)",
    "api_premium_x": "=IF({infer_usd_per_1M_tokens}>0,{cost.api_usd_per_1M_tokens}/{infer_usd_per_1M_tokens},0)",
    # V_breakeven = N * price * 24 / (P_API - C_infra); 0 = never
    "infer_breakeven_M_tokens_per_day": "=IF({cost.api_usd_per_1M_tokens}>{cost_infra_usd_per_1M_tokens},"
    "{infer_daily_cost_usd}/({cost.api_usd_per_1M_tokens}-{cost_infra_usd_per_1M_tokens}),0)",
}
