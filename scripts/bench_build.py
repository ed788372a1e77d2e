"""Benchmark (not a test): how long ``workbook build`` takes, for the default workbook and the tenfold one.

Prints the machine and date first, then:

* ``cli``: ``python -m workbook build -o NEW.xlsx`` in a fresh process (imports included; a first build in an
  empty folder, so no previous record is read), wall time, best of --repeat;
* ``default`` and ``tenfold`` (scripts/bench.py's catalogue and scenario set ten times larger): ``build()`` in
  this process, wall and CPU time (CPU time is the steadier figure where other work shares the cores), best
  of --repeat; the first build pays for importing the calculation modules.

With --keep DIR the last files stay in DIR (to compare the bytes of two versions with ``cmp``).

Usage: python scripts/bench_build.py [--repeat N] [--skip-tenfold] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ROOT, machine, tenfold  # noqa: E402

from workbook.catalog import load_catalog  # noqa: E402
from workbook.scenario import load_scenarios  # noqa: E402
from workbook.scenario.sample import random_scenarios  # noqa: E402
from workbook.writer import build  # noqa: E402


def _cli(out: Path, repeat: int) -> list[float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    times = []
    for _ in range(repeat):
        folder = Path(tempfile.mkdtemp(dir=out.parent))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "workbook", "build", "-o", str(folder / out.name)], check=True,
                       capture_output=True, env=env, cwd=ROOT)
        times.append(time.perf_counter() - t0)
        (folder / out.name).replace(out)
    return times


def _in_process(out: Path, scenarios, catalog, label: str, repeat: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        build(out, scenarios, catalog, [("Benchmark", label)])
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return wall, cpu


def _fmt(times: list[float]) -> str:
    return f"best {min(times):.2f} s ({', '.join(f'{t:.2f}' for t in times)})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-tenfold", action="store_true")
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR", help="leave cli/default/tenfold.xlsx in DIR")
    args = ap.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}  {machine()}; load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as d:
        out = args.keep or Path(d)
        out.mkdir(parents=True, exist_ok=True)
        print(f"cli: python -m workbook build: wall {_fmt(_cli(out / 'cli.xlsx', args.repeat))}")
        catalog = load_catalog()
        shipped = load_scenarios(sorted((ROOT / "catalog" / "scenarios").glob("*.yaml")))
        wall, cpu = _in_process(out / "default.xlsx", shipped, catalog, "default", args.repeat)
        print(f"default: build(): wall {_fmt(wall)}; CPU {_fmt(cpu)}")
        if not args.skip_tenfold:
            big = tenfold(catalog)
            scenarios = random_scenarios(catalog, len(shipped) * 10, seed=7)
            wall, cpu = _in_process(out / "tenfold.xlsx", scenarios, big, "tenfold", args.repeat)
            print(f"tenfold: build(): wall {_fmt(wall)}; CPU {_fmt(cpu)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
