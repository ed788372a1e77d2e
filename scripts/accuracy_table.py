"""The accuracy tables of docs/validation.md: error per kind with the catalogue values, refitted in sample, and
cross-validated leave-one-publication-out (`workbook validate --cv`), on the shipped validation files.

    PYTHONPATH=. .venv/bin/python scripts/accuracy_table.py           # print the markdown
    PYTHONPATH=. .venv/bin/python scripts/accuracy_table.py --write   # replace the block in docs/validation.md
    PYTHONPATH=. .venv/bin/python scripts/accuracy_table.py --exact-check   # one-step vs exact fold refits
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

from workbook.calibrate.report import LABELS, by_kind, by_publication
from workbook.catalog import load_catalog
from workbook.validation import default_files
from workbook.validation.cv import cross_validation
from scripts.evidence_table import replace_block

DOC = Path(__file__).resolve().parents[1] / "docs" / "validation.md"
BEGIN, END = "<!-- accuracy-table:begin -->", "<!-- accuracy-table:end -->"
COLUMNS = (("catalog", "catalogue values"), ("in_sample", "in-sample (refit)"),
           ("cross_validated", "leave-one-publication-out"))


def _cell(s: dict) -> str:
    if not s["count"]:
        return "-"
    return f"{100 * s['mean_abs_error_frac']:.1f} % ({s['passed']}/{s['count']})"


def table(cal=None) -> str:
    """The block's markdown; ``cal`` a cross_validation of the shipped files already run (tests reuse one)."""
    cal = cal or cross_validation(default_files(), load_catalog())
    lines = [f"Run {dt.date.today().isoformat()}: `workbook validate --cv` "
             f"({len(cal.ev.points)} points, {len({p.case.publication for p in cal.ev.points})} publications, "
             f"{len(cal.selection.fitted)} factors refitted per fold; {cal.seconds:.0f} s). "
             "Mean |error|, and in brackets the points within their own tolerance / points.", ""]
    for title, holdout in (("All points", None), ("Holdout points only", True)):
        stats = by_kind(cal, holdout=holdout)
        lines += [f"**{title}**", "", "| kind | points | " + " | ".join(c[1] for c in COLUMNS) + " |",
                  "|---|---:|" + "---:|" * len(COLUMNS)]
        for kind, s in stats.items():
            label = LABELS.get(kind, "all")
            lines.append(f"| {label} | {s['catalog']['count']} | " + " | ".join(_cell(s[c[0]]) for c in COLUMNS) + " |")
        lines.append("")
    lines += ["**By publication** (leave-one-publication-out; share: of the sum of |error| over the domain's points)", "",
              "| domain | publication | points | mean error (within) | share of domain error |", "|---|---|---:|---:|---:|"]
    for r in by_publication(cal):
        if r["domain"] != "counts":
            lines.append(f"| {r['domain']} | {r['publication']} | {r['count']} | {_cell(r)} | "
                         f"{100 * r['share_of_domain_error']:.0f} % |")
    return "\n".join(lines).rstrip() + "\n"


def exact_check() -> str:
    """How far the one-step fold refits of `validate --cv` are from solving each fold's least squares."""
    import numpy as np

    from workbook.calibrate.run import cross_validate_stages

    from workbook.calibrate.shipped import load_spec
    from workbook.validation.cv import derived_overrides

    cal = cross_validation(default_files(), load_catalog())
    exact = cross_validate_stages(cal.ev, cal.stages, "publication", exact=True, overrides=derived_overrides(load_spec()))
    pub = cal.ev.published
    d = 100 * np.abs(exact / pub - cal.ours_cv / pub)
    return (f"one-step vs exact fold refits: largest difference {d.max():.2f} percentage points, mean {d.mean():.3f}; "
            f"mean |error| {100 * np.abs(cal.ours_cv / pub - 1).mean():.2f} % vs {100 * np.abs(exact / pub - 1).mean():.2f} %\n")


def main(argv: list[str]) -> int:
    if "--exact-check" in argv:
        sys.stdout.write(exact_check())
        return 0
    text = table()
    if "--write" not in argv:
        sys.stdout.write(text)
        return 0
    try:
        new = replace_block(DOC.read_text(encoding="utf-8"), text, BEGIN, END)
    except ValueError as exc:
        print(f"{DOC}: {exc}", file=sys.stderr)
        return 2
    DOC.write_text(new, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
