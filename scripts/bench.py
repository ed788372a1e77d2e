"""Benchmark (not a test): formula count, file size, build time and verify time per engine,
for the default workbook and for a catalogue and scenario set ten times larger.

Usage: python scripts/bench.py [--skip-formulas-large]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from workbook.writer import build
from workbook.catalog import load_catalog
from workbook.engines import available_engines
from workbook.scenario import load_scenarios
from workbook.scenario.sample import random_scenarios
from workbook.verify import verify

ROOT = Path(__file__).resolve().parents[1]


def tenfold(catalog):
    """The catalogue with every GPU and model ten times (ids suffixed), same defaults."""
    gpus = {f"{k}-{i}" if i else k: g.model_copy(update={"id": f"{k}-{i}" if i else k})
            for k, g in catalog.gpus.items() for i in range(10)}
    models = {f"{k}-{i}" if i else k: m.model_copy(update={"id": f"{k}-{i}" if i else k})
              for k, m in catalog.models.items() for i in range(10)}
    return catalog.model_copy(update={"gpus": gpus, "models": models})


def run(label: str, scenarios, catalog, out: Path, engines: list[str]) -> None:
    t0 = time.perf_counter()
    book = build(out, scenarios, catalog, [("Benchmark", label)])
    t_build = time.perf_counter() - t0
    n = len(book.cells.by_role("calc", "link", "check"))
    print(f"{label}: {len(scenarios)} scenarios, {len(catalog.gpus)} GPUs, {len(catalog.models)} models")
    print(f"  formulas {n:,}   file {out.stat().st_size / 1e3:,.0f} kB   build {t_build:.2f} s")
    for e in engines:
        t0 = time.perf_counter()
        r = verify(out, [e])
        print(f"  verify {e}: {time.perf_counter() - t0:.2f} s  ({r.cells_checked:,} cells, "
              f"{'OK' if r.ok else 'FAILED'}, max rel diff {r.max_rel_diff:.2g})")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-formulas-large", action="store_true", help="skip the slow formulas engine on the big book")
    args = ap.parse_args()
    engines = available_engines()
    catalog = load_catalog()
    shipped = load_scenarios(sorted((ROOT / "catalog" / "scenarios").glob("*.yaml")))
    with tempfile.TemporaryDirectory() as d:
        run("default", shipped, catalog, Path(d) / "default.xlsx", engines)
        big = tenfold(catalog)
        scenarios = random_scenarios(catalog, len(shipped) * 10, seed=7)
        large_engines = [e for e in engines if not (args.skip_formulas_large and e == "formulas")]
        run("tenfold", scenarios, big, Path(d) / "tenfold.xlsx", large_engines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
