"""Load catalog/gpus.yaml, models.yaml, defaults.yaml, efficiency.yaml and mfu.yaml into a validated Catalog."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from workbook.catalog.models import Catalog, DefaultValue, Defaults, Gpu, Model
from workbook.catalog.problems import Problem, parameter_problems, raise_problems, record_label, record_problems
from workbook.catalog.yamlio import line_of, load_yaml
from workbook.errors import InputError

#: the repository's catalog/ folder
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "catalog"

R = TypeVar("R", bound=BaseModel)


def load_records(path: str | Path, cls: type[R], id_field: str = "id",
                 base: dict[str, R] | None = None) -> dict[str, R]:
    """Validate a YAML list of records of one kind; id -> record.

    InputError on any problem, naming the file, the record by its id and the field, and listing every
    problem of every record (unknown fields first, with the closest known name). With ``base`` (a catalogue
    overlay's file over the shipped records), a record whose id is in ``base`` may leave fields out: they keep
    the base record's values (an overlay written before a field existed still loads).
    """
    path = Path(path)
    data, lines = load_yaml(path)
    if not isinstance(data, list):
        raise InputError("expected a list of records (lines starting with '- ')", file=str(path), line=1)
    out: dict[str, R] = {}
    first_index: dict[str, int] = {}
    problems: list[Problem] = []
    for i, item in enumerate(data):
        label = record_label(item, id_field, i)
        if not isinstance(item, dict):
            problems.append(Problem(line_of(lines, (i,)), label, "expected a record (a mapping of fields)"))
            continue
        rid0 = item.get(id_field)
        if base is not None and isinstance(rid0, str) and rid0 in base:
            item = {**base[rid0].model_dump(mode="json"), **item}
        try:
            rec = cls.model_validate(item)
        except ValidationError as exc:
            problems += record_problems(exc, cls=cls, label=label, index=i, lines=lines)
            continue
        rid = getattr(rec, id_field)
        if rid in out:
            problems.append(Problem(
                line_of(lines, (i, id_field)), f"{rid}.{id_field}",
                f"duplicate {id_field} {rid!r} (first on line {line_of(lines, (first_index[rid], id_field))})"))
            continue
        out[rid] = rec
        first_index[rid] = i
    problems.sort(key=lambda p: not p.unknown)
    raise_problems(problems, str(path))
    return out


def load_catalog(dir: str | Path | None = None) -> Catalog:  # noqa: A002 - contract name
    """Load and validate the catalogue in ``dir`` (default: the repository's catalog/)."""
    if dir is None:
        return _default_catalog()
    return _load(Path(dir))


@lru_cache(maxsize=1)
def _default_catalog() -> Catalog:
    return _load(DEFAULT_DIR)


def _load(folder: Path) -> Catalog:
    from workbook.catalog.efficiency import EFFICIENCY_FILE, load_efficiency  # imports this module
    from workbook.catalog.mfu import MFU_FILE, load_mfu  # imports this module

    gpus = load_records(folder / "gpus.yaml", Gpu)
    models = load_records(folder / "models.yaml", Model)
    check_parameter_counts(folder / "models.yaml", models)
    defaults = load_records(folder / "defaults.yaml", DefaultValue, id_field="key")
    efficiency = load_efficiency(folder / EFFICIENCY_FILE, gpu_ids=gpus)  # one record per GPU
    mfu = load_mfu(folder / MFU_FILE, gpu_ids=gpus, model_ids=models)
    from workbook.catalog.engines import ENGINES_FILE, load_engines

    engines = load_engines(folder / ENGINES_FILE, gpu_ids=gpus) if (folder / ENGINES_FILE).exists() else None
    return Catalog(gpus=gpus, models=models, defaults=Defaults(records=defaults), efficiency=efficiency, mfu=mfu,
                   engines=engines)


def check_parameter_counts(path: Path, models: dict[str, Model]) -> None:
    """InputError when a model's published parameter count is more than 2 % off its architecture's."""
    _, lines = load_yaml(path)
    raise_problems(parameter_problems(models, lines, list(models)), str(path))


def as_plain(obj: Any) -> Any:
    """A record as plain data (for JSON output)."""
    return obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
