"""Every Plan input refuses nonsense: each one, made invalid the way a person could in Excel (a
required input blanked, text typed into a number cell, a value past its range, a choice not in
its list), recalculated by LibreOffice, gives "INPUT ERROR: Plan!<its cell> <its title>" on Checks
and the Cover, and no error value on any sheet (the input-error guard, workbook/writer/input_guard.py).

Six inputs per file (one per scenario column, each column's first error is the one it names), so
the ~70 inputs need a dozen files and one LibreOffice start.
"""

from __future__ import annotations

import pytest

from tests.writer.edits import EditBook, Layout, Recalc, make_edited, recalculate_copies
from workbook.engines import libreoffice
from workbook.writer.inputs import InputRow, input_rows
from workbook.writer.layout import value_col

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(libreoffice.find_soffice() is None, reason="soffice not found")]


def _bad_value(r: InputRow):
    """A value the input must refuse (None = blank)."""
    if r.kind in ("gpu", "model", "engine", "enum"):
        return "no-such-choice"
    if r.kind == "name":
        return None
    if r.optional:
        return "abc" if r.hi is None or r.hi < 1e300 else -1.0
    return None


def _edits() -> list[InputRow]:
    # a blank name would also empty the header of the scenario (the readback stops there); rename tests cover it
    return [r for r in input_rows() if r.key != "name"]


def _type_bad_values(chunk: list[InputRow]):
    """The edit typing input *i* of *chunk* wrong in scenario column *i*."""
    def edit(book: EditBook) -> None:
        for i, r in enumerate(chunk):
            book.plan(r.key, i, _bad_value(r))
    return edit


@pytest.fixture(scope="module")
def results(built, tmp_path_factory):
    rows = _edits()
    layout = Layout(built[0])
    n = len(layout.names)
    plan = {f"inputs-{k:03d}": rows[k:k + n] for k in range(0, len(rows), n)}
    paths = make_edited(built[0], tmp_path_factory.mktemp("every_input"),
                        {name: [_type_bad_values(chunk)] for name, chunk in plan.items()})
    values = recalculate_copies(paths)
    got = {}
    for name, chunk in plan.items():
        rc = Recalc(values[name], layout)
        for i, r in enumerate(chunk):
            got[r.key] = (rc, i, layout.cell("Plan", r.key, i))
    return got


@pytest.mark.parametrize("key", [r.key for r in _edits()])
def test_invalid_input_is_named(results, key):
    rc, i, cell = results[key]
    title = next(r.title for r in input_rows() if r.key == key)
    status = rc.get("Checks", "scenario_status", i)
    assert status == f"INPUT ERROR: Plan!{cell} {title}", status
    assert rc.cover_scenarios[i][1] == status
    # no false PASS and no plausible 0 beside the error: the Summary's verdicts and figures say so
    from workbook.writer.summary import INPUT_ERROR_TEXT

    assert rc.get("Summary", "summary_target_days", i) == INPUT_ERROR_TEXT
    assert rc.get("Summary", "train_cost_usd", i) in (INPUT_ERROR_TEXT, "n/a")
    assert rc.errors() == {}  # no error value on any sheet: the calculated cells read "input error" (the guard)
