"""Rewrite the verdict that opens a validation point's notes ("Matched (+x.x%). " / "Not matched (+x.x%). ")
from today's run, so the notes follow the model (tests/validation/test_validate.py checks them).

A failing point gets "Not matched (<error>%). " in front of its notes; a point whose notes already open
with a verdict gets today's (its word and first error; the rest of the bracket is kept); a passing point
without one is left alone. Only `notes: "..."` lines (one line, double quotes) inside a point are touched.

    PYTHONPATH=. python scripts/refresh_verdicts.py catalog/validation/*.yaml          # show what would change
    PYTHONPATH=. python scripts/refresh_verdicts.py --write catalog/validation/*.yaml  # rewrite the files
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from workbook.validation import validate
from workbook.validation.report import NOTES_VERDICT, verdict_head

_POINT = re.compile(r"^\s*- point: *(\S+)\s*$")
_NOTES = re.compile(r'^(\s*notes: ")(.*)("\s*)$')


def verdict(passed: bool, error_frac: float) -> str:
    """The opening of a point's notes for today's result, e.g. 'Not matched (-12.3%). '."""
    return verdict_head(passed, error_frac) + "). "


def refresh(path: Path, results: dict[str, tuple[bool, float]]) -> tuple[str, list[str]]:
    """The file's text with each point's notes opening with today's verdict, and the points changed."""
    out, changed, point = [], [], None
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        m = _POINT.match(line)
        if m:
            point = m.group(1).strip("\"'")
        n = _NOTES.match(line.rstrip("\n"))
        if n and point in results:
            passed, err = results[point]
            body = n.group(2)
            had = NOTES_VERDICT.match(body)
            new = (verdict_head(passed, err) + body[had.end():] if had
                   else verdict(passed, err) + body if not passed else body)
            if new != body:
                line = f"{n.group(1)}{new}{n.group(3)}\n"
                changed.append(point)
        out.append(line)
    return "".join(out), changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--write", action="store_true", help="rewrite the files (default: only list the changes)")
    args = ap.parse_args(argv)
    for path in args.files:
        results = {r.point: (r.passed, r.error_frac) for r in validate([path])}
        text, changed = refresh(path, results)
        for p in changed:
            print(f"{path.name}:{p}: {verdict(*results[p]).strip()}")
        if changed and args.write:
            path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
