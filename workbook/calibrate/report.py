"""What a calibration or a cross-validation says: factors, errors per kind, per point; text and JSON."""

from __future__ import annotations

from typing import TextIO

import numpy as np

from workbook.calibrate.factors import KIND_LABELS, KINDS
from workbook.calibrate.run import Calibration

#: summary rows over several kinds (the accuracy the issues state: training, serving)
GROUPS: dict[str, tuple[str, ...]] = {
    "training": ("memory", "step_time", "gpu_hours"),
    "serving": ("ttft", "tpot", "serving_throughput", "kv_capacity"),
}


def errors(cal: Calibration, ours: np.ndarray) -> np.ndarray:
    """Relative error (ours / published - 1) of every point."""
    return ours / cal.ev.published - 1


LABELS = {**KIND_LABELS, "training": "training (memory, step time, GPU-hours)",
          "serving": "serving (TTFT, TPOT, throughput, KV)"}


def _stats(err: np.ndarray, tol: np.ndarray) -> dict:
    ok = ~np.isnan(err)
    if not ok.any():
        return {"count": 0, "passed": 0, "mean_abs_error_frac": None, "max_abs_error_frac": None}
    e = np.abs(err[ok])
    return {"count": int(ok.sum()), "passed": int((e <= tol[ok] + 1e-12).sum()),
            "mean_abs_error_frac": float(e.mean()), "max_abs_error_frac": float(e.max())}


def by_kind(cal: Calibration, *, holdout: bool | None = None) -> dict[str, dict]:
    """Per kind (and "all"): catalogue, in-sample (fitted) and cross-validated error statistics."""
    pts = cal.ev.points
    tol = np.array([p.case.point.tolerance for p in pts])
    cols = {"catalog": errors(cal, cal.ours_catalog), "in_sample": errors(cal, cal.ours_fit)}
    if len(cal.ours_cv):
        cols["cross_validated"] = errors(cal, cal.ours_cv)
    out: dict[str, dict] = {}
    shown = set(cal.shown_idx())
    for kind in KINDS + tuple(GROUPS) + ("all",):
        members = GROUPS.get(kind, (kind,))
        idx = [i for i, p in enumerate(pts) if i in shown and (kind == "all" or p.kind in members)
               and (holdout is None or p.case.point.holdout == holdout)]
        if not idx:
            continue
        out[kind] = {name: _stats(col[idx], tol[idx]) for name, col in cols.items()}
    return out


def group_of(kind: str) -> str:
    """The summary group a kind belongs to ("training", "serving"), or "counts" for parameters and FLOPs."""
    return next((g for g, members in GROUPS.items() if kind in members), kind)


def by_publication(cal: Calibration) -> list[dict]:
    """Per publication and domain (training, serving, counts): the points shown and their error statistics,
    cross-validated where the calibration has a cross-validation (else in sample). Sorted by domain, then by
    the sum of |error| (a publication's weight in its domain's mean), largest first."""
    pts = cal.ev.points
    tol = np.array([p.case.point.tolerance for p in pts])
    col = "cross_validated" if len(cal.ours_cv) else "in_sample"
    err = errors(cal, cal.ours_cv if len(cal.ours_cv) else cal.ours_fit)
    groups: dict[tuple[str, str], list[int]] = {}
    for i in cal.shown_idx():
        groups.setdefault((group_of(pts[i].kind), pts[i].case.publication), []).append(i)
    rows = [{"domain": dom, "publication": pub, "column": col, **_stats(err[idx], tol[idx]),
             "share_of_domain_error": 0.0} for (dom, pub), idx in groups.items()]
    for dom in {r["domain"] for r in rows}:
        mine = [r for r in rows if r["domain"] == dom and r["count"]]
        total = sum(r["mean_abs_error_frac"] * r["count"] for r in mine)
        for r in mine:
            r["share_of_domain_error"] = r["mean_abs_error_frac"] * r["count"] / total if total else 0.0
    order = {g: k for k, g in enumerate(("training", "serving", "counts"))}
    return sorted(rows, key=lambda r: (order.get(r["domain"], 9), -r["share_of_domain_error"], r["publication"]))


def print_publications(cal: Calibration, out: TextIO, title: str) -> None:
    """One row per publication and domain: points, mean |error|, within tolerance, share of the domain's error."""
    rows = [[r["domain"], r["publication"], str(r["count"]), _pct(r), f"{100 * r['share_of_domain_error']:4.0f} %"]
            for r in by_publication(cal) if r["domain"] != "counts"]
    _print_table(title, ["domain", "publication", "points", "mean |error| (within)", "share of domain error"], rows, out)


def _print_table(title: str, heads: list[str], rows: list[list[str]], out: TextIO) -> None:
    """A title, left-aligned columns as wide as their widest cell, a rule under the heads."""
    widths = [max(len(x) for x in col) for col in zip(heads, *rows)]
    print(title, file=out)
    print("  ".join(h.ljust(w) for h, w in zip(heads, widths)), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)), file=out)


def _pct(s: dict) -> str:
    if not s["count"]:
        return "-"
    return f"{100 * s['mean_abs_error_frac']:5.1f} % ({s['passed']}/{s['count']})"


def print_kinds(cal: Calibration, out: TextIO, title: str) -> None:
    stats = by_kind(cal)
    heads = ["kind", "points", "catalogue", "in-sample (refit)"] + (["cross-validated"] if len(cal.ours_cv) else [])
    rows = []
    for kind, s in stats.items():
        row = [LABELS.get(kind, "all points"), str(s["catalog"]["count"]), _pct(s["catalog"]),
               _pct(s["in_sample"])]
        if "cross_validated" in s:
            row.append(_pct(s["cross_validated"]))
        rows.append(row)
    _print_table(title, heads, rows, out)
    print("(mean |error| (points within their tolerance / points))", file=out)


def print_factors(cal: Calibration, out: TextIO) -> None:
    w = max([45] + [len(f.label) for f in cal.candidates])
    print(f"{'factor':{w}s}  {'prior':>8s}  {'fitted':>8s}  change", file=out)
    for f in cal.selection.fitted:
        p, v = cal.prior[f], cal.fit.values[f]
        print(f"{f.label:{w}s}  {p:8.4g}  {v:8.4g}  {100 * (v / p - 1):+6.1f} %", file=out)
    for f in cal.selection.unconstrained:
        print(f"{f.label:{w}s}  {cal.prior[f]:8.4g}  not constrained by these points (kept)", file=out)
    for f in cal.selection.undetermined:
        print(f"{f.label:{w}s}  {cal.prior[f]:8.4g}  not told apart from the factors above (kept)", file=out)


def print_calibration(cal: Calibration, out: TextIO) -> None:
    n = len(cal.selection.fitted)
    print(f"calibrated {n} factor{'s' if n != 1 else ''} on {len(cal.fit_idx)} fit points "
          f"({len(cal.shown_idx())} points in {len(cal.files)} files) in {cal.seconds:.1f} s", file=out)
    print_factors(cal, out)
    print(file=out)
    what = ("leave-one-publication-out" if cal.cv_grouping == "publication" else "leave-one-point-out")
    print_kinds(cal, out, f"error by kind: catalogue values, fitted values, {what}")
    if cal.cv_grouping == "publication":
        print(file=out)
        print_publications(cal, out, "error by publication, leave-one-publication-out (share: of the sum of |error| "
                                     "over the domain's points)")


def as_json(cal: Calibration) -> dict:
    cv = errors(cal, cal.ours_cv) if len(cal.ours_cv) else None
    return {
        "files": [str(p) for p in cal.files],
        "seconds": cal.seconds,
        "cv_grouping": cal.cv_grouping or None,
        "factors": [{"factor": f.label, "prior": cal.prior[f], "fitted": cal.fit.values[f]}
                    for f in cal.selection.fitted],
        "unconstrained": [f.label for f in cal.selection.unconstrained],
        "undetermined": [f.label for f in cal.selection.undetermined],
        "by_kind": by_kind(cal),
        "by_kind_holdout": by_kind(cal, holdout=True),
        "by_publication": by_publication(cal),
        "points": [{
            "file": p.case.file.rsplit("/", 1)[-1], "publication": p.case.publication, "point": p.case.point.point,
            "key": p.case.point.key, "kind": p.kind, "holdout": p.case.point.holdout,
            "tolerance": p.case.point.tolerance, "published": float(cal.ev.published[i]),
            "catalog": float(cal.ours_catalog[i]), "in_sample": float(cal.ours_fit[i]),
            "cross_validated": None if cv is None or np.isnan(cv[i]) else float(cal.ours_cv[i]),
        } for i, p in ((i, cal.ev.points[i]) for i in cal.shown_idx())],
    }
