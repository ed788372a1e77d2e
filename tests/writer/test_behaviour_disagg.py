"""Behaviour tests of the disaggregated-serving inputs (issue 8 item 5): switch scenario 5 of the default
workbook (llama-3-70b-serve-h800-tp4) to the engine model with disaggregated pools, change the prefix
cache hits and the prefill EP, blank the layout; recalculate with LibreOffice; check what moves.

Expectations come from workbook.reference.serving_disagg with catalogue values, or from equalities and
orderings between recalculated cells; never from cached values."""

from __future__ import annotations

import math

import pytest

from tests.writer.edits import Layout, Recalc, recalc_edited
from workbook.catalog import load_catalog
from workbook.engines.libreoffice import find_soffice
from workbook.reference import decode_time as dt
from workbook.reference import engine_memory as em
from workbook.reference import serving_disagg as sd
from workbook.reference import serving_load as sl
from workbook.reference.serving_shape import model_shape

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

SC = 5  # llama-3-70b-serve-h800-tp4: TP 4, 4,096 prompt and 512 output tokens, $2.50/GPU-h
CAT = load_catalog()
RATE, TPOT_MS = 4.0, 30.0


def _on(b, *more):
    b.plan("inference.serving_model", SC, "engine")
    b.plan("inference.disaggregated", SC, "on")
    b.plan("inference.arrival_rate_rps", SC, RATE)
    b.plan("inference.tpot_target_ms", SC, TPOT_MS)
    for key, value in more:
        b.plan(key, SC, value)


EDITS = {
    "colocated": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                            b.plan("inference.arrival_rate_rps", SC, RATE)),
    "disagg": lambda b: _on(b),
    "disagg_cache": lambda b: _on(b, ("inference.cache_hit_frac", 0.5)),
    "disagg_prefill_ep": lambda b: _on(b, ("inference.prefill_ep", 2)),
    "disagg_blank": lambda b: _on(b, ("inference.disaggregated", None)),
}


@pytest.fixture(scope="module")
def layout(built):
    return Layout(built[0])


@pytest.fixture(scope="module")
def rc(built, layout, tmp_path_factory) -> dict[str, Recalc]:
    folder = tmp_path_factory.mktemp("behaviour_disagg")
    return recalc_edited(built[0], folder, {name: [fn] for name, fn in EDITS.items()}, layout)


def _reference(**kw) -> dict:
    shape, gpu = model_shape(CAT.model("llama-3-70b")), CAT.gpu("h800")
    eng = CAT.engines.profile("vllm-0.10")
    hw = dt.serving_hardware(gpu=gpu, efficiency=CAT.efficiency["h800"], device=CAT.engines.device("h800"))
    kv = em.kv_capacity(shape, engine=eng, device_total_GiB=hw["device_total_GiB"], tp=4)["kv_tokens"]
    cap = max(1.0, sl.batch_capacity(engine=eng, kv_tokens=kv, prompt_tokens=4096, output_tokens=512))
    return sd.size_pools(shape, hw=hw, engine=eng, arrival_rate_per_s=RATE, prompt_tokens=4096, output_tokens=512,
                         decode_batch_cap=cap, tpot_target_s=TPOT_MS / 1e3, tp=4, **kw)


def test_disaggregated_pools_replace_the_group_in_use_and_in_the_cost(rc):
    r, col = rc["disagg"], rc["colocated"]
    ref = _reference()
    assert r.get("Inference", "srv_dis_gpus", SC) == ref["total_gpus"]
    assert r.get("Inference", "srv_gpus_in_use", SC) == ref["total_gpus"]
    assert r.get("Inference", "srv_dis_gpus", SC) == (r.get("Inference", "srv_dis_pf_gpus", SC)
                                                      + r.get("Inference", "srv_dis_dec_gpus", SC))
    assert math.isclose(r.get("Inference", "srv_tpot_ms_in_use", SC), ref["tpot_s"] * 1e3, rel_tol=1e-9)
    assert r.get("Inference", "srv_tpot_ms_in_use", SC) <= TPOT_MS
    assert math.isclose(r.get("Inference", "srv_tokens_per_s_total_in_use", SC), RATE * 512, rel_tol=1e-12)
    usd = r.get("Cost", "infer_hourly_cost_usd", SC) / (RATE * 512 * 3600 / 1e6)  # utilisation 1
    assert math.isclose(r.get("Cost", "infer_usd_per_1M_tokens", SC), usd, rel_tol=1e-9)
    assert r.get("Cost", "infer_usd_per_1M_tokens", SC) != col.get("Cost", "infer_usd_per_1M_tokens", SC)
    assert col.get("Inference", "srv_gpus_in_use", SC) == 4


def test_cache_hits_shrink_the_prefill_work(rc):
    base, warm = rc["disagg"], rc["disagg_cache"]
    ref = _reference(cache_hit_frac=0.5)
    assert math.isclose(warm.get("Inference", "srv_dis_pf_input_tokens_per_s_per_node", SC),
                        ref["prefill_input_tokens_per_s_per_node"], rel_tol=1e-9)
    assert warm.get("Inference", "srv_dis_pf_input_tokens_per_s_per_node", SC) > base.get(
        "Inference", "srv_dis_pf_input_tokens_per_s_per_node", SC)
    assert warm.get("Inference", "srv_dis_pf_gpus", SC) <= base.get("Inference", "srv_dis_pf_gpus", SC)
    assert warm.get("Inference", "srv_dis_dec_gpus", SC) == base.get("Inference", "srv_dis_dec_gpus", SC)


def test_prefill_ep_sizes_the_prefill_instance(rc):
    r = rc["disagg_prefill_ep"]
    ref = _reference(prefill_ep=2)
    assert r.get("Inference", "srv_dis_pf_gpus_per_instance", SC) == 8
    assert r.get("Inference", "srv_dis_pf_gpus", SC) == ref["prefill_gpus"]
    assert r.get("Inference", "srv_dis_dec_gpus_per_instance", SC) == 4


def test_blank_layout_is_an_input_error(rc, layout):
    r = rc["disagg_blank"]
    cell = layout.cell("Plan", "inference.disaggregated", SC)
    assert r.get("Checks", "scenario_status", SC) == f"INPUT ERROR: Plan!{cell} Disaggregated serving"
    assert r.errors("Cover", "Summary", "Checks") == {}


def test_per_node_figures_in_service_count_the_pools_idle_time(rc):
    """DeepSeek's per-node figures divide the day's tokens by the nodes in service: rate x tokens / pool
    nodes, at most the busy rate of a node (the prefill pool is sized above its work)."""
    r = rc["disagg"]
    ref = _reference()
    for row, key, busy in (("srv_dis_pf_input_tokens_per_s_per_node_in_service",
                            "prefill_input_tokens_per_s_per_node_in_service", "srv_dis_pf_input_tokens_per_s_per_node"),
                           ("srv_dis_dec_tokens_per_s_per_node_in_service", "decode_tokens_per_s_per_node_in_service",
                            "srv_dis_dec_tokens_per_s_per_node")):
        assert math.isclose(r.get("Inference", row, SC), ref[key], rel_tol=1e-9), row
        assert r.get("Inference", row, SC) <= r.get("Inference", busy, SC) * (1 + 1e-9), row
    nodes = r.get("Inference", "srv_dis_pf_gpus", SC) / 8
    assert math.isclose(r.get("Inference", "srv_dis_pf_input_tokens_per_s_per_node_in_service", SC),
                        RATE * 4096 / nodes, rel_tol=1e-12)
