"""Recalculation engines: verify a generated workbook's live formulas.

Two independent engines recompute every formula cell, ignoring the cached
values the writer stored:

* ``"formulas"``: the pure-Python ``formulas`` package (test-only dependency);
* ``"libreoffice"``: LibreOffice headless with a forced-recalc profile;
* ``"gnumeric"``: Gnumeric's ``ssconvert --recalc``, the engine that follows Excel where LibreOffice
  and ``formulas`` do not (``0^0`` is ``#NUM!``; docs/excel-compatibility.md).

Usage::

    from workbook.engines import available_engines, recalculate
    for engine in available_engines():
        values = recalculate(path, engine)   # {(sheet title, "B7"): 42.0, ...}

Values are floats, bools, str, or Excel error strings ("#DIV/0!", "#NAME?", ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from . import formulas_engine, gnumeric, libreoffice
from .gnumeric import gnumeric_version
from .libreoffice import libreoffice_version
from .values import ERROR_STRINGS, EngineError, Values, formula_cells, is_error

FORMULAS = "formulas"
LIBREOFFICE = "libreoffice"
GNUMERIC = "gnumeric"
ENGINES = (FORMULAS, LIBREOFFICE, GNUMERIC)

__all__ = [
    "ENGINES",
    "ERROR_STRINGS",
    "EngineError",
    "FORMULAS",
    "GNUMERIC",
    "LIBREOFFICE",
    "Values",
    "available_engines",
    "engine_version",
    "formula_cells",
    "gnumeric_version",
    "is_error",
    "libreoffice_version",
    "recalculate",
    "recalculate_many",
]


def available_engines() -> list[str]:
    """Engines usable on this machine, in a fixed order."""
    out = []
    if formulas_engine.available():
        out.append(FORMULAS)
    if libreoffice.available():
        out.append(LIBREOFFICE)
    if gnumeric.available():
        out.append(GNUMERIC)
    return out


def _check(engine: str) -> None:
    if engine not in ENGINES:
        raise EngineError(f"unknown engine {engine!r} (allowed: {', '.join(ENGINES)})")


def recalculate(path: Path | str, engine: str) -> Values:
    """Recalculate ``path`` with ``engine``: {(sheet title, "A1"): value} for formula cells."""
    _check(engine)
    if engine == FORMULAS:
        return formulas_engine.recalculate(path)
    if engine == GNUMERIC:
        return gnumeric.recalculate(path)
    return libreoffice.recalculate(path)


def recalculate_many(paths: Iterable[Path | str], engine: str) -> dict[Path, Values]:
    """Recalculate several workbooks; {Path(input): values}.

    LibreOffice converts all of them with a single soffice start; the formulas
    engine handles them one after another.
    """
    _check(engine)
    paths = [Path(p) for p in paths]
    if engine == FORMULAS:
        return {p: formulas_engine.recalculate(p) for p in paths}
    if engine == GNUMERIC:
        return gnumeric.recalculate_many(paths)
    return libreoffice.recalculate_many(paths)


def engine_version(engine: str) -> str:
    """A one-line version string, for test and report output."""
    _check(engine)
    if engine == FORMULAS:
        return formulas_engine.formulas_version()
    if engine == GNUMERIC:
        return gnumeric_version()
    return libreoffice_version()
