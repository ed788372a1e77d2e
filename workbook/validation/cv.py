"""``workbook validate --cv``: leave-one-publication-out error per kind beside the in-sample error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, TextIO


def cross_validation(files: Iterable[str | Path], catalog):
    """The calibration ``validate --cv`` reports: the registry's factors refitted without each publication's
    points in turn, the training and the serving points each fitting their own copy of them (as the shipped
    calibration fits the training factors on training points); scripts/accuracy_table.py and
    scripts/doc_figures.py quote it."""
    from workbook.calibrate.run import calibrate

    return calibrate(list(files), catalog, cv="publication", require_factors=False, by_domain=True)


def cross_validation_report(files: Iterable[str | Path], catalog, *, as_json: bool, out: TextIO) -> int:
    """Refit the registry's factors without each publication's points, predict them; print or JSON.

    Exit status 0 (the report is the result; no tolerance verdict)."""
    from workbook.calibrate.report import as_json as cal_json
    from workbook.calibrate.report import print_calibration

    cal = cross_validation(files, catalog)
    if as_json:
        json.dump(cal_json(cal), out, indent=1)
        out.write("\n")
    else:
        print_calibration(cal, out)
    return 0
