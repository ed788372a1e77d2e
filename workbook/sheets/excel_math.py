"""Excel-safe powers: Excel computes ``0^0`` and ``POWER(0,0)`` as ``#NUM!`` (MS-OI29500 §2.1.1018), LibreOffice and
``formulas`` give 1; a negative base with a fractional exponent is ``#NUM!`` in Excel and a real root in LibreOffice.

The workbook writes a power only in two forms (the Excel lint, workbook/lint/excel.py, refuses every other ``^``
and every ``POWER``): to an exponent that is at least 1 or the reciprocal of one (``^MAX(1,e)``,
``^(1/MAX(1,e))``), which is never 0^0; or, where the exponent can be 0, with the base nudged to 1 where it is
0 and the result masked,

    b^e = (b + [b<=0])^e · [b>0] + [b<=0]·[e=0]

which is Python's ``b ** e`` for b >= 0, ``0 ** 0`` = 1 included, computed by the engines' own power (an
EXP/LN form loses about |e·ln b| ulps, which the load model's secant refinements amplify past 1e-9).
docs/excel-compatibility.md lists every difference and what the writer does.
"""

from __future__ import annotations

#: the text every allowed ``^`` follows (the nudged base ends so); the lint looks for it
NUDGED_BASE_END = "<=0))"


def _pos_part(base: str, exponent: str) -> str:
    return f"(({base})+(({base}){NUDGED_BASE_END}^({exponent})*(({base})>0)"


def power_nonneg(base: str, exponent: str) -> str:
    """``base ^ exponent`` for a base >= 0 (expressions of cell references), 1 at 0^0, as Python."""
    return f"({_pos_part(base, exponent)}+(({base})<=0)*(({exponent})=0))"


#: the texts an allowed ``^`` may be followed by: an exponent of at least 1, or the reciprocal of one (in (0, 1]);
#: a power of a base >= 0 to such an exponent is never 0^0 and never a root of a negative number
POSITIVE_EXPONENT_STARTS = ("MAX(1,", "(1/MAX(1,")


def power_pos_exp(base: str, exponent: str) -> str:
    """``base ^ exponent`` for a base >= 0 and an exponent the catalogue keeps at 1 or more (a smooth-roofline
    exponent p, validated >= 1): ``(b)^MAX(1,e)``, the base written once."""
    return f"({base})^MAX(1,{exponent})"


def root_pos_exp(base: str, exponent: str) -> str:
    """``base ^ (1/exponent)`` for a base >= 0 and an exponent kept at 1 or more: ``(b)^(1/MAX(1,e))``."""
    return f"({base})^(1/MAX(1,{exponent}))"
