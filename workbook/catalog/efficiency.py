"""Efficiency factors of the step-time model (catalog/efficiency.yaml; docs/step_time.md).

One record per GPU id of catalog/gpus.yaml: the achieved fraction of the GPU's peak for matmuls,
attention kernels and HBM streaming, of its links' bandwidth for collectives, the NIC bandwidth per
GPU of a typical system, and per-collective latencies. Each value names its source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from workbook.catalog.load import DEFAULT_DIR, load_records
from workbook.catalog.models import COMPUTE_FIELDS, GpuEfficiency
from workbook.catalog.yamlio import line_of, load_yaml
from workbook.errors import InputError

#: the file name inside the catalogue folder
EFFICIENCY_FILE = "efficiency.yaml"

__all__ = ["EFFICIENCY_FILE", "GpuEfficiency", "check_compute_ties", "check_fp8_fields", "load_efficiency"]

#: two values of a tied field closer than this are equal (efficiency.yaml writes 4 significant digits)
TIE_TOLERANCE = 1e-9


def load_efficiency(path: str | Path | None = None, *,
                    gpu_ids: Optional[Iterable[str]] = None) -> dict[str, GpuEfficiency]:
    """Validate catalog/efficiency.yaml (or ``path``): gpu id -> record.

    InputError names the file, the line, the record and the field on any problem (bad YAML, a
    missing or unknown field, a value out of range, a duplicate gpu). With ``gpu_ids`` every record
    must name a known GPU and every known GPU must have a record.
    """
    path = Path(path) if path is not None else DEFAULT_DIR / EFFICIENCY_FILE
    records = load_records(path, GpuEfficiency, id_field="gpu")
    if gpu_ids is not None:
        known = list(gpu_ids)
        _, lines = load_yaml(path)
        for i, gid in enumerate(records):
            if gid not in known:
                raise InputError(f"unknown GPU id {gid!r} (not in gpus.yaml)", file=str(path),
                                 line=line_of(lines, (i, "gpu")), field=f"{gid}.gpu",
                                 expected="one of " + ", ".join(known))
        missing = [g for g in known if g not in records]
        if missing:
            raise InputError(
                f"no efficiency record for GPU {', '.join(missing)}: every GPU of gpus.yaml needs one (the step-time "
                "model's achieved fractions of its peak FLOP/s, HBM and link bandwidth, its NIC per GPU and "
                "latencies); copy the record of the most similar GPU with `source: \"assumed: <that gpu's> "
                "values ...\"` (plans then list it as an assumption) or run `workbook catalog add-gpu` for the "
                "template", file=str(path), field="gpu")
    check_compute_ties(records, path)
    if isinstance(gpu_ids, dict):
        check_fp8_fields(records, gpu_ids, path)
    return records


def _num(v: float | None) -> str:
    return "left out" if v is None else f"{v:g}"


def _record_line(path: Path, gid: str, field: str) -> int | None:
    """The line of ``field`` in the record of ``gid`` (for an error message), when the file has it."""
    data, lines = load_yaml(path) if path.exists() else ([], {})
    i = next((k for k, d in enumerate(data or []) if isinstance(d, dict) and d.get("gpu") == gid), -1)
    return line_of(lines, (i, field)) if i >= 0 else None


def check_fp8_fields(records: dict[str, GpuEfficiency], gpus: dict, path: str | Path) -> None:
    """fp8_gemm_efficiency is given exactly where gpus.yaml gives the GPU an FP8 peak: InputError naming the file,
    line, record and field otherwise (on a GPU without FP8 an FP8 recipe's GEMMs are BF16 GEMMs at gemm_efficiency,
    so a value there would move nothing)."""
    path = Path(path)
    for gid, rec in records.items():
        gpu = gpus.get(gid)
        if gpu is None:
            continue
        has_fp8 = getattr(gpu, "fp8_dense_TFLOPS", None) is not None
        if has_fp8 == (rec.fp8_gemm_efficiency is not None):
            continue
        if has_fp8:
            raise InputError(f"{gid}.fp8_gemm_efficiency is missing: gpus.yaml gives {gid} an FP8 peak, so FP8 training "
                             "plans need the fraction of it their GEMMs sustain", file=str(path),
                             line=_record_line(path, gid, "gpu"), field=f"{gid}.fp8_gemm_efficiency",
                             expected="0 < x <= 1 (gemm_efficiency's value when nothing better is known)")
        raise InputError(f"{gid}.fp8_gemm_efficiency is given but gpus.yaml gives {gid} no FP8 peak: its FP8 recipes run "
                         "BF16 GEMMs at gemm_efficiency, so the value would move nothing", file=str(path),
                         line=_record_line(path, gid, "fp8_gemm_efficiency"), field=f"{gid}.fp8_gemm_efficiency",
                         expected="left out")


def check_compute_ties(records: dict[str, GpuEfficiency], path: str | Path) -> None:
    """Every ``compute_as`` names a record without one of its own, and the tied GPU's compute-die factors
    (COMPUTE_FIELDS) equal that record's: InputError naming the file, line, record, field and both values."""
    path = Path(path)
    for gid, rec in records.items():
        if not rec.compute_as:
            continue
        target = records.get(rec.compute_as)
        if target is None or target.compute_as or rec.compute_as == gid:
            raise InputError(f"{gid}.compute_as names {rec.compute_as!r}, which is not a GPU with its own compute "
                             "factors", file=str(path), line=_record_line(path, gid, "compute_as"),
                             field=f"{gid}.compute_as", expected="the id of another record without compute_as")
        for fld in COMPUTE_FIELDS:
            mine, theirs = getattr(rec, fld), getattr(target, fld)
            if (mine is None) != (theirs is None) or (mine is not None and abs(mine - theirs) > TIE_TOLERANCE):
                raise InputError(f"{gid}.{fld} is {_num(mine)} but {gid} has compute_as: {target.gpu} (the same "
                                 f"compute die), whose {fld} is {_num(theirs)}", file=str(path),
                                 line=_record_line(path, gid, fld),
                                 field=f"{gid}.{fld}", expected=f"{_num(theirs)}, or no compute_as")
