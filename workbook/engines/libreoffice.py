"""Forced recalculation with LibreOffice headless (``soffice --convert-to xlsx``).

A plain convert keeps the cached values XlsxWriter stores (see toolchain.md
section 4), so every run uses a throwaway user profile whose
``registrymodifications.xcu`` sets ``OOXMLRecalcMode`` (and ``ODFRecalcMode``)
to 0 = "always recalculate on load". The converted copies are read back with
openpyxl ``data_only=True`` (error cells come back as strings such as
``"#NAME?"``; calamine would turn them into blanks). Which cells are formulas
is taken from the ORIGINAL file, because LibreOffice rewrites formulas.

Several files can be converted with one soffice start (``recalculate_many``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from .process import run_group, tail, which
from .values import EngineError, Values, formula_cells, read_values

#: Per-run timeout is BASE + PER_FILE * number of files (seconds).
TIMEOUT_BASE_S = 120.0
TIMEOUT_PER_FILE_S = 60.0

RECALC_XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""


def find_soffice() -> str | None:
    """Path of the soffice executable (``$SOFFICE`` overrides), or None."""
    found = which("SOFFICE", "soffice", "libreoffice")
    if found:
        return found
    for candidate in (
        "/usr/lib/libreoffice/program/soffice",
        "/opt/libreoffice/program/soffice",
        "/Applications/LibreOffice.app/Contents/MacOS/soffice",
    ):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def available() -> bool:
    return find_soffice() is not None


def _require_soffice() -> str:
    exe = find_soffice()
    if exe is None:
        raise EngineError(
            "LibreOffice is not installed: no 'soffice' or 'libreoffice' on PATH "
            "(run scripts/install-libreoffice.sh, or set $SOFFICE)"
        )
    return exe


def make_profile(root: Path) -> Path:
    """Create a user profile under ``root`` that forces recalculation on load.

    Returns the directory to pass as ``-env:UserInstallation=<its file URI>``.
    """
    profile = root / "profile"
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (profile / "user" / "registrymodifications.xcu").write_text(RECALC_XCU, encoding="utf-8")
    return profile


def _run(cmd: list[str], timeout: float, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run soffice in its own process group; kill the whole group on timeout."""
    env = dict(os.environ)
    env.setdefault("SAL_USE_VCLPLUGIN", "svp")  # no display needed
    return run_group(cmd, timeout, "LibreOffice", env, cwd)


@functools.lru_cache(maxsize=None)
def _version_of(exe: str) -> str:
    with tempfile.TemporaryDirectory(prefix="lo-version-") as tmp:
        profile = make_profile(Path(tmp))
        cmd = [exe, f"-env:UserInstallation={profile.as_uri()}", "--version"]
        res = _run(cmd, timeout=60)
    if res.returncode != 0 or not res.stdout.strip():
        raise EngineError(
            f"'{' '.join(cmd)}' failed (exit {res.returncode}): {tail(res.stderr)}"
        )
    return res.stdout.strip().splitlines()[0].strip()


def libreoffice_version() -> str:
    """The first line of ``soffice --version``, e.g. "LibreOffice 7.4.7.2 40(Build:2)"."""
    return _version_of(_require_soffice())


def convert_recalculated(
    paths: Sequence[Path | str], outdir: Path, *, timeout: float | None = None,
    target: str = "xlsx:Calc MS Excel 2007 XML", suffix: str = ".xlsx",
) -> list[Path]:
    """Convert ``paths`` to xlsx (or *target*, e.g. ``pdf:calc_pdf_Export`` with suffix ``.pdf``) in ``outdir``
    with one soffice run and forced recalc.

    Inputs are copied under unique names first, so files with the same name in
    different folders do not overwrite each other. Returns the output paths in
    input order. Raises EngineError naming the command and stderr tail.
    """
    exe = _require_soffice()
    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.is_file():
            raise EngineError(f"no such workbook: {p}")
    outdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="lo-run-", dir=outdir))
    try:
        profile = make_profile(work)
        indir = work / "in"
        indir.mkdir()
        staged: list[Path] = []
        unique = len({p.name for p in paths}) == len(paths)  # then keep the names: footers print &F
        for i, p in enumerate(paths):
            in_suffix = p.suffix.lower() or ".xlsx"
            dst = indir / (p.stem + in_suffix if unique else f"wb{i:04d}{in_suffix}")
            shutil.copyfile(p, dst)
            staged.append(dst)
        convdir = work / "out"
        cmd = [
            exe,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--nodefault",
            "--nologo",
            "--convert-to",
            target,
            "--outdir",
            str(convdir),
            *[str(s) for s in staged],
        ]
        if timeout is None:
            timeout = TIMEOUT_BASE_S + TIMEOUT_PER_FILE_S * len(paths)
        res = _run(cmd, timeout=timeout, cwd=work)
        outputs: list[Path] = []
        failed: list[str] = []
        for i, (src, st) in enumerate(zip(paths, staged)):
            produced = convdir / (st.stem + suffix)
            if not produced.is_file():
                failed.append(str(src))
                continue
            final = outdir / f"{i:04d}-{src.stem}{suffix}"
            shutil.move(str(produced), final)
            outputs.append(final)
        if res.returncode != 0 or failed:
            what = f"no output for {', '.join(failed)}" if failed else f"exit {res.returncode}"
            raise EngineError(
                f"LibreOffice conversion failed ({what}): {' '.join(cmd)}\n"
                f"stdout: {tail(res.stdout, 1000)}\nstderr: {tail(res.stderr)}"
            )
        return outputs
    finally:
        shutil.rmtree(work, ignore_errors=True)


def recalculate_many(
    paths: Iterable[Path | str], *, timeout: float | None = None
) -> dict[Path, Values]:
    """Recalculate several workbooks with ONE soffice start.

    Returns {input path: {(sheet, coord): value}} for the formula cells of each.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        return {}
    wanted = [formula_cells(p) for p in paths]  # also validates the inputs early
    with tempfile.TemporaryDirectory(prefix="lo-recalc-") as tmp:
        outputs = convert_recalculated(paths, Path(tmp), timeout=timeout)
        return {p: read_values(out, w) for p, out, w in zip(paths, outputs, wanted)}


def recalculate(path: Path | str, *, timeout: float | None = None) -> Values:
    """Recalculate one workbook; {(sheet, coord): value} for its formula cells."""
    path = Path(path)
    return recalculate_many([path], timeout=timeout)[path]

