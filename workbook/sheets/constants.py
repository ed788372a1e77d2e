"""The Constants block (Hardware sheet): unit factors and spec constants, each a defined name ``c_<name>``,
and the small lookup tables ``t_<table>_<column>`` that turn a choice (precision, optimizer...) into a number.

Line-item modules may declare their own ``CONSTANTS`` and ``TABLES`` in the same shape; the builder
collects them all (a name declared twice is an error).
"""

from __future__ import annotations

from workbook import units

#: (name, value, unit, label, source)
CONSTANTS: list[tuple[str, float, str, str, str]] = [
    ("GB", units.GB, "B/GB", "Bytes per GB (decimal)", "spec 17.1 §0"),
    ("TB", units.TB, "B/TB", "Bytes per TB (decimal)", "spec 17.1 §0"),
    ("MB", units.MB, "B/MB", "Bytes per MB (decimal)", "spec 17.1 §0"),
    ("GiB", units.GiB, "B/GiB", "Bytes per GiB (binary)", "spec 17.1 §0"),
    ("MiB", units.MiB, "B/MiB", "Bytes per MiB (binary; nvidia-smi reports device memory in MiB)", "definition"),
    ("tera", units.TERA, "1/T", "Tera (TFLOPS to FLOP/s)", "SI prefix"),
    ("giga", units.GIGA, "1/G", "Giga (Gbit to bit, G-params)", "SI prefix"),
    ("mega", units.MEGA, "1/M", "Mega (1M tokens, M-params)", "SI prefix"),
    ("kilo", units.KILO, "1/k", "Kilo (W per kW)", "SI prefix"),
    ("bits_per_byte", units.BITS_PER_BYTE, "bit/B", "Bits per byte", "definition"),
    ("ms_per_s", units.MS_PER_S, "ms/s", "Milliseconds per second", "definition"),
    ("s_per_hour", units.SECONDS_PER_HOUR, "s/h", "Seconds per hour", "definition"),
    ("s_per_day", units.SECONDS_PER_DAY, "s/day", "Seconds per day", "spec 17.1 §0"),
    ("hours_per_day", units.HOURS_PER_DAY, "h/day", "Hours per day", "definition"),
    ("days_per_year", units.DAYS_PER_YEAR, "day/yr", "Days per year", "definition"),
    ("hours_per_year", units.HOURS_PER_YEAR, "h/yr", "Hours per year", "definition"),
    ("two", 2.0, "x", "Two (factor 2 of the spec's formulas, e.g. FLOPs per MAC, K and V)", "spec 17.1.1"),
]

#: table name -> (key column name, [(key, {column: value})], source)
TABLES: dict[str, tuple[str, list[tuple[str, dict[str, float]]], str]] = {
    "prec": (
        "name",
        [(k, {"bytes": v}) for k, v in units.BYTES_PER_ELEMENT.items()],
        "spec 17.1.4 Table 17-1",
    ),
}
