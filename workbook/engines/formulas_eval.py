"""Evaluate a workbook's formulas in dependency order with compiled ``formulas`` functions.

Each formula cell is bound to a :class:`formulas_compile.Template` (shared by
all copies of the same formula) and to *sources*, one per input of the
compiled function:

* ``("r", sheet, rect)``: cells; passed as a ``formulas`` Ranges holding their
  values, empty cells as ``schedula.EMPTY`` (0 in arithmetic, ISBLANK true),
  the way ExcelModel's range assembler passes them;
* ``("n", node)``: a defined name whose definition is a formula or constant;
* ``("c", value)``: a constant, e.g. ``#NAME?`` for an unknown name.

Names that are plain references become ``"r"`` sources. Unqualified names
are looked up among the formula sheet's local names first, then globally
(Excel's rule; ExcelModel ignores sheet-scoped names). Formula cells on a
reference cycle, and cells depending on them, get no value (None).

Results are stored as ExcelModel stores them (``replace_empty`` then
``format_output``), so a formula whose result is a blank (INDEX into an empty
cell) holds 0, as in Excel and LibreOffice.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
import schedula as sh

from .formulas_book import Book, FormulaCell
from .formulas_compile import Compiled, Template, Unsupported, compile_formula, make_template
from .formulas_refs import Occurrence, Rect, scan, single_reference, structure, unquote_sheet

Source = tuple


class CellError(Exception):
    """A formula could not be compiled or evaluated; the message names the cell."""


def _where(book: Book, fc: FormulaCell | None) -> str:
    if fc is None:
        return "a defined name"
    from openpyxl.utils.cell import get_column_letter

    return f"{book.titles[fc.sheet]}!{get_column_letter(fc.col)}{fc.row} ({fc.text})"


@dataclass
class Node:
    fn: Compiled
    sources: list[Source]
    cell: FormulaCell | None  # None for a defined name
    deps: set[int] = field(default_factory=set)


def _error(code: str) -> np.ndarray:
    from formulas.tokens.operand import Error

    arr = np.empty((1, 1), object)
    arr[0, 0] = Error.errors[code]
    return arr


class Evaluator:
    """Bind, order and evaluate every formula of ``book``; results go into ``book.values``."""

    def __init__(self, book: Book, *, flat: bool = True) -> None:
        self.book, self.flat = book, flat
        self.nodes: list[Node] = []
        self.templates: dict[str, Template | None] = {}
        self._names: set[str] | None = None
        self.names: dict[tuple[int | None, str], Source] = {}
        self.owner: list[dict[tuple[int, int], int]] = [{} for _ in book.titles]
        self._rngs: dict[tuple[int, Rect], dict] = {}
        self._arrays: dict[tuple[int, Rect], np.ndarray] = {}
        self._sheet_ids: dict[int, tuple[str, str]] = {}
        self._literals: dict[tuple[str, int | None], Source] = {}
        self.stats = {"templates": 0, "single": 0, "cells": 0}
        self.name_values: dict[int, object] = {}
        self.done: set[int] = set()  # formula nodes that got a value

    # -- binding -------------------------------------------------------------
    def bind_all(self) -> None:
        for fc in self.book.formulas:
            nid = len(self.nodes)
            r1, c1, r2, c2 = fc.out
            for r in range(r1, r2 + 1):
                for c in range(c1, c2 + 1):
                    self.owner[fc.sheet][(r, c)] = nid
            self.nodes.append(Node(None, [], fc))  # type: ignore[arg-type]
        for nid, fc in enumerate(self.book.formulas):
            try:
                self.nodes[nid].fn, self.nodes[nid].sources = self._bind_cell(fc)
            except Unsupported:
                raise
            except Exception as exc:  # formulas raises FormulaError, TokenError, ...
                raise CellError(f"{_where(self.book, fc)}: {type(exc).__name__}: {exc}") from exc
        self.stats["cells"] = len(self.book.formulas)

    def _bind_cell(self, fc: FormulaCell) -> tuple[Compiled, list[Source]]:
        key, occs = scan(fc.text, fc.row, fc.col)
        shared = self._bind_structure(fc, occs)
        if shared is not None:
            return shared
        if key not in self.templates:
            fn = compile_formula(fc.text, flat=self.flat)
            self.templates[key] = make_template(fn, occs, shared=True)
            self.stats["templates"] += 1
        tpl = self.templates[key]
        sources = self._sources(tpl, occs, fc.sheet) if tpl is not None else None
        if sources is None:  # not shareable: compile this copy with its own position
            from formulas.ranges import Ranges

            cell = Ranges((self._ranges_dict(fc.sheet, fc.out),))
            fn = compile_formula(fc.text, cell=cell, flat=self.flat)
            tpl = make_template(fn, occs, shared=False)
            self.stats["single"] += 1
            sources = self._sources(tpl, occs, fc.sheet)
        return tpl.fn, sources  # type: ignore[union-attr,return-value]

    def _bind_structure(self, fc: FormulaCell, occs: list[Occurrence]) -> tuple[Compiled, list[Source]] | None:
        """Share one compiled function between every formula of the same structure (references and
        names as placeholders); None when the formula must be compiled as written."""
        if self._names is None:
            self._names = set(self.book.names) | {n for _, n in self.book.local_names}
        st = structure(fc.text, occs, self._names)
        if st is None:
            return None
        text, names = st
        skey = "\x01" + text
        if skey not in self.templates:
            try:
                fn = compile_formula(text, flat=self.flat)
            except Unsupported:
                raise
            except Exception:
                self.templates[skey] = None
                return None
            self.templates[skey] = make_template(fn, scan(text, 1, 1)[1], shared=True)
            self.stats["templates"] += 1
        tpl = self.templates[skey]
        if tpl is None or any(isinstance(s, str) and not s.startswith("_WBN") for s in tpl.specs):
            return None
        sources = self._sources(tpl, occs, fc.sheet, names)
        return None if sources is None else (tpl.fn, sources)

    def _sources(self, tpl: Template, occs: list[Occurrence], sheet: int | None,
                 names: list[str] | None = None) -> list[Source] | None:
        out: list[Source] = []
        for spec in tpl.specs:
            if isinstance(spec, str) and names is not None and spec.startswith("_WBN"):
                out.append(self._literal_source(names[int(spec[4:]) - 1], sheet))
                continue
            if isinstance(spec, tuple):
                first = self._occ_source(occs[spec[0]], sheet)
                if any(self._occ_source(occs[i], sheet) != first for i in spec[1:]):
                    return None  # e.g. F6 and $F$6 in one formula: one input in F, two in G
                out.append(first)
            else:
                out.append(self._literal_source(spec, sheet))
        return out

    def _occ_source(self, occ: Occurrence, sheet: int | None) -> Source:
        idx = sheet if occ.sheet is None else self.book.sheet_index(occ.sheet)
        return ("c", _error("#REF!")) if idx is None else ("r", idx, occ.rect)

    def _literal_source(self, key: str, sheet: int | None) -> Source:
        """A defined name, or a reference written the same in every copy (cached)."""
        src = self._literals.get((key, sheet))
        if src is None:
            src = self._literals[(key, sheet)] = self._resolve_literal(key, sheet)
        return src

    def _resolve_literal(self, key: str, sheet: int | None) -> Source:
        from formulas.errors import AnchorRangeName, InvalidRangeName
        from formulas.ranges import Ranges

        try:
            rng = Ranges.get_range(key)
        except AnchorRangeName:
            raise Unsupported(f"spilled-range reference {key}") from None
        except InvalidRangeName:
            return self._name_source(key, sheet)
        idx = self.book.sheet_index(unquote_sheet(rng["sheet"])) if rng.get("sheet") else sheet
        if idx is None or rng.get("filename") or rng.get("excel_id"):
            return ("c", _error("#REF!"))
        rect = (int(rng["r1"]) or 1, rng["n1"] or 1, int(rng["r2"]), rng["n2"])
        return ("r", idx, rect)

    def _name_source(self, key: str, sheet: int | None) -> Source:
        name, scopes = key.upper(), [sheet]
        if "!" in name:
            sheet_txt, name = name.rsplit("!", 1)
            scopes = [self.book.sheet_index(unquote_sheet(sheet_txt))]
        for scope in [*scopes, None]:
            if (scope, name) in self.names:
                return self.names[(scope, name)]
            text = self.book.names.get(name) if scope is None else self.book.local_names.get((scope, name))
            if text is not None:
                return self._define(scope, name, text)
        return ("c", _error("#NAME?"))

    def _define(self, scope: int | None, name: str, text: str) -> Source:
        occ = single_reference(text)
        if occ is not None and occ.sheet is not None:
            src = self._occ_source(occ, None)
            self.names[(scope, name)] = src
            return src
        nid = len(self.nodes)
        src = self.names[(scope, name)] = ("n", nid)
        formula = text if text.startswith("=") else "=" + text
        fn = compile_formula(formula, raw_output=True, flat=self.flat)
        node = Node(fn, [], None)
        self.nodes.append(node)
        occs = scan(formula, 1, 1)[1]
        tpl = make_template(fn, occs, shared=False)
        node.sources = self._sources(tpl, occs, None) or []  # type: ignore[arg-type]
        return src

    # -- ordering ------------------------------------------------------------
    def _deps(self, src: Source) -> set[int]:
        if src[0] == "n":
            return {src[1]}
        if src[0] != "r":
            return set()
        _, s, (r1, c1, r2, c2) = src
        owners = self.owner[s]
        if (r2 - r1 + 1) * (c2 - c1 + 1) <= len(owners):
            found = (owners.get((r, c)) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1))
            return {n for n in found if n is not None}
        return {n for (r, c), n in owners.items() if r1 <= r <= r2 and c1 <= c <= c2}

    def order(self) -> list[int]:
        """Nodes in dependency order (Kahn); nodes on or after a cycle are left out."""
        cache: dict[Source, set[int]] = {}
        users: list[list[int]] = [[] for _ in self.nodes]
        indeg = [0] * len(self.nodes)
        for nid, node in enumerate(self.nodes):
            for src in node.sources:
                key = src if src[0] != "c" else None
                if key is None:
                    continue
                if key not in cache:
                    cache[key] = self._deps(src)
                node.deps |= cache[key]
            for d in node.deps:
                users[d].append(nid)
            indeg[nid] = len(node.deps)
        ready = deque(n for n, k in enumerate(indeg) if k == 0)
        out: list[int] = []
        while ready:
            n = ready.popleft()
            out.append(n)
            for u in users[n]:
                indeg[u] -= 1
                if indeg[u] == 0:
                    ready.append(u)
        return out

    # -- evaluation ----------------------------------------------------------
    def _ranges_dict(self, s: int, rect: Rect) -> dict:
        """formulas' description of a range (what ``Ranges.get_range`` returns), cached."""
        key = (s, rect)
        rng = self._rngs.get(key)
        if rng is None:
            from openpyxl.utils.cell import get_column_letter as col

            if s not in self._sheet_ids:
                from formulas.ranges import Ranges

                base = Ranges.get_range("A1", {"sheet": self.book.titles[s].upper()})
                self._sheet_ids[s] = (base["sheet"], base["sheet_id"])
            sheet, sheet_id = self._sheet_ids[s]
            r1, c1, r2, c2 = rect
            a1 = f"{col(c1)}{r1}" if (r1, c1) == (r2, c2) else f"{col(c1)}{r1}:{col(c2)}{r2}"
            rng = self._rngs[key] = {
                "r1": str(r1), "r2": str(r2), "c1": col(c1), "c2": col(c2), "n1": c1, "n2": c2,
                "ref": a1, "name": f"{sheet_id}!{a1}", "sheet": sheet, "sheet_id": sheet_id,
            }
        return rng

    def _value(self, src: Source) -> object:
        from formulas.ranges import Ranges

        kind = src[0]
        if kind == "c":
            return src[1]
        if kind == "n":
            return self.name_values[src[1]]
        _, s, rect = src
        r1, c1, r2, c2 = rect
        vals = self.book.values[s]
        if r1 == r2 and c1 == c2:
            arr = np.empty((1, 1), object)
            arr[0, 0] = vals.get((r1, c1), sh.EMPTY)
        else:
            arr = self._arrays.get((s, rect))
            if arr is None:
                from formulas.ranges import _shape

                rng = self._ranges_dict(s, rect)
                arr = np.full(_shape(**rng), sh.EMPTY, dtype=object)
                if arr.size <= len(vals):
                    for i in range(arr.shape[0]):
                        for j in range(arr.shape[1]):
                            arr[i, j] = vals.get((r1 + i, c1 + j), sh.EMPTY)
                else:
                    for (r, c), v in vals.items():
                        if r1 <= r <= r2 and c1 <= c <= c2:
                            arr[r - r1, c - c1] = v
                self._arrays[(s, rect)] = arr
        rng = self._ranges_dict(s, rect)
        ranges = Ranges((rng,), {rng["name"]: (rng, arr)})  # what Ranges().set_value() builds
        ranges._value = arr  # ... with its value already known (saves formulas a _split per use)
        return ranges

    def run(self) -> None:
        from formulas.cell import format_output
        from formulas.functions import replace_empty

        for nid in self.order():
            node = self.nodes[nid]
            fc = node.cell
            try:
                res = replace_empty(node.fn(*[self._value(s) for s in node.sources]))
            except Exception as exc:
                raise CellError(f"{_where(self.book, fc)}: {type(exc).__name__}: {exc}") from exc
            if fc is None:
                self.name_values[nid] = res
                continue
            out = format_output(self._ranges_dict(fc.sheet, fc.out), res).value
            vals = self.book.values[fc.sheet]
            r1, c1, r2, c2 = fc.out
            for i in range(r2 - r1 + 1):
                for j in range(c2 - c1 + 1):
                    v = out[i, j]
                    vals[(r1 + i, c1 + j)] = 0 if v is sh.EMPTY else v
            self.done.add(nid)
