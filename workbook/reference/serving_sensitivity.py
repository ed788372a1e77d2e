"""One-way sensitivity of a serving plan's cost (spec 17.8.11, issue 9; docs/serving.md). Plain functions; the
Sensitivity sheet's formulas are separate.

The serving cost is the rent of the serving GPUs in use, M = N x price x 8760 h / 12 per month, and per 1M
output tokens U = N x price / (tokens/s served x utilisation x 3600) x 1e6 (17.8.11). With the load carried
(stable), the tokens/s served are the arrival rate x output tokens. How each driver moves them:

* GPU-hour price p: M and U scale with p, exactly.
* arrival rate (the load): the fleet is re-sized to the replicas that carry the moved load, ceil(rate x (1 + f)
  / largest load per replica meeting the TTFT and TPOT targets); M scales with the replicas, U with the
  replicas / (1 + f) (the tokens served follow the rate). Exact for a co-located engine-model plan; a plan
  not sized by the load (disaggregated, book model, measured throughput, no arrival rate, a saturated load or
  no load meeting the targets) keeps its replicas: 0 change.
* output tokens per request O: the fleet held, the tokens served scale with O, U with 1/O (M does not move;
  TTFT and TPOT are not re-checked at the moved O).
* power price e: the owned fleet's power per month only (N x TDP x PUE x e x 8760 h / 12), exactly; the rent
  does not move.
"""

from __future__ import annotations

from workbook.reference.tco import MONTHS_PER_YEAR
from workbook.reference.training import ceil_count
from workbook.units import HOURS_PER_YEAR


def monthly_cost_usd(*, hourly_cost_usd: float) -> float:
    """Cost per month of a fleet rented 24/7: per hour x 8760 h / 12 (28 H800 at $2.00: $40,880)."""
    return hourly_cost_usd * HOURS_PER_YEAR / MONTHS_PER_YEAR


def replicas_for_load(*, arrival_rate_rps: float, frac: float, max_load_rps_per_replica: float) -> int:
    """Replicas that carry the load moved by *frac*: ceil(rate x (1 + frac) / largest load per replica)."""
    if max_load_rps_per_replica <= 0:
        raise ValueError("max_load_rps_per_replica must be positive")
    return ceil_count(arrival_rate_rps * (1 + frac) / max_load_rps_per_replica)


def load_scaled_month(month_usd: float, replicas: float, replicas_moved: float) -> float:
    """M at the replicas that carry the moved load (the GPUs per replica held)."""
    return month_usd * replicas_moved / replicas


def load_scaled_per_1M(per_1M_usd: float, replicas: float, replicas_moved: float, frac: float) -> float:
    """U at the moved load: the rent scales with the replicas, the tokens served with the rate (1 + frac)."""
    return per_1M_usd * replicas_moved / replicas / (1 + frac)


def power_change_per_month_usd(*, power_per_year_usd: float, frac: float) -> float:
    """Change of the owned fleet's power per month when the electricity price moves by *frac*: the whole power
    bill (GPUs, hosts and network with PUE, the TCO sheet's) is linear in the price."""
    return frac * power_per_year_usd / MONTHS_PER_YEAR


def span(low: float, high: float) -> float:
    """Width of a driver's two bars from 0: largest minus smallest of (low, high, 0); |high - low| when they lie
    either side of 0, the larger one when both lie on one side (a re-sized fleet rounds both loads up)."""
    return max(low, high, 0.0) - min(low, high, 0.0)
