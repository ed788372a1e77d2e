"""Excel-safe forms of operations whose Excel semantics differ from LibreOffice's and ``formulas``'.

Excel computes ``0^0`` and ``POWER(0,0)`` as ``#NUM!`` (MS-OI29500 §2.1.1018) and a negative base with
a fractional exponent as ``#NUM!``; LibreOffice and ``formulas`` give 1 and a real root. The workbook
therefore writes no ``^`` and no ``POWER`` at all (the Excel lint, workbook/lint/excel.py, refuses
both). A power of a base the physics keeps at or above 0 is written with EXP and LN, the base nudged
to 1 where it is 0 so that LN never sees 0 (no floor constant: the ``formulas`` engine rounds typed
numbers to 15 decimals, so a 1e-300 floor would read 0 there):

    b^e = EXP(e·LN(b + [b<=0]))·[b>0] + [b<=0]·[e=0]

which is Python's ``b ** e`` for b >= 0, ``0 ** 0`` = 1 included. A negative base gives ``#NUM!`` in
every engine alike (LN of a negative number). docs/excel-compatibility.md lists every difference.
"""

from __future__ import annotations


def _pos_part(base: str, exponent: str) -> str:
    return f"EXP(({exponent})*LN(({base})+(({base})<=0)))*(({base})>0)"


def power_nonneg(base: str, exponent: str) -> str:
    """``base ^ exponent`` for a base >= 0 (expressions of cell references), 1 at 0^0, as Python."""
    return f"({_pos_part(base, exponent)}+(({base})<=0)*(({exponent})=0))"


def power_pos_exp(base: str, exponent: str) -> str:
    """``base ^ exponent`` for a base >= 0 and an exponent known to be > 0 (a validated factor)."""
    return f"({_pos_part(base, exponent)})"
