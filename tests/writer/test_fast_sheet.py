"""The fast worksheet prepares every formula exactly as xlsxwriter's own Worksheet does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xlsxwriter.worksheet import Worksheet

from workbook.writer.fast_sheet import FastFormulaWorksheet

CASES = [
    "=A1+B2", "{=SUM(A1:A3)}", "=IF(ISBLANK(Plan!F11),INDEX(cat_gpu_tdp_W,MATCH(F6,cat_gpu_id,0)),Plan!F11)",
    "=XLOOKUP(A1,B:B,C:C)", "=SORT(A1:A3)", "=_xlfn.XLOOKUP(A1,B:B,C:C)", "=LAMBDA(x,x+1)(2)", "=ASINGLE(A1)",
    "=MAX(0,{srv_ep_fixed_s})", "=FILTER(A1:A9,B1:B9>0)", "=MYSORT(A1)", "=ACOTH(A1)+STDEV.S(A1:A3)", "SUM(A1)",
]


def _both(formula: str, future: bool, expand: bool) -> tuple[str, str]:
    base, fast = Worksheet(), FastFormulaWorksheet()
    base.use_future_functions = fast.use_future_functions = future
    return base._prepare_formula(formula, expand), fast._prepare_formula(formula, expand)


@pytest.mark.parametrize("formula", CASES)
@pytest.mark.parametrize("future,expand", [(False, False), (True, False), (False, True)])
def test_the_same_formula_text_as_xlsxwriter(formula, future, expand):
    want, got = _both(formula, future, expand)
    assert got == want


@settings(max_examples=300, deadline=None)
@given(body=st.text(alphabet=st.sampled_from(list("=(){},:!$._ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-*/^<>")),
                    max_size=60))
def test_any_text_is_prepared_as_xlsxwriter_does(body):
    for future, expand in ((False, False), (True, False), (False, True)):
        want, got = _both(body, future, expand)
        assert got == want


def _written(formula: str, future: bool, constant_memory: bool = False) -> tuple[tuple, tuple]:
    """(return code, stored cell, dimensions) after write_formula on xlsxwriter's Worksheet and the fast one."""
    out = []
    for cls in (Worksheet, FastFormulaWorksheet):
        ws = cls()
        ws.use_future_functions = future
        ws.constant_memory = constant_memory
        rc = ws.write_formula(3, 5, formula, None, 7.5)
        cell = ws.table.get(3, {}).get(5)
        out.append((rc, None if cell is None else (type(cell).__name__, tuple(cell)), ws.dim_rowmin, ws.dim_colmax))
    return out[0], out[1]


# an empty formula is one of the cases: xlsxwriter refuses it with a warning, as the fast sheet must
@pytest.mark.filterwarnings("ignore:Formula can't be None or empty")
@pytest.mark.parametrize("formula", CASES + ["", "={1,2}", "=A1}", "{=A1", "=SUM(A1)}"])
@pytest.mark.parametrize("future", [False, True])
def test_write_formula_stores_what_xlsxwriter_stores(formula, future):
    want, got = _written(formula, future)
    assert got == want


@pytest.mark.filterwarnings("ignore:Formula can't be None or empty")
@settings(max_examples=300, deadline=None)
@given(body=st.text(alphabet=st.sampled_from(list("=(){},:!$._ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-*/^<>")),
                    max_size=60))
def test_any_formula_is_stored_as_xlsxwriter_stores_it(body):
    for future in (False, True):
        want, got = _written(body, future)
        assert got == want


def test_write_formula_out_of_bounds_as_xlsxwriter():
    for cls in (Worksheet, FastFormulaWorksheet):
        assert cls().write_formula(1_048_576, 0, "=A1") == -1
