"""Catalogue overlays: a folder with only some catalogue files and records, merged over the shipped catalogue.

A folder given to ``--catalog`` that has no gpus.yaml is an overlay: its efficiency.yaml (records by
gpu), engines.yaml (``devices`` by gpu, ``profiles`` by id), models.yaml and defaults.yaml records
replace the shipped records of the same id or are added, validated as in the shipped file. An efficiency
record of a GPU the shipped file has may leave fields out: they keep the shipped record's values (an overlay
written before a field was added still loads). ``workbook calibrate -o DIR`` writes one (:func:`write_overlay`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml

from workbook import safe_write
from workbook.catalog.efficiency import check_compute_ties, check_fp8_fields
from workbook.catalog.load import DEFAULT_DIR, load_catalog, load_records
from workbook.catalog.models import DefaultValue, Defaults, GpuEfficiency, Model
from workbook.catalog.yamlio import line_of, load_yaml
from workbook.errors import InputError

#: catalogue files an overlay may hold (a folder with gpus.yaml is a whole catalogue)
OVERLAY_FILES = ("efficiency.yaml", "engines.yaml", "models.yaml", "defaults.yaml")
#: the overlay files calibrate writes (write_overlay)
WRITTEN = ("efficiency.yaml", "engines.yaml")


def is_overlay(folder: Path | None) -> bool:
    """A folder without gpus.yaml but with at least one overlay file."""
    return (folder is not None and folder.is_dir() and not (folder / "gpus.yaml").exists()
            and any((folder / f).exists() for f in OVERLAY_FILES))


def overlay_files(folder: Path) -> list[Path]:
    return [folder / f for f in OVERLAY_FILES if (folder / f).exists()]


def load_catalog_dir(folder: Path | None):
    """``--catalog DIR``: the shipped catalogue (None), a whole catalogue folder, or an overlay over the shipped one."""
    if folder is not None and folder.is_dir() and not (folder / "gpus.yaml").exists():
        if not is_overlay(folder):
            raise InputError("neither a catalogue (gpus.yaml) nor an overlay", file=str(folder),
                             expected="a folder with gpus.yaml, or with some of " + ", ".join(OVERLAY_FILES))
        return load_overlay(folder)
    return load_catalog(folder)


def _known(file: Path, lines, i: int, field: str, value: str, known) -> None:
    if value not in known:
        raise InputError(f"unknown GPU id {value!r}", file=str(file), line=line_of(lines, (i, field)),
                         field=f"[{i}].{field}", expected="one of " + ", ".join(known))


def load_overlay(folder: Path, base=None):
    """The base catalogue (default the shipped one) with the overlay's records merged in by id."""
    from workbook.catalog.engines import EnginesCatalog, load_engines

    cat = base if base is not None else load_catalog(DEFAULT_DIR)
    update: dict = {}
    models = dict(cat.models)
    if (folder / "models.yaml").exists():
        models.update(load_records(folder / "models.yaml", Model))
        update["models"] = models
    if (folder / "defaults.yaml").exists():
        recs = dict(cat.defaults.records)
        recs.update(load_records(folder / "defaults.yaml", DefaultValue, id_field="key"))
        update["defaults"] = Defaults(records=recs)
    if (folder / "efficiency.yaml").exists():
        path = folder / "efficiency.yaml"
        recs = load_records(path, GpuEfficiency, id_field="gpu", base=cat.efficiency)
        _, lines = load_yaml(path)
        for i, gid in enumerate(recs):
            _known(path, lines, i, "gpu", gid, cat.gpus)
        update["efficiency"] = {**cat.efficiency, **recs}
        check_compute_ties(update["efficiency"], path)
        check_fp8_fields(update["efficiency"], cat.gpus, path)
    if (folder / "engines.yaml").exists():
        part = load_engines(folder / "engines.yaml", gpu_ids=cat.gpus, partial=True)
        base_eng = cat.engines
        devices = {d.gpu: d for d in (base_eng.devices if base_eng else [])} | {d.gpu: d for d in part.devices}
        profiles = {p.id: p for p in (base_eng.profiles if base_eng else [])} | {p.id: p for p in part.profiles}
        update["engines"] = EnginesCatalog(devices=list(devices.values()), profiles=list(profiles.values()))
    return cat.model_copy(update=update)


def _dump(path: Path, data) -> None:
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
    safe_write.write_text(path, text)  # never through a link, at the file or its folder (workbook/safe_write.py)


def write_overlay(folder: Path, catalog, values: dict, *, source: str, as_of: dt.date, note: str) -> list[Path]:
    """Write the records that ``values`` (Factor -> fitted value) change, whole, with ``source``, ``as_of``
    and ``note`` (the fit error) into ``folder``: efficiency.yaml and/or engines.yaml. Returns the files."""
    from workbook.calibrate.factors import catalog_with, holders

    values = {f: float(f"{v:.4g}") for f, v in values.items()}  # 4 significant digits, as the catalogue states them
    new = catalog_with(catalog, values)
    by_table: dict[str, dict[str, list[str]]] = {}
    for f in values:
        for rec in holders(catalog, f):  # a compute-die factor rewrites the GPUs tied to its record too
            by_table.setdefault(f.spec.table, {}).setdefault(rec, []).append(f.spec.field)

    def record(rec, before, fields: list[str]) -> dict:
        d = rec.model_dump(mode="json")
        d["source"] = source
        d["as_of"] = as_of.isoformat()
        fs = dict(d.get("field_sources") or {})
        for fld in sorted(fields):
            fs[fld] = f"{source}: {note}"
        d["field_sources"] = fs
        d["notes"] = (f"{note}. Catalogue values before calibration: "
                      + ", ".join(f"{fld} {getattr(before, fld):g}" for fld in sorted(fields)))[:2000]
        return d

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    if "efficiency" in by_table:
        recs = [record(new.efficiency[g], catalog.efficiency[g], flds)
                for g, flds in sorted(by_table["efficiency"].items())]
        _dump(folder / "efficiency.yaml", recs)
        written.append(folder / "efficiency.yaml")
    if "device" in by_table or "engine" in by_table:
        eng: dict[str, list] = {}
        if "device" in by_table:
            eng["devices"] = [record(new.engines.device(g), catalog.engines.device(g), f)
                              for g, f in sorted(by_table["device"].items())]
        if "engine" in by_table:
            eng["profiles"] = [record(new.engines.profile(p), catalog.engines.profile(p), f)
                               for p, f in sorted(by_table["engine"].items())]
        _dump(folder / "engines.yaml", eng)
        written.append(folder / "engines.yaml")
    return written
