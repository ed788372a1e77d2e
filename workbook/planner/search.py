"""The training planner (spec 17.9.4 as a search): screen every layout cheaply, run the full
calculation on the best of them, keep those that pass, rank by cost then time.

Per GPU and shape (:mod:`workbook.planner.candidates`) the DP degrees ascend; memory per GPU does not
rise with DP (ZeRO shards over more ranks, GA and so the in-flight micro-batches fall) and training
days fall, so a bisection finds the smallest DP that fits and the smallest that meets the deadline
(both are checked at the largest DP first: a shape that fails there is rejected with that margin).
The few DPs from there (``WINDOW``) are the shape's candidates: cost rises with DP beyond them (the
bubble and the reductions grow) but for GA rounding. The screen's feasible layouts, cheapest first,
then run through ``workbook.calc.compute`` (see :func:`search` for how many); a layout passes when every hard check of ``workbook.calc.checks`` passes
and the two planning rules the checks only warn about hold (communication share, checkpoint
interval against the MTBF; the planner first shortens the interval to what the MTBF rule allows).
Every rejected layout records the check that failed and by how much.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from workbook.calc import compute
from workbook.calc.checks import HARD
from workbook.planner.book_screen import screen_class
from workbook.planner.candidates import DpOptions, Layout, Rules, dp_runs, model_of, shapes, to_scenario
from workbook.planner.fidelity import billed_first
from workbook.planner.request import PlanRequest
from workbook.planner.screen import Screen, Screened

#: DPs screened from the smallest that meets the deadline
WINDOW = 3
#: layouts of one GPU the full calculation takes at most (checks the screen cannot model, such as
#: the communication share, may reject the cheapest ones)
MAX_PER_GPU = 300
#: planning rules the workbook shows as warnings and the planner enforces
PLANNER_RULES = ("warn_comm_share", "warn_ckpt_interval")
HARD_NAMES = tuple(n for n, *_ in HARD)


@dataclass
class Rejection:
    """A layout that failed: the check, its value and the limit it missed."""

    gpu: str
    layout: str
    check: str
    value: float
    limit: float
    unit: str
    stage: str  # "screen" or "calc"

    @property
    def excess_frac(self) -> float:
        """How far past the limit, relative to it (for a limit of 0: the value)."""
        return (self.value - self.limit) / abs(self.limit) if self.limit else self.value


@dataclass
class Evaluated:
    """A layout through the full calculation."""

    screened: Screened
    scenario: Any
    q: dict[str, float]
    failed: list[str]

    @property
    def passed(self) -> bool:
        return not self.failed


@dataclass
class SearchResult:
    """What the training search found."""

    plans: list[Evaluated]  # passed, ranked by cost then time
    evaluated: list[Evaluated]
    feasible_screened: list[Screened]
    rejections: list[Rejection]
    rules: dict[str, Rules]
    counts: dict[str, int]
    seconds: float
    screened: list[Screened] = field(default_factory=list)  # every layout with a time (for the advice)
    screen_seconds: float = 0.0
    screen_cpu_seconds: float = 0.0
    cpu_seconds: float = 0.0

    def best_per_gpu(self) -> dict[str, Evaluated]:
        out: dict[str, Evaluated] = {}
        for p in self.plans:
            out.setdefault(p.screened.gpu, p)
        return out


def _first_true(lo: int, hi: int, pred: Callable[[int], bool]) -> int:
    """Smallest k in [lo, hi] with pred(k) true, pred monotone false..true and pred(hi) true."""
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _first_on_time(dps: DpOptions, hi: int, days: Callable[[int], float], target: float) -> int:
    """Smallest index k <= hi with days(k) <= target (days(hi) <= target, days falling with DP).

    Secant steps from the known-good end first: DP·days is about constant, and rises with DP, so the
    estimate DP·days/target from a good point lands on or above the boundary; a bisection finishes."""
    lo = 0
    while lo < hi:
        guess = dps.dp(hi) * days(hi) / target
        k = max(lo, min(hi - 1, dps.index_at_least(guess - 1e-9)))
        if days(k) <= target:
            hi = k
        else:
            lo = k + 1
            return _first_true(lo, hi, lambda m: days(m) <= target)
    return hi


class _Lazy:
    """The shape's layouts by index, made when first asked for (most are never screened)."""

    def __init__(self, shape, opts: DpOptions):
        self.shape, self.opts, self.made = shape, opts, {}

    def __len__(self) -> int:
        return len(self.opts)

    def __getitem__(self, k: int) -> Layout:
        if k not in self.made:
            self.made[k] = Layout(self.shape, *self.opts[k])
        return self.made[k]


def _shape_candidates(scr: Screen, lays: _Lazy, req: PlanRequest, rej: list[Rejection],
                      seen: list[Screened]) -> list[Screened]:
    """The shape's feasible layouts (screen); every screened layout that fails is recorded in ``rej``
    (a layout that misses the deadline as such; its memory is computed only at the largest DP). The
    largest DP's memory comes first: a shape that does not fit there is rejected without a step time
    (memory does not fall as DP shrinks); every other layout the search looks at gets its days."""
    gid, hbm = scr.gpu.id, scr.capacity_GB
    last = len(lays) - 1
    cache: dict[int, Screened] = {}
    target = req.target_days

    def at(k: int) -> Screened:  # with its days (and its memory if already known)
        r = cache.get(k)
        if r is None:
            r = cache[k] = scr.screen(lays[k], with_memory=False)
            seen.append(r)
        elif r.days != r.days:  # NaN: memory only so far
            scr.add_time(r)
        return r

    def fits(k: int) -> bool:  # its memory (without its days if not yet known)
        r = cache.get(k)
        if r is None:
            r = cache[k] = scr.screen(lays[k], with_time=False)
            seen.append(r)
        elif r.memory_GB is None:
            r.memory_GB = scr.memory_GB(lays[k])
        return r.fits

    out: list[Screened] = []
    if fits(last) and at(last).days <= target:
        j = _first_on_time(lays.opts, last, lambda k: at(k).days, target)
        j = _first_true(j, last, lambda k: at(k) is not None and fits(k)) if not fits(j) else j
        out = [at(k) for k in range(j, min(last, j + WINDOW - 1) + 1) if at(k).days <= target and fits(k)]
    chosen = {id(r) for r in out}
    for r in cache.values():
        if r.memory_GB is not None and not r.fits:
            rej.append(Rejection(gid, r.layout.label(), "check_train_memory_fits", r.memory_GB, hbm, "GB", "screen"))
        elif r.days > target:
            rej.append(Rejection(gid, r.layout.label(), "check_meets_target_days", r.days, target, "days", "screen"))
        elif id(r) not in chosen:
            continue
        elif req.budget_usd is not None and r.billed_cost_usd > req.budget_usd:
            rej.append(Rejection(gid, r.layout.label(), "check_within_budget", r.billed_cost_usd, req.budget_usd,
                                 "USD", "screen"))
            chosen.discard(id(r))
    return [r for r in out if id(r) in chosen]


def screen_gpu(req: PlanRequest, catalog, gpu_id: str, model, fields: dict, rej: list[Rejection],
               counts: dict[str, int], seen: list[Screened]) -> tuple[list[Screened], Rules]:
    """Every layout of one GPU through the screen: the feasible ones, and the layout rules' removals."""
    gpu = catalog.gpu(gpu_id)
    rules = Rules()
    feasible: list[Screened] = []
    screens = {p: screen_class(req)(req, catalog, gpu, model, fields, p) for p in req.constraints.precisions}
    runs: dict[tuple, tuple[DpOptions, Rules]] = {}  # the DP options depend on TP, CP, PP, EP and mb only
    for shape in shapes(req, model, gpu, rules):
        key = (shape.tp, shape.cp, shape.pp, shape.ep, shape.micro_batch)
        if key not in runs:
            got = Rules()
            runs[key] = dp_runs(shape, req, gpu, got), got
        opts, removed = runs[key]
        for rule, (n, example) in removed.removed.items():
            rules.drop(rule, example, n)
        counts["layouts"] += len(opts)
        counts["shapes"] += 1
        if not opts:
            continue
        feasible += _shape_candidates(screens[shape.precision], _Lazy(shape, opts), req, rej, seen)
    for s in screens.values():
        for k, v in s.calls.items():
            counts[f"screen_{k}_calls"] += v
    counts["layouts"] += sum(n for n, _ in rules.removed.values())
    return feasible, rules


def scenario_name(r: Screened) -> str:
    s, lay = r.layout.shape, r.layout
    cp = f"cp{s.cp}" if s.cp > 1 else ""
    ep = f"ep{s.ep}" if s.ep > 1 else ""
    prec = "" if s.precision == "bf16" else f"-{s.precision}"
    return f"{r.gpu}-{lay.num_gpus}-tp{s.tp}{cp}pp{s.pp}dp{lay.dp}{ep}-mb{s.micro_batch}-z{s.zero_stage}-{s.recompute}{prec}"


def _calc_rejections(ev: Evaluated, req: PlanRequest, defaults) -> list[Rejection]:
    q, r = ev.q, ev.screened
    limits = {
        "check_train_memory_fits": (q["zero_total_per_gpu_GB"], q["zero_hbm_capacity_GB"], "GB"),
        "check_meets_target_days": (q["train_days"], req.target_days, "days"),
        "check_within_budget": (max(q["train_cost_usd"], q["train_cost_target_usd"]), req.budget_usd or 0.0, "USD"),
        "warn_comm_share": (q["comm_share_frac"], float(defaults.get("comm_max_frac", 0.2)), "fraction"),
        "warn_ckpt_interval": (q["sto_ckpt_interval_steps"], q["ckpt_interval_max_steps"], "steps"),
    }
    return [Rejection(r.gpu, r.layout.label(), c, *limits.get(c, (1.0, 0.0, "0/1")), "calc") for c in ev.failed]


def evaluate(r: Screened, req: PlanRequest, catalog, fields: dict) -> Evaluated:
    """The full calculation of a screened layout; the checkpoint interval shortened to the MTBF rule."""
    name = scenario_name(r)
    sc = to_scenario(r.layout, req, r.gpu, fields, name)
    q = compute(sc, catalog)
    if q["warn_ckpt_interval"] and q["ckpt_interval_max_steps"] >= 1:
        sc = to_scenario(r.layout, req, r.gpu, fields, name, ckpt_interval_steps=int(q["ckpt_interval_max_steps"]))
        q = compute(sc, catalog)
    failed = [c for c in HARD_NAMES + PLANNER_RULES if q[c]]
    return Evaluated(r, sc, q, failed)


def _rank_key(r) -> tuple:
    return (r.cost_usd, r.days, r.memory_GB, r.layout.num_gpus, r.layout)


def _layout_key(e: Evaluated) -> tuple:
    lay = e.screened.layout
    return (lay.num_gpus, lay.shape.tp, lay.shape.cp, lay.shape.pp, lay.shape.ep)


def search(req: PlanRequest, catalog, gpus: list[str] | None = None, at_least: int = 0,
           per_gpu_max: int = MAX_PER_GPU) -> SearchResult:
    """Search the request's training layouts on ``gpus`` (default: its candidate GPUs).

    The screen's feasible layouts go through the full calculation cheapest first (the screen's cost
    is the calculation's, so this is the calculation's ranking): every GPU until one of its layouts
    passes, the recommended GPU until a second parallel layout passes too (the runner-up), and at
    least the ``at_least`` cheapest; at most ``per_gpu_max`` layouts per GPU."""
    t0, c0 = time.perf_counter(), time.process_time()
    got = model_of(req, catalog)
    if got is None or not req.wants_training:
        raise ValueError("the training search needs an architecture and a training job")
    model, fields = got
    counts: dict[str, int] = {k: 0 for k in ("shapes", "layouts", "screen_state_calls", "screen_activations_calls",
                                             "screen_step_calls", "evaluated", "screened")}
    rej: list[Rejection] = []
    rules: dict[str, Rules] = {}
    feasible: list[Screened] = []
    seen: list[Screened] = []
    gpu_ids = list(gpus or req.candidate_gpus)
    for gid in gpu_ids:
        f, rules[gid] = screen_gpu(req, catalog, gid, model, fields, rej, counts, seen)
        feasible += f
    t_screen, cpu_screen = time.perf_counter() - t0, time.process_time() - c0
    feasible.sort(key=lambda r: (billed_first(req, r.cost_usd, r.cost_target_usd), *_rank_key(r)))
    evaluated: list[Evaluated] = []
    need = set(gpu_ids)  # GPUs without a passing layout yet
    per_gpu: dict[str, int] = {}
    rec: Evaluated | None = None
    runner = False
    for i, r in enumerate(feasible):
        if i >= at_least and not need and (runner or rec is None):
            break
        wanted = i < at_least or r.gpu in need or (rec is not None and not runner and r.gpu == rec.screened.gpu)
        if not wanted or per_gpu.get(r.gpu, 0) >= per_gpu_max:
            continue
        per_gpu[r.gpu] = per_gpu.get(r.gpu, 0) + 1
        ev = evaluate(r, req, catalog, fields)
        evaluated.append(ev)
        if not ev.passed:
            continue
        if rec is None:
            rec = ev
        elif not runner and r.gpu == rec.screened.gpu and _layout_key(ev) != _layout_key(rec):
            runner = True
        need.discard(r.gpu)
    counts["evaluated"] = len(evaluated)
    counts["screened"] = len(seen)
    defaults = catalog.defaults.as_dict()
    for ev in evaluated:
        rej += _calc_rejections(ev, req, defaults)
    plans = sorted((e for e in evaluated if e.passed),
                   key=lambda e: (billed_first(req, e.q["train_cost_usd"], e.q["train_cost_target_usd"]),
                                  e.q["train_cost_usd"], e.q["train_days"], e.q["zero_total_per_gpu_GB"],
                                  e.screened.layout.num_gpus))
    return SearchResult(plans, evaluated, feasible, rej, rules, counts, time.perf_counter() - t0, seen, t_screen,
                        cpu_screen, time.process_time() - c0)
