"""Runs the book's worked examples (tests/data/examples) through the reference implementation.

Each part's test module declares CASES (id -> callable(inputs) -> {key: value}), UNMAPPED
(id -> reason), PARTIAL (id -> {key: reason} for expected keys a case does not compute) and
DEVIATIONS (id -> {key: (record_value, our_value, derivation)}), then calls make_tests().
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "examples"
DEFAULT_TOL = 1e-9
MAX_UNMAPPED_FRACTION = 0.05

#: filled while tests run; printed by tests/conftest.py at the end of the session
SUMMARY: dict[str, dict[str, int]] = {}


def load_records(part: str) -> list[dict]:
    return json.loads((DATA / f"{part}.json").read_text(encoding="utf-8"))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _close(got: Any, want: Any, tol: float) -> bool:
    if _is_number(want):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return False
        if not math.isfinite(got):
            return False
        if want == 0:
            return abs(got) <= max(tol, 1e-12)
        return abs(got - want) <= tol * abs(want)
    if isinstance(want, list) and isinstance(got, (list, tuple)):
        return len(want) == len(got) and all(_close(g, w, tol) for g, w in zip(got, want))
    return got == want


def expected_for(record: dict, deviations: dict) -> dict:
    """The record's expected values with our deviations applied."""
    expected = {k: v for k, v in record["expected"].items() if v is not None}
    for key, (record_value, ours, _why) in deviations.get(record["id"], {}).items():
        assert expected.get(key) == record_value, f"{record['id']}:{key}: deviation out of date"
        expected[key] = ours
    return expected


def make_tests(
    part: str,
    cases: dict[str, Callable[[dict], dict]],
    unmapped: dict[str, str],
    partial: dict[str, dict[str, str]] | None = None,
    deviations: dict[str, dict[str, tuple]] | None = None,
):
    """Return (test_example, test_coverage) for a part's module namespace."""
    records = load_records(part)
    partial = partial or {}
    deviations = deviations or {}
    by_id = {r["id"]: r for r in records}
    n_dev = sum(len(v) for v in deviations.values())
    SUMMARY[part] = {
        "records": len(records),
        "checked": sum(1 for r in records if r["id"] in cases),
        "deviations": n_dev,
        "unmapped": len(unmapped),
    }

    @pytest.mark.parametrize("record_id", sorted(cases))
    def test_example(record_id: str) -> None:
        record = by_id[record_id]
        got = cases[record_id](record["inputs"])
        expected = expected_for(record, deviations)
        skipped = partial.get(record_id, {})
        failures = []
        for key, want in expected.items():
            if key in skipped:
                continue
            if key not in got:
                failures.append(f"{key}: not computed (expected {want!r})")
                continue
            tol = record["tol"].get(key, DEFAULT_TOL) if isinstance(record["tol"], dict) else DEFAULT_TOL
            tol = max(tol, DEFAULT_TOL)
            if not _close(got[key], want, tol):
                failures.append(f"{key}: got {got[key]!r}, expected {want!r} (rel tol {tol})")
        assert not failures, f"{record_id}: " + "; ".join(failures)

    def test_coverage() -> None:
        ids = set(by_id)
        unknown = (set(cases) | set(unmapped) | set(partial) | set(deviations)) - ids
        assert not unknown, f"ids not in {part}: {sorted(unknown)}"
        both = set(cases) & set(unmapped)
        assert not both, f"both mapped and unmapped: {sorted(both)}"
        missing = ids - set(cases) - set(unmapped)
        assert not missing, f"records neither mapped nor listed as unmapped: {sorted(missing)}"
        assert len(unmapped) <= MAX_UNMAPPED_FRACTION * len(records), (
            f"{len(unmapped)} unmapped of {len(records)} (> {MAX_UNMAPPED_FRACTION:.0%})"
        )
        for rid, reason in unmapped.items():
            assert reason.strip(), f"{rid}: unmapped without a reason"

    return test_example, test_coverage
