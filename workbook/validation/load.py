"""Read validation files: YAML with line numbers, the points' model, each point's scenario validated by
the scenario loader's model; every problem is an InputError naming file, line and field."""

from __future__ import annotations

import copy
import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pydantic import ValidationError

from workbook.catalog.yamlio import Loc, _clean_loc, _dotted, line_of, load_yaml, to_input_error
from workbook.errors import InputError
from workbook.scenario.model import Scenario
from workbook.validation.model import KNOWN_SCALES, Point, ValidationFile

#: the repository's validation folder
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "catalog" / "validation"

#: relative difference allowed between a given scale and the known conversion of its units
SCALE_RTOL = 1e-6


@dataclass
class Case:
    """One point with the scenario it is computed on and the published value in the registry unit."""

    file: str
    point: Point
    index: int
    publication: str  # cross-validation group: the file's `publication`, default the file stem
    scenario: Scenario
    unit: str  # the registry unit
    published: float  # value x scale, in the registry unit


@dataclass
class LoadedFile:
    path: Path
    description: str
    publication: str  # the cross-validation group: the file's `publication`, else the file stem
    cases: list[Case] = field(default_factory=list)


def default_files(folder: str | Path | None = None) -> list[Path]:
    """Every ``*.yaml`` of the validation folder (default: catalog/validation), sorted."""
    folder = Path(folder) if folder is not None else DEFAULT_DIR
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise InputError("no validation files", file=str(folder), expected="*.yaml files")
    return files


def _merge(base: dict, over: dict) -> dict:
    """``over`` merged into a copy of ``base``: mappings merge key by key, anything else replaces."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _relative(lines: dict[Loc, int], prefix: Loc) -> dict[Loc, int]:
    """The part of a line map under ``prefix``, with the prefix removed."""
    n = len(prefix)
    return {loc[n:]: ln for loc, ln in lines.items() if loc[:n] == prefix and len(loc) >= n}


def _from_override(loc: Loc, override: dict | None) -> bool:
    """True when a scenario error at ``loc`` comes from the point's own scenario fields."""
    if not override:
        return False
    if not loc:
        return True
    node: Any = override
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return False
    return True


def _closest(name: str, names: Iterable[str]) -> str:
    near = difflib.get_close_matches(name, list(names), n=3, cutoff=0.5)
    return f"; closest: {', '.join(near)}" if near else ""


def _scenario(data: dict, override: dict | None, *, file: str, lines: dict[Loc, int], index: int,
              catalog) -> Scenario:
    merged = _merge(data, override or {})
    base_prefix: Loc = ("scenario",)
    point_prefix: Loc = ("points", index, "scenario")
    try:
        sc = Scenario.model_validate(merged)
    except ValidationError as exc:
        loc = _clean_loc(tuple(exc.errors(include_url=False)[0]["loc"]))
        prefix = point_prefix if _from_override(loc, override) else base_prefix
        raise to_input_error(exc, file=file, lines=lines, model=Scenario, prefix=prefix) from None
    rel = _relative(lines, base_prefix)
    rel.update(_relative(lines, point_prefix))
    sc._source_file = file
    sc._source_lines = rel
    if catalog is not None:
        for kind, ids in (("gpu", catalog.gpus), ("model", catalog.models)):
            value = getattr(sc, kind)
            if value is not None and value not in ids:
                prefix = point_prefix if _from_override((kind,), override) else base_prefix
                raise InputError(f"unknown {kind} id {value!r}{_closest(value, ids)}", file=file,
                                 line=line_of(lines, prefix + (kind,)), field=_dotted(prefix + (kind,)),
                                 expected="one of " + ", ".join(ids))
    return sc


def _check_point(p: Point, i: int, *, file: str, lines: dict[Loc, int], registry: dict) -> tuple[str, float]:
    """(registry unit, published value in it); InputError for an unknown key or a unit mismatch."""
    where = ("points", i)
    if p.key not in registry:
        raise InputError(f"unknown quantity {p.key!r}{_closest(p.key, registry)}", file=file,
                         line=line_of(lines, where + ("key",)), field=_dotted(where + ("key",)),
                         expected="a name from `workbook calc --json SCENARIO.yaml`")
    unit = registry[p.key].q.unit
    if p.scale is None:
        if p.unit != unit:
            raise InputError(f"unit {p.unit!r} is not the unit of {p.key} ({unit!r})", file=file,
                             line=line_of(lines, where + ("unit",)), field=_dotted(where + ("unit",)),
                             expected=f"{unit!r}, or give `scale` converting {p.unit} to {unit}")
        return unit, p.value
    known = KNOWN_SCALES.get((p.unit, unit))
    if known is not None and not math.isclose(p.scale, known, rel_tol=SCALE_RTOL):
        raise InputError(f"scale {p.scale:g} does not convert {p.unit} to {unit}", file=file,
                         line=line_of(lines, where + ("scale",)), field=_dotted(where + ("scale",)),
                         expected=f"{known:.10g}")
    if p.unit == unit and p.scale != 1:
        raise InputError(f"scale {p.scale:g} given but unit {p.unit!r} is already the unit of {p.key}",
                         file=file, line=line_of(lines, where + ("scale",)), field=_dotted(where + ("scale",)),
                         expected="1, or the published unit in `unit`")
    published = p.value * p.scale
    if not math.isfinite(published) or published == 0:
        raise InputError(f"value x scale = {p.value:g} x {p.scale:g} is not a finite non-zero number",
                         file=file, line=line_of(lines, where + ("value",)), field=_dotted(where + ("value",)),
                         expected="a value that, scaled, is a finite non-zero number")
    return unit, published


def load_validation_file(path: str | Path, catalog=None, registry: dict | None = None) -> LoadedFile:
    """One validation file -> its cases (point, scenario, published value in the registry unit)."""
    from workbook.calc import registry as calc_registry

    path = Path(path)
    file = str(path)
    data, lines = load_yaml(path)
    if not isinstance(data, dict):
        raise InputError("a validation file must be a mapping with scenario: and points:", file=file, line=1)
    try:
        vf = ValidationFile.model_validate(data)
    except ValidationError as exc:
        raise to_input_error(exc, file=file, lines=lines, model=ValidationFile) from None
    registry = registry if registry is not None else calc_registry()
    publication = vf.publication or path.stem
    out = LoadedFile(path=path, description=vf.description, publication=publication)
    seen: dict[str, int] = {}
    for i, p in enumerate(vf.points):
        if p.point in seen:
            raise InputError(f"duplicate point {p.point!r} (first on line {seen[p.point]})", file=file,
                             line=line_of(lines, ("points", i, "point")), field=f"points[{i}].point")
        seen[p.point] = line_of(lines, ("points", i, "point")) or 0
        unit, published = _check_point(p, i, file=file, lines=lines, registry=registry)
        sc = _scenario(vf.scenario, p.scenario, file=file, lines=lines, index=i, catalog=catalog)
        out.cases.append(Case(file=file, point=p, index=i, publication=publication, scenario=sc, unit=unit, published=published))
    return out


def load_validation_files(paths: Iterable[str | Path], catalog=None) -> list[LoadedFile]:
    from workbook.calc import registry as calc_registry

    reg = calc_registry()
    return [load_validation_file(p, catalog=catalog, registry=reg) for p in paths]
