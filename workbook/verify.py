"""``workbook verify``: recalculate a workbook with formula engines and compare every calculated
cell with the reference implementation run on the file's own inputs."""

from __future__ import annotations

import math
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from xlsxwriter.utility import xl_rowcol_to_cell

REL_TOL = 1e-9
ABS_TOL = 1e-12
#: a numeric difference larger than REL_TOL is reported as conditioning, not as a mismatch, only when it is at most
#: this and every cell the formula reads agrees with the reference (or is itself such a cell): the engine computed
#: the same formula from the same numbers, and a subtraction of nearly equal terms amplified their last bits
CONDITIONING_MAX = 1e-5


@dataclass
class Mismatch:
    engine: str
    sheet: str
    cell: str
    label: str
    formula: str
    got: object
    want: object

    def __str__(self) -> str:
        return (f"[{self.engine}] {self.sheet}!{self.cell} {self.label!r}: engine {self.got!r} "
                f"!= reference {self.want!r}  formula {self.formula}")


@dataclass
class Report:
    path: Path
    engines: list[str]
    cells_checked: int = 0
    max_rel_diff: float = 0.0
    mismatches: list[Mismatch] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    conditioned: list[Mismatch] = field(default_factory=list)  # amplified last bits (CONDITIONING_MAX), listed apart

    @property
    def ok(self) -> bool:
        return not self.mismatches and self.cells_checked > 0


def rel_diff(got: float, want: float) -> float:
    d = abs(got - want)
    if d <= ABS_TOL:
        return 0.0
    return d / max(abs(got), abs(want))


def expected_values(path: Path) -> tuple[dict[tuple[str, str], object], dict[tuple[str, str], tuple[str, str]]]:
    """{(sheet, cell): reference value} for every calculated cell, and {(sheet, cell): (label, formula)}."""
    from workbook.calc import compute_resolved, registry
    from workbook.readback import read_workbook
    from workbook.safe_xlsx import load_checked
    from workbook.scenario.resolve import resolve
    from workbook.writer.cover import overall_text
    from workbook.writer.input_guard import guard_flags, guarded_value
    from workbook.writer.layout import HEADER_ROW
    from workbook.writer.status import TEXT_ROWS, status_texts
    from workbook.writer.summary import summary_values

    rb = read_workbook(path)
    reg = registry()
    flags = guard_flags()
    results, resolved, model_ids = [], [], []
    for sc in rb.scenarios:
        s, gpu, model = resolve(sc, rb.catalog)
        resolved.append(s)
        model_ids.append(model.id)
        results.append(compute_resolved(s, gpu, model, rb.catalog.defaults.as_dict(), rb.catalog.efficiency_of(gpu.id),
                                        engines=rb.catalog.engines))
    names = [s.name for s in resolved]
    texts = status_texts(results, rb.columns)
    summary = summary_values(results, resolved, model_ids, texts["scenario_status"])
    wb = load_checked(path, data_only=False)
    want: dict[tuple[str, str], object] = {}
    info: dict[tuple[str, str], tuple[str, str]] = {}
    for sheet, rows in rb.rows.items():
        for i, col in enumerate(rb.columns):
            if sheet != "Plan":
                want[(sheet, xl_rowcol_to_cell(HEADER_ROW, col))] = names[i]
        for key, row in rows.items():
            source = summary if sheet == "Summary" else (texts if key in TEXT_ROWS else None)
            if key == "scenario_column":
                continue  # typed text (the column letters), not a formula
            if source is not None and key in source:
                for i, col in enumerate(rb.columns):
                    want[(sheet, xl_rowcol_to_cell(row, col))] = source[key][i]
            elif sheet != "Summary" and key in reg:  # a guarded cell of a column in input error reads the text
                for i, col in enumerate(rb.columns):
                    want[(sheet, xl_rowcol_to_cell(row, col))] = guarded_value(results[i][key], flags[key], results[i])
            elif key == "master_check":
                want[(sheet, xl_rowcol_to_cell(row, rb.columns[0]))] = sum(r["scenario_failures_count"] for r in results)
    failed = [r["scenario_failed_flag"] for r in results]
    cover = wb["Cover"]
    for row in cover.iter_rows():
        for c in row:
            if not (isinstance(c.value, str) and c.value.startswith("=")):
                continue
            label = str(cover.cell(c.row, 1).value or "")
            if "master_check_cell" in c.value:
                want[("Cover", c.coordinate)] = overall_text(names, texts["scenario_status"], failed)
            elif label == "Warnings":
                n = sum(int(r["warnings_count"]) for r in results)
                want[("Cover", c.coordinate)] = f"{n} warning(s): planning guidelines a plan may break (see Checks)"
            elif label.startswith("Scenario "):
                i = int(label.split()[1]) - 1
                want[("Cover", c.coordinate)] = names[i] if c.column == 2 else texts["scenario_status"][i]
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith("="):
                    label = ws.cell(c.row, 1).value or ""
                    info[(ws.title, c.coordinate)] = (str(label), c.value)
    return want, info


def agreement(got, expected) -> tuple[bool, float | None]:
    """Does an engine's (or a stored) value *got* equal the reference's *expected*? Texts exactly, numbers (and
    booleans) within REL_TOL; also the relative difference of two numbers (None otherwise)."""
    if isinstance(expected, str):
        return got == expected, None
    if isinstance(got, bool):
        got = float(got)
    if isinstance(got, (int, float)) and math.isfinite(got):
        d = rel_diff(float(got), float(expected))
        return d <= REL_TOL, d
    return False, None


def compare(engine: str, values: dict, want: dict, info: dict, report: Report) -> None:
    for key, (label, formula) in sorted(info.items()):
        got = values.get(key)
        sheet, cell = key
        if key not in want:
            if isinstance(got, str) and got.startswith("#"):
                report.mismatches.append(Mismatch(engine, sheet, cell, label, formula, got, "(no error)"))
            continue
        expected = want[key]
        report.cells_checked += 1
        ok, d = agreement(got, expected)
        if d is not None:
            report.max_rel_diff = max(report.max_rel_diff, d)
        if isinstance(got, bool):
            got = float(got)
        if not ok:
            report.mismatches.append(Mismatch(engine, sheet, cell, label, formula, got, expected))
    _classify_conditioning(engine, report)
    missing = set(want) - set(info)
    for sheet, cell in sorted(missing):
        report.mismatches.append(Mismatch(engine, sheet, cell, "", "(not a formula)", None, want[(sheet, cell)]))


def precedents(sheet: str, formula: str) -> list[tuple[str, str]]:
    """The cells a formula reads (sheet, A1), every cell of a range; string literals and defined names are not
    cells (the formulas engine's reference scanner, workbook/engines/formulas_refs.py)."""
    from workbook.engines.formulas_refs import scan

    out = []
    for occ in scan(formula, 1, 1)[1]:
        r1, c1, r2, c2 = occ.rect
        out.extend((occ.sheet or sheet, xl_rowcol_to_cell(r - 1, c - 1))
                   for r in range(r1, r2 + 1) for c in range(c1, c2 + 1))
    return out


def _classify_conditioning(engine: str, report: Report) -> None:
    """Move this engine's mismatches that are floating-point conditioning to ``report.conditioned``.

    A mismatch qualifies when both values are finite numbers within CONDITIONING_MAX of each other and every
    cell its formula reads agrees with the reference within REL_TOL or qualified itself (cells are visited in
    sheet and row order, so a precedent is classified before the cells that read it). An error value, a text,
    a branch taken differently by more than CONDITIONING_MAX or a wrong input never qualifies."""
    from workbook.writer.layout import SHEET_ORDER

    mine = [m for m in report.mismatches if m.engine == engine]
    if not mine:
        return

    def order(m: Mismatch) -> tuple:
        try:
            si = SHEET_ORDER.index(m.sheet)
        except ValueError:
            si = 10**6
        return si, int(re.sub(r"\D", "", m.cell)), m.cell

    bad = {(m.sheet, m.cell) for m in mine}
    conditioned: set[tuple[str, str]] = set()
    for m in sorted(mine, key=order):
        got, exp = m.got, m.want
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not isinstance(exp, (int, float)) \
                or isinstance(exp, bool) or not (math.isfinite(got) and math.isfinite(exp)):
            continue
        if rel_diff(float(got), float(exp)) > CONDITIONING_MAX:
            continue
        if all(p not in bad or p in conditioned for p in precedents(m.sheet, m.formula)):
            conditioned.add((m.sheet, m.cell))
    report.conditioned.extend(m for m in mine if (m.sheet, m.cell) in conditioned)
    report.mismatches = [m for m in report.mismatches if not (m.engine == engine and (m.sheet, m.cell) in conditioned)]


def _preload(engines: list[str]) -> None:
    """Import, in this thread, what the engine threads import: two threads importing openpyxl (or formulas) for
    the first time at once can stop with Python's import _DeadlockError (seen with three engines on a cold start)."""
    import openpyxl  # noqa: F401
    import openpyxl.cell.cell  # noqa: F401
    import openpyxl.reader.excel  # noqa: F401
    import openpyxl.worksheet.formula  # noqa: F401

    if "formulas" in engines:
        try:
            import formulas  # noqa: F401
        except ImportError:  # the engine reports it
            pass


def _recalculate(path: Path, engine: str) -> tuple[dict, float, str]:
    """One engine's values, its wall time in seconds and its version line."""
    from workbook.engines import engine_version, recalculate

    t0 = time.perf_counter()
    values = recalculate(path, engine)
    return values, time.perf_counter() - t0, engine_version(engine)


def verify(path: Path | str, engines: list[str] | None = None,
           progress: Callable[[str], None] | None = None) -> Report:
    """Recalculate *path* with each engine and compare with the reference on the file's inputs.

    With several engines they run concurrently, each in its own thread, while this
    thread computes the reference: LibreOffice works in its own process, so on two
    cores it adds little wall time next to formulas. (Each engine's time in
    ``Report.seconds`` is then its wall time under that sharing.)
    """
    from concurrent.futures import ThreadPoolExecutor

    from workbook.engines import available_engines
    from workbook.safe_xlsx import check_xlsx

    check_xlsx(path)
    path = Path(path)
    engines = engines or available_engines()
    _preload(engines)
    say = progress or (lambda msg: None)
    report = Report(path=path, engines=list(engines))
    with ThreadPoolExecutor(max_workers=max(1, len(engines)), thread_name_prefix="engine") as pool:
        runs = {}
        if len(engines) > 1:
            for engine in engines:
                say(f"recalculating with {engine}")
                runs[engine] = pool.submit(_recalculate, path, engine)
        say("reading inputs and computing the reference")
        want, info = expected_values(path)
        for engine in engines:
            if engine not in runs:
                say(f"recalculating with {engine}")
                runs[engine] = pool.submit(_recalculate, path, engine)
            values, report.seconds[engine], report.versions[engine] = runs[engine].result()
            compare(engine, values, want, info, report)
    return report


def print_report(report: Report, out=sys.stdout, limit: int = 50) -> None:
    eng = ", ".join(f"{e} {report.versions.get(e, '')} ({report.seconds.get(e, 0):.1f} s)" for e in report.engines)
    print(f"{report.path}: {report.cells_checked} cells checked with {eng}", file=out)
    print(f"largest relative difference: {report.max_rel_diff:.3g} (tolerance {REL_TOL:g})", file=out)
    if report.conditioned:
        worst = max(rel_diff(float(m.got), float(m.want)) for m in report.conditioned)
        print(f"conditioning: {len(report.conditioned)} cells differ by at most {worst:.2g} where every cell they read "
              f"agrees (last bits amplified by a subtraction; not mismatches, docs/excel-compatibility.md)", file=out)
        for m in report.conditioned[:5]:
            print(f"  CONDITIONED {m}", file=out)
    for m in report.mismatches[:limit]:
        print(f"MISMATCH {m}", file=out)
    if len(report.mismatches) > limit:
        print(f"... and {len(report.mismatches) - limit} more mismatches", file=out)
    print("OK" if report.ok else f"FAILED: {len(report.mismatches)} mismatches", file=out)
