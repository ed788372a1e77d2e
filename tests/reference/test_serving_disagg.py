"""workbook.reference.serving_disagg: the closed-form decode batch at a TPOT target against the
bisection (serving_load.max_decode_batch, within 1%), the pool sizing identities, and the DeepSeek
deployment (tests/reference/serving_validation.py points deepseek-decode-node, deepseek-prefill-node)."""

from __future__ import annotations

import math

import pytest

from tests.reference import serving_validation as sv
from workbook.reference import decode_time as dt
from workbook.reference import prefill_time as pt
from workbook.reference import serving_disagg as sd
from workbook.reference import serving_load as sl

DS = sv.ENGINES.profile("deepseek-v3-infer")
V06 = sv.ENGINES.profile("vllm-0.6.0")
DS_KW = dict(tp=1, ep=144, redundant_experts=32, weight_precision="fp8", ep_overlap_frac=1.0, ep_nodes=18)


@pytest.mark.parametrize("target,cap", [(0.02, 147), (0.03, 147), (0.0476, 256), (0.0476, 147), (0.1, 256)])
def test_closed_form_batch_matches_the_bisection_deepseek(target, cap):
    bis = sl.max_decode_batch(sv.DSV3, hw=sv.H800, engine=DS, context_tokens=4989, tpot_target_s=target,
                              batch_cap=cap, **DS_KW)
    cf = sd.decode_batch_at_tpot(sv.DSV3, hw=sv.H800, engine=DS, context_tokens=4989, tpot_target_s=target,
                                 batch_cap=cap, **DS_KW)
    assert cf["batch"] == pytest.approx(bis["batch"], rel=0.01)
    assert cf["kv_bound"] == bis["kv_bound"]


@pytest.mark.parametrize("target", [0.018, 0.02, 0.025, 0.03])
def test_closed_form_batch_matches_the_bisection_llama_tp4(target):
    kw = dict(context_tokens=500, tpot_target_s=target, batch_cap=256, tp=4)
    bis = sl.max_decode_batch(sv.LLAMA70, hw=sv.H100, engine=V06, **kw)
    cf = sd.decode_batch_at_tpot(sv.LLAMA70, hw=sv.H100, engine=V06, **kw)
    assert cf["batch"] == pytest.approx(bis["batch"], rel=0.01, abs=1e-9)


def test_prefill_split_and_rate():
    assert sd.prefill_split(prompt_tokens=1000, cache_hit_frac=0.25) == (750, 250)
    with pytest.raises(ValueError):
        sd.prefill_split(prompt_tokens=1000, cache_hit_frac=1.0)
    r = sd.prefill_pool_rate(sv.DSV3, hw=sv.H800, engine=DS, prompt_tokens=4000, cache_hit_frac=0.5, ep=32,
                             redundant_experts=32, weight_precision="fp8")
    assert r["prompts_per_step"] == math.floor(DS.prefill_chunk_tokens / 2000)
    pf = pt.prefill_time(sv.DSV3, prompt_tokens=2000, batch=r["prompts_per_step"], cached_tokens=2000, hw=sv.H800,
                         engine=DS, ep=32, redundant_experts=32, weight_precision="fp8",
                         chunk_tokens=DS.prefill_chunk_tokens, ep_nodes=4)  # EP32 spans 4 nodes of 8
    assert r["tokens_per_s_per_gpu"] == pytest.approx(r["prompts_per_step"] * 2000 / pf["prefill_s"])
    assert r["input_tokens_per_s_per_gpu"] == pytest.approx(2 * r["tokens_per_s_per_gpu"])


def test_cache_hits_raise_the_input_rate_but_not_the_computed_rate():
    base = dict(hw=sv.H800, engine=DS, prompt_tokens=4000, ep=32, redundant_experts=32, weight_precision="fp8")
    cold = sd.prefill_pool_rate(sv.DSV3, cache_hit_frac=0.0, **base)
    warm = sd.prefill_pool_rate(sv.DSV3, cache_hit_frac=0.5, **base)
    assert warm["input_tokens_per_s_per_gpu"] > cold["input_tokens_per_s_per_gpu"]
    assert warm["tokens_per_s_per_gpu"] <= cold["tokens_per_s_per_gpu"] * 1.05  # attention over the cached prefix


def test_pool_sizing_identities():
    p = sv.deepseek_pools()
    lam, O = sv.DS_RATE_RPS, sv.DS_OUTPUT
    assert p["decode_instances"] == math.ceil(p["decode_concurrency"] / p["decode_requests_per_instance"])
    assert p["decode_concurrency"] == pytest.approx(lam * (O - 1) * p["tpot_s"])
    assert p["decode_requests_per_instance"] == pytest.approx(144 * p["decode_batch_per_rank"])
    assert p["prefill_gpus_per_instance"] == 32 and p["decode_gpus_per_instance"] == 144
    assert 0 < p["prefill_busy_frac"] <= 1
    assert p["prefill_instances"] - 1 < p["prefill_instances"] * p["prefill_busy_frac"] <= p["prefill_instances"]
    assert p["total_gpus"] == p["prefill_gpus"] + p["decode_gpus"]
    assert p["tpot_s"] <= 1 / sv.DS_USER_TOK_PER_S
    d = dt.decode_step(sv.DSV3, batch=p["decode_batch_per_rank"], context_tokens=sl.running_context_tokens(prompt_tokens=sv.DS_PROMPT, output_tokens=O), hw=sv.H800,
                       engine=DS, **DS_KW)
    assert p["decode_tokens_per_s_per_node"] == pytest.approx(8 * d["tokens_per_s"])
    assert p["output_tokens_per_s"] == pytest.approx(lam * O)


def test_cost_per_1M_tokens_and_more_load_needs_more_gpus():
    kw = dict(hw=sv.H800, engine=DS, prompt_tokens=sv.DS_PROMPT, output_tokens=sv.DS_OUTPUT, decode_batch_cap=146,
              tpot_target_s=0.0476, cache_hit_frac=0.563, tp=1, ep=144, prefill_ep=32, redundant_experts=32,
              weight_precision="fp8", ep_overlap_frac=1.0, gpu_hour_usd=2.0)
    a = sd.size_pools(sv.DSV3, arrival_rate_per_s=100.0, **kw)
    b = sd.size_pools(sv.DSV3, arrival_rate_per_s=1000.0, **kw)
    assert b["total_gpus"] >= a["total_gpus"]
    assert a["cost_usd_per_1M_output_tokens"] == pytest.approx(a["total_gpus"] * 2.0 / (100.0 * sv.DS_OUTPUT * 3600 / 1e6))


def test_no_target_runs_at_the_kv_cap_and_an_impossible_target_gives_zero():
    kw = dict(hw=sv.H800, engine=DS, context_tokens=4989, batch_cap=146, **DS_KW)
    assert sd.decode_batch_at_tpot(sv.DSV3, tpot_target_s=10.0, **kw) == {"batch": 146.0, "kv_bound": 1.0}
    assert sd.decode_batch_at_tpot(sv.DSV3, tpot_target_s=1e-4, **kw)["batch"] == 0.0


@pytest.mark.parametrize("target", [0.02, 0.025, 0.03, 0.0476])
def test_whole_batch_meets_the_target_and_one_more_does_not(target):
    kw = dict(hw=sv.H800, engine=DS, context_tokens=4989, **DS_KW)
    cf = sd.decode_batch_at_tpot(sv.DSV3, tpot_target_s=target, batch_cap=256, **kw)["batch"]
    b = sd.whole_batch(sv.DSV3, batch=cf, tpot_target_s=target, **kw)
    assert b == int(b) and b >= 1
    assert dt.decode_step(sv.DSV3, batch=b, **kw)["tpot_s"] <= target
    if b < 256:
        assert dt.decode_step(sv.DSV3, batch=b + 1, **kw)["tpot_s"] > target
