"""Pydantic models of a validation file: one scenario plus published measurements to compare with.

A file (catalog/validation/*.yaml) holds ``scenario`` (inline, the format of catalog/scenarios/*.yaml)
and ``points``: each names a quantity of ``workbook.calc.registry()`` (``key``), the published
``value`` in ``unit`` (the registry unit, or another unit with a ``scale`` that converts to it),
where it was published (``source``, ``as_of``), the relative ``tolerance`` and whether it is a
``holdout`` (kept back for acceptance, never used to fit). A point may change the file's scenario
for itself (``scenario``: fields merged over the file's scenario, e.g. another model or token count).
``publication`` (optional, default the file stem) groups files for cross-validation by publication.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: conversions a ``scale`` must match when both units are known: (published unit, registry unit) -> factor
KNOWN_SCALES: dict[tuple[str, str], float] = {
    ("GiB", "GB"): 2**30 / 1e9,
    ("MiB", "MB"): 2**20 / 1e6,
    ("TiB", "TB"): 2**40 / 1e12,
    ("M GPU-h", "GPU-h"): 1e6,
    ("K GPU-h", "GPU-h"): 1e3,
    ("B params", "count"): 1e9,
    ("TFLOP/s", "PFLOP/s"): 1e-3,
    ("h", "days"): 1 / 24,
}

POINT_ID = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


class Point(_Strict):
    """One published measurement of one named quantity."""

    point: str = Field(..., pattern=POINT_ID, max_length=64, description="short unique name in the file")
    key: str = Field(..., min_length=1, description="quantity name from workbook.calc.registry()")
    value: float = Field(..., description="the published value, in `unit`")
    unit: str = Field(..., min_length=1, max_length=40, description="unit of `value` (the registry unit unless scaled)")
    scale: Optional[float] = Field(None, gt=0, le=1e15,
                                   description="factor taking `value` in `unit` to the registry unit")
    source: str = Field(..., min_length=1, description="publication, table or section")
    as_of: dt.date = Field(..., description="date the value was checked (ISO)")
    tolerance: float = Field(..., gt=0, le=10, description="allowed relative error |ours/published - 1|")
    notes: str = Field("", max_length=4000)
    holdout: bool = Field(False, description="kept back for acceptance: reported separately, never used to fit")
    scenario: Optional[dict[str, Any]] = Field(
        None, description="scenario fields for this point only, merged over the file's scenario")

    @field_validator("value")
    @classmethod
    def _nonzero(cls, v: float) -> float:
        if v == 0:
            raise ValueError("value must be non-zero (errors are relative to it)")
        return v


PUBLICATION_ID = r"^[a-z0-9][a-z0-9.-]*$"


class ValidationFile(_Strict):
    """A validation file: a scenario and the published points it is compared with."""

    publication: Optional[str] = Field(
        None, pattern=PUBLICATION_ID, max_length=64,
        description="cross-validation group (e.g. narayanan2021-ptdp): files of one publication share it; "
                    "default the file stem. `validate --cv` never splits a publication between fit and test")
    description: str = Field("", max_length=4000)
    scenario: dict[str, Any] = Field(..., description="inline scenario (catalog/scenarios/*.yaml format)")
    points: list[Point] = Field(..., min_length=1)
