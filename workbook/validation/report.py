"""The validation table (fit points, then holdout points), the summaries and the JSON form."""

from __future__ import annotations

import re
from typing import Iterable, TextIO

from workbook.validation.run import Result

HEADERS = ["file", "point", "key", "unit", "published", "ours", "error %", "tol %", "result"]

#: the verdict that opens a point's notes, "Matched (+4.5%). ..." / "Not matched (-12.3%; ...). ...": group 1
#: the word, group 2 today's error in % (scripts/refresh_verdicts.py writes it, tests/validation checks it)
NOTES_VERDICT = re.compile(r"^(Not matched|Matched) \(([+-]\d+(?:\.\d+)?)%")


def verdict_head(passed: bool, error_frac: float) -> str:
    """The part of a notes verdict that ``NOTES_VERDICT`` reads, e.g. 'Not matched (-12.3%'."""
    return f"{'Matched' if passed else 'Not matched'} ({100 * error_frac:+.1f}%"


def _num(v: float) -> str:
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1e7 or a < 1e-2:
        mantissa, exp = f"{v:.4g}".split("e") if "e" in f"{v:.4g}" else (f"{v:.4g}", "0")
        return f"{mantissa}e{int(exp)}"
    if a >= 100:
        return f"{v:,.0f}"
    return f"{v:.4g}"


def summary(results: Iterable[Result]) -> dict:
    """Count, passes, mean and max absolute relative error (with the worst point)."""
    rs = list(results)
    if not rs:
        return {"count": 0, "passed": 0, "failed": 0, "mean_abs_error_frac": None,
                "max_abs_error_frac": None, "worst": None}
    worst = max(rs, key=lambda r: abs(r.error_frac))
    passed = sum(r.passed for r in rs)
    return {
        "count": len(rs),
        "passed": passed,
        "failed": len(rs) - passed,
        "mean_abs_error_frac": sum(abs(r.error_frac) for r in rs) / len(rs),
        "max_abs_error_frac": abs(worst.error_frac),
        "worst": f"{worst.file}:{worst.point}",
    }


def _row(r: Result) -> list[str]:
    return [r.file.removesuffix(".yaml"), r.point, r.key, r.unit, _num(r.published), _num(r.ours),
            f"{100 * r.error_frac:+.1f}", f"{100 * r.tolerance:.0f}", "PASS" if r.passed else "FAIL"]


def _summary_line(label: str, s: dict) -> str:
    if not s["count"]:
        return f"{label}: none"
    return (f"{label}: {s['count']} points, {s['passed']} pass, {s['failed']} fail; "
            f"mean |error| {100 * s['mean_abs_error_frac']:.1f} %, "
            f"max |error| {100 * s['max_abs_error_frac']:.1f} % ({s['worst']})")


def print_table(results: list[Result], out: TextIO) -> None:
    groups = [("fit points", [r for r in results if not r.holdout]),
              ("holdout points (kept back for acceptance, never used to fit)", [r for r in results if r.holdout])]
    rows = [_row(r) for r in results]
    widths = [max(len(x) for x in col) for col in zip(HEADERS, *rows)]
    right = {"published", "ours", "error %", "tol %"}

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if h in right else c.ljust(w)
                         for c, w, h in zip(cells, widths, HEADERS)).rstrip()

    line = fmt(HEADERS)
    for title, rs in groups:
        if not rs:
            continue
        print(f"[{title}]", file=out)
        print(line, file=out)
        print("-" * len(line), file=out)
        for r in rs:
            print(fmt(_row(r)), file=out)
        print(file=out)
    print(_summary_line("fit", summary(groups[0][1])), file=out)
    print(_summary_line("holdout", summary(groups[1][1])), file=out)
    print(_summary_line("all", summary(results)), file=out)


def as_json(results: list[Result]) -> dict:
    points = [{
        "file": r.file, "publication": r.publication, "point": r.point, "key": r.key, "unit": r.unit,
        "published": r.published, "ours": r.ours, "error_frac": r.error_frac,
        "tolerance": r.tolerance, "pass": r.passed, "holdout": r.holdout,
        "value_as_published": r.value_as_published, "unit_as_published": r.unit_as_published,
        "source": r.source, "as_of": r.as_of, "notes": r.notes,
    } for r in results]
    return {
        "ok": all(r.passed for r in results),
        "summary": {
            "fit": summary(r for r in results if not r.holdout),
            "holdout": summary(r for r in results if r.holdout),
            "all": summary(results),
        },
        "points": points,
    }
