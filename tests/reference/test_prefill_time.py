"""workbook.reference.prefill_time: causal attention, chunking, TP, TTFT and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from tests.reference import serving_validation as sv
from workbook.reference import prefill_time as pt

ENG = sv.ENGINES


def _pf(shape=sv.LLAMA70, profile="vllm-0.6.0", hw=sv.H100, **kw):
    base = dict(prompt_tokens=2048, tp=4)
    base.update(kw)
    return pt.prefill_time(shape, hw=hw, engine=ENG.profile(profile), **base)


def test_causal_attention_flops():
    """2 h/TP (d_qk + d_v) L (S s0 + S^2/2): 70B, S = 4096, TP4 = 2 x 16 x 256 x 80 x 4096^2/2."""
    f = pt.causal_attention_FLOPs(sv.LLAMA70, prompt_tokens=4096, tp=4)
    assert f == pytest.approx(2 * 16 * 256 * 80 * 4096**2 / 2)
    # a chunk attends to its prefix: the pieces add up to the whole
    whole = pt.causal_attention_FLOPs(sv.LLAMA70, prompt_tokens=4096)
    parts = sum(pt.causal_attention_FLOPs(sv.LLAMA70, prompt_tokens=1024, cached_tokens=1024 * i) for i in range(4))
    assert parts == pytest.approx(whole)


def test_short_prompts_hit_the_weight_floor_long_ones_are_compute_bound():
    short = _pf(prompt_tokens=32)
    long = _pf(prompt_tokens=4096)
    assert short["compute_bound"] == 0 and short["linear_s"] == pytest.approx(short["weight_read_s"])
    assert long["compute_bound"] == 1
    # 70B at TP4, 4096 tokens: 2 x 17.3 GFLOP x 4096 / (989.5 TFLOPS x 0.665) = 0.21 s of linear work
    assert long["linear_compute_s"] == pytest.approx(2 * 17.35e9 * 4096 / (989.5e12 * 0.665), rel=0.02)


def test_chunking_rereads_weights_and_keeps_attention():
    one = _pf(prompt_tokens=8192, chunk_tokens=8192)
    four = _pf(prompt_tokens=8192, chunk_tokens=2048)
    assert four["chunks"] == 4 and one["chunks"] == 1
    assert four["attention_s"] == pytest.approx(one["attention_s"])
    assert four["weight_read_s"] == pytest.approx(4 * one["weight_read_s"])
    assert four["prefill_s"] >= one["prefill_s"] * (1 - 1e-9)


def test_tp_shortens_long_prefills_and_book_is_faster():
    t1 = _pf(prompt_tokens=4096, tp=8, shape=sv.LLAMA70)["prefill_s"]
    t4 = _pf(prompt_tokens=4096, tp=4, shape=sv.LLAMA70)["prefill_s"]
    assert t1 < t4
    book = pt.book_prefill_s(sv.LLAMA70, prompt_tokens=4096, hw=sv.H100, tp=4)
    assert book < t4  # the book has no attention, all-reduce or launch costs


def test_eager_prefill_has_a_cpu_floor():
    r = _pf(prompt_tokens=1)
    assert r["cpu_launch_s"] == pytest.approx(80 * 12 * 10e-6)
    assert r["prefill_s"] >= r["cpu_launch_s"]


def test_marginal_cost_of_a_mixed_prompt_token():
    m = pt.marginal_prefill_s_per_token(sv.LLAMA70, prompt_tokens=2048, hw=sv.H100, engine=ENG.profile("vllm-0.10"), tp=4)
    full = _pf(prompt_tokens=2048, profile="vllm-0.10")
    assert m < full["prefill_s"] / 2048  # no weight floor, no launches
    assert pt.ttft_s(wait_s=0.01, prefill_s=full["prefill_s"]) == pytest.approx(0.01 + full["prefill_s"])


def test_moe_prefill_reads_every_expert():
    r = _pf(shape=sv.QWEN235, weight_precision="fp8", prompt_tokens=4096)
    g_all = pt.prefill_weight_read_bytes(sv.QWEN235, tokens=1e6, tp=4, weight_precision="fp8")
    assert pt.prefill_weight_read_bytes(sv.QWEN235, tokens=4096, tp=4, weight_precision="fp8") == pytest.approx(g_all, rel=1e-6)
    assert r["prefill_s"] > 0


def test_bad_inputs():
    with pytest.raises(ValueError):
        _pf(prompt_tokens=0)
    with pytest.raises(ValueError):
        _pf(cached_tokens=-5)
    with pytest.raises(ValueError):
        _pf(chunk_tokens=0)


@settings(max_examples=80, deadline=None)
@given(shape=st.sampled_from([sv.LLAMA70, sv.QWEN235, sv.DSV3]), profile=st.sampled_from(["vllm-0.6.0", "vllm-0.10"]),
       s=st.floats(1, 32768), ds=st.floats(0, 32768), batch=st.integers(1, 16))
def test_prefill_never_shrinks_with_longer_prompts(shape, profile, s, ds, batch):
    kw = dict(tp=8, weight_precision="fp8")
    a = _pf(shape=shape, profile=profile, prompt_tokens=s, batch=batch, **kw)["prefill_s"]
    b = _pf(shape=shape, profile=profile, prompt_tokens=s + ds, batch=batch, **kw)["prefill_s"]
    assert b >= a * (1 - 1e-9)


def test_long_prompt_ttft_point_is_within_its_target():
    """NVIDIA NIM 1.8.0 (TensorRT-LLM), Llama-3.3-70B FP8 on 2 x H100 TP2, one 5,000-token prompt:
    406.77 ms published; a single-request latency, so the batch-1 target of 20% (docs/serving.md)."""
    from tests.reference import serving_validation as sv

    p = {q["name"]: q for q in sv.points()}["ttft-llama70-fp8-tp2-5k-nim"]
    assert p["matched"] and abs(p["error"]) <= 0.20, p


def test_mla_prefill_attention_is_non_absorbed():
    """DeepSeek-V3 (config: 128 heads, 61 layers, qk_nope 128, qk_rope 64, v 128, kv_lora_rank 512).
    Prefill attention runs non-absorbed (vLLM MLACommonImpl._forward_prefill): d_qk + d_v = 192 + 128 = 320,
    against decode's absorbed 2 x 512 + 64 = 1,088. One query at context 4,096 costs 2 x 128 x 320 x 61 x 4,096."""
    s = sv.DSV3
    assert pt.prefill_attention_width(s) == 320
    per_query = 2 * 128 * 320 * 61 * 4096  # 20.47 GFLOP
    # a 1-token chunk after 4,096 cached tokens: S s0 + S^2/2 = 4,096.5 context tokens for the query
    f = pt.causal_attention_FLOPs(s, prompt_tokens=1, cached_tokens=4096)
    assert f == pytest.approx(per_query * 4096.5 / 4096)
    from workbook.reference.decode_time import attention_FLOPs_per_query
    absorbed = attention_FLOPs_per_query(s, context_tokens=4096)
    assert absorbed == pytest.approx(2 * 128 * 1088 * 61 * 4096)
    assert absorbed / per_query == pytest.approx(1088 / 320)  # 3.4x
    # GQA is unchanged: Llama-3-70B 128 + 128
    assert pt.prefill_attention_width(sv.LLAMA70) == 256


def test_mla_reexpands_the_cached_prefix():
    """kv_b_proj up-projects each cached latent: 2 x 61 x 128 x 512 x (128 + 128) = 2.047 GFLOP per token
    (vLLM _compute_prefill_context); GQA caches K and V and re-expands nothing."""
    assert pt.kv_up_FLOPs_per_token(sv.DSV3) == pytest.approx(2 * 61 * 128 * 512 * 256)
    assert pt.kv_up_FLOPs_per_token(sv.DSV3, tp=8) == pytest.approx(2 * 61 * 16 * 512 * 256)
    assert pt.kv_up_FLOPs_per_token(sv.LLAMA70) == 0
    # one chunk: the cached prefix; three chunks of 1,000: 3 s0 + 1,000 x (0 + 1 + 2)
    assert pt.reexpanded_tokens(prompt_tokens=900, cached_tokens=2468, chunk_tokens=1000) == 2468
    assert pt.reexpanded_tokens(prompt_tokens=3000, cached_tokens=500, chunk_tokens=1000) == 3 * 500 + 3000
    r = _pf(shape=sv.DSV3, prompt_tokens=1915, cached_tokens=2468, batch=8, tp=1, ep=32, weight_precision="fp8",
            chunk_tokens=16384, profile="vllm-0.10")
    assert r["kv_up_FLOPs"] == pytest.approx(8 * 2468 * 2 * 61 * 128 * 512 * 256)
    no_cache = _pf(shape=sv.DSV3, prompt_tokens=1915, batch=8, tp=1, ep=32, weight_precision="fp8",
                   chunk_tokens=16384, profile="vllm-0.10")
    assert no_cache["kv_up_FLOPs"] == 0
    assert r["linear_compute_s"] > no_cache["linear_compute_s"]


@settings(max_examples=60, deadline=None)
@given(s=st.floats(1, 32768), ds=st.floats(0, 32768), cached=st.floats(0, 16384), batch=st.integers(1, 16),
       chunk=st.sampled_from([2048.0, 8192.0, 16384.0]))
def test_mla_prefill_never_shrinks_with_longer_prompts_after_a_cached_prefix(s, ds, cached, batch, chunk):
    kw = dict(shape=sv.DSV3, profile="vllm-0.10", tp=1, ep=32, weight_precision="fp8", batch=batch,
              cached_tokens=cached, chunk_tokens=chunk)
    a = _pf(prompt_tokens=s, **kw)["prefill_s"]
    b = _pf(prompt_tokens=s + ds, **kw)["prefill_s"]
    assert b >= a * (1 - 1e-9)


def test_ep_prefill_pays_its_alltoall_unless_it_is_hidden():
    """EP prefill (DeepEP normal kernels): a token crosses to each remote node once and to each other GPU
    it needs once; the slower link sets the time. With no overlap the chunk waits for it; with full
    overlap only the part longer than the GPU work shows."""
    ds = ENG.profile("deepseek-v3-infer")
    a2a = pt.prefill_alltoall(sv.DSV3, hw=sv.H800, engine=ds, ep=32, ep_nodes=4)
    assert a2a["remote_nodes"] == pytest.approx(3 * (1 - 0.75**8))
    assert a2a["other_gpus"] == pytest.approx(31 * (1 - (31 / 32) ** 8))
    nic = 7168 * 3 * a2a["remote_nodes"] / (50e9 * 0.9)
    nvl = 7168 * 3 * a2a["other_gpus"] / (200e9 * 0.8)
    assert a2a["s_per_token"] == pytest.approx(58 * max(nic, nvl))
    assert a2a["fixed_s"] == pytest.approx(58 * 2 * sv.H800["network_latency_s"])
    kw = dict(prompt_tokens=4096, batch=4, hw=sv.H800, engine=ds, tp=1, ep=32, weight_precision="fp8", ep_nodes=4)
    hidden, exposed = pt.prefill_time(sv.DSV3, ep_overlap_frac=1.0, **kw), pt.prefill_time(sv.DSV3, **kw)
    t_a2a = a2a["fixed_s"] + 16384 * a2a["s_per_token"]
    assert hidden["ep_alltoall_s"] == exposed["ep_alltoall_s"] == pytest.approx(t_a2a)
    assert exposed["prefill_s"] == pytest.approx(hidden["prefill_s"] + t_a2a - hidden["ep_exposed_s"])
    gpu = hidden["prefill_s"] - hidden["ep_exposed_s"]
    assert a2a["comm_sm_frac"] == pytest.approx(20 / 132)
    assert hidden["ep_exposed_s"] == pytest.approx(max(t_a2a - gpu, 20 / 132 * t_a2a))
    # dense models and EP 1 exchange nothing
    assert pt.prefill_alltoall(sv.LLAMA70, hw=sv.H100, engine=ds, ep=8)["s_per_token"] == 0
    assert pt.prefill_alltoall(sv.DSV3, hw=sv.H800, engine=ds, ep=1)["s_per_token"] == 0
    # inside one node only NVLink carries it
    one = pt.prefill_alltoall(sv.QWEN235, hw=sv.H100, engine=ENG.profile("vllm-0.10"), ep=8, ep_nodes=1)
    assert one["remote_nodes"] == 0 and one["other_gpus"] > 0
    assert one["fixed_s"] == pytest.approx(94 * 2 * ENG.profile("vllm-0.10").allreduce_alpha_us * 1e-6)


@settings(max_examples=40, deadline=None)
@given(ep=st.sampled_from([2, 4, 8, 16, 32, 64]), o=st.floats(0, 1), tokens=st.floats(64, 16384))
def test_more_overlap_never_lengthens_ep_prefill(ep, o, tokens):
    ds = ENG.profile("deepseek-v3-infer")
    kw = dict(prompt_tokens=tokens, hw=sv.H800, engine=ds, tp=1, ep=ep, weight_precision="fp8",
              ep_nodes=max(1, ep // 8))
    t = pt.prefill_time(sv.DSV3, ep_overlap_frac=o, **kw)["prefill_s"]
    assert pt.prefill_time(sv.DSV3, ep_overlap_frac=min(1.0, o + 0.1), **kw)["prefill_s"] <= t * (1 + 1e-12)
    assert pt.prefill_time(sv.DSV3, ep_overlap_frac=0.0, **kw)["prefill_s"] >= t * (1 - 1e-12)


def test_hidden_alltoall_costs_the_sms_it_holds():
    """DeepEP's normal kernels hold 20 of the H800's 132 SMs: an exchange hidden under longer GPU work
    still slows it by f·C (t = G + f·C); an exchange longer than the work sets the time (t = (1 − o)·G + C);
    without overlap it adds C whatever f; with f = 0 the old max(0, C − o·G)."""
    f = 20 / 132
    assert pt.exposed_alltoall_s(alltoall_s=1.0, gpu_s=2.0, overlap_frac=1.0, sm_frac=f) == pytest.approx(f)
    assert pt.exposed_alltoall_s(alltoall_s=1.9, gpu_s=2.0, overlap_frac=1.0, sm_frac=f) == pytest.approx(1.9 * f)
    assert pt.exposed_alltoall_s(alltoall_s=3.0, gpu_s=2.0, overlap_frac=1.0, sm_frac=f) == pytest.approx(1.0)
    assert pt.exposed_alltoall_s(alltoall_s=1.0, gpu_s=2.0, overlap_frac=0.0, sm_frac=f) == pytest.approx(1.0)
    assert pt.exposed_alltoall_s(alltoall_s=1.0, gpu_s=2.0, overlap_frac=0.5, sm_frac=0.0) == pytest.approx(0.0)
    # the two regimes meet where the slowed work ends with the exchange: C·(1 − f) = o·G
    c = 2.0 / (1 - f)
    assert c - 2.0 == pytest.approx(f * c)
    ds = ENG.profile("deepseek-v3-infer")
    kw = dict(prompt_tokens=4096, batch=4, hw=sv.H800, tp=1, ep=32, weight_precision="fp8", ep_nodes=4,
              ep_overlap_frac=1.0)
    free = pt.prefill_time(sv.DSV3, engine=ds.model_copy(update={"prefill_comm_sms": 0}), **kw)
    held = pt.prefill_time(sv.DSV3, engine=ds, **kw)
    assert held["prefill_s"] > free["prefill_s"]
    assert held["ep_alltoall_s"] == pytest.approx(free["ep_alltoall_s"])


@settings(max_examples=60, deadline=None)
@given(c=st.floats(0, 10), g=st.floats(0, 10), o=st.floats(0, 1), f=st.floats(0, 1), df=st.floats(0, 0.5))
def test_exposed_alltoall_is_between_the_sm_share_and_the_whole_exchange(c, g, o, f, df):
    e = pt.exposed_alltoall_s(alltoall_s=c, gpu_s=g, overlap_frac=o, sm_frac=f)
    assert f * c - 1e-12 <= e <= c + 1e-12
    assert pt.exposed_alltoall_s(alltoall_s=c, gpu_s=g, overlap_frac=o, sm_frac=min(1.0, f + df)) >= e - 1e-12


def test_moe_dispatch_layout_bytes_count_the_routed_rows_and_the_received_tokens():
    # DeepSeek-V3 at EP 32: k = 8 rows of 6 d + 8 w_e bytes, plus 3 d per receiving GPU, EP (1 - (1 - 1/EP)^k)
    s = sv.DSV3
    reach = 32 * (1 - (1 - 1 / 32) ** 8)
    per_layer = 8 * (6 * 7168 + 8 * 2048) + 3 * 7168 * reach
    assert pt.moe_layout_bytes_per_token(s, ep=32) == pytest.approx(s.moe_layers * per_layer, rel=1e-12)
    assert pt.moe_layout_bytes_per_token(s, ep=1) == 0  # the fused MoE kernel gathers its rows itself
    assert pt.moe_layout_bytes_per_token(sv.LLAMA70, ep=8) == 0  # dense
    assert pt.moe_layout_bytes_per_token(s, ep=256) > pt.moe_layout_bytes_per_token(s, ep=32)  # more receivers


def test_moe_dispatch_layout_streams_in_the_prefill_chunk():
    ds = sv.ENGINES.profile("deepseek-v3-infer")
    kw = dict(prompt_tokens=4096, batch=4, hw=sv.H800, engine=ds, tp=1, ep=32, weight_precision="fp8", ep_nodes=4,
              ep_overlap_frac=1.0, chunk_tokens=16384)
    with_layout = pt.prefill_time(sv.DSV3, **kw)
    bytes_ = 16384 * pt.moe_layout_bytes_per_token(sv.DSV3, ep=32)
    bw = sv.H800["hbm_bw_GBps"] * 1e9 * sv.H800["hbm_efficiency"]
    single = pt.prefill_time(sv.DSV3, **{**kw, "ep": 1, "ep_nodes": 1})
    assert with_layout["chunks"] == 1
    # at EP 1 no layout term; at EP 32 the small-op time carries it whole (16,384 tokens x 37 MB / 3.0 TB/s)
    assert with_layout["small_kernels_s"] - bytes_ / bw == pytest.approx(single["small_kernels_s"], rel=1e-9)


def test_prefill_counts_whole_tokens():
    """batch x prompt rounded up to a whole token, at least 1; noise under 1e-9 token is no token."""
    assert pt.prefill_tokens(batch=3, prompt_tokens=1000) == 3000
    assert pt.prefill_tokens(batch=2.5001, prompt_tokens=1000) == 2501  # 2,500.1 tokens
    assert pt.prefill_tokens(batch=(3000 + 1e-10) / 1000, prompt_tokens=1000) == 3000
    assert pt.prefill_tokens(batch=1e-6, prompt_tokens=100) == 1
    with pytest.raises(ValueError):
        pt.prefill_tokens(batch=0, prompt_tokens=100)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_a_fractional_batch_just_above_k_chunks(k):
    """batch x prompt just above k chunks: floating-point noise (1e-10 token) leaves k full chunks; a fraction of a
    token (1e-7 or 0.3: counted in fractional tokens, 1e-7 stayed inside the chunk count's guard, 0.3 did not) is a
    whole token more, so a (k+1)-th chunk of exactly one token. The chunks add up to the whole tokens."""
    C, S = 2048.0, 1000.0
    for extra, tokens, chunks, last in ((1e-10, k * C, k, C), (1e-7, k * C + 1, k + 1, 1.0), (0.3, k * C + 1, k + 1, 1.0)):
        r = _pf(prompt_tokens=S, batch=(k * C + extra) / S, chunk_tokens=C)
        assert (r["tokens"], r["chunks"]) == (tokens, chunks), extra
        assert r["tokens"] - (r["chunks"] - 1) * C == last
    noise, frac = (_pf(prompt_tokens=S, batch=(k * C + e) / S, chunk_tokens=C) for e in (1e-10, 0.3))
    assert noise["last_chunk_s"] == noise["full_chunk_s"]
    one = _pf(prompt_tokens=1.0, chunk_tokens=C)  # one token: the last chunk's linear and all-reduce terms
    assert frac["last_ar_s"] == pytest.approx(one["allreduce_s"], rel=1e-12)
    # attention is the batch's prompts', shared over the chunks in proportion to their tokens
    assert frac["attention_s"] == pytest.approx(noise["attention_s"] * (k * C + 0.3) / (k * C + 1e-10), rel=1e-12)
    assert frac["tokens_per_s"] == pytest.approx(frac["tokens"] / frac["prefill_s"], rel=1e-12)
