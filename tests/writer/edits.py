"""Helpers for the behaviour tests: edit a built workbook the way a person would in Excel
(openpyxl on the input cells), and read a recalculated copy back by sheet, key and scenario.

Positions are read from the file itself (the Key column, the catalogue header rows, the Cover
labels), never hard-coded, so the tests follow the layout.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from workbook.engines import gnumeric
from workbook.engines.libreoffice import find_soffice
from workbook.engines.values import Values
from workbook.readback import key_rows
from workbook.writer.layout import CALC_SHEETS, HEADER_ROW, value_col, value_col_name

#: sheets with the scenario-column layout (key column E, one value column per scenario)
KEYED_SHEETS = CALC_SHEETS + ("Summary",)


def _title_row(ws, title: str) -> int:
    """1-based row of the first column-A cell equal to *title* (or starting with it)."""
    for (cell,) in ws.iter_rows(min_col=1, max_col=1):
        if isinstance(cell.value, str) and cell.value.startswith(title):
            return cell.row
    raise LookupError(f"{ws.title}: no row titled {title!r}")


class Layout:
    """Where things are in the built (unedited) workbook: keyed rows, Cover rows, header cells."""

    def __init__(self, path: Path | str):
        wb = openpyxl.load_workbook(path)
        self.rows = {title: key_rows(wb[title]) for title in KEYED_SHEETS}
        self.names = []
        col = value_col(0) + 1
        while wb["Plan"].cell(HEADER_ROW + 1, col).value not in (None, ""):
            self.names.append(wb["Plan"].cell(HEADER_ROW + 1, col).value)
            col += 1
        cover = wb["Cover"]
        self.cover_master = f"B{_title_row(cover, 'Master check')}"
        rows = [_title_row(cover, f"Scenario {i + 1}") for i in range(len(self.names))]
        self.cover_scenarios = [(f"B{r}", f"C{r}") for r in rows]
        wb.close()

    def cell(self, sheet: str, key: str, i: int) -> str:
        """A1 address of *key* in scenario column *i* of *sheet* ("name" is the header row)."""
        row = HEADER_ROW if key == "name" else self.rows[sheet][key]
        return f"{value_col_name(i)}{row + 1}"


class Recalc:
    """The recalculated values of one edited copy, looked up by sheet, key and scenario."""

    def __init__(self, values: Values, layout: Layout):
        self.values = values
        self.layout = layout

    def get(self, sheet: str, key: str, i: int) -> Any:
        return self.values[(sheet, self.layout.cell(sheet, key, i))]

    def row(self, sheet: str, key: str) -> list[Any]:
        return [self.get(sheet, key, i) for i in range(len(self.layout.names))]

    def header(self, sheet: str, i: int) -> Any:
        return self.values[(sheet, f"{value_col_name(i)}{HEADER_ROW + 1}")]

    @property
    def master(self) -> Any:
        """The Cover's master-check line."""
        return self.values[("Cover", self.layout.cover_master)]

    @property
    def cover_scenarios(self) -> list[tuple[Any, Any]]:
        """(name, status) of each scenario as the Cover lists them."""
        return [(self.values[("Cover", b)], self.values[("Cover", c)]) for b, c in self.layout.cover_scenarios]

    def errors(self, *sheets: str) -> dict[tuple[str, str], Any]:
        """Formula cells holding an error value (a string starting with '#'), on *sheets* (all if none)."""
        return {k: v for k, v in self.values.items()
                if (not sheets or k[0] in sheets) and isinstance(v, str) and v.startswith("#")}


def _is_formula(value: Any) -> bool:
    """A formula as openpyxl holds it: text starting with "=", or an array or data-table formula object."""
    return isinstance(value, str) and value.startswith("=") or not isinstance(value, (str, int, float, type(None)))


class EditBook:
    """An openpyxl handle on a copy of the workbook, with the edits a person makes in Excel."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.wb = openpyxl.load_workbook(self.path)
        self.plan_rows = key_rows(self.wb["Plan"])
        #: no edit wrote over a formula or typed one: the copy's formula cells are the original's
        self.formulas_kept = True

    def save(self) -> None:
        self.wb.save(self.path)

    def _set(self, cell, value: Any) -> Any:
        """Type *value* into *cell*; returns the old value."""
        old = cell.value
        self.formulas_kept = self.formulas_kept and not (_is_formula(old) or _is_formula(value))
        cell.value = value
        return old

    # ---- Plan (scenario inputs)
    def plan_cell(self, key: str, i: int):
        row = HEADER_ROW if key == "name" else self.plan_rows[key]
        return self.wb["Plan"].cell(row + 1, value_col(i) + 1)

    def plan(self, key: str, i: int, value: Any = None) -> Any:
        """Type *value* into the Plan input *key* of scenario *i* (None clears the cell); returns the old value."""
        return self._set(self.plan_cell(key, i), value)

    # ---- Hardware (GPU catalogue)
    def _gpu_table(self) -> tuple[Any, int, dict[str, int]]:
        ws = self.wb["Hardware"]
        title = _title_row(ws, "GPU catalogue")
        header = {c.value: c.column for c in ws[title + 1] if c.value}
        return ws, title, header

    def gpu_row(self, gpu_id: str) -> int:
        """1-based Hardware row of *gpu_id*."""
        ws, title, header = self._gpu_table()
        r = title + 2
        while ws.cell(r, header["id"]).value not in (None, ""):
            if ws.cell(r, header["id"]).value == gpu_id:
                return r
            r += 1
        raise LookupError(f"GPU {gpu_id!r} not on Hardware")

    def gpu(self, gpu_id: str, field: str, value: Any = None) -> Any:
        """Set a GPU's catalogue field; returns the old value."""
        ws, _, header = self._gpu_table()
        return self._set(ws.cell(self.gpu_row(gpu_id), header[field]), value)

    def gpu_value(self, gpu_id: str, field: str) -> Any:
        ws, _, header = self._gpu_table()
        return ws.cell(self.gpu_row(gpu_id), header[field]).value

    def add_gpu(self, like: str, new_id: str, **changes: Any) -> int:
        """Type a new GPU into the first empty catalogue row: *like*'s values, then *changes*. Returns its row."""
        ws, title, header = self._gpu_table()
        src = self.gpu_row(like)
        r = title + 2
        while ws.cell(r, header["id"]).value not in (None, ""):
            r += 1
        for field, col in header.items():
            self._set(ws.cell(r, col), ws.cell(src, col).value)
        self._set(ws.cell(r, header["id"]), new_id)
        for field, value in changes.items():
            self._set(ws.cell(r, header[field]), value)
        return r

    # ---- Efficiency (the step-time model's factors, one row per GPU)
    def _eff_table(self) -> tuple[Any, int, dict[str, int]]:
        ws = self.wb["Efficiency"]
        title = _title_row(ws, "Efficiency catalogue")
        header = {c.value: c.column for c in ws[title + 1] if c.value}
        return ws, title, header

    def _eff_row(self, gpu_id: str) -> int:
        ws, title, header = self._eff_table()
        r = title + 2
        while ws.cell(r, header["gpu"]).value not in (None, ""):
            if ws.cell(r, header["gpu"]).value == gpu_id:
                return r
            r += 1
        raise LookupError(f"GPU {gpu_id!r} not on Efficiency")

    def efficiency(self, gpu_id: str, field: str, value: Any = None) -> Any:
        """Set a GPU's efficiency factor; returns the old value."""
        ws, _, header = self._eff_table()
        return self._set(ws.cell(self._eff_row(gpu_id), header[field]), value)

    # ---- Engines (serving-engine profiles, catalog/engines.yaml)
    def engine(self, profile_id: str, field: str, value: Any = None) -> Any:
        """Set an engine profile's field on the Engines sheet; returns the old value."""
        ws = self.wb["Engines"]
        title = _title_row(ws, "Engine profiles")
        header = {c.value: c.column for c in ws[title + 1] if c.value}
        r = title + 2
        while ws.cell(r, header["id"]).value != profile_id:
            if ws.cell(r, header["id"]).value in (None, ""):
                raise LookupError(f"engine profile {profile_id!r} not on Engines")
            r += 1
        return self._set(ws.cell(r, header[field]), value)

    def add_efficiency(self, like: str, new_id: str) -> int:
        """Type a new GPU's factors into the first empty Efficiency row (a copy of *like*'s). Returns its row."""
        ws, title, header = self._eff_table()
        src = self._eff_row(like)
        r = title + 2
        while ws.cell(r, header["gpu"]).value not in (None, ""):
            r += 1
        for field, col in header.items():
            self._set(ws.cell(r, col), ws.cell(src, col).value)
        self._set(ws.cell(r, header["gpu"]), new_id)
        return r

    # ---- Defaults
    def default(self, key: str, value: Any) -> Any:
        """Set the Defaults sheet's value of *key* (key in column D, value in column E); returns the old value."""
        ws = self.wb["Defaults"]
        for (cell,) in ws.iter_rows(min_col=4, max_col=4):
            if cell.value == key:
                return self._set(ws.cell(cell.row, 5), value)
        raise LookupError(f"default {key!r} not on Defaults")


#: the engines that recalculate an edited copy as a whole: LibreOffice, and Gnumeric, which follows Excel where
#: LibreOffice does not (docs/excel-compatibility.md); a test parametrised over them skips an engine not installed
ENGINES = [pytest.param("libreoffice", id="libreoffice",
                        marks=pytest.mark.skipif(find_soffice() is None, reason="LibreOffice not installed")),
           pytest.param("gnumeric", id="gnumeric",
                        marks=pytest.mark.skipif(not gnumeric.available(), reason="ssconvert not installed"))]


class Copies(dict):
    """{edit name: path of its edited copy}; ``formulas_of`` maps the copies whose formulas no edit touched (every
    edit typed a value over a value) to the workbook they were copied from: their formula cells are its."""

    def __init__(self, paths=(), formulas_of: dict[str, Path] | None = None):
        super().__init__(paths)
        self.formulas_of = dict(formulas_of or {})


def make_edited(src: Path | str, folder: Path, edits: dict[str, Iterable[Callable[[EditBook], None]]]) -> Copies:
    """Copy *src* once per edit set into *folder* (``<name>.xlsx``) and apply each set's edits (name -> path)."""
    paths = Copies()
    for name, steps in edits.items():
        dst = Path(folder) / f"{name}.xlsx"
        shutil.copyfile(src, dst)
        book = EditBook(dst)
        for fn in steps:
            fn(book)
        book.save()
        paths[name] = dst
        if book.formulas_kept:
            paths.formulas_of[name] = Path(src)
    return paths


def recalculate_copies(paths: dict[str, Path | str], engine: str = "libreoffice") -> dict[str, Values]:
    """Recalculate the copies {name: path} with *engine* in one batch (LibreOffice: one start); name -> values.
    A copy whose content was recalculated before in the session (the unedited copy every module compares against)
    is read back, not recalculated again; the formula cells of copies made by :func:`make_edited` without touching a
    formula are read once from their original, not once per copy (tests/shared.py)."""
    from tests.shared import recalculated

    of = getattr(paths, "formulas_of", {})
    of = {Path(paths[n]): src for n, src in of.items() if n in paths}
    values = recalculated([Path(p) for p in paths.values()], engine, of)
    return {name: values[Path(p)] for name, p in paths.items()}


def recalc_edited(src: Path | str, folder: Path, edits: dict[str, Iterable[Callable[[EditBook], None]]],
                  layout: Layout, engine: str = "libreoffice") -> dict[str, Recalc]:
    """Copy *src* once per edit set into *folder*, apply each set's edits, recalculate every copy with
    *engine* (LibreOffice: in one start), and read each back (name -> Recalc)."""
    values = recalculate_copies(make_edited(src, folder, edits), engine)
    return {name: Recalc(v, layout) for name, v in values.items()}


def close(a: Any, b: float, rel: float = 1e-9) -> bool:
    """A recalculated number equal to *b* (relative *rel*, absolute 1e-6); False for text or an error value."""
    return isinstance(a, float) and math.isclose(a, b, rel_tol=rel, abs_tol=1e-6)
