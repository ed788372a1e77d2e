"""workbook.reference.engine_memory and serving_shape: weights per GPU, engine KV rules, validation.

Run ``python -m tests.reference.serving_validation`` (or pytest -s) for the full table.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from tests.reference import serving_validation as sv
from workbook.reference import engine_memory as em
from workbook.reference import serving_shape as ss
from workbook.units import GiB

ENG = sv.ENGINES
KV_POINTS = [p for p in sv.points() if p["name"].startswith("kv-")]
#: points docs/serving.md reports as not matched (strict xfail: they fail today, and a pass is news)
UNMATCHED = {"kv-vllm-qwen3-235b-fp8-tp4", "kv-vllm-qwen3-235b-fp8-tp4-GiB"}


def test_print_kv_table(capsys):
    with capsys.disabled():
        print("\n[KV capacity: published vs ours]")
        for p in KV_POINTS:
            print(f"  {p['name']:<34} {p['published']:>12,.6g} {p['ours']:>12,.6g} {p['error']:+7.1%} "
                  f"(target {p['target']:.0%}; book {p['book'] or float('nan'):,.6g})")


@pytest.mark.parametrize("point", [
    pytest.param(p, id=p["name"], marks=pytest.mark.xfail(strict=True, reason="docs/serving.md: not matched"))
    if p["name"] in UNMATCHED else pytest.param(p, id=p["name"]) for p in KV_POINTS])
def test_kv_points_within_target(point):
    assert abs(point["error"]) <= point["target"], point


# ----------------------------------------------------------------------------- weights per GPU
def test_qwen3_fp8_tp4_weights_match_vllm_log():
    """vLLM PR 21429's debug log of Qwen3-235B-A22B-FP8 at TP4: 'weights memory: 55.13GiB'."""
    w = ss.weights_per_gpu_bytes(sv.QWEN235, weight_precision="fp8", tp=4) / GiB
    assert w == pytest.approx(55.13, rel=0.005)
    g = ss.weight_groups_per_gpu_bytes(sv.QWEN235, weight_precision="fp8", tp=4)
    # embedding and head stay BF16 (2 B/param) in the FP8 checkpoint
    assert g["head"] == pytest.approx(151936 * 4096 / 4 * 2)
    quantised_all = ss.weights_per_gpu_bytes(sv.QWEN235, weight_precision="fp8", tp=4, keep_checkpoint_precision=False)
    assert quantised_all < w * GiB


def test_shape_totals_and_kv_per_token():
    assert sv.LLAMA70.params_total == pytest.approx(70_553_706_496)
    assert sv.DSV3.params_total == pytest.approx(671.03e9, rel=1e-3)
    # GQA: 2 L (g/TP) d_h b; heads replicated when TP > g
    assert ss.kv_bytes_per_token_per_gpu(sv.LLAMA70, tp=4) == 2 * 80 * 2 * 128 * 2
    assert ss.kv_bytes_per_token_per_gpu(sv.QWEN235, tp=8) == 2 * 94 * 1 * 128 * 2
    # MLA latent replicated across TP: L (r_kv + d_rope) b
    assert ss.kv_bytes_per_token_per_gpu(sv.DSV3, tp=8) == 61 * 576 * 2
    assert ss.experts_per_gpu(sv.DSV3, ep=144, redundant_experts=32) == 2.0


def test_distinct_experts():
    assert ss.expected_distinct_experts(n_experts=128, top_k=8, tokens=1) == pytest.approx(8)
    assert ss.expected_distinct_experts(n_experts=128, top_k=8, tokens=0) == 0
    assert ss.expected_distinct_experts(n_experts=128, top_k=8, tokens=10_000) == pytest.approx(128)
    with pytest.raises(ValueError):
        ss.expected_distinct_experts(n_experts=8, top_k=9, tokens=1)


# ----------------------------------------------------------------------------- rules
def test_memory_rules_arithmetic():
    kw = dict(memory_fraction=0.9, device_total_bytes=100.0, weights_bytes=40.0, activation_bytes=5.0,
              non_torch_bytes=2.0, context_bytes=1.0, graph_bytes=3.0)
    assert em.kv_budget_bytes(rule="total_fraction", **kw) == pytest.approx(90 - 40 - 5 - 2)
    assert em.kv_budget_bytes(rule="total_fraction", graph_in_budget=True, **kw) == pytest.approx(90 - 40 - 5 - 2 - 3)
    # SGLang: f * (M - context - non-torch) - W
    assert em.kv_budget_bytes(rule="static_fraction", **kw) == pytest.approx(0.9 * 97 - 40)
    # TensorRT-LLM: f * (M - context - non-torch - W - A)
    assert em.kv_budget_bytes(rule="free_fraction", **kw) == pytest.approx(0.9 * 52)
    assert em.kv_budget_bytes(rule="total_fraction", **{**kw, "weights_bytes": 200.0}) == 0
    with pytest.raises(ValueError):
        em.kv_budget_bytes(rule="guess", **kw)
    with pytest.raises(ValueError):
        em.kv_budget_bytes(rule="total_fraction", **{**kw, "memory_fraction": 0.0})


def test_blocks_and_concurrency():
    assert em.kv_tokens(kv_bytes=16 * 100 * 10.5, kv_bytes_per_token=100, block_tokens=16) == 160
    assert em.concurrent_requests(kv_tokens_total=1000, tokens_per_request=100, block_tokens=16) == 8  # 112 per request
    assert em.concurrent_requests(kv_tokens_total=10_000, tokens_per_request=10, block_tokens=1, max_num_seqs=256) == 256


def test_vllm_profile_is_dominated_by_the_sampler():
    """vLLM's profile samples max_num_seqs rows: 1024 x 151,936 x 38.6 B = 5.59 GiB, the PR 21429 log's
    'torch peak memory increase: 5.62GiB' for Qwen3-235B-A22B-FP8 (the factor comes from other models' logs)."""
    v1 = ENG.profile("vllm-0.10")
    act = em.activation_peak_bytes(sv.QWEN235, engine=v1, tp=4) / GiB
    assert act == pytest.approx(5.62, rel=0.01)
    fwd = em.forward_activation_bytes(sv.QWEN235, tokens=8192, tp=4) / GiB
    assert fwd < 0.2 * act
    assert em.activation_peak_bytes(sv.QWEN235, engine=ENG.profile("sglang-0.4"), tp=4) == pytest.approx(fwd * GiB)


def test_book_capacity_is_the_workbook_figure():
    """The workbook's 359,540 tokens: (80e9 - 235e9 x 1 B / 4 - 2e9) x 0.9 / 48,128 B."""
    assert em.book_kv_tokens(sv.QWEN235, hbm_GB=80, tp=4, weight_precision="fp8", overhead_GB=2,
                             usable_frac=0.9) == pytest.approx(359_540, rel=2e-3)


def test_capacity_ledger_adds_up():
    r = em.kv_capacity(sv.LLAMA70, engine=ENG.profile("vllm-0.6.0"), device_total_GiB=79.22, tp=4,
                       tokens_per_request=500)
    assert r["kv_budget_GiB"] == pytest.approx(0.9 * 79.22 - r["weights_GiB"] - r["activation_GiB"] - r["non_torch_GiB"])
    assert r["kv_tokens"] % 16 == 0 and r["concurrent_requests"] == 256
    none = em.kv_capacity(sv.LLAMA70, engine=ENG.profile("vllm-0.6.0"), device_total_GiB=79.22, tp=1)
    assert none["fits"] == 0 and none["kv_tokens"] == 0


# ----------------------------------------------------------------------------- properties
MODELS = [sv.LLAMA70, sv.QWEN235, sv.DSV3]
PROFILES = [p.id for p in ENG.profiles]


@settings(max_examples=60, deadline=None)
@given(model=st.sampled_from(MODELS), profile=st.sampled_from(PROFILES), tp=st.sampled_from([1, 2, 4, 8]),
       f_hi=st.floats(0.3, 1.0), drop=st.floats(0.0, 0.5), prec=st.sampled_from(["bf16", "fp8", "int4"]))
def test_kv_capacity_never_rises_as_the_memory_fraction_falls(model, profile, tp, f_hi, drop, prec):
    eng = ENG.profile(profile)
    kw = dict(engine=eng, device_total_GiB=139.81, tp=tp, weight_precision=prec)
    hi = em.kv_capacity(model, memory_fraction=f_hi, **kw)["kv_tokens"]
    lo = em.kv_capacity(model, memory_fraction=max(1e-3, f_hi * (1 - drop)), **kw)["kv_tokens"]
    assert lo <= hi


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(MODELS), prec=st.sampled_from(["bf16", "fp8", "int4"]))
def test_more_tp_never_raises_weights_per_gpu(model, prec):
    w = [ss.weights_per_gpu_bytes(model, weight_precision=prec, tp=t) for t in (1, 2, 4, 8, 16)]
    assert all(b <= a for a, b in zip(w, w[1:]))
