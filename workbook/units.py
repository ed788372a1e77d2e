"""Unit factors. Decimal everywhere (GB = 1e9 bytes); binary only where a name says GiB/MiB.

These are the same constants the workbook's Constants block holds; formulas reference them,
never literals.
"""

from __future__ import annotations

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
PB = 1e15
KiB = 2.0**10
MiB = 2.0**20
GiB = 2.0**30
TiB = 2.0**40

THOUSAND = 1e3
MILLION = 1e6
BILLION = 1e9
TRILLION = 1e12

TERA = 1e12  # TFLOPS -> FLOP/s
GIGA = 1e9
MEGA = 1e6
KILO = 1e3

BITS_PER_BYTE = 8.0
SECONDS_PER_MINUTE = 60.0
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
HOURS_PER_DAY = 24.0
DAYS_PER_YEAR = 365.0
HOURS_PER_YEAR = 8760.0
MS_PER_S = 1e3
US_PER_S = 1e6

#: bytes per element of each numeric format (Table 17-1, spec 17.1.4)
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "nf4": 0.5,
    "fp4": 0.5,
}


def bytes_per_element(precision: str) -> float:
    """Bytes per element of a precision name (case-insensitive)."""
    return BYTES_PER_ELEMENT[precision.lower()]
