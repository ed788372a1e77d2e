"""Number-format rules (a format picked from a row's values) and a small renderer of the formats.

A rule turns the cached values of one row (or one catalogue column) into one Excel number format,
so every cell of the row reads alike. :func:`render` shows a value the way Excel and LibreOffice
show it under the formats built here; the writer uses it to size columns, the tests to read them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

#: entries a value cache keeps (the least recently used go first)
_CACHE_MAX = 200_000

#: Excel formats that show a count in thousands-scaled magnitudes (the cell keeps the number)
TERA_FMT = '0.0,,,," T"'
GIGA_FMT = '0.0,,," B"'
MEGA_FMT = '0.0,," M"'
SCIENTIFIC = "0.00E+00"


def _finite(values: list) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]


@dataclass(frozen=True)
class Decimals:
    """``#,##0`` with the decimals the row's smallest non-zero value needs to show *sig* digits.

    *whole_from*: a row whose largest value reaches it shows whole numbers (USD totals);
    *percent*: the value is a share, shown as a percentage.
    """

    sig: int = 2
    min_dec: int = 0
    max_dec: int = 3
    prefix: str = ""
    percent: bool = False
    whole_from: float | None = None

    def pick(self, values: list) -> str:
        scale = 100.0 if self.percent else 1.0
        nums = [abs(v) * scale for v in _finite(values)]
        if self.whole_from is not None and nums and max(nums) >= self.whole_from:
            dec = 0
        else:
            dec = max([_decimals(v, self.sig) for v in nums if v > 0], default=0)
            dec = max(self.min_dec, min(self.max_dec, dec))
            tiny = [v for v in nums if 0 < v < 0.5 * 10**-dec]
            if tiny and not self.percent and not self.prefix:
                return SCIENTIFIC  # a value that would read 0 (a tolerance, an epsilon)
        base = "0" if self.percent else "#,##0"
        return f"{self.prefix}{base}" + ("." + "0" * dec if dec > 0 else "") + ("%" if self.percent else "")


@lru_cache(maxsize=_CACHE_MAX)  # a row's values recur across scenarios and rows
def _decimals(v: float, sig: int) -> int:
    """Decimals that show *v* (> 0) with *sig* significant digits, or fewer if it has fewer."""
    want = sig - 1 - math.floor(math.log10(v))
    has = next((k for k in range(0, 10) if abs(round(v, k) - v) <= 1e-9 * v), 10)
    return max(0, min(want, has))


@dataclass(frozen=True)
class Magnitude:
    """Counts in readable magnitudes (``2.0 T``, ``70.6 B``, ``5.3 M``) when a row reaches a million.

    Conditional sections pick the magnitude per cell, so an edited input still reads well. Rows
    with a negative value (conditional sections drop the minus sign) and small rows use *small*.
    """

    small: Decimals = Decimals()

    def pick(self, values: list) -> str:
        nums = _finite(values)
        if nums and min(nums) >= 0:
            top = max(nums)
            if top >= 1e12:
                return f"[>=1000000000000]{TERA_FMT};[>=1000000000]{GIGA_FMT};#,##0"
            if top >= 1e9:
                return f"[>=1000000000]{GIGA_FMT};[>=1000000]{MEGA_FMT};#,##0"
            if top >= 1e6:
                return f"[>=1000000]{MEGA_FMT};#,##0"
        return self.small.pick(values)


@dataclass(frozen=True)
class General:
    """Units without their own rule: decimals by magnitude, scientific for huge or tiny values."""

    small: Decimals = Decimals(sig=3, max_dec=4)

    def pick(self, values: list) -> str:
        nums = [abs(v) for v in _finite(values) if v != 0]
        if nums and (max(nums) >= 1e15 or min(nums) < 1e-4):
            return SCIENTIFIC
        return self.small.pick(values)


@dataclass(frozen=True)
class Scientific:
    """Scientific notation for rows that reach *from_value*; smaller rows (a coefficient) as *small*."""

    from_value: float = 1e6
    small: Decimals = Decimals(sig=3, max_dec=2)

    def pick(self, values: list) -> str:
        nums = [abs(v) for v in _finite(values)]
        return SCIENTIFIC if nums and max(nums) >= self.from_value else self.small.pick(values)


Rule = Decimals | Magnitude | General | Scientific


# -- rendering ---------------------------------------------------------------------------------
_COND = re.compile(r"^\[(>=|<=|>|<|=)([-+0-9.E]+)\]")


def _sections(fmt: str) -> list[str]:
    out, cur, quoted = [], "", False
    for ch in fmt:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def _holds(op: str, limit: float, v: float) -> bool:
    return {">=": v >= limit, "<=": v <= limit, ">": v > limit, "<": v < limit, "=": v == limit}[op]


def render(fmt: str, value: float) -> str:
    """*value* as Excel shows it under *fmt* (the formats this package builds, and General)."""
    if fmt in ("", "General"):
        return f"{value:.10g}"
    if type(value) is not float or value == 0 or value != value:  # 0.0 and -0.0 are equal keys; NaN no key
        return _picker(fmt)(value)
    return _shown(fmt, value)


@lru_cache(maxsize=_CACHE_MAX)  # rows repeat values across the scenarios
def _shown(fmt: str, value: float) -> str:
    """render(fmt, value) for a non-zero float, kept."""
    return _picker(fmt)(value)


@lru_cache(maxsize=None)  # the format parsed once: the build renders about 15,000 values under 100 formats
def _picker(fmt: str) -> Callable[[float], str]:
    """render(fmt, .) with the format's sections parsed: the section a value takes, and its sign."""
    sections = _sections(fmt)
    whole = len(sections) > 1  # a section of its own per sign (or condition): the value shows without its sign
    if _COND.match(sections[0]):  # conditional sections: the first that holds, else the last
        conds = []
        for s in sections[:-1]:
            m = _COND.match(s)
            if m:
                conds.append((m.group(1), float(m.group(2)), _section(_COND.sub("", s))))
        last = _section(_COND.sub("", sections[-1]))

        def conditional(value: float) -> str:
            for op, limit, show in conds:
                if _holds(op, limit, value):
                    break
            else:
                show = last
            return show(abs(value) if whole else value)  # conditional sections show no minus sign of their own

        return conditional
    first = _section(sections[0])
    negative = _section(sections[1]) if whole else None

    def signed(value: float) -> str:
        if value < 0:
            if whole:
                return negative(abs(value))
            return "-" + first(abs(value))
        return first(abs(value) if whole else value)

    return signed


def _section(section: str) -> Callable[[float], str]:
    """The renderer of one section: its literals and number code parsed once."""
    literal = re.findall(r'"([^"]*)"', section)
    body = re.sub(r'"[^"]*"', "\x00", section)
    core = re.search(r"[#0][#0,.]*(?:E\+0+)?%?", body)
    if core is None:
        return lambda value: section
    parts = iter(literal)
    fill = lambda s: "".join(next(parts) if ch == "\x00" else ch for ch in s)  # noqa: E731
    head = fill(body[: core.start()])
    tail = fill(body[core.end():])
    code = core.group(0)
    if "E+" in code:
        mant = code.split("E+")[0]
        dec = len(mant.split(".")[1]) if "." in mant else 0
        digits = len(code.split("E+")[1])

        def scientific(value: float) -> str:
            m, e = f"{value:.{dec}E}".split("E")
            return head + f"{m}E{'-' if e.startswith('-') else '+'}{abs(int(e)):0{digits}d}" + tail

        return scientific
    percent = code.endswith("%")
    if percent:
        code = code[:-1]
    trailing = len(code) - len(code.rstrip(","))
    code = code.rstrip(",")
    scale = 1000**trailing
    dec = len(code.split(".")[1]) if "." in code else 0
    step = Decimal(1).scaleb(-dec)
    spec = f",.{dec}f" if "," in code else f".{dec}f"
    mark = "%" if percent else ""

    def fixed(value: float) -> str:
        if percent:
            value = value * 100
        value = value / scale
        rounded = Decimal(repr(value)).quantize(step, rounding=ROUND_HALF_UP)
        return head + format(rounded, spec) + mark + tail

    return fixed
