"""Thin command-line interface: parses arguments, calls library functions, maps errors to exit codes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbook import __version__
from workbook.errors import InputError

DEFAULT_CATALOG = Path(__file__).resolve().parents[1] / "catalog"


def _fmt(v: float) -> str:
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    if abs(v) >= 1e6 or abs(v) < 1e-3:
        return f"{v:.4e}"
    return f"{v:,.4f}".rstrip("0").rstrip(".")


def cmd_calc(args: argparse.Namespace) -> int:
    from workbook.calc import compute, registry
    from workbook.calibrate.overlay import load_catalog_dir
    from workbook.scenario import load_scenarios

    catalog = load_catalog_dir(args.catalog)
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


def _scenario_files(args) -> list[Path]:
    from workbook.catalog.load import load_catalog  # noqa: F401  (import check)

    if args.scenarios:
        return list(args.scenarios)
    folder = _base_dir(args.catalog) / "scenarios"
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise InputError("no scenario files", file=str(folder), expected="*.yaml files")
    return files


def _base_dir(catalog: Path | None) -> Path:
    """The whole catalogue folder behind ``--catalog``: the shipped one for an overlay (or no option)."""
    from workbook.calibrate.overlay import is_overlay

    return DEFAULT_CATALOG if catalog is None or is_overlay(catalog) else catalog


def _whole_catalog(catalog: Path | None, option: str) -> Path:
    """The catalogue folder of a command that edits or copies the catalogue's files (an overlay is refused)."""
    from workbook.calibrate.overlay import is_overlay

    if is_overlay(catalog):
        raise InputError(f"{option} needs a whole catalogue folder, not an overlay", field="--catalog",
                         expected="a folder with gpus.yaml")
    return catalog or DEFAULT_CATALOG


def _catalog_files(catalog: Path | None) -> list[Path]:
    """The catalogue files a build depends on: the whole catalogue's, then an overlay's."""
    from workbook.calibrate.overlay import is_overlay, overlay_files

    files = sorted(_base_dir(catalog).glob("*.yaml"))
    return files + (overlay_files(catalog) if is_overlay(catalog) else [])


def _portable(path: Path) -> str:
    """A path as the Cover shows it: relative to the working folder when inside it, else the folder name
    (never the absolute path of the machine that built the file)."""
    path = Path(path).resolve()
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return path.name


def cmd_build(args: argparse.Namespace) -> int:
    import time

    from workbook import safe_write
    from workbook.calibrate.overlay import load_catalog_dir
    from workbook.writer import build, files_hash, guard, rebuild
    from workbook.scenario import load_scenarios

    t0 = time.perf_counter()
    catalog_dir = args.catalog or DEFAULT_CATALOG
    if args.keep_edits:
        _whole_catalog(args.catalog, "--keep-edits")
    catalog = load_catalog_dir(args.catalog)
    files = _scenario_files(args)
    scenarios = load_scenarios(files)
    catalog_files = _catalog_files(args.catalog)
    provenance = [
        ("Catalogue folder", _portable(catalog_dir)),
        ("Catalogue hash (sha256, 16 hex)", files_hash(catalog_files)),
        ("Scenario files", ", ".join(p.name for p in files)),
        ("Scenario hash (sha256, 16 hex)", files_hash(files)),
    ]
    inputs = tuple(catalog_files) + tuple(files) + ((args.keep_edits,) if args.keep_edits else ())
    safe_write.check_destination(args.output, inputs=inputs)
    kept, previous = [], rebuild.previous_record(args.output)
    if args.keep_edits:
        catalog, scenarios, kept, previous = rebuild.with_kept_edits(args.keep_edits, catalog_dir, files)
    backup = guard.make_room(args.output, force=args.force, inputs=inputs)
    book = build(args.output, scenarios, catalog, provenance, previous=previous, kept=kept, inputs=inputs)
    guard.record(args.output)
    n = sum(1 for c in book.cells.cells if c.role in ("calc", "link", "check"))
    if backup is not None:
        print(f"moved the edited {args.output} to {backup}")
    for row in kept:
        print(f"kept edit {row.sheet}: {row.record} {row.field}: {row.old or '(blank)'} -> {row.new or '(blank)'}")
    print(f"wrote {args.output}: {len(scenarios)} scenarios, {n} formula cells "
          f"in {time.perf_counter() - t0:.2f} s")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from workbook.lint.__main__ import main as lint_main

    return lint_main([str(p) for p in args.paths])


def cmd_verify(args: argparse.Namespace) -> int:
    from workbook.engines import ENGINES, available_engines
    from workbook.verify import print_report, verify

    if args.engine == "all":
        engines = available_engines()
    else:
        engines = [args.engine]
        if args.engine not in available_engines():
            raise InputError(f"engine {args.engine!r} is not installed", field="--engine",
                             expected=", ".join(available_engines()) or "none installed")
    if not engines:
        raise InputError("no formula engine installed", field="--engine", expected=", ".join(ENGINES))
    if not args.path.is_file():
        raise InputError("no such file", file=str(args.path))
    tty = sys.stderr.isatty()
    progress = (lambda msg: print(f"verify: {msg} ...", file=sys.stderr, flush=True)) if tty or args.progress else None
    report = verify(args.path, engines, progress)
    print_report(report)
    return 0 if report.ok else 1


def cmd_validate(args: argparse.Namespace) -> int:
    from workbook.calibrate.overlay import load_catalog_dir
    from workbook.validation import as_json, default_files, print_table, validate

    files = list(args.files) or default_files(_base_dir(args.catalog) / "validation")
    catalog = load_catalog_dir(args.catalog)
    if args.cv:
        from workbook.validation.cv import cross_validation_report

        return cross_validation_report(files, catalog, as_json=args.json, out=sys.stdout)
    results = validate(files, catalog)
    if args.json:
        json.dump(as_json(results), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_table(results, sys.stdout)
    return 0 if all(r.passed for r in results) else 1


def cmd_plan(args: argparse.Namespace) -> int:
    from workbook import safe_write
    from workbook.calibrate.overlay import load_catalog_dir
    from workbook.planner import versions
    from workbook.planner.book import plan_path, refuse_overwrite, write_plan_book
    from workbook.planner.plan import plan_request
    from workbook.planner.report import print_report
    from workbook.planner.request import load_request
    from workbook.writer import guard

    catalog_dir = args.catalog or DEFAULT_CATALOG
    catalog = load_catalog_dir(args.catalog)
    req = load_request(args.request, catalog)
    path = plan_path(args.output, req)
    catalog_files = _catalog_files(args.catalog)  # an overlay's plan depends on the shipped catalogue too
    inputs = (args.request, *catalog_files)
    outputs = (path, path.with_suffix(".pdf"), path.with_suffix(".md"))
    for out in versions.files(path):  # all checked before anything is written (the record too)
        safe_write.check_destination(out, inputs=inputs, inside=args.output)
    for out in outputs:
        refuse_overwrite(out, args.force)
    outcome = plan_request(req, catalog)
    backups = []
    if outcome.scenarios:
        from workbook.planner.outputs import write_markdown, write_pdf

        # with --force the earlier version (xlsx, pdf, md, its record) moves to <id>.backup-N.* whether edited
        # or not, and the changes are listed; without it nothing is in the way (refused above)
        plan_record = versions.prepare(path, args.force, req._source_file, catalog_files, outcome.data, backups)
        write_plan_book(outcome, req, catalog, catalog_dir, path, _portable, catalog_files)
        guard.record(path)
        outcome.data["workbook"] = str(path)
        outcome.data["pdf"] = str(write_pdf(path))
        guard.record(path.with_suffix(".pdf"))
        outcome.data["markdown"] = str(write_markdown(path, outcome.data, req.status,
                                                      str(req.date) if req.date else None))
        guard.record(path.with_suffix(".md"))
        versions.write_record(path, plan_record)
    else:
        outcome.data["workbook"] = None
    if args.json:
        json.dump(outcome.data, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print_report(outcome.data, sys.stdout)
        for out, b in backups:
            print(f"kept the earlier {out.name} as {b}")
        n = len(outcome.scenarios)
        print(f"wrote {path} ({n} scenario column{'s' if n != 1 else ''}), {outcome.data['pdf']}, "
              f"{outcome.data['markdown']}" if n else
              f"no plan workbook: {outcome.data['no_workbook']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="workbook", description="AI-infrastructure planning workbook: live-formula "
                                "capacity plans, checked against a Python reference and published measurements",
                                epilog="example:\n  workbook plan catalog/requests/17.9.4-70b-h800.yaml -o out/plans\n"
                                       "  workbook SUBCOMMAND --help", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"workbook {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("calc", help="print every named quantity of one or more scenarios")
    c.add_argument("scenarios", nargs="+", type=Path, metavar="SCENARIO.yaml")
    c.add_argument("--json", action="store_true", help="one JSON object {name: value}")
    c.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalogue folder or overlay")
    c.set_defaults(func=cmd_calc)

    b = sub.add_parser("build", help="write the live-formula workbook")
    b.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalogue folder or overlay")
    b.add_argument("--scenarios", type=Path, nargs="+", default=None, metavar="FILE",
                   help="scenario files (default: CATALOG/scenarios/*.yaml)")
    b.add_argument("-o", "--output", type=Path, default=Path("out/ai-infra-workbook.xlsx"))
    b.add_argument("--force", action="store_true",
                   help="replace an output that was edited after it was generated (moved to NAME.backup-N.xlsx first)")
    b.add_argument("--keep-edits", type=Path, default=None, metavar="OLD.xlsx",
                   help="carry the inputs a person edited in OLD.xlsx into this build (listed on the Changelog sheet)")
    b.set_defaults(func=cmd_build)

    v = sub.add_parser("verify", help="recalculate a workbook and compare it with the reference")
    v.add_argument("path", type=Path, metavar="FILE.xlsx")
    v.add_argument("--engine", choices=["formulas", "libreoffice", "gnumeric", "all"], default="all",
                   help="all = every installed engine, run concurrently (gnumeric follows Excel: docs/excel-compatibility.md)")
    v.add_argument("--progress", action="store_true", help="show progress even when not on a terminal")
    v.set_defaults(func=cmd_verify)

    li = sub.add_parser("lint", help="check a workbook against Excel's limits and grammar (no engine needed)")
    li.add_argument("paths", nargs="+", type=Path, metavar="FILE.xlsx")
    li.set_defaults(func=cmd_lint)

    val = sub.add_parser("validate", help="compare scenarios with published measurements (catalog/validation)")
    val.add_argument("files", nargs="*", type=Path, metavar="FILE.yaml",
                     help="validation files (default: CATALOG/validation/*.yaml)")
    val.add_argument("--json", action="store_true", help="points and summaries as one JSON object")
    val.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalogue folder or overlay")
    val.add_argument("--cv", action="store_true",
                     help="cross-validate: refit the factors without each publication, predict it (error per kind)")
    val.set_defaults(func=cmd_validate)

    ca = sub.add_parser("calibrate", help="fit the efficiency factors to measured points; write a catalogue overlay")
    ca.add_argument("files", nargs="+", type=Path, metavar="FILE.yaml", help="validation files (holdout points are not fitted)")
    ca.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="overlay folder to write")
    ca.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalogue folder or overlay (the priors)")
    ca.add_argument("--factors", default=None, metavar="NAMES",
                    help="comma-separated factors, table.field or table[record].field (default: the registry's by kind)")
    ca.add_argument("--as-of", default=None, metavar="YYYY-MM-DD", help="as_of of the written records (default today)")
    ca.add_argument("--json", action="store_true", help="the calibration as one JSON object")
    ca.add_argument("--force", action="store_true", help="replace an overlay already in DIR")
    ca.set_defaults(func=cmd_calibrate)

    au = sub.add_parser("audit", help="list what was edited in a built workbook and whether it is still sound")
    au.add_argument("path", type=Path, metavar="FILE.xlsx")
    au.add_argument("--json", action="store_true", help="the findings as one JSON object")
    au.set_defaults(func=cmd_audit)

    im = sub.add_parser("import", help="carry edited inputs of a workbook back into the catalogue and scenario files")
    im.add_argument("path", type=Path, metavar="FILE.xlsx")
    im.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalogue folder")
    im.add_argument("--scenarios", type=Path, default=None, metavar="DIR",
                    help="scenario folder (default: CATALOG/scenarios)")
    im.add_argument("--write", action="store_true", help="write the changed files (default: show the diff only)")
    im.set_defaults(func=cmd_import)

    ex = sub.add_parser("export", help="a PDF of chosen sheets, recalculated by LibreOffice")
    ex.add_argument("path", type=Path, metavar="FILE.xlsx")
    ex.add_argument("--pdf", type=Path, default=None, metavar="OUT.pdf", help="default: FILE.pdf")
    ex.add_argument("--sheets", default="Cover,Summary,Cost", help="comma-separated sheet names (default: %(default)s)")
    ex.set_defaults(func=cmd_export)

    pl = sub.add_parser("plan", help="plan a budget request: search layouts, recommend, write the plan workbook")
    pl.add_argument("request", type=Path, metavar="REQUEST.yaml")
    pl.add_argument("-o", "--output", type=Path, default=Path("out"), metavar="DIR",
                    help="folder of the plan workbook DIR/<request_id>.xlsx")
    pl.add_argument("--json", action="store_true", help="the plan as one JSON object")
    pl.add_argument("--force", action="store_true", help="replace an existing plan workbook")
    pl.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalogue folder or overlay")
    pl.set_defaults(func=cmd_plan)
    from workbook.catalog.commands import add_parser as add_catalog_parser

    add_catalog_parser(sub)
    from workbook.cli_help import finish

    finish(p)
    return p


def cmd_calibrate(args: argparse.Namespace) -> int:
    from workbook.calibrate.cli import calibrate_command

    return calibrate_command(args, sys.stdout)


def cmd_audit(args: argparse.Namespace) -> int:
    from workbook.audit.audit import audit

    report = audit(args.path)
    print(report.as_json() if args.json else report.text())
    return 0 if report.sound else 1


def cmd_import(args: argparse.Namespace) -> int:
    from workbook.audit.importer import apply_changes, changed_since_build, plan_changes

    catalog_dir = _whole_catalog(args.catalog, "import")
    scenario_dir = args.scenarios or catalog_dir / "scenarios"
    planned = plan_changes(args.path, catalog_dir, scenario_dir)
    moved_on = changed_since_build(planned)  # before --write changes them
    changes = apply_changes(planned, catalog_dir, write=args.write, scenario_dir=scenario_dir)
    for ch in changes:
        print(ch.describe())
    for f in moved_on:
        print(f"note: {f} changed since the build; its edited fields were compared one by one: no conflict")
    if not changes:
        print("no edited inputs to import")
    elif args.write:
        print(f"wrote {len({c.file for c in changes})} file(s); rebuild the workbook to see the change everywhere")
    else:
        print(f"{len(changes)} change(s), validated; nothing written (add --write)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from workbook.export.pdf import export_pdf

    sheets = [s.strip() for s in args.sheets.split(",") if s.strip()]
    out = export_pdf(args.path, args.pdf or args.path.with_suffix(".pdf"), sheets)
    print(f"wrote {out}: sheets {', '.join(sheets)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as err:
        print(f"workbook: error: {_one_line(str(err))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:  # disk full, permission denied, a name too long, ... anywhere: one line, exit 2
        from workbook.safe_write import os_error

        print(f"workbook: error: {_one_line(str(os_error(exc, exc.filename, 'cannot read or write')))}",
              file=sys.stderr)
        return 2
    except RecursionError:
        print("workbook: error: input nested too deeply to read", file=sys.stderr)
        return 2


def _one_line(text: str) -> str:
    """An error message on one line (a value or file name holding a line break is shown escaped)."""
    return text.replace("\r", "\\r").replace("\n", "\\n")
