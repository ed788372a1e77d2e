"""Sensitivity sheet, serving block: one-way sensitivity of the serving cost per month and per 1M output tokens
to the GPU-hour price, the arrival rate (replicas re-sized to carry it), the output tokens per request and the
power price (owned) at -/+ the sensitivity step (issue 9, spec 17.8.11; workbook.reference.serving_sensitivity
states the exactness of each driver).

Reads the Cost sheet's serving cost and the Inference sheet's serving flags and largest load per replica from
ctx.q, the step from the Plan (it stands apart from the training block). A change of 0: the driver does not move it.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import serving_sensitivity as ss

_S = "17.8.11"
#: (key, label) of the drivers of the cost per month and of the cost per 1M output tokens, in the sheet's order
MONTH_DRIVERS = [("price", "GPU-hour price"), ("load", "Arrival rate (replicas re-sized)"),
                 ("power", "Power price (owned fleet)")]
PER_1M_DRIVERS = [("price", "GPU-hour price"), ("load", "Arrival rate (replicas re-sized)"),
                  ("output", "Output tokens per request (fleet held)")]
_TAGS = (("low", -1.0, "-step"), ("high", 1.0, "+step"))
_SIZED = ("0 = the fleet is not sized by the load (disaggregated, book model, measured throughput, no arrival "
          "rate, a saturated load or no load meeting the targets): replicas held")

QUANTITIES = [
    Q("srv_sens_month_usd", "USD/month", "Serving cost per month (serving GPUs rented 24/7: per hour x hours per "
      "year / months per year)", _S),
    Q("srv_sens_1M_usd", "USD/1M tokens", "Serving cost per 1M output tokens (Cost sheet)", _S),
    Q("srv_sens_sized_flag", "0/1", "The fleet is sized by the load (co-located engine model carrying a given "
      "arrival rate)", _S, note=_SIZED),
    *[Q(f"srv_sens_replicas_{t}", "replicas", f"Replicas that carry the arrival rate {lab} (largest load per "
        "replica meeting the targets)", "one-way sensitivity, -/+ the step", note="replicas held when the fleet is not sized by the load")
      for t, _, lab in _TAGS],
    *[Q(f"srv_sens_{d}_dmonth_{t}_usd", "USD/month", f"{name} {lab}: change of the serving cost per month",
        "one-way sensitivity, -/+ the step", note="power: change of the owned fleet's power bill per month (TCO sheet: GPUs, hosts, network, PUE)" if d == "power" else "")
      for t, _, lab in _TAGS for d, name in MONTH_DRIVERS],
    *[Q(f"srv_sens_{d}_d1M_{t}_usd", "USD/1M tokens", f"{name} {lab}: change of the cost per 1M output tokens",
        "one-way sensitivity, -/+ the step", note="" if d == "price" else "0 when the fleet is not sized by the load")
      for t, _, lab in _TAGS for d, name in PER_1M_DRIVERS],
    *[Q(f"srv_sens_{d}_swing_month_usd", "USD/month", f"{name}: swing of the cost per month (span of its bars, "
        "0 included)",
        "one-way sensitivity, -/+ the step")
      for d, name in MONTH_DRIVERS],
    *[Q(f"srv_sens_{d}_swing_1M_usd", "USD/1M tokens", f"{name}: swing of the cost per 1M output tokens "
        "(span of its bars, 0 included)", "one-way sensitivity, -/+ the step") for d, name in PER_1M_DRIVERS],
]


def sized_flag(q: dict[str, float]) -> float:
    """1 when the replicas follow the load: co-located engine model, arrival rate given and carried (stable),
    model throughput (not measured), and a load per replica that meets the targets."""
    return float(q["srv_engine_model_flag"] == 1 and q["srv_dis_flag"] == 0 and q["srv_arrival_given_flag"] == 1
                 and q["srv_load_saturated_flag"] == 0 and q["srv_measured_flag"] == 0 and q["srv_max_load_rps"] > 0)


def compute(ctx: Context) -> dict[str, float]:
    """Serving sensitivity quantities of one scenario."""
    q, inf = ctx.q, ctx.s.inference
    s, replicas = float(ctx.s.cost.sensitivity_frac), float(inf.replicas)
    month = ss.monthly_cost_usd(hourly_cost_usd=q["infer_hourly_cost_usd"])
    per_1M = q["infer_usd_per_1M_tokens"]
    sized = sized_flag(q)
    out: dict[str, float] = {"srv_sens_month_usd": month, "srv_sens_1M_usd": per_1M, "srv_sens_sized_flag": sized}
    for tag, sign, _ in _TAGS:
        f = sign * s
        moved = float(ss.replicas_for_load(arrival_rate_rps=float(inf.arrival_rate_rps), frac=f,
                                           max_load_rps_per_replica=q["srv_max_load_rps"])) if sized else replicas
        out[f"srv_sens_replicas_{tag}"] = moved
        out[f"srv_sens_price_dmonth_{tag}_usd"] = month * (1 + f) - month
        out[f"srv_sens_load_dmonth_{tag}_usd"] = ss.load_scaled_month(month, replicas, moved) - month
        out[f"srv_sens_power_dmonth_{tag}_usd"] = ss.power_change_per_month_usd(
            power_per_year_usd=q["tco_power_per_year_usd"], frac=f)
        out[f"srv_sens_price_d1M_{tag}_usd"] = per_1M * (1 + f) - per_1M
        # the tokens served follow the rate and the output tokens only on a fleet sized by the load
        out[f"srv_sens_load_d1M_{tag}_usd"] = ss.load_scaled_per_1M(per_1M, replicas, moved, f) - per_1M if sized \
            else 0.0
        out[f"srv_sens_output_d1M_{tag}_usd"] = per_1M / (1 + f) - per_1M if sized else 0.0
    for d, _ in MONTH_DRIVERS:
        out[f"srv_sens_{d}_swing_month_usd"] = ss.span(out[f"srv_sens_{d}_dmonth_low_usd"],
                                                       out[f"srv_sens_{d}_dmonth_high_usd"])
    for d, _ in PER_1M_DRIVERS:
        out[f"srv_sens_{d}_swing_1M_usd"] = ss.span(out[f"srv_sens_{d}_d1M_low_usd"], out[f"srv_sens_{d}_d1M_high_usd"])
    return out
