"""``workbook validate --cv``: leave-one-publication-out error per kind beside the in-sample error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, TextIO


def cross_validation(files: Iterable[str | Path], catalog):
    """The calibration ``validate --cv`` reports: the shipped calibration (catalog/calibration/shipped.yaml)
    redone without each publication's points in turn, and that publication predicted. Its factors start from
    their priors (the catalogue holds their fitted values, which have seen every point), only its files'
    points are fitted, every other factor keeps its catalogue value (the serving models' factors are sourced,
    not fitted), and a value derived by hand from a publication (the spec's ``derived``) takes its value
    without it when that publication is predicted. So the error is that of the catalogue as shipped, on
    publications it did not see. The spec's files are always fitted; only ``files``' points are reported. scripts/accuracy_table.py and scripts/doc_figures.py quote it."""
    from workbook.calibrate.factors import catalog_with
    from workbook.calibrate.run import calibrate
    from workbook.calibrate.shipped import SPEC, factor_of, load_spec

    spec = load_spec(SPEC)
    priors = {factor_of(sf): sf.prior for sf in spec.factors}
    overrides = derived_overrides(spec)
    given = [Path(f) for f in files]
    names = {p.name for p in given}
    fit_only = [SPEC.parent.parent / "validation" / f for f in spec.files if f not in names]
    cal = calibrate(given + fit_only, catalog_with(catalog, priors), factors=[sf.factor for sf in spec.factors],
                    cv="publication", require_factors=False, fit_files=set(spec.files), cv_overrides=overrides)
    cal.ours_catalog = cal.ev.predict({f: f.value(catalog) for f in priors})
    cal.shown = [i for i, p in enumerate(cal.ev.points) if Path(p.case.file).name in names]
    cal.files = given
    return cal


def derived_overrides(spec) -> dict:
    """publication -> {factor: value without it} of the shipped spec's hand-derived values."""
    from workbook.calibrate.shipped import factor_of

    out: dict = {}
    for d in spec.derived:
        out.setdefault(d.publication, {})[factor_of(d)] = d.without
    return out


def cross_validation_report(files: Iterable[str | Path], catalog, *, as_json: bool, out: TextIO) -> int:
    """Redo the shipped calibration without each publication's points, predict them; print or JSON.

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
