"""Calibration of the named factors on validation points, and its cross-validation by group.

``calibrate(files, catalog)`` fits the factors the fit points (every point not marked ``holdout``)
depend on; ``cross_validate`` refits with each group (publication, or point) left out in turn and
predicts that group's points. A group's points are never split between fitting and testing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from workbook.calibrate.evaluate import Evaluator
from workbook.calibrate.factors import (DOMAINS, SPECS, Factor, applies, domain_of, factors_of, ordered,
                                       parse_factor, record_of)
from workbook.calibrate.fit import FitResult, Selection, elasticities, linear_refit, select, solve, solve_refreshed
from workbook.errors import InputError
from workbook.validation.load import load_validation_files


@dataclass
class Calibration:
    """A fit and what it says about each factor and point."""

    files: list[Path]
    ev: Evaluator
    prior: dict[Factor, float]
    candidates: list[Factor]
    selection: Selection
    fit: FitResult
    fit_idx: list[int]  # points the residuals use (not holdout, sensitive to a fitted factor)
    ours_catalog: np.ndarray  # every point with the catalogue values
    ours_fit: np.ndarray  # every point with the fitted values
    ours_cv: np.ndarray = field(default_factory=lambda: np.zeros(0))  # left-out prediction (nan: none)
    cv_grouping: str = ""
    seconds: float = 0.0
    stages: list = field(default_factory=list)  # the fits (Stage), one unless by domain
    shown: list[int] | None = None  # the points a report shows (None: all); the others were only fitted

    def shown_idx(self) -> list[int]:
        """Indices of the points a report shows."""
        return list(range(len(self.ev.points))) if self.shown is None else list(self.shown)


def _candidates(ev: Evaluator, idx: list[int], names: list[str] | None) -> list[Factor]:
    """The factors the points ``idx`` depend on: the registry's defaults by kind, or the named ones."""
    out: set[Factor] = set()
    if names is None:
        for i in idx:
            p = ev.points[i]
            out.update(factors_of(p.kind, ev.gpu_of(p.scenario), ev.engine_of(p.scenario), ev.catalog))
        return ordered(out)
    for text in names:
        try:
            spec, record = parse_factor(text)
        except ValueError:
            raise InputError(f"unknown factor {text!r}", field="--factors",
                             expected="table.field or table[record].field, table.field one of "
                                      + ", ".join(SPECS)) from None
        table = SPECS[spec].table
        gpus = {record} if record else {ev.gpu_of(ev.points[i].scenario) for i in idx}
        records = ({record} if record else {ev.engine_of(ev.points[i].scenario) for i in idx}) if table == "engine" \
            else {record_of(ev.catalog, spec, g) if g in ev.catalog.efficiency else g for g in gpus}
        for rec in records:
            f = Factor(spec, rec)
            if not applies(ev.catalog, table, rec, spec):
                raise InputError(f"factor {f.label}: the record leaves this field out (fp8_gemm_efficiency of a GPU "
                                 "without FP8 units)", field="--factors", expected="a factor the record has")
            try:
                f.value(ev.catalog)
            except InputError:
                raise InputError(f"factor {f.label}: the catalogue has no such record", field="--factors",
                                 expected="a GPU id of efficiency.yaml / a device or profile of engines.yaml") from None
            out.add(f)
    return ordered(out)


def _fit_points(ev: Evaluator, fit_files: set[str] | None = None) -> list[int]:
    """Points the fit may use: not holdout, and (``fit_files``) from those validation files (by name)."""
    return [i for i, p in enumerate(ev.points) if not p.case.point.holdout
            and (fit_files is None or Path(p.case.file).name in fit_files)]


@dataclass
class Stage:
    """One least-squares fit of a calibration: its points (``members``, the fit points among them ``fit_all``),
    its candidate factors, their priors (with the earlier stages' fitted values held) and its fit."""

    members: list[int]
    fit_all: list[int]
    candidates: list[Factor]
    prior: dict[Factor, float]
    selection: Selection | None = None
    fit: FitResult | None = None
    fit_idx: list[int] = field(default_factory=list)


def _stages(ev: Evaluator, fit_all: list[int], names: list[str] | None, by_domain: bool) -> list[Stage]:
    """One stage of every point, or (``by_domain``) the training points first, fitting the training kinds'
    factors (which the serving models read too), then the serving points, fitting the serving kinds' other
    factors as serving copies (Factor.domain) with the training values held."""
    every = list(range(len(ev.points)))
    if not by_domain:
        cands = _candidates(ev, fit_all, names)
        return [Stage(every, fit_all, cands, {f: f.value(ev.catalog) for f in cands})]
    out: list[Stage] = []
    taken: set[tuple[str, str]] = set()
    for domain in DOMAINS:
        members = [i for i in every if domain_of(ev.points[i].kind) == domain]
        fit = [i for i in fit_all if i in set(members)]
        cands = [f if domain == "training" else Factor(f.spec_name, f.record, domain)
                 for f in _candidates(ev, fit, None) if (f.spec_name, f.record) not in taken]
        taken |= {(f.spec_name, f.record) for f in cands}
        out.append(Stage(members, fit, cands, {f: f.value(ev.catalog) for f in cands}))
    return out


def _fit_stage(ev: Evaluator, st: Stage, held: dict[Factor, float], named: bool, require_factors: bool) -> None:
    """Select and fit ``st``'s factors on its fit points, the factors of ``held`` at those values."""
    cands, fit_all = st.candidates, st.fit_all
    st.prior = {**held, **st.prior}
    E = elasticities(ev, st.prior, cands, fit_all)
    sel = select(E, cands)
    if named and sel.undetermined:
        raise InputError(f"{len(sel.fitted) + len(sel.undetermined)} factors asked for, but the points tell only "
                         f"{sel.rank} apart ({', '.join(f.label for f in sel.undetermined)} cannot be told from "
                         "the ones before it)", field="--factors",
                         expected=f"at most {sel.rank} factors, or more points that move them differently")
    if not sel.fitted and require_factors:
        raise InputError("the points constrain no factor (no point's value moves with a factor of the registry)",
                         field="FILES", expected="points of step time, GPU-hours, TTFT, TPOT or serving throughput")
    cols = [cands.index(f) for f in sel.fitted]
    rows = [k for k, i in enumerate(fit_all) if cols and np.max(np.abs(E[k, cols])) > 0]
    st.fit_idx = [fit_all[k] for k in rows]
    if len(st.fit_idx) < len(sel.fitted):
        raise InputError(f"{len(st.fit_idx)} points for {len(sel.fitted)} factors", field="FILES",
                         expected=f"at least {len(sel.fitted)} fit points (not holdout) that the factors move")
    st.selection = sel
    st.fit = solve_refreshed(ev, st.fit_idx, sel.fitted, st.prior, E[np.ix_(rows, cols)])


def calibrate(paths: Iterable[str | Path], catalog, *, factors: list[str] | None = None,
              cv: str | None = "auto", require_factors: bool = True, by_domain: bool = False,
              fit_files: set[str] | None = None,
              cv_overrides: dict[str, dict[Factor, float]] | None = None) -> Calibration:
    """Fit the factors on the files' fit points, each toward its value in ``catalog`` (the prior); ``cv``:
    "publication", "point", "auto" (publication when the points come from two or more, else point) or None
    (no cross-validation). ``require_factors=False`` (``validate --cv``) reports points that constrain no
    factor with the catalogue values instead of refusing them. ``by_domain`` (``validate --cv``): the
    training points fit the training factors, then the serving points the serving models' own factors, the
    training values held (factors.DOMAINS; as the shipped calibration fits the training factors on training
    points only). ``fit_files``: only these files' points are fitted (all are predicted); ``cv_overrides``:
    group (publication) -> factor values its left-out prediction takes (catalogue values derived from it).

    InputError (exit 2) for bad files, a point calibration cannot use, named factors the points cannot tell
    apart, or fewer independent points than factors.
    """
    t0 = time.perf_counter()
    paths = [Path(p) for p in paths]
    files = load_validation_files(paths, catalog=catalog)
    ev = Evaluator([c for f in files for c in f.cases], catalog)
    fit_all = _fit_points(ev, fit_files)
    stages = _stages(ev, fit_all, factors, by_domain and factors is None)
    held: dict[Factor, float] = {}
    for st in stages:
        _fit_stage(ev, st, held, factors is not None, require_factors and not by_domain)
        held = dict(st.fit.values)
    if require_factors and not any(st.selection.fitted for st in stages):
        raise InputError("the points constrain no factor (no point's value moves with a factor of the registry)",
                         field="FILES", expected="points of step time, GPU-hours, TTFT, TPOT or serving throughput")
    cands = [f for st in stages for f in st.candidates]
    prior = {f: f.value(catalog) for f in cands}
    sel = Selection(*(sum((getattr(st.selection, k) for st in stages), []) for k in
                      ("fitted", "unconstrained", "undetermined")), rank=sum(st.selection.rank for st in stages))
    full = FitResult(values=held, fitted=list(sel.fitted), cost=sum(st.fit.cost for st in stages),
                     iterations=sum(st.fit.iterations for st in stages))
    cal = Calibration(files=paths, ev=ev, prior=prior, candidates=cands, selection=sel, fit=full,
                      fit_idx=sorted(i for st in stages for i in st.fit_idx),
                      ours_catalog=ev.predict(prior), ours_fit=ev.predict(held), stages=stages)
    if cv is not None:
        pubs = {ev.points[i].case.publication for i in fit_all}
        grouping = cv if cv != "auto" else ("publication" if len(pubs) >= 2 else "point")
        cal.ours_cv = cross_validate_stages(ev, stages, grouping, overrides=cv_overrides)
        cal.cv_grouping = grouping
    cal.seconds = time.perf_counter() - t0
    return cal


def cross_validate_stages(ev: Evaluator, stages: list[Stage], grouping: str, *, exact: bool = False,
                          overrides: dict[str, dict[Factor, float]] | None = None) -> np.ndarray:
    """Each point predicted by its own stage's refit without its group (:func:`cross_validate`)."""
    out = np.full(len(ev.points), np.nan)
    for st in stages:
        cv = cross_validate(ev, st.fit_all, st.candidates, st.prior, st.fit, grouping, exact=exact,
                            overrides=overrides)
        out[st.members] = cv[st.members]
    return out


def groups_of(ev: Evaluator, grouping: str) -> dict[str, list[int]]:
    """Every point's index by its group (publication, or the point itself)."""
    out: dict[str, list[int]] = {}
    for i, p in enumerate(ev.points):
        key = p.case.publication if grouping == "publication" else p.label
        out.setdefault(key, []).append(i)
    return out


def cross_validate(ev: Evaluator, fit_all: list[int], cands: list[Factor], prior: dict[Factor, float],
                   full: FitResult, grouping: str, *, exact: bool = False,
                   overrides: dict[str, dict[Factor, float]] | None = None) -> np.ndarray:
    """Each point predicted by a refit without its group's points.

    The refit selects its factors as the full fit does, from the sensitivities at the full fit's values
    (computed once for every point). By default it takes one Gauss-Newton step from the full fit with
    them (``linear_refit``); ``exact`` solves the refit's least squares with the model (Jacobian held
    fixed). Either way the left-out points are then computed by the full model at the refit's values,
    with ``overrides[group]`` put in (a catalogue value derived by hand from that group's measurements).
    """
    every = list(range(len(ev.points)))
    E = elasticities(ev, full.values, cands, every)
    fitted_cols = [cands.index(f) for f in full.fitted]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(ev.predict(full.values) / ev.published)
    out = np.full(len(ev.points), np.nan)
    for group, members in groups_of(ev, grouping).items():
        left = set(members)
        train = [i for i in fit_all if i not in left]
        sel = select(E[train], cands)
        chosen = [f for f in sel.fitted if f in full.fitted]  # never more than the full fit
        cols = [cands.index(f) for f in chosen]
        rows = [i for i in train if cols and np.max(np.abs(E[i, cols])) > 0]
        if len(rows) < len(chosen):
            chosen, rows = [], []
        if exact:
            values = solve(ev, rows, chosen, prior, jac_fixed=E[np.ix_(rows, cols)] if chosen else None,
                           start={**prior, **{f: full.values[f] for f in chosen}}).values
        else:
            values = linear_refit(full, E[:, fitted_cols], r, rows, chosen, prior)
        out[members] = ev.predict({**values, **(overrides or {}).get(group, {})}, members)
    return out
