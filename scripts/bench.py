"""Benchmark (not a test): formula count, file size, build time and verify time per engine,
for the default workbook and for a catalogue and scenario set ten times larger.

Prints the machine (cores, CPU model) and date first. For each workbook: ``verify`` with
each engine alone (its recalculation time in brackets; the rest is reading the inputs and
computing the reference), then the two engines of before (formulas + LibreOffice) and all installed
engines (Gnumeric too), which run concurrently, and the ratio of the two (target: at most 1.5x). These
run in this process, so only the first formulas run pays for importing formulas' function
modules (scipy, about 1 s); for the default workbook the command a user types,
``python -m workbook verify FILE --engine ...``, is also timed in a fresh process.

Usage: python scripts/bench.py [--skip-formulas-large] [--write-readme]

``--write-readme`` also rewrites the README's dated sentence on the three engines' time (between
``<!-- bench ...`` and ``<!-- bench:end -->``): a timing is quoted with its date and machine, and comes from here,
not from a test.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workbook.writer import build
from workbook.catalog import load_catalog
from workbook.engines import available_engines, engine_version
from workbook.scenario import load_scenarios
from workbook.scenario.sample import random_scenarios
from workbook.verify import verify

ROOT = Path(__file__).resolve().parents[1]


def tenfold(catalog):
    """The catalogue with every GPU (and its efficiency record) and model ten times (ids suffixed), same defaults."""
    gpus = {f"{k}-{i}" if i else k: g.model_copy(update={"id": f"{k}-{i}" if i else k})
            for k, g in catalog.gpus.items() for i in range(10)}
    models = {f"{k}-{i}" if i else k: m.model_copy(update={"id": f"{k}-{i}" if i else k})
              for k, m in catalog.models.items() for i in range(10)}
    efficiency = {f"{k}-{i}" if i else k: e.model_copy(update={"gpu": f"{k}-{i}" if i else k})
                  for k, e in catalog.efficiency.items() for i in range(10)}
    return catalog.model_copy(update={"gpus": gpus, "models": models, "efficiency": efficiency})


def machine() -> str:
    """'<n> cores, <CPU model>, <OS>, Python <version>'."""
    model = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cores} cores (nproc), {model}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def readme_sentence(ratio: float, when: datetime.datetime) -> str:
    """The README's dated benchmark block, as --write-readme writes it."""
    return (f"<!-- bench (scripts/bench.py --write-readme) -->three engines take {ratio:.2f}x the time of two "
            f"(`make bench`, {when:%Y-%m-%d}, {', '.join(machine().replace(' (nproc)', '').split(', ')[:2])}, "
            f"[docs/performance.md](docs/performance.md))<!-- bench:end -->")


def write_readme(ratio: float, when: datetime.datetime) -> None:
    """Replace the README's benchmark block with today's figure."""
    import re

    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    new, n = re.subn(r"<!-- bench .*?<!-- bench:end -->", lambda _: readme_sentence(ratio, when), text, flags=re.S)
    if n != 1:
        raise SystemExit("README.md: no <!-- bench ... --> ... <!-- bench:end --> block")
    readme.write_text(new, encoding="utf-8")


def run(label: str, scenarios, catalog, out: Path, engines: list[str], both: bool = True) -> float | None:
    t0 = time.perf_counter()
    book = build(out, scenarios, catalog, [("Benchmark", label)])
    t_build = time.perf_counter() - t0
    n = len(book.cells.by_role("calc", "link", "check"))
    print(f"{label}: {len(scenarios)} scenarios, {len(catalog.gpus)} GPUs, {len(catalog.models)} models")
    print(f"  formulas {n:,}   file {out.stat().st_size / 1e3:,.0f} kB   build {t_build:.2f} s")
    two = [e for e in engines if e in ("formulas", "libreoffice")]
    runs = [[e] for e in engines]
    if both and len(two) == 2 and len(engines) > 2:
        runs.append(two)  # the two engines verify ran before Gnumeric, beside all three: the 1.5x target
    if both and len(engines) > 1:
        runs.append(engines)
    walls: dict[tuple[str, ...], float] = {}
    for es in runs:
        t0 = time.perf_counter()
        r = verify(out, es)
        walls[tuple(es)] = wall = time.perf_counter() - t0
        recalc = ", ".join(f"{e} {r.seconds[e]:.2f} s" for e in es)
        print(f"  verify {' + '.join(es)}: {wall:.2f} s  (recalc {recalc}; "
              f"{r.cells_checked:,} cells, {'OK' if r.ok else 'FAILED'}, max rel diff {r.max_rel_diff:.2g})")
    if tuple(two) in walls and tuple(engines) in walls and len(engines) > 2:
        ratio = walls[tuple(engines)] / walls[tuple(two)]
        print(f"  verify, all three engines against the two of before: {ratio:.2f}x (target at most 1.5x)")
        return ratio
    return None


def cold_cli(path: Path, engines: list[str]) -> None:
    """Wall time of ``python -m workbook verify`` in a new process, per engine and for all."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for engine in [*engines, "all"] if len(engines) > 1 else engines:
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "workbook", "verify", str(path), "--engine", engine],
                             capture_output=True, text=True, env=env, cwd=ROOT)
        status = "OK" if res.returncode == 0 else f"exit {res.returncode}"
        print(f"  cli: python -m workbook verify --engine {engine}: {time.perf_counter() - t0:.2f} s ({status})")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-formulas-large", action="store_true", help="skip the slow formulas engine on the big book")
    ap.add_argument("--write-readme", action="store_true", help="rewrite the README's dated benchmark sentence")
    args = ap.parse_args()
    engines = available_engines()
    now = datetime.datetime.now().astimezone()
    print(f"{now:%Y-%m-%d %H:%M %Z}  {machine()}")
    print(f"engines: {', '.join(f'{e} ({engine_version(e)})' for e in engines)}")
    catalog = load_catalog()
    shipped = load_scenarios(sorted((ROOT / "catalog" / "scenarios").glob("*.yaml")))
    with tempfile.TemporaryDirectory() as d:
        ratio = run("default", shipped, catalog, Path(d) / "default.xlsx", engines)
        cold_cli(Path(d) / "default.xlsx", engines)
        big = tenfold(catalog)
        scenarios = random_scenarios(catalog, len(shipped) * 10, seed=7)
        large_engines = [e for e in engines if not (args.skip_formulas_large and e == "formulas")]
        run("tenfold", scenarios, big, Path(d) / "tenfold.xlsx", large_engines, both=large_engines == engines)
    if args.write_readme and ratio is not None:
        write_readme(ratio, now)
    return 0


if __name__ == "__main__":
    sys.exit(main())
