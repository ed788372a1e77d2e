"""Argument checks shared by the reference modules: one wording for every bad number."""

from __future__ import annotations

import math


def positive(**values: float) -> None:
    """Raise ValueError naming the first value that is not a finite positive number."""
    for name, v in values.items():
        if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a finite positive number, got {v!r}")


def nonnegative(**values: float) -> None:
    """Raise ValueError naming the first value that is not a finite non-negative number."""
    for name, v in values.items():
        if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a finite non-negative number, got {v!r}")
