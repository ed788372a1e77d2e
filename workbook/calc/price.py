"""GPU-hour price in use (Plan sheet, after the selected GPU) and the price check: the last input check, and the
count of every input in error that the rest of the workbook reads (spec 17.5.9).

The price comes before the calculations so that the input-error count is known before any of them: every
calculated cell after it reads "input error" while an input of its column is in error (docs/excel-compatibility.md).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q

#: position of each price basis in the CHOOSE of the catalogue price (the choice list's order)
BASIS_POSITION = {"on_demand": 1.0, "reserved": 2.0, "spot": 3.0}

QUANTITIES = [
    Q("price_basis_position", "count", "Price basis: position in the list on-demand, reserved, spot", "17.5.9"),
    Q("gpu_hour_catalogue_usd", "USD/GPU-h", "The GPU's catalogue price for the price basis (0 = none)", "17.5.9"),
    Q("gpu_hour_usd", "USD/GPU-h", "GPU-hour price used (the override, else the catalogue price)", "17.5.9"),
    Q("input_error_price", "0/1", "Input: GPU-hour price (the GPU has no catalogue price for this basis)",
      "17.5.9", note="cost.gpu_hour_usd"),
    Q("input_errors_count", "count", "Inputs in error (all, the GPU-hour price included)", "Plan"),
]


def compute(ctx: Context) -> dict[str, float]:
    """The price in use (the resolved scenario's: the override, else the catalogue's) and the checks' count."""
    c = ctx.s.cost
    price = float(c.gpu_hour_usd)
    price_error = 0.0 if price > 0 else 1.0
    return {
        "price_basis_position": BASIS_POSITION[c.price_basis],
        "gpu_hour_catalogue_usd": float(ctx.gpu.price_usd_per_gpu_hour(c.price_basis) or 0.0),
        "gpu_hour_usd": price,
        "input_error_price": price_error,
        "input_errors_count": ctx.q["plan_input_errors_count"] + price_error,
    }
