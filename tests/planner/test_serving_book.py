"""The plan workbook of the serving request (`workbook plan catalog/requests/serve-70b-chat.yaml`): xlsx, PDF
and Markdown written, every workbook rule and `workbook verify` with both engines pass, the serving columns'
checks pass, and after a LibreOffice recalculation the Recommendation's serving plan reads the search's figures;
an arrival rate x2 in the plan column breaks its TPOT check live."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.export.helpers import words_past_right_margin
from tests.planner.helpers import assert_book_passes_rules_and_verifies, plan_with_cli, recommendation_recalculated
from workbook.engines.libreoffice import find_soffice

pytestmark = pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")
REQUEST = "catalog/requests/serve-70b-chat.yaml"
ERRORS = ("#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "Err:")


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    return plan_with_cli(REQUEST, tmp_path_factory.mktemp("serve"), "serve-70b-chat")


def test_writes_xlsx_pdf_and_markdown_with_the_serving_plan(planned):
    xlsx, data = planned
    rec = data["serving"]["recommended"]
    assert xlsx.is_file() and Path(data["pdf"]).is_file()
    md = Path(data["markdown"]).read_text()
    assert f"**{rec['num_gpus']} x H800**" in md and f"${rec['usd_per_month']:,.0f}" in md
    assert "## Recommendation" not in md  # no training asked
    text = subprocess.run(["pdftotext", "-layout", data["pdf"], "-"], capture_output=True, text=True, check=True).stdout
    assert "The serving plan" in text and "40,880" in text and not [e for e in ERRORS if e in text]
    assert words_past_right_margin(Path(data["pdf"])) == []  # the Recommendation's subtitle wraps, not clipped
    assert "column's Inference, KV Cache and Cost rows; the best plan of every other GPU\nbeside it." in text


def test_no_tco_without_a_training_plan(planned):
    """The TCO sheet prices the training GPUs; a serving-only plan gives no ``tco`` and no TCO section."""
    xlsx, data = planned
    assert data["tco"] is None
    assert "Owned cluster (buy)" not in Path(data["markdown"]).read_text()


def test_serving_book_passes_every_rule_and_verifies(planned):
    assert_book_passes_rules_and_verifies(planned[0])


def test_recommendation_reads_the_plan_live_and_a_doubled_load_fails_tpot(planned, tmp_path):
    xlsx, data = planned
    rec = data["serving"]["recommended"]
    v, d = recommendation_recalculated(xlsx, tmp_path, "inference.arrival_rate_rps", 2 * rec["load_rps"])

    assert v("GPUs (TP x EP x replicas)") == 28 and v("Replicas (serving groups)") == 7
    assert v("Load carried, all replicas") == pytest.approx(20)
    assert v("TTFT under the load") == pytest.approx(rec["ttft_ms"], rel=1e-9)
    assert v("TPOT under the load") == pytest.approx(rec["tpot_ms"], rel=1e-9)
    assert v("Serving cost per 1M output tokens") == pytest.approx(rec["usd_per_1M_tokens"], rel=1e-9)
    from workbook.writer.planbook_serving import MONTH_LABEL

    assert v(MONTH_LABEL) == pytest.approx(rec["usd_per_month"], rel=1e-12)
    assert v("Serving checks failed (load, TTFT, TPOT, memory)") == 0
    # twice the load on the same 7 groups: TPOT (or the load) fails, live
    assert d("Serving checks failed (load, TTFT, TPOT, memory)") >= 1
    assert d("Load per group") == pytest.approx(2 * rec["group_rate_rps"], rel=1e-12)
