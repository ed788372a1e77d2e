"""Line items of the Sensitivity sheet: one-way sensitivity of cost and days, switching values, contingency
(workbook.reference.sensitivity states the exactness of each driver). Money in USD; 0 = none."""

from __future__ import annotations

from workbook.calc.sensitivity import DAY_DRIVERS, DRIVERS

_S, _C, _D, _A = "{sens_step_frac}", "{sens_cost_usd}", "{sens_days}", "{sens_seq_share_frac}"
_B = "{sens_budget_usd}"
#: the measure at -/+ step, as a formula body over the base value X (a placeholder) and the signed step F
_MOVE = {"price": "X*(1+F)", "thr": "X/(1+F)", "tokens": "X*(1+F)", "seq": f"X*(1+{_A}*F)"}


def _moved(driver: str, base: str, sign: str) -> str:
    return _MOVE[driver].replace("X", base).replace("F", f"({sign}{_S})")


def _items() -> dict[str, str]:
    items = {
        "sens_step_frac": "={cost.sensitivity_frac}",
        "sens_cost_usd": "={train_cost_usd}",
        "sens_days": "={train_days_actual}",
        "sens_tco_usd": "={self_build_total_usd}",
        "sens_seq_share_frac": "={attn_share_of_fwd_frac}*CHOOSE({train_time_model_position},1,0,1)",
        "sens_budget_usd": "=IF({budget_given_flag}=1,{cost.budget_usd},0)",
    }
    for tag, sign in (("low", "-"), ("high", "")):
        for d, _ in DRIVERS:
            items[f"sens_{d}_dcost_{tag}_usd"] = (f"={sign}{_S}*{{self_build_power_usd}}" if d == "power"
                                                  else f"={_moved(d, _C, sign)}-{_C}")
    for tag, sign in (("low", "-"), ("high", "")):
        for d in DAY_DRIVERS:
            items[f"sens_{d}_days_{tag}"] = f"={_moved(d, _D, sign)}"
    for d, _ in DRIVERS:
        items[f"sens_{d}_swing_usd"] = f"=ABS({{sens_{d}_dcost_high_usd}}-{{sens_{d}_dcost_low_usd}})"
    for d in DAY_DRIVERS:
        items[f"sens_{d}_swing_days"] = f"=ABS({{sens_{d}_days_high}}-{{sens_{d}_days_low}})"
    thr, tgt = "{train_tokens_per_s_per_gpu}", "{training.target_days}"
    items.update({
        "sens_price_switch_budget_usd_per_gpu_hour": f"=IF({_B}>0,{_B}/MAX({{train_gpu_hours}},{{train_gpu_hours_target}}),0)",
        "sens_thr_switch_budget_tokens_per_s_per_gpu": f"=IF({_B}>0,{thr}*{_C}/{_B},0)",
        "sens_thr_switch_deadline_tokens_per_s_per_gpu": f"={thr}*{_D}/{tgt}",
        "sens_mfu_switch_deadline_frac": f"={{train_mfu}}*{_D}/{tgt}",
        "sens_overhead_switch_deadline_x": f"={{training.overhead_factor}}*{tgt}/{_D}",
        "sens_tokens_switch_budget": f"=IF({_B}>0,{{training.tokens}}*{_B}/{_C},0)",
        "sens_tokens_switch_deadline": f"={{training.tokens}}*{tgt}/{_D}",
        "sens_seq_switch_budget_tokens": f"=IF(AND({_B}>0,{_A}>0),{{training.seq_len}}*(1+({_B}/{_C}-1)/{_A}),0)",
        "sens_seq_switch_deadline_tokens": f"=IF({_A}>0,{{training.seq_len}}*(1+({tgt}/{_D}-1)/{_A}),0)",
        "sens_power_switch_budget_usd_per_kWh": "=IF(AND(" + _B + ">0,{self_build_power_usd}>0),"
        "{cost_electricity_usd_per_kWh}*(" + _B + "-{self_build_depreciation_usd})/{self_build_power_usd},0)",
        "sens_contingency_frac": "={cost.contingency_frac}",
        "sens_contingency_usd": f"={_C}*{{sens_contingency_frac}}",
        "sens_cost_with_contingency_usd": f"={_C}+{{sens_contingency_usd}}",
        # 17.9.3 / T8 owned hardware by year: N x power per GPU-hour x 8760 h; capex / years; capex + power x years
        "own_power_per_year_usd": "={train_gpus_billed}*{power_usd_per_gpu_hour}*c_hours_per_year",
        "own_depreciation_per_year_usd": "={train_capex_usd}/{cost_depreciation_years}",
        "own_tco_usd": "={train_capex_usd}+{own_power_per_year_usd}*{cost_depreciation_years}",
    })
    return items


ITEMS = _items()
