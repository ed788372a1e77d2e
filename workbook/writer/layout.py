"""Where every row goes, and how a formula template becomes an Excel formula for one column.

Calculation sheets share one column layout (workbook-rules.md rule 14): A label, B unit,
C notes, D source (spec section), E key (the quantity name; an outline column, collapsed), then
one column per scenario from F.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbook.calc import SHEETS
from workbook.writer.a1 import cell, col_name, quote_sheet

SHEET_ORDER = [
    "Cover",
    "Summary",
    "Recommendation",
    "Assumptions",
    "Scenarios",
    "Cost Breakdown",
    "Rejected",
    "Glossary",
    "Changes",
    "Hardware",
    "Efficiency",
    "Engines",
    "Models",
    "Defaults",
    "Constants",
    "Plan",
    "Training Memory",
    "Activations",
    "ZeRO",
    "KV Cache",
    "Step Time",
    "Comm",
    "Storage",
    "Inference",
    "Cost",
    "TCO",
    "Sensitivity",  # after TCO: the serving power driver moves the owned fleet's power bill
    "Cash Flow",
    "Checks",
    "Changelog",
    "Manifest",
]
#: sheets written only when they have something to say (workbook/writer/changelog.py)
OPTIONAL_SHEETS = ("Changelog",)
#: the plan workbook's sheets (workbook/writer/planbook.py): written when the build gets a plan
OPTIONAL_SHEETS += ("Recommendation", "Assumptions", "Scenarios", "Cost Breakdown", "Rejected", "Glossary", "Changes")
#: sheets that show results of every other sheet (they may refer to any sheet)
OUTPUT_SHEETS = ("Cover", "Summary")
OUTPUT_SHEETS += ("Recommendation", "Assumptions", "Scenarios", "Cost Breakdown", "Rejected", "Glossary", "Changes")
#: the catalogue and the constants: input and constant cells only
DATA_SHEETS = ("Hardware", "Efficiency", "Engines", "Models", "Defaults", "Constants")
#: sheets with the scenario columns (the common column layout), in data-flow order
CALC_SHEETS = tuple(SHEET_ORDER[SHEET_ORDER.index("Plan"):SHEET_ORDER.index("Checks") + 1])
#: what the build wrote, cell by cell, for `workbook audit` (workbook/writer/manifest.py)
MANIFEST_SHEET = "Manifest"
#: calc module -> sheet it is laid out on (data-flow order)
MODULE_SHEET = SHEETS
COL_LABEL, COL_UNIT, COL_NOTES, COL_SOURCE, COL_KEY, FIRST_VALUE_COL = 0, 1, 2, 3, 4, 5
#: the fixed columns' headers, in order
FIXED_HEADERS = ("Line item", "Unit", "Notes", "Source", "Key")
HEADER_ROW = 3  # 0-based: row 4 holds the column headers
FIRST_ROW = 4

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")
#: template -> its text split at the placeholders: [text, name, text, name, ..., text]
_SPLIT: dict[str, list[str]] = {}


class LayoutError(ValueError):
    """A template that cannot be placed: unknown name, or a reference that points forward."""


def value_col(index: int) -> int:
    return FIRST_VALUE_COL + index


def value_col_name(index: int) -> str:
    return col_name(value_col(index))


def _order(sheet: str) -> int:
    """Position of *sheet* in SHEET_ORDER (ValueError for a sheet not in it, as ``list.index``)."""
    i = _ORDER.get(sheet)
    return SHEET_ORDER.index(sheet) if i is None else i


_ORDER = {title: i for i, title in enumerate(SHEET_ORDER)}


@dataclass
class Layout:
    """Row of every named thing (quantity or input key) on its sheet."""

    rows: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (sheet, 0-based row)
    next_row: dict[str, int] = field(default_factory=dict)
    #: ((template, sheet, row), chunks) of the row render() placed last (its columns come one after another)
    _chunks: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def place(self, sheet: str, name: str | None = None, skip: int = 0) -> int:
        row = self.next_row.get(sheet, FIRST_ROW) + skip
        self.next_row[sheet] = row + 1
        if name is not None:
            if name in self.rows:
                raise LayoutError(f"{name!r} placed twice")
            self.rows[name] = (sheet, row)
        return row

    def _target(self, name: str, from_sheet: str, from_row: int) -> tuple[str, int]:
        """(sheet prefix: "" on the same sheet, else the quoted title and "!"; 0-based row) of *name* seen from
        (from_sheet, from_row); LayoutError for an unknown name or one at or after that row."""
        at = self.rows.get(name)
        if at is None:
            raise LayoutError(f"unknown name {{{name}}}")
        sheet, row = at
        if sheet == from_sheet:
            if row >= from_row:
                raise LayoutError(f"{{{name}}} is at or below row {from_row + 1} of {sheet}")
            return "", row
        if _order(sheet) > _order(from_sheet):
            raise LayoutError(f"{{{name}}} on {sheet} comes after {from_sheet}")
        return quote_sheet(sheet) + "!", row

    def ref(self, name: str, index: int, from_sheet: str, from_row: int) -> str:
        """A1 reference to *name* in scenario column *index*, seen from (from_sheet, from_row)."""
        prefix, row = self._target(name, from_sheet, from_row)
        return prefix + cell(row, FIRST_VALUE_COL + index)

    def render(self, template: str, index: int, sheet: str, row: int) -> str:
        """The template's Excel formula for scenario column *index*."""
        if not template.startswith("="):
            raise LayoutError(f"template must start with '=': {template!r}")
        parts = _SPLIT.get(template)
        if parts is None:
            parts = _SPLIT[template] = _PLACEHOLDER.split(template)
        if len(parts) == 1:
            return template
        col = FIRST_VALUE_COL + index
        if col < 0:  # no such column: each reference is xlsxwriter's "" (and its warning)
            return "".join(p if i % 2 == 0 else self.ref(p, index, sheet, row) for i, p in enumerate(parts))
        key = (template, sheet, row)
        if self._chunks is None or self._chunks[0] != key:
            self._chunks = (key, self._row_chunks(parts, sheet, row))
        return col_name(col).join(self._chunks[1])

    def _row_chunks(self, parts: list[str], sheet: str, row: int) -> list[str]:
        """A row's formula, split where the scenario column's letters go: every reference to a named row is
        prefix + column + row number, so the formula of column L is ``L.join(chunks)``. The names are looked
        up left to right (the first bad one raises), once per row rather than once per column."""
        chunks, text = [], parts[0]
        for i in range(1, len(parts), 2):
            prefix, at = self._target(parts[i], sheet, row)
            chunks.append(text + prefix)
            text = str(at + 1) + parts[i + 1]
        chunks.append(text)
        return chunks
