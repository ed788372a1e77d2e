"""Recalculation with the pure-Python ``formulas`` package (test-only dependency).

The package parses every formula and computes every Excel operator and
function; this module only decides what to compile and in which order to
call it (``formulas_eval``):

1. read values, formulas and defined names with ``formulas``' own xlsx reader;
2. compile each *distinct* formula once, with ``formulas.Parser(True).ast(...)
   [1].compile()``; copies of a formula shifted across the scenario columns
   share one compiled function (``formulas_refs.scan``);
3. evaluate the cells in dependency order, feeding each compiled function
   ``formulas`` Ranges of the referenced cells (blanks as ``schedula.EMPTY``).

This is what ``formulas.ExcelModel().loads(path).finish().calculate()`` does,
without the per-cell dispatcher that made it take ~10 s for 2,300 formulas.
A workbook needing what only ExcelModel has (ISFORMULA, spilled ``A1#``
references) falls back to ExcelModel (``formulas_model``).

Differences from ExcelModel, all towards Excel and LibreOffice: an unknown
name gives ``#NAME?`` (ExcelModel: ``#REF!``), sheet-scoped names are resolved
(ExcelModel: ``#REF!``), and references to a sheet whose name contains an
apostrophe work (ExcelModel: ``#REF!``). Known limits of ``formulas`` 1.3.4 remain: a ``1E9``
literal or a structured reference is a parse error (EngineError);
SUBTOTAL/AGGREGATE/OFFSET give ``#NAME?``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .formulas_model import cell_value, parse_key, recalculate_model
from .values import EngineError, Values, normalize

if TYPE_CHECKING:
    from .formulas_eval import Evaluator

__all__ = ["available", "formulas_version", "parse_key", "recalculate", "recalculate_model"]


def available() -> bool:
    try:
        import formulas  # noqa: F401
    except Exception:
        return False
    return True


def formulas_version() -> str:
    import formulas

    return f"formulas {getattr(formulas, '__version__', '?')}"


def recalculate(path: Path | str, *, flat: bool = True) -> Values:
    """Recalculate ``path``; {(sheet, coord): value} for every formula cell.

    Cells on a reference cycle (and cells depending on them) are None.
    ``flat=False`` calls every compiled function through its schedula pipe
    (slower; for tests of the fast replay).
    """
    path = Path(path)
    if not available():
        raise EngineError("the 'formulas' package is not installed (pip install formulas)")
    from .formulas_book import load_book
    from .formulas_compile import Unsupported
    from .formulas_eval import CellError, Evaluator

    book = load_book(path)
    if not any(book.wanted.values()):
        return {}
    ev = Evaluator(book, flat=flat)
    try:
        ev.bind_all()
        ev.run()
    except Unsupported:
        return recalculate_model(path)
    except CellError as exc:
        raise EngineError(f"formulas could not evaluate {path}: {exc}") from exc
    except Exception as exc:  # formulas raises many kinds (FormulaError, KeyError, ...)
        raise EngineError(f"formulas could not evaluate {path}: {type(exc).__name__}: {exc}") from exc
    return collect(ev)


def collect(ev: Evaluator) -> Values:
    """The evaluator's results for the workbook's formula cells, normalised."""
    from openpyxl.utils.cell import coordinate_from_string, column_index_from_string

    book = ev.book
    computed: list[set[tuple[int, int]]] = [set() for _ in book.titles]
    for nid in ev.done:
        fc = ev.nodes[nid].cell
        r1, c1, r2, c2 = fc.out
        computed[fc.sheet].update((r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1))
    formula_at = [set(owner) for owner in ev.owner]
    out: Values = {}
    for s, title in enumerate(book.titles):
        vals = book.values[s]
        for coord in book.wanted.get(title, []):
            col, row = coordinate_from_string(coord)
            rc = (row, column_index_from_string(col))
            if rc in computed[s]:
                out[(title, coord)] = cell_value(vals[rc])
            elif rc in formula_at[s] or rc not in vals:
                out[(title, coord)] = None  # on a cycle, or a data-table cell
            else:
                out[(title, coord)] = normalize(vals[rc])  # text that looks like a formula
    return out
