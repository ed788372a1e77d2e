"""``python -m workbook.lint FILE.xlsx...``: the Excel-compatibility lint; exit 1 on any finding, 2 on a bad file."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from workbook.errors import InputError
from workbook.lint.excel import lint_xlsx
from workbook.safe_xlsx import check_xlsx


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print("usage: python -m workbook.lint FILE.xlsx...", file=sys.stderr)
        return 2
    found = 0
    for p in paths:
        try:
            check_xlsx(p)  # bounded: sizes, entries and the extent each sheet really holds (docs/safety.md)
            findings = lint_xlsx(p)
        except InputError as e:
            print(f"workbook: error: {e}", file=sys.stderr)
            return 2
        except (OSError, zipfile.BadZipFile, KeyError, ValueError) as e:
            print(f"{p}: not a readable workbook ({type(e).__name__}: {e})", file=sys.stderr)
            return 2
        for f in findings:
            print(f"{p}: {f}")
        print(f"{p}: {len(findings)} finding(s)")
        found += len(findings)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
