"""Benchmark (not a test): the training planner's search over every layout up to 16,384 GPUs.

For each shipped training request (catalog/requests), for the 17.9.4 request on every catalogue GPU,
and for a 16,384-GPU case (the 1.8T MoE of spec 17.9.3, an inline request below): the wall time and
the CPU time (process time; on a shared machine the wall time includes waiting for a core) of the
whole search and of its screen, the layouts enumerated (shapes x DP after the layout rules, and the
layouts the rules removed), the layouts screened (memory and/or step time from the reference) and the
layouts fully calculated (``workbook.calc.compute``). Prints the machine and date first.

Usage: python scripts/bench_planner.py [--at-least N] [--repeat R] [--only SUBSTRING]
(``--repeat``: the best of R runs of each row).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
from pathlib import Path

from workbook.catalog import load_catalog
from workbook.planner.request import PlanRequest, load_request
from workbook.planner.search import search

ROOT = Path(__file__).resolve().parents[1]

#: spec 17.9.3: the 1.8T MoE (catalog gpt4-class-moe) on up to 16,384 H800, 15T tokens; the book's
#: 44.17 days at MFU 0.32; the step-time model's fastest layout takes 57.2 days, so a 60-day deadline;
#: 4,096 sequences of 4,096 tokens per step
MOE_16K = {
    "title": "1.8T MoE on up to 16,384 H800 (book case 17.9.3, benchmark)", "request_id": "bench-17.9.3-1.8t-moe",
    "requester": "benchmark", "cost_centre": "bench", "model": "gpt4-class-moe", "tokens": 15e12,
    "target_days": 60, "candidate_gpus": ["h800"], "price_basis": "reserved",
    "training": {"seq_len": 4096, "global_batch_tokens": 16777216},
    "constraints": {"max_gpus": 16384, "whole_nodes": True, "precisions": ["bf16"], "zero_stages": [0, 1, 2, 3],
                    "recompute": ["none", "selective", "full"], "micro_batches": [1, 2, 4],
                    "allow_cross_node_ep": False},
}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


HEADER = (f"{'request / GPU':<30} {'wall s':>6} {'cpu s':>6} {'scr s':>6} {'shapes':>6} {'enumerated':>10} "
          f"{'screened':>8} {'calc':>5}  recommended")


def _row(label: str, res) -> str:
    c = res.counts
    best = res.plans[0] if res.plans else None
    rec = (f"{best.scenario.name}: {best.q['train_days']:.2f} d, ${best.q['train_cost_usd']:,.0f}" if best
           else "no plan passes")
    return (f"{label:<30} {res.seconds:>6.2f} {res.cpu_seconds:>6.2f} {res.screen_cpu_seconds:>6.2f} "
            f"{c['shapes']:>6,} {c['layouts']:>10,} {c['screened']:>8,} {c['evaluated']:>5}  {rec}")


def _run(label: str, args, req, catalog, **kw) -> None:
    if args.only and args.only not in label:
        return
    runs = [search(req, catalog, at_least=args.at_least, **kw) for _ in range(max(1, args.repeat))]
    print(_row(label, min(runs, key=lambda r: r.cpu_seconds)), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--at-least", type=int, default=0,
                    help="layouts through the full calculation at least (default: until the answer is known)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row, the fastest (CPU) printed")
    ap.add_argument("--only", default="", help="rows whose label contains this")
    args = ap.parse_args()
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, {_cpu()}")
    catalog = load_catalog()
    print(HEADER)
    reqs = [load_request(p, catalog) for p in sorted((ROOT / "catalog" / "requests").glob("*.yaml"))]
    for req in reqs:
        if req.wants_training:
            _run(req.request_id, args, req, catalog)
    _run("17.9.3 1.8T MoE, 16,384 H800", args, PlanRequest.model_validate(MOE_16K), catalog)
    book = next(r for r in reqs if r.request_id == "17.9.4-70b-h800")
    for gid in sorted(catalog.efficiency):
        if catalog.gpu(gid).price_usd_per_gpu_hour(book.price_basis) is None:
            if not args.only:
                print(f"17.9.4 on {gid}: no {book.price_basis} price in the catalogue, skipped")
            continue
        _run(f"17.9.4 on {gid}", args, book, catalog, gpus=[gid])


if __name__ == "__main__":
    main()
