"""Compute every point of the validation files with ``workbook.calc.compute`` and compare."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from workbook.errors import InputError
from workbook.validation.load import Case, load_validation_files


@dataclass(frozen=True)
class Result:
    """One point: the published value and ours in the registry unit, and the relative error."""

    file: str
    point: str
    key: str
    unit: str
    published: float
    ours: float
    tolerance: float
    holdout: bool
    source: str
    as_of: str
    notes: str
    value_as_published: float
    unit_as_published: str
    publication: str = ""  # cross-validation group (the file's `publication`, default its stem)

    @property
    def error_frac(self) -> float:
        """(ours - published) / published."""
        return (self.ours - self.published) / self.published

    @property
    def passed(self) -> bool:
        return abs(self.error_frac) <= self.tolerance


def _compute(case: Case, catalog, cache: dict) -> dict[str, float]:
    from workbook.calc import compute

    key = case.scenario.model_dump_json()
    if key not in cache:
        try:
            cache[key] = compute(case.scenario, catalog)
        except InputError as err:
            if err.file:
                raise
            raise InputError(err.message, file=case.file, field=err.field, expected=err.expected) from None
    return cache[key]


def run_cases(cases: Iterable[Case], catalog) -> list[Result]:
    cache: dict[str, dict[str, float]] = {}
    out = []
    for c in cases:
        values = _compute(c, catalog, cache)
        p = c.point
        out.append(Result(
            file=Path(c.file).name, point=p.point, key=p.key, unit=c.unit, published=c.published,
            ours=values[p.key], tolerance=p.tolerance, holdout=p.holdout, source=p.source,
            as_of=p.as_of.isoformat(), notes=p.notes, value_as_published=p.value, unit_as_published=p.unit,
            publication=c.publication,
        ))
    return out


def validate(paths: Iterable[str | Path], catalog=None) -> list[Result]:
    """Load the files (InputError on bad input) and compare every point."""
    from workbook.catalog import load_catalog

    catalog = catalog or load_catalog()
    files = load_validation_files(paths, catalog=catalog)
    return run_cases([c for f in files for c in f.cases], catalog)
