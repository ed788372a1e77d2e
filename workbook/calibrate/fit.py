"""Bounded least squares on log error with a prior toward the catalogue value (docs/validation.md).

Unknowns are x_j = log(factor_j). The cost is

    sum_i log(ours_i / published_i)^2  +  sum_j (rho_j * (x_j - log prior_j))^2,

rho_j = PRIOR_POINT_SCALE / prior_sigma_frac_j: a factor moved by its prior width costs as much as
one point off by PRIOR_POINT_SCALE. Solved with scipy.optimize.least_squares (trust-region
reflective, bounds), the Jacobian by forward differences of LOG_STEP, recomputing only the scenarios
a factor belongs to. A cross-validation refit may pass a fixed Jacobian (chord Gauss-Newton): the
residuals, and so the fitted values and predictions, still come from the full model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from workbook.calibrate.evaluate import Evaluator
from workbook.calibrate.factors import Factor

#: a point constrains a factor when |d log ours / d log factor| reaches this
SENSITIVITY_MIN = 0.05
#: the point error that weighs as much as moving a factor by its prior width
PRIOR_POINT_SCALE = 0.10
#: forward-difference step in log(factor)
LOG_STEP = 0.01
#: a factor is told apart from the earlier ones when this share of its (normalised) sensitivity column
#: lies outside their span
INDEPENDENCE_MIN = 0.05


def elasticities(ev: Evaluator, values: dict[Factor, float], factors: list[Factor], idx: list[int]) -> np.ndarray:
    """d log(ours) / d log(factor) of each point of ``idx`` (rows) and factor (columns)."""
    base = np.log(np.abs(ev.predict(values, idx)))
    out = np.zeros((len(idx), len(factors)))
    for j, f in enumerate(factors):
        rows = [k for k, i in enumerate(idx) if ev.touches(ev.points[i].scenario, f)]
        if not rows or values[f] == 0:
            continue
        bumped = dict(values)
        bumped[f] = values[f] * np.exp(LOG_STEP)
        sub = [idx[k] for k in rows]
        with np.errstate(divide="ignore"):
            moved = np.log(np.abs(ev.predict(bumped, sub)))
        diff = np.where(np.isfinite(moved), moved - base[rows], 0.0)
        out[rows, j] = diff / LOG_STEP
    return out


@dataclass
class Selection:
    """Which factors the points fit, which they do not constrain, which they cannot tell apart."""

    fitted: list[Factor]
    unconstrained: list[Factor]
    undetermined: list[Factor]
    rank: int


def select(E: np.ndarray, factors: list[Factor]) -> Selection:
    """Greedy in priority order: keep a factor whose sensitivity column is not (nearly) in the span of the
    kept ones; a factor with no sensitivity above SENSITIVITY_MIN is unconstrained."""
    fitted: list[Factor] = []
    unconstrained: list[Factor] = []
    undetermined: list[Factor] = []
    basis: list[np.ndarray] = []
    for j, f in enumerate(factors):
        col = E[:, j]
        if not len(col) or np.max(np.abs(col)) < SENSITIVITY_MIN:
            unconstrained.append(f)
            continue
        v = col / np.linalg.norm(col)
        for b in basis:
            v = v - (b @ v) * b
        if np.linalg.norm(v) < INDEPENDENCE_MIN:
            undetermined.append(f)
            continue
        basis.append(v / np.linalg.norm(v))
        fitted.append(f)
    return Selection(fitted, unconstrained, undetermined, len(basis))


@dataclass
class FitResult:
    """Fitted values (all factors: the fitted ones moved, the others at their prior)."""

    values: dict[Factor, float]
    fitted: list[Factor]
    cost: float
    iterations: int
    jacobian: np.ndarray | None = field(default=None, repr=False)  # d log(ours)/d log(factor) at the optimum


def solve(ev: Evaluator, idx: list[int], fitted: list[Factor], prior: dict[Factor, float],
          *, jac_fixed: np.ndarray | None = None, start: dict[Factor, float] | None = None) -> FitResult:
    """Fit ``fitted`` to the points ``idx``; the other factors of ``prior`` stay at their prior."""
    values = dict(prior)
    if not fitted or not idx:
        return FitResult(values=values, fitted=list(fitted), cost=0.0, iterations=0)
    x0 = np.log([prior[f] for f in fitted])
    lo = np.log([f.spec.lower for f in fitted])
    hi = np.log([f.spec.upper for f in fitted])
    rho = np.array([PRIOR_POINT_SCALE / f.spec.prior_sigma_frac for f in fitted])
    xs = np.log([(start or prior)[f] for f in fitted])
    xs = np.clip(xs, lo + 1e-9, hi - 1e-9)

    def at(x: np.ndarray) -> dict[Factor, float]:
        out = dict(values)
        out.update({f: float(np.exp(v)) for f, v in zip(fitted, x)})
        return out

    def fun(x: np.ndarray) -> np.ndarray:
        return np.concatenate([ev.log_error(at(x), idx), rho * (x - x0)])

    def jac(x: np.ndarray) -> np.ndarray:
        J = jac_fixed if jac_fixed is not None else elasticities(ev, at(x), fitted, idx)
        return np.vstack([J, np.diag(rho)])

    res = least_squares(fun, xs, jac=jac, bounds=(lo, hi), method="trf", x_scale=1.0,
                        xtol=1e-6, ftol=1e-8, gtol=1e-8, max_nfev=50)
    return FitResult(values=at(res.x), fitted=list(fitted), cost=float(2 * res.cost), iterations=int(res.nfev),
                     jacobian=jac_fixed)


def solve_refreshed(ev: Evaluator, idx: list[int], fitted: list[Factor], prior: dict[Factor, float],
                    jac0: np.ndarray, rounds: int = 2) -> FitResult:
    """``solve`` with a Jacobian held fixed within a round and recomputed between rounds (the first round
    uses ``jac0``, the sensitivities at the prior): a few model evaluations per round instead of a
    Jacobian per iteration; after the last recomputation the optimum is that of the full model up to the
    change of the Jacobian over the last step."""
    fit = solve(ev, idx, fitted, prior, jac_fixed=jac0)
    for _ in range(rounds - 1):
        J = elasticities(ev, fit.values, fitted, idx)
        fit = solve(ev, idx, fitted, prior, jac_fixed=J, start=fit.values)
    return fit


def linear_refit(full: FitResult, E: np.ndarray, r: np.ndarray, rows: list[int], fitted: list[Factor],
                 prior: dict[Factor, float]) -> dict[Factor, float]:
    """One Gauss-Newton step from the full fit to the optimum on the points ``rows`` only, for the factors
    ``fitted`` (the others of the full fit go back to their prior). ``E``: d log(ours)/d log(factor) of every
    point at the full fit for ``full.fitted`` (columns); ``r``: every point's log error at the full fit."""
    values = dict(prior)
    if not fitted or not rows:
        return values
    cols = [full.fitted.index(f) for f in fitted]
    others = [j for j, f in enumerate(full.fitted) if f not in fitted]
    # the factors this refit does not fit return to their prior: shift the residuals linearly
    back = np.array([np.log(prior[full.fitted[j]] / full.values[full.fitted[j]]) for j in others])
    r_rows = r[rows] + (E[np.ix_(rows, others)] @ back if others else 0.0)
    J = E[np.ix_(rows, cols)]
    x = np.log([full.values[f] for f in fitted])
    x0 = np.log([prior[f] for f in fitted])
    rho = np.array([PRIOR_POINT_SCALE / f.spec.prior_sigma_frac for f in fitted])
    A = np.vstack([J, np.diag(rho)])
    b = -np.concatenate([r_rows, rho * (x - x0)])
    step = np.linalg.lstsq(A, b, rcond=None)[0]
    lo = np.log([f.spec.lower for f in fitted])
    hi = np.log([f.spec.upper for f in fitted])
    values.update({f: float(np.exp(v)) for f, v in zip(fitted, np.clip(x + step, lo, hi))})
    return values
