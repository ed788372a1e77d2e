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


def built_private_catalog(tmp_path: Path, scenario: str) -> Path:
    """*tmp_path* holding private_catalog(tmp_path, scenario) and wb.xlsx built from it."""
    from workbook.cli import main

    cat = private_catalog(tmp_path, scenario)
    assert main(["build", "--catalog", str(cat), "-o", str(tmp_path / "wb.xlsx")]) == 0
    return tmp_path
