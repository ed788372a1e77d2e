"""The input-error guard: while an input of a scenario column is in error, every calculated cell of that column
reads "input error" instead of a figure (or an error value such as #DIV/0!), on every calculation sheet.

One rule, applied where the writer lays out line items (workbook.writer.line_items.write_module), so a row that
a module adds later is guarded too: the cell's formula ``=<f>`` is written ``=IF(<flag>>0,"input error",<f>)``,
where ``<flag>`` is the column's cell of

* ``plan_input_errors_count`` (Plan, right below the inputs: the checks that read only the inputs and the
  catalogue) for the rows before the GPU-hour price is known (the selected GPU and model, the price itself);
* ``input_errors_count`` (Plan, after the price: those checks plus the price check) for every row after it.

Not guarded: the input checks and their counts (they are what the guard reads) and the Checks sheet's rows (the
checks read 1 where they cannot be computed, and the status rows name the input in error: they must stay
numbers). Every guarded row is a number row, so the text is always "input error" (no row is a text row).

``verify`` uses :func:`guard_flags` too: a guarded cell of a column whose flag is above 0 is expected to read
"input error" (docs/excel-compatibility.md).
"""

from __future__ import annotations

import re
from functools import lru_cache

#: what a guarded cell reads while an input of its column is in error (the Summary shows the same words)
INPUT_ERROR_TEXT = "input error"
#: the flags, in the order they are placed on Plan
PLAN_FLAG, FULL_FLAG = "plan_input_errors_count", "input_errors_count"
#: sheets whose rows are not guarded (they report the input error and must stay numbers)
UNGUARDED_SHEETS = ("Checks",)
#: a formula that is exactly one guard around another formula (the nested-IF rule exempts this IF)
GUARD_PATTERN = re.compile(r'^=IF\((?:(?:\'[^\']+\'|[A-Za-z_][A-Za-z0-9_.]*)!)?\$?[A-Z]{1,3}\$?\d+>0,"'
                           + INPUT_ERROR_TEXT + '",')


def is_input_check(name: str) -> bool:
    """An input-check row or one of their counts (never guarded: the guard reads them)."""
    return name.startswith("input_error") or name in (PLAN_FLAG, FULL_FLAG)


@lru_cache(maxsize=1)
def guard_flags() -> dict[str, str | None]:
    """{quantity: the flag that guards it, or None}, over the registry in data-flow order."""
    from workbook.calc import registry

    out: dict[str, str | None] = {}
    flag = None
    for name, entry in registry().items():
        if is_input_check(name) or entry.sheet in UNGUARDED_SHEETS or flag is None:
            out[name] = None
        else:
            out[name] = flag
        if name in (PLAN_FLAG, FULL_FLAG):
            flag = name
    return out


def guard_template(template: str, flag: str | None) -> str:
    """The line item's formula template behind the guard of *flag* (unchanged when None)."""
    if flag is None:
        return template
    return f'=IF({{{flag}}}>0,"{INPUT_ERROR_TEXT}",{template[1:]})'


def guarded_value(value, flag: str | None, results: dict[str, float]):
    """What a cell shows: *value*, or the text while its column's flag is above 0."""
    return INPUT_ERROR_TEXT if flag is not None and results.get(flag, 0.0) > 0 else value


def shown(formula: str) -> str:
    """A plan-Cover formula that reads INPUT_ERROR_TEXT rather than #VALUE! while an input of the column is in
    error (the figures it reads then hold that text; the Cover's title names the input). IFERROR, not IF: the
    workbook rules refuse a nested IF."""
    return f'=IFERROR({formula[1:]},"{INPUT_ERROR_TEXT}")'
