"""The plan workbook of a serving request sized by a static batch (`workbook plan
catalog/requests/eval-70b-static-batch.yaml`): the Recommendation sheet shows the static rows (batch per group, the
largest within the targets, the wall time) read live from the plan's column, which runs the static load; after a
LibreOffice recalculation they are the search's figures, and a batch past the largest breaks a check live."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.planner.helpers import planned_once, recommendation_recalculated
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]
REQUEST = "catalog/requests/eval-70b-static-batch.yaml"


@pytest.fixture(scope="module")
def planned():
    return planned_once(REQUEST, "eval-70b-static-batch")


def test_markdown_names_the_static_batch(planned):
    _, data = planned
    rec, load = data["serving"]["recommended"], data["serving"]["load"]
    md = Path(data["markdown"]).read_text()
    assert load["static_batch"] == 512 and "a static batch of 512 requests run together" in md
    assert f"{rec['group_batch']:.0f} of {rec['max_group_batch']:.0f} together" in md
    assert rec["replicas"] * rec["group_batch"] >= 512 > (rec["replicas"] - 1) * rec["max_group_batch"]


def test_recommendation_reads_the_static_rows_live_and_a_batch_past_the_largest_fails(planned, tmp_path):
    xlsx, data = planned
    rec = data["serving"]["recommended"]
    bigger = rec["max_group_batch"] + 1
    v, d = recommendation_recalculated(xlsx, tmp_path, "inference.batch", bigger)
    assert v("Static batch per group (requests run together)") == rec["group_batch"]
    assert v("Largest static batch per group within the targets") == rec["max_group_batch"]
    assert v("Wall time of a group's batch (prefill, then decode)") == pytest.approx(rec["static_wall_s"], rel=1e-9)
    assert v("TTFT under the load") == pytest.approx(rec["ttft_ms"], rel=1e-9)
    assert v("TPOT under the load") == pytest.approx(rec["tpot_ms"], rel=1e-9)
    assert v("Output tokens/s served") == pytest.approx(rec["tokens_per_s"], rel=1e-9)
    assert v("Serving checks failed (load, TTFT, TPOT, memory)") == 0
    # one request more than the largest static batch per group: a target (or the KV pool) fails, live
    assert d("Static batch per group (requests run together)") == bigger
    assert d("Wall time of a group's batch (prefill, then decode)") > v("Wall time of a group's batch (prefill, then decode)")
    assert d("Serving checks failed (load, TTFT, TPOT, memory)") >= 1
