"""Efficiency factors of the step-time model (catalog/efficiency.yaml; docs/step_time.md).

One record per GPU id of catalog/gpus.yaml: the achieved fraction of the GPU's peak for matmuls,
attention kernels and HBM streaming, of its links' bandwidth for collectives, the NIC bandwidth per
GPU of a typical system, and per-collective latencies. Each value names its source.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Iterable, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workbook.catalog.load import DEFAULT_DIR, load_records
from workbook.catalog.models import ID_PATTERN
from workbook.catalog.yamlio import line_of, load_yaml
from workbook.errors import InputError

#: the file name inside the catalogue folder
EFFICIENCY_FILE = "efficiency.yaml"


class GpuEfficiency(BaseModel):
    """Efficiency factors of one GPU (fractions are of the catalogue's peak or link figure)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    gpu: str = Field(..., pattern=ID_PATTERN, max_length=64, description="GPU id in catalog/gpus.yaml")
    gemm_efficiency: float = Field(..., gt=0, le=1, description="sustained matmul FLOP/s / dense BF16 peak")
    attention_efficiency: float = Field(
        ..., gt=0, le=1, description="fused (Flash) attention forward+backward FLOP/s / dense BF16 peak")
    hbm_efficiency: float = Field(..., gt=0, le=1, description="achieved streaming bandwidth / HBM peak")
    nvlink_efficiency: float = Field(
        ..., gt=0, le=1, description="collective bus bandwidth / one-direction NVLink (PCIe if no NVLink)")
    network_efficiency: float = Field(..., gt=0, le=1, description="collective bus bandwidth / NIC line rate")
    nic_GBps_per_gpu: float = Field(..., gt=0, le=1000, description="scale-out NIC per GPU, one direction (GB/s)")
    nvlink_latency_us: float = Field(..., ge=0, le=1000, description="latency of one intra-node collective (us)")
    network_latency_us: float = Field(..., ge=0, le=10000, description="latency of one inter-node collective (us)")
    source: str = Field(..., min_length=1, description="paper or benchmark the factors come from")
    as_of: dt.date = Field(..., description="date the values were checked (ISO)")
    field_sources: dict[str, str] = Field(default_factory=dict, description="field -> source where not `source`")
    notes: str = Field("", max_length=2000)

    @model_validator(mode="after")
    def _field_sources_name_fields(self) -> "GpuEfficiency":
        unknown = sorted(set(self.field_sources) - set(type(self).model_fields))
        if unknown:
            raise ValueError(f"field_sources names unknown fields: {', '.join(unknown)}")
        return self


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
                                 line=line_of(lines, (i, "gpu")), field=f"[{i}].gpu",
                                 expected="one of " + ", ".join(known))
        missing = [g for g in known if g not in records]
        if missing:
            raise InputError(f"no efficiency record for GPU {', '.join(missing)}", file=str(path), field="gpu")
    return records
