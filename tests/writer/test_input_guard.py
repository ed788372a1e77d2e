"""The input-error guard (workbook/writer/input_guard.py): while an input of a scenario column is in error, every
calculated cell of that column reads "input error", on every sheet, and no cell of the workbook holds an error value.

The engine test types each of a representative set of Plan inputs blank, as text, zero and out of range in turn
(and a GPU without a price for the basis), one bad input per scenario column: a copy of the default workbook holds
six of these edits (its six columns are independent), so 25 edits are 5 copies, recalculated in one LibreOffice
batch and one Gnumeric batch.
"""

from __future__ import annotations

import pytest

from tests.writer.edits import ENGINES, Copies, Layout, Recalc, make_edited, recalculate_copies
from workbook.calc import registry
from workbook.writer.input_guard import (FULL_FLAG, GUARD_PATTERN, INPUT_ERROR_TEXT, PLAN_FLAG, guard_flags,
                                         guard_template, is_input_check)
from workbook.writer.inputs import input_rows

#: the inputs typed wrong (the issue's list): each blank, as text, zero and out of range
KEYS = ["training.seq_len", "training.tokens", "training.mfu", "training.num_gpus", "inference.batch",
        "cost.price_basis"]
KINDS = ["blank", "text", "zero", "out_of_range"]
COLUMNS = 6  # the default workbook's scenarios
ROWS = {r.key: r for r in input_rows()}


def _bad_value(key: str, kind: str):
    r = ROWS[key]
    if kind == "blank":
        return None
    if kind == "text":
        return "abc"
    if kind == "zero":
        return 0
    return "reserved_5y" if r.kind == "enum" else r.hi * 10  # out of range: an unknown choice, ten times the top


#: (edit name, input key or "gpu", value): the representative edits, then the GPU without a price for the basis
EDITS = [(f"{key}:{kind}", key, _bad_value(key, kind)) for key in KEYS for kind in KINDS]
EDITS.append(("gpu_without_price", "gpu", "l40s"))  # the L40S has no reserved price; scenarios 0-3 are reserved


def _placed() -> list[tuple[int, int, tuple]]:
    """(copy, column, edit): edit j goes to copy j // 6, column j % 6 (the gpu edit lands on column 0)."""
    return [(j // COLUMNS, j % COLUMNS, e) for j, e in enumerate(EDITS)]


# ---------------------------------------------------------------- without an engine


def test_every_input_key_of_the_edits_is_required():
    for key in KEYS:
        assert not ROWS[key].optional, key  # a blank must be an error


def test_guard_flags_follow_the_data_flow():
    flags, reg = guard_flags(), registry()
    assert flags[PLAN_FLAG] is None and flags[FULL_FLAG] is None
    assert all(flags[n] is None for n in reg if is_input_check(n))
    assert flags["gpu_hour_usd"] == PLAN_FLAG  # before the price check
    assert flags["params_total"] == flags["train_cost_usd"] == flags["tco_total_usd"] == FULL_FLAG
    assert all(flags[n] is None for n, e in reg.items() if e.sheet == "Checks")
    guarded = [n for n in reg if flags[n] is not None]
    assert len(guarded) > 0.9 * sum(1 for e in reg.values() if e.sheet != "Checks")


def test_guard_template_wraps_the_whole_formula():
    assert guard_template("={a}+1", None) == "={a}+1"
    assert guard_template("={a}/{b}", FULL_FLAG) == '=IF({input_errors_count}>0,"input error",{a}/{b})'


def test_built_file_guards_every_calculated_cell(built):
    """The file holds the guard on every calculated cell after a flag, none on the input checks."""
    import openpyxl

    path, book = built
    wb = openpyxl.load_workbook(path)
    flags = guard_flags()
    for name, (sheet, row) in book.layout.rows.items():
        if name not in flags:
            continue  # an input, or a text row of the status block
        formula = wb[sheet].cell(row + 1, 6).value
        if flags[name] is None:
            assert not GUARD_PATTERN.match(formula), (sheet, name)
        else:
            flag_sheet, flag_row = book.layout.rows[flags[name]]
            ref = f"F{flag_row + 1}" if flag_sheet == sheet else f"{flag_sheet}!F{flag_row + 1}"
            assert formula.startswith(f'=IF({ref}>0,"{INPUT_ERROR_TEXT}",'), (sheet, name, formula)


# ---------------------------------------------------------------- recalculated


@pytest.fixture(scope="module")
def copies(built, tmp_path_factory) -> Copies:
    """The edited copies of the default workbook, in copy order (made once for both engines)."""
    steps: dict[int, list] = {}
    for c, i, (_, key, value) in _placed():
        steps.setdefault(c, []).append(lambda b, key=key, i=i, value=value: b.plan(key, i, value))
    return make_edited(built[0], tmp_path_factory.mktemp("input_guard"),
                       {f"bad_inputs_{c}": s for c, s in sorted(steps.items())})


@pytest.fixture(scope="module")
def layout(built) -> Layout:
    return Layout(built[0])


@pytest.fixture(scope="module", params=ENGINES)
def recalculated(request, copies, layout) -> list[Recalc]:
    values = recalculate_copies(copies, request.param)  # one batch per engine
    return [Recalc(v, layout) for v in values.values()]


@pytest.mark.slow
@pytest.mark.parametrize("j", range(len(EDITS)), ids=[e[0] for e in EDITS])
def test_a_bad_input_reads_input_error_everywhere_and_is_named(recalculated, layout, j):
    c, i, (name, key, _) = _placed()[j]
    r = recalculated[c]
    assert r.errors() == {}  # no error value anywhere in the workbook (all six columns hold one bad input)
    where = "cost.gpu_hour_usd" if key == "gpu" else key
    title = "GPU-hour price" if key == "gpu" else ROWS[key].title
    named = f"INPUT ERROR: Plan!{layout.cell('Plan', where, i)} {title}"
    status = r.get("Checks", "scenario_status", i)
    assert status.startswith(named), (name, status)
    assert r.cover_scenarios[i] == (layout.names[i], status)
    assert r.master.startswith("CHECKS FAIL")
    assert r.get("Summary", "scenario_status", i) == status
    flags, reg = guard_flags(), registry()
    for q, flag in flags.items():  # every guarded figure of the column reads the text
        if flag is None or q not in layout.rows[reg[q].sheet]:
            continue
        if key == "gpu" and flag == PLAN_FLAG:
            continue  # the Plan inputs are fine: the selected GPU and its (missing) price compute
        assert r.get(reg[q].sheet, q, i) == INPUT_ERROR_TEXT, (name, reg[q].sheet, q)
    if key == "gpu":
        assert r.get("Plan", "gpu_hour_usd", i) == 0.0 and r.get("Plan", "input_error_price", i) == 1.0
