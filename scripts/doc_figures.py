"""The figures the README and docs quote, computed now (tests/test_docs.py checks the docs still quote them).

    PYTHONPATH=. python scripts/doc_figures.py      # prints "key: text" lines; each text appears in its doc

Each figure is one short text a doc contains verbatim; when a change moves a number, the test fails
and names the doc and the new text to paste.
"""

from __future__ import annotations

from pathlib import Path
from functools import lru_cache
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=None)
def _plan(request: str) -> dict:
    from workbook.catalog import load_catalog
    from workbook.planner.plan import plan_request
    from workbook.planner.request import load_request

    return plan_request(load_request(ROOT / "catalog" / "requests" / request), load_catalog()).data["training"]


def _short(p: dict) -> str:
    return f"{p['gpu']} x {p['num_gpus']} ({p['nodes']:.0f} nodes), {p['train_days']:.2f} days, ${p['train_cost_usd']:,.0f}"


def plan_17_9_4() -> str:
    """The recommended plan of the shipped 17.9.4 request (README tour)."""
    return _short(_plan("17.9.4-70b-h800.yaml")["recommended"])


def plan_17_9_4_line() -> str:
    """The 17.9.4 plan's "Recommended:" line as `workbook plan` prints it (docs/engineering.md)."""
    from workbook.planner.report import _plan_line

    return "Recommended: " + _plan_line(_plan("17.9.4-70b-h800.yaml")["recommended"])


def compare_17_9_4() -> str:
    """Every GPU priced for reserved with a plan for the 17.9.4 request, cheapest first (docs/engineering.md)."""
    rows = _plan("17.9.4-70b-h800.yaml")["compared"]
    return "; ".join(f"{r['gpu']} x {r['plan']['num_gpus']} ${r['plan']['train_cost_usd']:,.0f}" for r in rows if r["plan"])


def plan_mixtral() -> str:
    """The recommended plan and the alternatives of the shipped Mixtral request (docs/engineering.md)."""
    t = _plan("moe-mixtral-8x7b.yaml")
    plans = [t["recommended"], *[a for a in t.get("alternatives", {}).values() if a]]
    return "; ".join(f"{p['gpu'].upper()} x {p['num_gpus']}, {p['train_days']:.2f} days, ${p['train_cost_usd']:,.0f}"
                     for p in plans)


@lru_cache(maxsize=None)
def _cv():
    from workbook.calibrate.report import by_kind
    from workbook.catalog import load_catalog
    from workbook.validation import default_files
    from workbook.validation.cv import cross_validation

    return by_kind(cross_validation(default_files(), load_catalog()), holdout=None)


def accuracy() -> str:
    """Leave-one-publication-out and in-sample accuracy of training and serving (`workbook validate --cv`)."""
    stats = _cv()

    def one(kind: str) -> str:
        s = stats[kind]
        cv, ins = s["cross_validated"], s["in_sample"]
        return (f"{kind} {100 * cv['mean_abs_error_frac']:.1f} % mean |error|, {cv['passed']} of {cv['count']} "
                f"within tolerance (in-sample {100 * ins['mean_abs_error_frac']:.1f} %, {ins['passed']} of {ins['count']})")

    return "; ".join([one("training"), one("serving")])


#: key -> (the doc that quotes it, the function that computes it)
FIGURES: dict[str, tuple[str, Callable[[], str]]] = {
    "plan-17.9.4": ("README.md", plan_17_9_4),
    "plan-17.9.4-line": ("docs/engineering.md", plan_17_9_4_line),
    "compare-17.9.4": ("docs/engineering.md", compare_17_9_4),
    "plan-mixtral": ("docs/engineering.md", plan_mixtral),
    "accuracy": ("README.md", accuracy),
}


def main() -> None:
    for key, (doc, fn) in FIGURES.items():
        print(f"{key} ({doc}): {fn()}")


if __name__ == "__main__":
    main()
