"""The status of each scenario (Checks sheet, after the hard checks, warnings and input checks):
failed checks including input errors, the failed flag, and the status code the status text uses."""

from __future__ import annotations

from workbook.calc.base import Context, Q

QUANTITIES = [
    Q("scenario_failures_count", "count", "Failed checks incl. input errors (0 = the scenario passes)", "rules §11"),
    Q("scenario_failed_flag", "0/1", "The scenario fails (a hard check or an input error)", "rules §11"),
    Q("status_code", "count", "Status: 1 pass, 2 fail, 3 input error", "rules §11"),
]


def compute(ctx: Context) -> dict[str, float]:
    hard, inputs = ctx.q["hard_failures_count"], ctx.q["input_errors_count"]
    return {
        "scenario_failures_count": hard + inputs,
        "scenario_failed_flag": float(hard + inputs > 0),
        "status_code": 3.0 if inputs > 0 else (2.0 if hard > 0 else 1.0),
    }
