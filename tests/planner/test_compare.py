"""The shipped 17.9.4 request compares every catalogue GPU priced for its basis and says why each lost
(workbook/planner/compare.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.catalog import load_catalog
from workbook.planner.compare import report_lines
from workbook.planner.outputs import markdown
from workbook.planner.plan import plan_request
from workbook.planner.request import load_request

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
AMD, BLACKWELL = {"mi300x", "mi325x"}, {"b200", "gb200"}


@pytest.fixture(scope="module")
def data() -> dict:
    req = load_request(ROOT / "catalog" / "requests" / "17.9.4-70b-h800.yaml", CATALOG)
    assert req.compare_priced_gpus and req.candidate_gpus == ["h800"]
    return plan_request(req, CATALOG).data


@pytest.fixture(scope="module")
def compared(data) -> list[dict]:
    return data["training"]["compared"]


def test_six_priced_gpus_with_an_amd_and_a_blackwell_plan(compared) -> None:
    planned = {r["gpu"] for r in compared if r["plan"]}
    assert len({r["gpu"] for r in compared if "rests_on" in r}) >= 6
    assert planned & AMD and planned & BLACKWELL and "h800" in planned


def test_every_gpu_says_why_and_every_price_is_sourced(compared) -> None:
    assert {r["gpu"] for r in compared} == set(CATALOG.gpus)
    rec = [r for r in compared if r["why"] == "recommended"]
    assert len(rec) == 1 and rec[0]["gpu"] == "h800"
    for r in compared:
        assert r["why"]
        if "rests_on" in r:
            gpu = CATALOG.gpu(r["gpu"])
            assert gpu.field_sources.get("price_reserved_usd_per_gpu_hour") or "spec" in gpu.source, r["gpu"]
    dear = [r for r in compared if r["plan"] and r["why"].startswith("dearer")]
    cheap = [r for r in compared if r["plan"] and r["why"].startswith("cheaper")]
    assert all(r["plan"]["train_cost_usd"] > rec[0]["plan"]["train_cost_usd"] for r in dear)
    assert all(r["plan"]["train_cost_usd"] < rec[0]["plan"]["train_cost_usd"] for r in cheap)


def test_assumed_factors_are_counted_and_printed(compared) -> None:
    mi = next(r for r in compared if r["gpu"] == "mi300x")
    assert mi["rests_on"]["count"] >= 1 and any("efficiency.yaml:mi300x" in f for f in mi["rests_on"]["fields"])
    lines = report_lines(compared, "reserved")
    assert lines[0].startswith("Compared with every catalogue GPU") and len(lines) == len(compared) + 1
    assert any("mi300x" in ln and "rests on" in ln for ln in lines)


def test_the_markdown_lists_every_gpu(data, compared) -> None:
    md = markdown(data, "Draft", "2026-12-03")
    part = md[md.index("## Every catalogue GPU (reserved prices)"):]
    for r in compared:
        assert f"| {r['gpu']} |" in part
