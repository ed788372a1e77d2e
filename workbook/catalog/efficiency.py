"""Efficiency factors of the step-time model (catalog/efficiency.yaml; docs/step_time.md).

One record per GPU id of catalog/gpus.yaml: the achieved fraction of the GPU's peak for matmuls,
attention kernels and HBM streaming, of its links' bandwidth for collectives, the NIC bandwidth per
GPU of a typical system, and per-collective latencies. Each value names its source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from workbook.catalog.load import DEFAULT_DIR, load_records
from workbook.catalog.models import GpuEfficiency
from workbook.catalog.yamlio import line_of, load_yaml
from workbook.errors import InputError

#: the file name inside the catalogue folder
EFFICIENCY_FILE = "efficiency.yaml"

__all__ = ["EFFICIENCY_FILE", "GpuEfficiency", "load_efficiency"]


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
    return records
