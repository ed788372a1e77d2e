"""Every shipped request's plan workbook works in Excel as verified: the Excel lint finds nothing, and Gnumeric
(the engine that follows Excel: 0^0 is #NUM! there) recalculates every cell to the reference, no error value.
Only the workbook is written (no PDF, no Markdown: tests/planner/test_plan_book.py covers those)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.catalog import load_catalog
from workbook.engines import gnumeric
from workbook.lint.excel import lint_xlsx
from workbook.planner.book import plan_path, write_plan_book
from workbook.planner.plan import plan_request
from workbook.planner.request import load_request
from workbook.verify import verify

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REQUESTS = sorted((ROOT / "catalog" / "requests").glob("*.yaml"))


def _portable(path: Path) -> str:
    return path.name


@pytest.mark.parametrize("request_file", REQUESTS, ids=[p.stem for p in REQUESTS])
def test_plan_workbook_lints_clean_and_verifies_in_gnumeric(request_file, tmp_path):
    catalog = load_catalog()
    req = load_request(request_file, catalog)
    outcome = plan_request(req, catalog)
    if not outcome.scenarios:
        pytest.skip("the request has no plan to write")
    path = plan_path(tmp_path, req)
    write_plan_book(outcome, req, catalog, ROOT / "catalog", path, _portable)
    assert [str(f) for f in lint_xlsx(path)] == []
    if not gnumeric.available():
        pytest.skip("Gnumeric not installed (CI installs it)")
    report = verify(path, ["gnumeric"])
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:20])
