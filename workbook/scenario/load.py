"""Read scenario YAML files into validated Scenario objects (errors name file, line and field)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pydantic import ValidationError

from workbook.catalog.yamlio import line_of, load_mapping, to_input_error
from workbook.errors import InputError
from workbook.scenario.model import Scenario


def load_scenario(path: str | Path) -> Scenario:
    """One scenario file -> Scenario. Accepts ``3e12``-style numbers. InputError on any problem."""
    path = Path(path)
    data, lines = load_mapping(path, "a scenario file", "name:, gpu:, ...")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise to_input_error(exc, file=str(path), lines=lines, model=Scenario) from None
    scenario._source_file = str(path)
    scenario._source_lines = lines
    return scenario


def load_scenarios(paths: Iterable[str | Path]) -> list[Scenario]:
    """Several scenario files, in order; scenario names must be unique."""
    out: list[Scenario] = []
    seen: dict[str, str] = {}
    for p in paths:
        s = load_scenario(p)
        if s.name in seen:
            raise InputError(
                f"duplicate scenario name {s.name!r} (also in {seen[s.name]})",
                file=str(p), line=line_of(s._source_lines, ("name",)), field="name",
            )
        seen[s.name] = str(p)
        out.append(s)
    return out
