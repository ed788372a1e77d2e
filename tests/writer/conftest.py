"""A default workbook built once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.writer import build
from workbook.catalog import load_catalog
from workbook.scenario import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "catalog" / "scenarios").glob("*.yaml"))


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(scope="session")
def built(tmp_path_factory, catalog):
    """(path, Book) of the default workbook."""
    path = tmp_path_factory.mktemp("wb") / "default.xlsx"
    book = build(path, load_scenarios(SHIPPED), catalog, [("Catalogue hash", "test"), ("Scenario files", "shipped")])
    return path, book
