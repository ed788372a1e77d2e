"""Input checks (Plan sheet, below the inputs): one per Plan input, 0 when the cell holds an allowed value, 1 when it
is blank where a value is required, text in a number cell, or out of its range.

The reference runs only on inputs that the scenario model accepted (workbook.scenario.model, with
the same ranges), so every input check is 0 here; the workbook's formulas test the cells
themselves, which is what catches an edit in Excel. The last row counts the errors (the price check and
the count of all input errors come after the price: workbook.calc.price).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q


def _quantities() -> list[Q]:
    from workbook.writer.inputs import input_rows

    # the note is the input's key in Plan's Key column (the name is the header row, whose Key cell says "Key")
    qs = [Q(f"input_error_{r.name}", "0/1", f"Input: {r.title}", "Plan", note=r.key if r.key != "name" else "Key")
          for r in input_rows()]
    qs.append(Q("input_error_efficiency", "0/1", "Input: the GPU's step-time factors (no row on the Efficiency sheet)",
                "docs/step_time.md", note="gpu"))
    qs.append(Q("plan_input_errors_count", "count", "Plan inputs in error (the GPU-hour price is checked below)", "Plan"))
    return qs


QUANTITIES = _quantities()


def compute(ctx: Context) -> dict[str, float]:
    return {q.name: 0.0 for q in QUANTITIES}
