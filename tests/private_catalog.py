"""A private copy of the shipped catalogue with one scenario, for tests that edit YAML or rebuild."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def private_catalog(tmp_path: Path, scenario: str) -> Path:
    """tmp_path/catalog: the shipped catalogue (no scenarios, validation or requests) plus *scenario*."""
    cat = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", cat, ignore=shutil.ignore_patterns("scenarios", "validation", "requests"))
    (cat / "scenarios").mkdir()
    shutil.copy(ROOT / "catalog" / "scenarios" / scenario, cat / "scenarios" / scenario)
    return cat
