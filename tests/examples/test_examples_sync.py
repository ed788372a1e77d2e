"""Our copy of the spec's examples still matches ../shared/spec/examples when that is present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.examples.harness import DATA

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "examples"


@pytest.mark.skipif(not SPEC.is_dir(), reason="../shared/spec/examples not present on this machine")
@pytest.mark.parametrize("path", sorted(SPEC.glob("examples-*.json")) if SPEC.is_dir() else [], ids=lambda p: p.name)
def test_copy_matches_spec(path: Path) -> None:
    ours = {r["id"]: r for r in json.loads((DATA / f"{path.stem.removeprefix('examples-')}.json").read_text())}
    theirs = json.loads(path.read_text(encoding="utf-8"))
    assert set(ours) == {r["id"] for r in theirs}
    for r in theirs:
        mine = ours[r["id"]]
        assert mine["inputs"] == r.get("inputs", {}), r["id"]
        assert mine["expected"] == r.get("recomputed", {}), r["id"]
        assert mine["tol"] == (r.get("test_rel_tol") or {}), r["id"]
