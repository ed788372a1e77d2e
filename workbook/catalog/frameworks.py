"""Training-framework profiles (catalog/frameworks.yaml; docs/frameworks.md).

A profile scales the step-time model's kernel factors for what its framework does differently from
Megatron-LM, on whose runs the GPU factors of catalog/efficiency.yaml were set (``megatron`` is the
identity). ``load_frameworks`` raises InputError naming the file, the line, the record and the field.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field

from workbook.catalog.load import DEFAULT_DIR, load_records
from workbook.catalog.models import _Record

#: the file name inside the catalogue folder
FRAMEWORKS_FILE = "frameworks.yaml"
#: the profile a scenario without training.framework uses (the step model as validated)
DEFAULT_FRAMEWORK = "megatron"


class Framework(_Record):
    """One training framework's factors on the step-time model (fields: catalog/frameworks.yaml)."""

    id: str = Field(..., pattern=r"^[a-z0-9._-]+$", max_length=64, description="lowercase id [a-z0-9._-]")
    gemm_efficiency_factor: float = Field(..., gt=0, le=2, description="matmul efficiency vs Megatron's")
    attention_efficiency_factor: float = Field(..., gt=0, le=2, description="attention kernel efficiency vs Megatron's")
    elementwise_bytes_factor: float = Field(..., ge=0.5, le=10, description="element-wise HBM bytes vs Megatron's")
    allocator_reserve_frac: float = Field(..., ge=0, le=1, description="caching allocator: reserved / allocated - 1 "
                                          "at the peak (fragmentation and cached blocks)")


def load_frameworks(path: str | Path | None = None) -> dict[str, Framework]:
    """Validate catalog/frameworks.yaml (or ``path``): id -> profile; the default profile must be there."""
    path = Path(path) if path is not None else DEFAULT_DIR / FRAMEWORKS_FILE
    records = load_records(path, Framework)
    if DEFAULT_FRAMEWORK not in records:
        from workbook.errors import InputError

        raise InputError(f"no {DEFAULT_FRAMEWORK!r} profile", file=str(path), field="id", expected=DEFAULT_FRAMEWORK)
    return records


@lru_cache(maxsize=1)
def shipped_frameworks() -> dict[str, Framework]:
    """The shipped profiles (the workbook's framework table and the calculation read these)."""
    return load_frameworks()
