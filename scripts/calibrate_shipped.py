"""Re-run the shipped calibration and write its values into catalog/efficiency.yaml.

    PYTHONPATH=. .venv/bin/python scripts/calibrate_shipped.py [--check]

catalog/calibration/shipped.yaml names the fitted factors, their priors and the fit files (their points
without `holdout: true`). Run it after any change to the physics or the fit points; then run
tests/calibrate/test_shipped.py. --check only compares (exit 1 when a value differs beyond the tolerance).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from workbook.calibrate.factors import holders
from workbook.calibrate.shipped import AGREEMENT_RTOL, factor_of, rewrite_efficiency, run_shipped
from workbook.catalog.load import DEFAULT_DIR, load_catalog


def main(argv: list[str]) -> int:
    spec, cal = run_shipped()
    shipped = load_catalog(DEFAULT_DIR)
    idx = cal.fit_idx
    err = np.abs(cal.ours_fit[idx] / cal.ev.published[idx] - 1)
    note = f"{len(idx)} fit points, mean |error| {100 * err.mean():.1f} %, max {100 * err.max():.1f} %"
    sources, differ = {}, []
    for sf in spec.factors:
        f = factor_of(sf)
        v, now = cal.fit.values[f], f.value(shipped)
        print(f"{f.label:42s} prior {sf.prior:<7g} fitted {v:.4g}  shipped {now:g}")
        if abs(now / v - 1) > AGREEMENT_RTOL:
            differ.append(f.label)
        sources[f] = (f"calibrated from {', '.join(spec.files)} (catalog/calibration/shipped.yaml, "
                      f"scripts/calibrate_shipped.py): prior {sf.prior:g} from {sf.prior_source}; {note}")
    print(f"fit: {note}; {len(cal.selection.unconstrained)} unconstrained")
    if "--check" in argv:
        print("differ: " + ", ".join(differ) if differ else "the shipped values agree")
        return 1 if differ else 0
    path = DEFAULT_DIR / "efficiency.yaml"
    tied = {f: [g for g in holders(shipped, f) if g != f.record] for f in sources}
    path.write_text(rewrite_efficiency(path, {f: cal.fit.values[f] for f in sources}, sources, tied), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
