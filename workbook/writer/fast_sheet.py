"""A worksheet that prepares formulas without xlsxwriter's 30 regular-expression passes when none can apply.

xlsxwriter 3.3 prefixes the dynamic-array functions (ANCHORARRAY ... XLOOKUP) with ``_xlfn.`` by running
one ``re.sub`` per function over every formula (``Worksheet._prepare_formula``): about 30 passes, a fifth
of the build. The workbook's formulas use the function allow-list of docs (toolchain.md), which holds
none of them, so one search finds that no pass would change the formula, and the formula is written as
the base class would write it. Where a name could match, or future functions are asked for, the base
class does the work: the file is byte-identical either way.

``_write_formula`` (behind ``write_formula``) likewise stores a formula that no pattern can match with that one
search: the base class searches it once for the dynamic-array functions (a subset of the names here) and once
more in ``_prepare_formula``.
"""

from __future__ import annotations

import re

from xlsxwriter.worksheet import CellFormulaTuple, Worksheet

#: the names the base class's dynamic-function passes look for (its odd ``\SINGLE\(`` pass included; it also
#: matches wherever xlsxwriter's ``re_dynamic_function`` does, whose names are these with ``\bSINGLE\(``)
_DYNAMIC = re.compile(
    r"\b(?:ANCHORARRAY|BYCOL|BYROW|CHOOSECOLS|CHOOSEROWS|DROP|EXPAND|FILTER|HSTACK|LAMBDA|MAKEARRAY|MAP|"
    r"RANDARRAY|REDUCE|SCAN|SEQUENCE|SORT|SORTBY|SWITCH|TAKE|TEXTSPLIT|TOCOL|TOROW|UNIQUE|VSTACK|WRAPCOLS|"
    r"WRAPROWS|XLOOKUP)\(|\SINGLE\(")


class FastFormulaWorksheet(Worksheet):
    """Worksheet whose formula preparation skips the passes that cannot match."""

    def _prepare_formula(self, formula, expand_future_functions=False):
        if self.use_future_functions or expand_future_functions or "_xlfn." in formula or _DYNAMIC.search(formula):
            return super()._prepare_formula(formula, expand_future_functions)
        if formula.startswith("{"):
            formula = formula[1:]
        if formula.startswith("="):
            formula = formula[1:]
        if formula.endswith("}"):
            formula = formula[:-1]
        return formula

    def _write_formula(self, row, col, formula, cell_format=None, value=0):
        if not formula or self.constant_memory or self.use_future_functions or formula.startswith("{") \
                or "_xlfn." in formula or _DYNAMIC.search(formula):
            return super()._write_formula(row, col, formula, cell_format, value)
        if self._check_dimensions(row, col):
            return -1
        # no dynamic-array function, not an array formula: stored as _prepare_formula leaves it
        if formula.startswith("="):
            formula = formula[1:]
        if formula.endswith("}"):
            formula = formula[:-1]
        self.table[row][col] = CellFormulaTuple(formula, cell_format, value)
        return 0
