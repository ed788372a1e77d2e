"""``workbook calibrate FILES... -o DIR``: fit, report, write the catalogue overlay (nothing written on bad input)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import TextIO

import numpy as np

from workbook.errors import InputError


def _as_of(text: str | None) -> dt.date:
    if text is None:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(f"not a date: {text!r}", field="--as-of", expected="YYYY-MM-DD") from None


def fit_note(cal) -> str:
    """The fit error as the overlay records state it."""
    idx = cal.fit_idx
    fit = np.abs(cal.ours_fit[idx] / cal.ev.published[idx] - 1)
    note = f"fit: {len(idx)} points, mean |error| {100 * fit.mean():.1f} %, max {100 * fit.max():.1f} %"
    if len(cal.ours_cv):
        cv = np.abs(cal.ours_cv[idx] / cal.ev.published[idx] - 1)
        cv = cv[~np.isnan(cv)]
        if len(cv):
            what = "leave-one-publication-out" if cal.cv_grouping == "publication" else "leave-one-point-out"
            note += f"; {what} mean |error| {100 * cv.mean():.1f} %"
    return note


def calibrate_command(args: argparse.Namespace, out: TextIO) -> int:
    from workbook import safe_write
    from workbook.calibrate.overlay import WRITTEN, load_catalog_dir, overlay_files, write_overlay
    from workbook.calibrate.report import as_json, print_calibration
    from workbook.calibrate.run import calibrate

    output: Path = args.output
    if (output / "gpus.yaml").exists():
        raise InputError("is a whole catalogue folder; calibrate writes an overlay into a folder of its own",
                         file=str(output), field="-o", expected="a new or overlay folder")
    for name in (*WRITTEN, "calibration.json"):  # before anything is fitted, removed or written
        safe_write.check_destination(output / name, inputs=args.files, inside=output)
    old = [p for p in (*overlay_files(output), output / "calibration.json") if p.exists()] if output.is_dir() else []
    if old and not args.force:
        raise InputError("already holds an overlay (" + ", ".join(p.name for p in old) + ")", file=str(output),
                         field="-o", expected="a new folder, or --force to replace the overlay")
    as_of = _as_of(args.as_of)
    catalog = load_catalog_dir(args.catalog)
    names = [n for n in args.factors.split(",") if n.strip()] if args.factors else None
    cal = calibrate(args.files, catalog, factors=names)
    source = "calibrated from " + ", ".join(Path(p).name for p in args.files)
    for p in old:  # --force: the previous overlay goes, so no stale record of it stays merged
        p.unlink()
    written = write_overlay(output, catalog, {f: cal.fit.values[f] for f in cal.selection.fitted},
                            source=source, as_of=as_of, note=fit_note(cal))
    report = as_json(cal)
    safe_write.write_text(output / "calibration.json", json.dumps(report, indent=1) + "\n", inside=output)
    if args.json:
        json.dump({**report, "written": [str(p) for p in written]}, out, indent=1)
        out.write("\n")
    else:
        print_calibration(cal, out)
        print(f"wrote {', '.join(str(p) for p in written)} (use --catalog {output})", file=out)
    return 0
