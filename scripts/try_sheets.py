"""Developer tool: build the workbook with the line items written so far and verify them.

Modules whose ``workbook/sheets/<module>.py`` does not exist yet are stubbed with plain numbers
(never in a real build), so one sheet's formulas can be checked before the others exist.

Usage: python scripts/try_sheets.py [--engine libreoffice|formulas|all] [--only MODULE,...] [-o FILE]
Prints the mismatches on the sheets of the --only modules (default: every non-stubbed module).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from workbook.writer import line_items
from workbook.calc import SHEETS


def has_items(module: str) -> bool:
    return importlib.util.find_spec(f"workbook.sheets.{module}") is not None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="libreoffice")
    ap.add_argument("--only", default="")
    ap.add_argument("-o", "--output", type=Path, default=Path("out/try.xlsx"))
    args = ap.parse_args()
    stubbed = [m for m in SHEETS if not has_items(m)]
    real_write = line_items.write_module

    def write_module(w, module, quantities, results):
        if module not in stubbed:
            return real_write(w, module, quantities, results)
        from workbook.writer.layout import MODULE_SHEET, value_col

        sheet = MODULE_SHEET[module]
        lay = w.book.layout
        lay.place(sheet, skip=1)
        for q in quantities:
            row = lay.place(sheet, q.name)
            w.text(sheet, row, 3, q.name, "key", "key")
            for i, r in enumerate(results):
                w.number(sheet, row, value_col(i), r[q.name], "calc", "calc", key=q.name)

    line_items.write_module = write_module
    import workbook.writer as b

    b.write_module = write_module
    if "checks" in stubbed:
        b._write_master = lambda w, results: (w.define("master_check_cell", "Checks", 4, 4), True)[1]
    if any(m in stubbed for m in ("zero", "cost", "inference")):
        b.add_charts = lambda w, names: None
    from workbook.catalog import load_catalog
    from workbook.scenario import load_scenarios
    from workbook.verify import verify

    scenarios = load_scenarios(sorted(Path("catalog/scenarios").glob("*.yaml")))
    b.build(args.output, scenarios, load_catalog(), [("Built by", "scripts/try_sheets.py")])
    print(f"stubbed (numbers, not formulas): {', '.join(stubbed) or 'none'}")
    only = [m for m in args.only.split(",") if m] or [m for m in SHEETS if m not in stubbed]
    engines = None if args.engine == "all" else [args.engine]
    report = verify(args.output, engines)
    keys_sheets = {SHEETS[m] for m in only}
    bad = [m for m in report.mismatches if m.sheet in keys_sheets and m.formula != "(not a formula)"]
    print(f"{report.cells_checked} cells checked ({', '.join(report.engines)}); "
          f"{len(bad)} mismatches on {sorted(keys_sheets)}")
    for m in bad[:60]:
        print("MISMATCH", m)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
