"""Benchmark (not a test): the training planner's search over every layout up to 16,384 GPUs.

For each shipped training request (catalog/requests) and for the 17.9.4 request on every catalogue
GPU: the layouts the request allows (shapes x DP after the layout rules), how many the screen
evaluated (reference memory and step-time calls), how many went through the full calculation, and
the wall time and the CPU time (process time; on a shared machine the wall time includes waiting for
a core) of the screen and of the whole search. Prints the machine and date first.

Usage: python scripts/bench_planner.py [--at-least N]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
from pathlib import Path

from workbook.catalog import load_catalog
from workbook.planner.request import load_request
from workbook.planner.search import search

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _row(label: str, res) -> str:
    c = res.counts
    best = res.plans[0] if res.plans else None
    rec = (f"{best.scenario.name}: {best.q['train_days']:.2f} d, ${best.q['train_cost_usd']:,.0f}" if best
           else "no plan passes")
    return (f"{label:<34} {c['shapes']:>6,} {c['layouts']:>9,} {c['screen_step_calls']:>7,} "
            f"{c['screen_state_calls']:>6,} {c['evaluated']:>5} {res.screen_seconds:>7.2f} {res.seconds:>7.2f} {res.screen_cpu_seconds:>7.2f} {res.cpu_seconds:>7.2f}  {rec}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--at-least", type=int, default=0,
                    help="layouts through the full calculation at least (default: until the answer is known)")
    args = ap.parse_args()
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, {_cpu()}")
    catalog = load_catalog()
    print(f"{'request / GPU':<34} {'shapes':>6} {'layouts':>9} {'steps':>7} {'states':>6} {'calc':>5} "
          f"{'screen':>7} {'total':>7} {'cpu scr':>7} {'cpu tot':>7}  recommended")
    reqs = [load_request(p, catalog) for p in sorted((ROOT / "catalog" / "requests").glob("*.yaml"))]
    for req in reqs:
        if req.wants_training:
            print(_row(req.request_id, search(req, catalog, at_least=args.at_least)))
    book = next(r for r in reqs if r.request_id == "17.9.4-70b-h800")
    for gid in sorted(catalog.efficiency):
        if catalog.gpu(gid).price_usd_per_gpu_hour(book.price_basis) is None:
            print(f"17.9.4 on {gid}: no {book.price_basis} price in the catalogue, skipped")
            continue
        print(_row(f"17.9.4 on {gid}", search(book, catalog, gpus=[gid], at_least=args.at_least)))


if __name__ == "__main__":
    main()
