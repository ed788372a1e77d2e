"""Excel's rounding arithmetic, mirrored exactly (toolchain.md gotcha 8).

Where the workbook rounds with ROUND/ROUNDUP/ROUNDDOWN/CEILING/FLOOR, the reference calls these.
"""

from __future__ import annotations

import math
from decimal import ROUND_DOWN, ROUND_HALF_UP, ROUND_UP, Decimal


def _quant(digits: int) -> Decimal:
    return Decimal(1).scaleb(-digits)


def _round(x: float, digits: int, mode: str) -> float:
    d = Decimal(repr(float(x)))
    if digits >= 0:
        return float(d.quantize(_quant(digits), rounding=mode))
    step = Decimal(10) ** (-digits)
    return float((d / step).quantize(Decimal(1), rounding=mode) * step)


def excel_round(x: float, digits: int = 0) -> float:
    """ROUND: half away from zero (ROUND(2.5,0)=3, ROUND(-2.5,0)=-3)."""
    return _round(x, digits, ROUND_HALF_UP)


def excel_roundup(x: float, digits: int = 0) -> float:
    """ROUNDUP: away from zero."""
    return _round(x, digits, ROUND_UP)


def excel_rounddown(x: float, digits: int = 0) -> float:
    """ROUNDDOWN: toward zero."""
    return _round(x, digits, ROUND_DOWN)


def excel_ceiling(x: float, significance: float = 1.0) -> float:
    """CEILING(x, s) for s > 0: the next multiple of s at or above x (CEILING(-10, 8) = -8)."""
    if significance == 0:
        return 0.0
    return math.ceil(x / significance) * significance


def excel_floor(x: float, significance: float = 1.0) -> float:
    """FLOOR(x, s) for s > 0: the multiple of s at or below x."""
    if significance == 0:
        return 0.0
    return math.floor(x / significance) * significance
