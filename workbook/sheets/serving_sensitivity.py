"""Line items of the Sensitivity sheet's serving block: one-way sensitivity of the serving cost per month and per
1M output tokens (workbook.reference.serving_sensitivity states the exactness of each driver). Money in USD."""

from __future__ import annotations

from workbook.calc.serving_sensitivity import MONTH_DRIVERS, PER_1M_DRIVERS

_S, _M, _U, _R = "{cost.sensitivity_frac}", "{srv_sens_month_usd}", "{srv_sens_1M_usd}", "{inference.replicas}"
_TAGS = (("low", "-"), ("high", ""))


def _span(low: str, high: str) -> str:
    return f"=MAX({low},{high},0)-MIN({low},{high},0)"


def _items() -> dict[str, str]:
    items = {
        "srv_sens_month_usd": "={infer_hourly_cost_usd}*c_hours_per_year/c_cost_months_per_year",
        "srv_sens_1M_usd": "={infer_usd_per_1M_tokens}",
        # the replicas follow the load: co-located engine model, a given arrival rate carried, model throughput
        "srv_sens_sized_flag": "={srv_engine_model_flag}*(1-{srv_dis_flag})*{srv_arrival_given_flag}"
        "*(1-{srv_load_saturated_flag})*(1-{srv_measured_flag})*IF({srv_max_load_rps}>0,1,0)",
    }
    for tag, sign in _TAGS:
        f = f"({sign}{_S})"
        items[f"srv_sens_replicas_{tag}"] = ("=IF({srv_sens_sized_flag}=1,ROUNDUP(ROUND({inference.arrival_rate_rps}"
                                             f"*(1+{f})/{{srv_max_load_rps}},c_count_ceil_digits),0),{_R})")
        items[f"srv_sens_price_dmonth_{tag}_usd"] = f"={_M}*(1+{f})-{_M}"
        items[f"srv_sens_load_dmonth_{tag}_usd"] = f"={_M}*{{srv_sens_replicas_{tag}}}/{_R}-{_M}"
        items[f"srv_sens_power_dmonth_{tag}_usd"] = (f"={f}*{{tco_power_per_year_usd}}"
                                                     "/c_cost_months_per_year")
        items[f"srv_sens_price_d1M_{tag}_usd"] = f"={_U}*(1+{f})-{_U}"
        items[f"srv_sens_load_d1M_{tag}_usd"] = (f"={{srv_sens_sized_flag}}*({_U}*{{srv_sens_replicas_{tag}}}/{_R}"
                                                 f"/(1+{f})-{_U})")
        items[f"srv_sens_output_d1M_{tag}_usd"] = f"={{srv_sens_sized_flag}}*({_U}/(1+{f})-{_U})"
    # the span of the two bars from 0 (both lie on one side when the re-sized fleet rounds both loads up)
    for d, _ in MONTH_DRIVERS:
        items[f"srv_sens_{d}_swing_month_usd"] = _span(f"{{srv_sens_{d}_dmonth_low_usd}}",
                                                       f"{{srv_sens_{d}_dmonth_high_usd}}")
    for d, _ in PER_1M_DRIVERS:
        items[f"srv_sens_{d}_swing_1M_usd"] = _span(f"{{srv_sens_{d}_d1M_low_usd}}", f"{{srv_sens_{d}_d1M_high_usd}}")
    return items


ITEMS = _items()
