"""Forced recalculation with Gnumeric (``ssconvert --recalc``), the engine that follows Excel.

Gnumeric computes the constructs where LibreOffice and ``formulas`` part from Excel as Excel does
(``0^0`` and ``POWER(0,0)`` are ``#NUM!``, a negative base with a fractional exponent is ``#NUM!``):
docs/excel-compatibility.md lists them, and Gnumeric's own deviations from Excel.

``ssconvert --recalc -T Gnumeric_Excel:xlsx2 in.xlsx out.xlsx`` recalculates every formula on load
and writes the results as the cached values; they are read back with openpyxl ``data_only``. Which
cells are formulas is taken from the ORIGINAL file. Without ``--recalc`` ssconvert keeps the cached
values (tests/engines/test_gnumeric.py shows both). ``DISPLAY`` is emptied: no window is needed.

Gnumeric's load warnings that Excel's own files also raise are not errors: print titles written as
``Sheet!$A:$A,Sheet!$1:$4`` ("Multiple expressions are not supported") and conditional formats
``notContainsText`` with operator ``notContains`` ("Unknown enum value").
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .process import run_group, which
from .values import EngineError, Values, formula_cells, read_values

#: Per-file timeout (seconds): a 160,000-formula workbook recalculates in well under a minute.
TIMEOUT_S = 300.0

#: Load warnings that are not faults of the file (Excel itself writes these constructs).
BENIGN_WARNINGS = (
    re.compile(r"Multiple expressions are not supported in this context"),
    re.compile(r"Unknown enum value 'notContains'"),
)


def find_ssconvert() -> str | None:
    """Path of ``ssconvert`` (``$SSCONVERT`` overrides), or None."""
    return which("SSCONVERT", "ssconvert")


def available() -> bool:
    return find_ssconvert() is not None


def _require() -> str:
    exe = find_ssconvert()
    if exe is None:
        raise EngineError("Gnumeric is not installed: no 'ssconvert' on PATH "
                          "(apt-get install gnumeric, or scripts/install-libreoffice.sh; or set $SSCONVERT)")
    return exe


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["DISPLAY"] = ""
    env.setdefault("HOME", tempfile.gettempdir())
    return env


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    return run_group(cmd, timeout, "Gnumeric", _env())


@functools.lru_cache(maxsize=None)
def _version_of(exe: str) -> str:
    res = _run([exe, "--version"], timeout=60)
    text = (res.stdout or res.stderr).strip().splitlines()
    if res.returncode != 0 or not text:
        raise EngineError(f"'{exe} --version' failed (exit {res.returncode})")
    m = re.search(r"version '([^']+)'", text[0])
    return f"Gnumeric {m.group(1)}" if m else text[0]


def gnumeric_version() -> str:
    """e.g. "Gnumeric 1.12.55"."""
    return _version_of(_require())


def unexpected_warnings(stderr: str) -> list[str]:
    """The lines of ssconvert's stderr that are not known-benign load warnings."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return [ln for ln in lines if not any(p.search(ln) for p in BENIGN_WARNINGS)]


def convert(path: Path | str, out: Path, *, recalc: bool = True, timeout: float = TIMEOUT_S) -> list[str]:
    """Write ``path`` re-saved by Gnumeric (recalculated on load when *recalc*) to ``out``.

    Returns ssconvert's unexpected stderr lines. Raises EngineError when no output is produced.
    """
    exe = _require()
    src = Path(path)
    if not src.is_file():
        raise EngineError(f"no such workbook: {src}")
    cmd = [exe, *(["--recalc"] if recalc else []), "-T", "Gnumeric_Excel:xlsx2", str(src), str(out)]
    res = _run(cmd, timeout)
    if res.returncode != 0 or not out.is_file():
        raise EngineError(f"Gnumeric conversion failed (exit {res.returncode}): {' '.join(cmd)}\n"
                          f"stderr: {res.stderr.strip()[-2000:]}")
    return unexpected_warnings(res.stderr)


def recalculate(path: Path | str, *, timeout: float = TIMEOUT_S) -> Values:
    """Recalculate one workbook; {(sheet, coord): value} for its formula cells."""
    path = Path(path)
    wanted = formula_cells(path)
    with tempfile.TemporaryDirectory(prefix="gnumeric-recalc-") as tmp:
        out = Path(tmp) / "recalculated.xlsx"
        convert(path, out, timeout=timeout)
        return read_values(out, wanted)


def recalculate_many(paths: Iterable[Path | str], *, timeout: float = TIMEOUT_S) -> dict[Path, Values]:
    """Recalculate several workbooks, one ssconvert run each (Gnumeric starts in a fraction of a second)."""
    return {Path(p): recalculate(p, timeout=timeout) for p in paths}
