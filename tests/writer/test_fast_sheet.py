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
