"""Predictions of validation points under changed factor values, fast enough to fit and cross-validate.

Each distinct scenario is resolved once; a scenario is recomputed only when a factor of its own GPU
or engine changes (results are cached by those values), and only up to the sheet module that
computes its points' keys (``compute_resolved(keys=...)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbook.calibrate.factors import Factor, domain_of, kind_of, record_of, records_with
from workbook.errors import InputError
from workbook.validation.load import Case


@dataclass(frozen=True)
class CalPoint:
    """A validation point as calibration sees it."""

    case: Case
    kind: str
    scenario: int  # index into Evaluator.resolved

    @property
    def label(self) -> str:
        return f"{Path(self.case.file).name}:{self.case.point.point}"


class Evaluator:
    """Resolved scenarios of a set of cases and a cache of their computed points."""

    def __init__(self, cases: list[Case], catalog) -> None:
        from workbook.scenario.resolve import resolve

        self.catalog = catalog
        self.defaults = catalog.defaults.as_dict()
        index: dict[str, int] = {}
        self.resolved: list[tuple] = []
        self.keys: list[set[str]] = []
        self.domains: list[set[str]] = []  # domains of each scenario's points (factors.DOMAINS)
        self.points: list[CalPoint] = []
        for c in cases:
            kind = kind_of(c.point.key)
            if kind is None:
                raise InputError(f"point {c.point.point!r}: calibration cannot use quantity {c.point.key!r} "
                                 "(no kind in workbook/calibrate/factors.py)", file=c.file,
                                 field=f"points[{c.index}].key", expected="a step time, GPU-hours, memory, "
                                 "TTFT, TPOT, serving throughput, KV capacity or count quantity")
            sig = c.scenario.model_dump_json()
            if sig not in index:
                try:
                    self.resolved.append(resolve(c.scenario, catalog))
                except InputError as err:
                    raise InputError(err.message, file=err.file or c.file, line=err.line, field=err.field,
                                     expected=err.expected) from None
                index[sig] = len(self.resolved) - 1
                self.keys.append(set())
                self.domains.append(set())
            self.keys[index[sig]].add(c.point.key)
            self.domains[index[sig]].add(domain_of(kind))
            self.points.append(CalPoint(case=c, kind=kind, scenario=index[sig]))
        self.published = np.array([p.case.published for p in self.points])
        self._cache: dict[tuple, dict[str, float]] = {}
        self.computed = 0  # scenario computations run (for timing reports)

    def engine_of(self, scen: int) -> str | None:
        s = self.resolved[scen][0]
        return s.inference.engine if getattr(s, "inference", None) is not None else None

    def gpu_of(self, scen: int) -> str:
        return self.resolved[scen][1].id

    def touches(self, scen: int, f: Factor) -> bool:
        """Whether factor ``f`` belongs to this scenario's GPU or engine (and domain, for a domain's copy)."""
        rec = self.engine_of(scen) if f.spec.table == "engine" else record_of(self.catalog, f.spec_name,
                                                                                self.gpu_of(scen))
        return rec == f.record and (not f.domain or f.domain in self.domains[scen])

    def _values(self, scen: int, values: dict[Factor, float]) -> dict[str, float]:
        mine = {f: v for f, v in values.items() if self.touches(scen, f)}
        key = (scen, tuple(sorted((f.label, v) for f, v in mine.items())))
        hit = self._cache.get(key)
        if hit is None:
            from workbook.calc import compute_resolved

            s, gpu, model = self.resolved[scen]
            eff, engines = records_with(self.catalog, gpu.id, mine)
            try:
                out = compute_resolved(s, gpu, model, self.defaults, eff, engines=engines, keys=self.keys[scen])
            except InputError as err:
                p = next(p for p in self.points if p.scenario == scen)
                raise InputError(err.message, file=p.case.file, field=err.field, expected=err.expected) from None
            hit = {k: out[k] for k in self.keys[scen]}
            self._cache[key] = hit
            self.computed += 1
        return hit

    def predict(self, values: dict[Factor, float], idx: list[int] | None = None) -> np.ndarray:
        """Our value of each point (of ``idx``, default all) with ``values`` put into the catalogue."""
        idx = range(len(self.points)) if idx is None else idx
        return np.array([self._values(self.points[i].scenario, values)[self.points[i].case.point.key] for i in idx])

    def log_error(self, values: dict[Factor, float], idx: list[int]) -> np.ndarray:
        """log(ours / published) of the points ``idx``; InputError when a value has no logarithm."""
        ours = self.predict(values, idx)
        pub = self.published[idx]
        bad = [i for i, o, p in zip(idx, ours, pub) if not (o / p > 0 and math.isfinite(o / p))]
        if bad:
            p = self.points[bad[0]]
            raise InputError(f"point {p.case.point.point!r}: ours and the published value differ in sign or ours "
                             "is 0, so it has no log error", file=p.case.file, field=f"points[{p.case.index}].value",
                             expected="a point the model computes as a positive number")
        return np.log(ours / pub)
