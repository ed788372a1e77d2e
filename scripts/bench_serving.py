"""Benchmark (not a test): the serving search on every shipped serving request (catalog/requests),
with ``serving.disaggregation`` off, auto and only: wall and CPU (process) time of
``search_serving`` (the best of R runs), co-located layouts and disaggregated candidates evaluated,
plans, and the recommended plan. Prints the machine and date first.

Usage: python scripts/bench_serving.py [--repeat R] [--mode off|auto|only]
(``--repeat 1 --mode M`` in a fresh process gives the cold time: the reference caches step times).
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from pathlib import Path

from workbook.catalog import load_catalog
from workbook.planner.request import load_request
from workbook.planner.serving_search import search_serving

ROOT = Path(__file__).resolve().parents[1]


def _timed(req, catalog) -> tuple[float, float, object]:
    w, c = time.perf_counter(), time.process_time()
    res = search_serving(req, catalog)
    return time.perf_counter() - w, time.process_time() - c, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3, help="runs per row, the fastest (CPU) printed")
    ap.add_argument("--mode", choices=("off", "auto", "only"), action="append",
                    help="disaggregation modes to run (default all three)")
    args = ap.parse_args()
    from scripts.bench_planner import _cpu

    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, {_cpu()}")
    print(f"{'request':<28} {'mode':<5} {'wall s':>6} {'cpu s':>6} {'co-loc':>6} {'disagg':>6} {'plans':>5}  recommended")
    catalog = load_catalog()
    for path in sorted((ROOT / "catalog" / "requests").glob("*.yaml")):
        req = load_request(path, catalog)
        if req.serving is None:
            continue
        for mode in args.mode or ("off", "auto", "only"):
            r = req.model_copy(update={"serving": req.serving.model_copy(update={"disaggregation": mode})})
            wall, cpu, res = min((_timed(r, catalog) for _ in range(max(1, args.repeat))), key=lambda t: t[1])
            best = res.plans[0] if res.plans else None
            rec = (f"{best.layout.label()}: {best.num_gpus} GPUs, ${best.usd_per_month:,.0f}/month ({best.kind})"
                   if best else "no plan carries the load")
            print(f"{req.request_id:<28} {mode:<5} {wall:>6.2f} {cpu:>6.2f} {res.layouts:>6} {res.disaggregated:>6} "
                  f"{len(res.plans):>5}  {rec}", flush=True)


if __name__ == "__main__":
    main()
