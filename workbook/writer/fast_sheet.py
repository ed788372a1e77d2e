"""A worksheet that prepares formulas without xlsxwriter's 30 regular-expression passes when none can apply.

xlsxwriter 3.3 prefixes the dynamic-array functions (ANCHORARRAY ... XLOOKUP) with ``_xlfn.`` by running
one ``re.sub`` per function over every formula (``Worksheet._prepare_formula``): about 30 passes, a fifth
of the build. The workbook's formulas use the function allow-list of docs (toolchain.md), which holds
none of them, so one search finds that no pass would change the formula, and the formula is written as
the base class would write it. Where a name could match, or future functions are asked for, the base
class does the work: the file is byte-identical either way.
"""

from __future__ import annotations

import re

from xlsxwriter.worksheet import Worksheet

#: the names the base class's dynamic-function passes look for (its odd ``\SINGLE\(`` pass included)
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
