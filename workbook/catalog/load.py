"""Load catalog/gpus.yaml, models.yaml, defaults.yaml, efficiency.yaml and mfu.yaml into a validated Catalog."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from workbook.catalog.models import Catalog, DefaultValue, Defaults, Gpu, Model
from workbook.catalog.yamlio import line_of, load_yaml, to_input_error
from workbook.errors import InputError

#: the repository's catalog/ folder
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "catalog"

R = TypeVar("R", bound=BaseModel)


def load_records(path: str | Path, cls: type[R], id_field: str = "id") -> dict[str, R]:
    """Validate a YAML list of records of one kind; id -> record. InputError on any problem."""
    path = Path(path)
    data, lines = load_yaml(path)
    if not isinstance(data, list):
        raise InputError("expected a list of records (lines starting with '- ')", file=str(path), line=1)
    adapter = TypeAdapter(list[cls])
    try:
        records = adapter.validate_python(data)
    except ValidationError as exc:
        raise to_input_error(exc, file=str(path), lines=lines, model=list[cls]) from None
    out: dict[str, R] = {}
    for i, rec in enumerate(records):
        rid = getattr(rec, id_field)
        if rid in out:
            first = next(j for j, r in enumerate(records) if getattr(r, id_field) == rid)
            raise InputError(
                f"duplicate {id_field} {rid!r} (first on line {line_of(lines, (first, id_field))})",
                file=str(path), line=line_of(lines, (i, id_field)), field=f"[{i}].{id_field}",
            )
        out[rid] = rec
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
    defaults = load_records(folder / "defaults.yaml", DefaultValue, id_field="key")
    efficiency = load_efficiency(folder / EFFICIENCY_FILE, gpu_ids=gpus)  # one record per GPU
    mfu = load_mfu(folder / MFU_FILE, gpu_ids=gpus, model_ids=models)
    from workbook.catalog.engines import ENGINES_FILE, load_engines

    engines = load_engines(folder / ENGINES_FILE, gpu_ids=gpus) if (folder / ENGINES_FILE).exists() else None
    return Catalog(gpus=gpus, models=models, defaults=Defaults(records=defaults), efficiency=efficiency, mfu=mfu,
                   engines=engines)


def as_plain(obj: Any) -> Any:
    """A record as plain data (for JSON output)."""
    return obj.model_dump(mode="json") if isinstance(obj, BaseModel) else obj
