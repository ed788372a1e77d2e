"""Thin command-line interface: parses arguments, calls library functions, maps errors to exit codes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbook import __version__
from workbook.errors import InputError


def _fmt(v: float) -> str:
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    if abs(v) >= 1e6 or abs(v) < 1e-3:
        return f"{v:.4e}"
    return f"{v:,.4f}".rstrip("0").rstrip(".")


def cmd_calc(args: argparse.Namespace) -> int:
    from workbook.calc import compute, registry
    from workbook.catalog import load_catalog
    from workbook.scenario import load_scenarios

    catalog = load_catalog(args.catalog)
    scenarios = load_scenarios(args.scenarios)
    results = [compute(sc, catalog) for sc in scenarios]
    reg = registry()
    if args.json:
        if len(scenarios) == 1:
            out: object = results[0]
        else:
            out = {sc.name: r for sc, r in zip(scenarios, results)}
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    names = list(reg)
    headers = ["quantity", "unit"] + [sc.name for sc in scenarios]
    rows = [[n, reg[n].q.unit] + [_fmt(r[n]) for r in results] for n in names]
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    sheet = None
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    print(line)
    print("-" * len(line))
    for n, row in zip(names, rows):
        if reg[n].sheet != sheet:
            sheet = reg[n].sheet
            print(f"[{sheet}]")
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(row[2:], widths[2:])]
        print("  ".join(cells))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="workbook", description="AI-infrastructure planning workbook")
    p.add_argument("--version", action="version", version=f"workbook {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("calc", help="print every named quantity of one or more scenarios")
    c.add_argument("scenarios", nargs="+", type=Path, metavar="SCENARIO.yaml")
    c.add_argument("--json", action="store_true", help="one JSON object {name: value}")
    c.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalogue folder")
    c.set_defaults(func=cmd_calc)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as err:
        print(f"workbook: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
