"""calc.serving_disagg and the attention-DP load rows: the disaggregated rows of a scenario equal
workbook.reference.serving_disagg.size_pools, the in-use rows and Cost follow them when the layout is
on, and with EP > 1 the load rows are per attention-DP rank (docs/serving.md)."""

from __future__ import annotations

import pytest

from tests.reference import serving_validation as sv
from workbook.calc import compute
from workbook.catalog import load_catalog
from workbook.reference import serving_load as sl
from workbook.scenario.model import Scenario

CAT = load_catalog()

DS_INF = dict(serving_model="engine", engine="deepseek-v3-infer", disaggregated="on", tp=1, ep=144, prefill_ep=32,
              redundant_experts=32, ep_overlap_frac=1.0, weight_precision="fp8", cache_hit_frac=0.563,
              prompt_tokens=sv.DS_PROMPT, output_tokens=sv.DS_OUTPUT, arrival_rate_rps=sv.DS_RATE_RPS, tpot_target_ms=1e3 / 21)


def _sc(model: str = "deepseek-v3", gpu: str = "h800", **inference) -> Scenario:
    return Scenario(name="t", model=model, gpu=gpu, purpose="serving", inference=inference)


def test_deepseek_rows_are_the_reference_table():
    r = compute(_sc(**DS_INF), CAT)
    ref = sv.deepseek_pools()
    for row, key in (("srv_dis_pf_input_tokens_per_s_per_node_in_service", "prefill_input_tokens_per_s_per_node_in_service"),
                     ("srv_dis_dec_tokens_per_s_per_node_in_service", "decode_tokens_per_s_per_node_in_service")):
        assert r[row] == pytest.approx(ref[key], rel=1e-12), row
    assert r["srv_dis_dec_tokens_per_s_per_node"] == pytest.approx(ref["decode_tokens_per_s_per_node"], rel=1e-12)
    assert r["srv_dis_pf_input_tokens_per_s_per_node"] == pytest.approx(ref["prefill_input_tokens_per_s_per_node"],
                                                                        rel=1e-12)
    assert r["srv_dis_gpus"] == ref["total_gpus"]
    assert r["srv_gpus_in_use"] == ref["total_gpus"]
    assert r["srv_tokens_per_s_total_in_use"] == pytest.approx(sv.DS_RATE_RPS * sv.DS_OUTPUT)
    assert r["srv_tpot_ms_in_use"] == pytest.approx(ref["tpot_s"] * 1e3)
    assert r["srv_engine_ttft_ms"] == pytest.approx(ref["ttft_s"] * 1e3)
    assert r["srv_load_unstable_flag"] == 0


def test_off_keeps_the_colocated_group_and_blank_prefill_ep_is_the_serving_ep():
    inf = dict(DS_INF, disaggregated="off", prefill_ep=None)
    r = compute(_sc(**inf), CAT)
    assert r["srv_dis_flag"] == 0 and r["srv_num_gpus"] == 144
    assert r["srv_dis_pf_ep"] == 144 and r["srv_dis_pf_routed_slots"] == 2


def test_cost_follows_the_pools():
    sc = _sc(**DS_INF)
    on = compute(sc, CAT)
    off = compute(_sc(**dict(DS_INF, disaggregated="off")), CAT)
    assert on["srv_gpus_in_use"] != off["srv_gpus_in_use"]
    hourly = on["gpu_hour_usd"] * on["srv_gpus_in_use"]
    tokens_per_hour_M = on["srv_tokens_per_s_total_in_use"] * sc.cost.utilisation_frac * 3600 / 1e6
    assert on["infer_usd_per_1M_tokens"] == pytest.approx(hourly / tokens_per_hour_M, rel=1e-9)


def test_blank_rate_is_one_decode_instance_and_no_target_is_the_kv_cap():
    r = compute(_sc(**dict(DS_INF, arrival_rate_rps=None, tpot_target_ms=None)), CAT)
    assert r["srv_dis_batch"] == r["srv_load_batch_cap_used"]
    assert r["srv_dis_dec_instances"] == 1
    assert r["srv_dis_rate_rps"] == pytest.approx(
        r["srv_dis_dec_requests_per_instance"] / ((sv.DS_OUTPUT - 1) * r["srv_disd_step_s"]))


def test_cache_hits_shrink_the_prefill_pool():
    cold = compute(_sc(**dict(DS_INF, cache_hit_frac=0.0)), CAT)
    warm = compute(_sc(**DS_INF), CAT)
    assert warm["srv_dis_pf_gpus"] < cold["srv_dis_pf_gpus"]
    assert warm["srv_dis_dec_gpus"] == cold["srv_dis_dec_gpus"]


def test_a_tighter_tpot_target_needs_more_decode_gpus():
    loose = compute(_sc(**DS_INF), CAT)
    tight = compute(_sc(**dict(DS_INF, tpot_target_ms=25.0)), CAT)
    assert tight["srv_dis_batch"] < loose["srv_dis_batch"]
    assert tight["srv_dis_dec_gpus"] >= loose["srv_dis_dec_gpus"]
    assert tight["srv_dis_tpot_ms"] <= 25.0


def test_load_rows_with_ep_are_per_attention_dp_rank():
    inf = dict(serving_model="engine", engine="deepseek-v3-infer", tp=1, ep=32, redundant_experts=32,
               ep_overlap_frac=1.0, weight_precision="fp8", prompt_tokens=2000, output_tokens=400,
               arrival_rate_rps=16.0)
    r = compute(_sc(**inf), CAT)
    assert r["srv_attention_dp"] == 32
    assert r["srv_load_rate_rps"] == pytest.approx(0.5)
    st = sl.steady_state(sv.DSV3, hw=sv.H800, engine=sv.ENGINES.profile("deepseek-v3-infer"), prompt_tokens=2000,
                         output_tokens=400, arrival_rate_per_s=16.0, tp=1, ep=32, redundant_experts=32,
                         weight_precision="fp8", ep_overlap_frac=1.0, ep_nodes=4,
                         max_num_seqs=r["srv_load_batch_cap_used"])
    assert r["srv_load_batch"] == pytest.approx(st["batch"], rel=1e-12)
    assert r["srv_load_tokens_per_s"] == pytest.approx(16.0 * 400)
    assert r["srv_load_tokens_per_s_per_gpu"] == pytest.approx(16.0 * 400 / 32)


def test_mla_prefill_rows_are_non_absorbed_and_re_expand_the_cache():
    """The prefill pool's rows equal prefill_time: attention at d_qk + d_v = 320 per head (DeepSeek-V3,
    by hand 2 x 128 x 320 x 61 per context token, against decode's 2 x 128 x 1,088 x 61) and kv_b_proj
    over the 9 x 2,201 cached tokens of the step (16,384 // 1,708 new tokens = 9 prompts) (2 x 61 x 128 x 512 x 256 FLOP per token)."""
    from workbook.reference import prefill_time as pt

    r = compute(_sc(**DS_INF), CAT)
    assert r["srv_prefill_attn_FLOP_per_ctx_token"] == pytest.approx(2 * 128 * 320 * 61)
    assert r["srv_attn_FLOP_per_ctx_token"] == pytest.approx(2 * 128 * 1088 * 61)
    assert r["srv_kv_up_FLOP_per_token"] == pytest.approx(2 * 61 * 128 * 512 * 256)
    new, cached = sv.DS_PROMPT * (1 - 0.563), sv.DS_PROMPT * 0.563
    ref = pt.prefill_time(sv.DSV3, prompt_tokens=new, cached_tokens=cached, batch=9, hw=sv.H800,
                          engine=sv.ENGINES.profile("deepseek-v3-infer"), tp=1, ep=32, redundant_experts=32,
                          weight_precision="fp8", ep_nodes=4, ep_overlap_frac=1.0)
    assert r["srv_dispf_batch"] == 9 and r["srv_dispf_prompt_chunks"] == 1
    assert r["srv_dispf_up_FLOP"] == pytest.approx(ref["kv_up_FLOPs"], rel=1e-12)
    assert r["srv_dispf_up_FLOP"] == pytest.approx(9 * cached * 2 * 61 * 128 * 512 * 256, rel=1e-12)
    assert r["srv_dispf_attn_s"] == pytest.approx(ref["attention_s"], rel=1e-12)
    assert r["srv_dispf_prefill_s"] == pytest.approx(ref["prefill_s"], rel=1e-12)
    # GQA re-expands nothing
    g = compute(_sc(model="llama-3-70b", gpu="h100", serving_model="engine", engine="vllm-0.10", tp=4), CAT)
    assert g["srv_kv_up_FLOP_per_token"] == 0 and g["srv_pf1_up_FLOP"] == 0
