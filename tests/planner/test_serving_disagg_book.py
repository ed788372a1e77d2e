"""The plan workbook of the disaggregated serving request (`workbook plan
catalog/requests/serve-deepseek-v3-h800.yaml`): the recommended column has disaggregated serving on
with the search's prefill EP; every workbook rule and `workbook verify` pass; after a LibreOffice
recalculation the Recommendation's pools, GPUs, TTFT, TPOT and costs read the search's figures; twice
the arrival rate in the column sizes larger pools live."""

from __future__ import annotations

import pytest

from tests.planner.helpers import assert_book_passes_rules_and_verifies, plan_with_cli, recommendation_recalculated
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]
REQUEST = "catalog/requests/serve-deepseek-v3-h800.yaml"


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    return plan_with_cli(REQUEST, tmp_path_factory.mktemp("serve-disagg"), "serve-deepseek-v3-h800")


def test_the_book_passes_every_rule_and_verifies(planned):
    xlsx, data = planned
    assert data["serving"]["recommended"]["kind"] == "disaggregated"
    assert_book_passes_rules_and_verifies(xlsx)


def test_recommendation_reads_the_pools_live_and_twice_the_load_takes_larger_pools(planned, tmp_path):
    xlsx, data = planned
    rec = data["serving"]["recommended"]
    v, d = recommendation_recalculated(xlsx, tmp_path, "inference.arrival_rate_rps", 2 * rec["load_rps"])

    assert v("Disaggregated serving (separate prefill and decode pools)") == "on"
    assert (v("EP per prefill instance"), v("EP per decode instance")) == (rec["prefill_ep"], rec["ep"])
    assert v("Prefill instances") == rec["prefill_instances"] and v("Decode instances") == rec["decode_instances"]
    assert v("Prefill pool GPUs") == rec["prefill_gpus"] and v("Decode pool GPUs") == rec["decode_gpus"]
    assert v("GPUs (both pools)") == rec["num_gpus"] == 1776
    assert v("Decode batch per attention-DP rank at the TPOT target") == rec["decode_batch_per_rank"]
    assert v("TTFT (prefill pool)") == pytest.approx(rec["ttft_ms"], rel=1e-9)
    assert (v("Prefill step (the prompts of one chunk)") + v("Prefill queue: mean wait before a prompt's step")) * 1e3 \
        == pytest.approx(rec["ttft_ms"], rel=1e-9)
    assert v("TPOT (decode pool)") == pytest.approx(rec["tpot_ms"], rel=1e-9)
    assert v("Output tokens/s served") == pytest.approx(rec["tokens_per_s"], rel=1e-9)
    assert v("Serving cost per 1M output tokens") == pytest.approx(rec["usd_per_1M_tokens"], rel=1e-9)
    from workbook.writer.planbook_serving import MONTH_LABEL

    assert v(MONTH_LABEL) == pytest.approx(rec["usd_per_month"], rel=1e-12)
    assert v("Serving checks failed (load, TTFT, TPOT, memory)") == 0
    # twice the load: both pools grow with it, the decode pool keeps its batch and TPOT, cost per token stays close
    assert d("Prefill instances") == pytest.approx(2 * rec["prefill_instances"], abs=1)
    assert d("Decode instances") == pytest.approx(2 * rec["decode_instances"], abs=1)
    assert d("GPUs (both pools)") > 1.9 * rec["num_gpus"]
    assert d("TPOT (decode pool)") == pytest.approx(rec["tpot_ms"], rel=1e-9)
    assert d("Serving checks failed (load, TTFT, TPOT, memory)") == 0
    # the owned TCO owns both pools: it follows the load, live
    owned, tco = "GPUs owned (the serving GPUs in use)", "TCO over the horizon (capex + opex x years)"
    assert v(owned) == rec["num_gpus"] and d(owned) == d("GPUs (both pools)")
    assert v(tco) == pytest.approx(data["tco"]["tco_total_usd"], rel=1e-12) and d(tco) > 1.9 * v(tco)


def test_a_tighter_ttft_target_takes_more_prefill_instances_live(planned, tmp_path):
    # 1,500 ms against a TTFT above it: the prefill pool's busy share must fall, so the prefill pool grows; the
    # decode pool does not see the TTFT target
    xlsx, data = planned
    rec = data["serving"]["recommended"]
    v, d = recommendation_recalculated(xlsx, tmp_path, "inference.ttft_target_ms", 1500)
    assert v("Prefill instances") == rec["prefill_instances"] == 48
    assert d("Prefill instances") > v("Prefill instances")
    assert d("TTFT (prefill pool)") <= 1500 < v("TTFT (prefill pool)")
    assert d("Decode instances") == v("Decode instances")
    assert d("Serving checks failed (load, TTFT, TPOT, memory)") == 0
