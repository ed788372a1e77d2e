"""workbook.reference.decode_time: validation against measured engines, units and properties.

Run ``python -m tests.reference.serving_validation`` (or pytest -s) for the full table.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from tests.reference import serving_validation as sv
from workbook.reference import decode_time as dt

ENG = sv.ENGINES
DECODE_POINTS = [p for p in sv.points() if p["name"].startswith(("tpot-llama70", "step-llama70"))]
UNMATCHED: set[str] = set()


def test_print_decode_table(capsys):
    with capsys.disabled():
        print("\n[decode: published vs ours vs book roofline]")
        for p in DECODE_POINTS:
            print(f"  {p['name']:<30} published {p['published']:6.2f} ms  ours {p['ours']:6.2f} ms "
                  f"({p['error']:+6.1%}, target {p['target']:.0%})  book {p['book']:6.2f} ms")


@pytest.mark.parametrize("point", [pytest.param(p, id=p["name"]) for p in DECODE_POINTS])
def test_decode_points_within_target(point):
    assert point["name"] not in UNMATCHED
    assert abs(point["error"]) <= point["target"], point


def _step(shape=sv.LLAMA70, profile="vllm-0.6.0", hw=sv.H100, **kw):
    base = dict(batch=8, context_tokens=300, tp=4)
    base.update(kw)
    return dt.decode_step(shape, hw=hw, engine=ENG.profile(profile), **base)


def test_components_add_up():
    r = _step()
    gpu = (r["gemm_s"] + r["attention_s"] + r["small_kernels_s"] + r["allreduce_s"] + r["sampler_s"] + r["launch_s"]
           + r["moe_experts_s"])
    assert r["gpu_s"] == pytest.approx(gpu)
    assert r["step_s"] == pytest.approx(r["gpu_s"] * (1 + ENG.profile("vllm-0.6.0").cpu_overhead_frac))
    assert r["memory_bound"] == 1 and r["cuda_graphs"] == 1
    # 70B BF16 at TP4 reads its 35 GB of non-embedding weights: about 34.75 GB per GPU
    assert r["weight_read_bytes"] == pytest.approx((70.55e9 - 128256 * 8192) * 2 / 4, rel=0.01)


def test_book_roofline_is_the_workbook_13_2_ms():
    """The brief's 'ours 13.2 ms': P x 2 B / 4 / (3.35 TB/s x 0.8)."""
    assert dt.book_decode_step_s(sv.LLAMA70, batch=1, context_tokens=0, hw=sv.H100, tp=4,
                                 hbm_efficiency=0.8) * 1e3 == pytest.approx(13.16, abs=0.01)


#: vLLM PR 24532, H100 TP4: MiB -> (custom all-reduce ca_1stage, pynccl) in us
PR24532_TP4 = {0.5: (10, 21), 1: (14, 23), 1.5: (19, 25), 2: (23, 28), 3: (30, 33), 4: (38, 39)}


def test_allreduce_fit_reproduces_the_h100_table():
    """The faster of the two kernels, as engines dispatch, within the fits' residuals (2.5 us)."""
    eng = ENG.profile("vllm-0.6.0")
    for mib, (ca, nccl) in PR24532_TP4.items():
        t = dt.allreduce_time_s(message_bytes=mib * 2**20, tp=4, hw=sv.H100, engine=eng) * 1e6
        assert t == pytest.approx(min(ca, nccl), abs=2.5)
    assert dt.allreduce_time_s(message_bytes=1e6, tp=1, hw=sv.H100, engine=eng) == 0
    # continuous at the custom kernel's size limit (no faster step past it)
    lim = eng.custom_allreduce_max_MB * 2**20
    below = dt.allreduce_time_s(message_bytes=lim, tp=4, hw=sv.H100, engine=eng)
    above = dt.allreduce_time_s(message_bytes=lim + 1, tp=4, hw=sv.H100, engine=eng)
    assert above >= below


def test_moe_reads_only_the_experts_it_hits():
    one = _step(sv.QWEN235, batch=1, weight_precision="fp8")
    many = _step(sv.QWEN235, batch=512, weight_precision="fp8")
    assert one["distinct_experts_per_gpu"] == pytest.approx(8)
    assert many["distinct_experts_per_gpu"] == pytest.approx(128, rel=1e-3)
    assert one["routed_read_bytes"] < 0.07 * many["routed_read_bytes"]


def test_dp_attention_with_ep_sees_every_ranks_tokens():
    kw = dict(tp=1, ep=144, redundant_experts=32, weight_precision="fp8", ep_nodes=18, ep_overlap_frac=1.0)
    r = _step(sv.DSV3, profile="deepseek-v3-infer", hw=sv.H800, batch=1, context_tokens=1000, **kw)
    # one token per GPU, 144 GPUs: each expert is hit with probability 1 - (1 - 8/256)^144 = 0.99
    assert r["distinct_experts_per_gpu"] == pytest.approx(2 * (1 - (1 - 8 / 256) ** 144))
    assert r["ep_alltoall_s"] > 0 and r["allreduce_s"] == 0
    hidden = _step(sv.DSV3, profile="deepseek-v3-infer", hw=sv.H800, batch=64, context_tokens=4989, **kw)
    exposed = _step(sv.DSV3, profile="deepseek-v3-infer", hw=sv.H800, batch=64, context_tokens=4989,
                    **{**kw, "ep_overlap_frac": 0.0})
    assert exposed["step_s"] == pytest.approx(hidden["step_s"] + hidden["ep_alltoall_s"] - hidden["ep_exposed_s"])


def test_without_cuda_graphs_small_models_are_launch_bound():
    """Above the largest captured batch the engine launches eagerly: the step is never shorter than with
    graphs, and it is the CPU launch time when the GPU work is shorter than L x kernels x 10 us."""
    graphed = _step(profile="sglang-0.3.0", batch=160)
    eager = _step(profile="sglang-0.3.0", batch=161)
    assert graphed["cuda_graphs"] == 1 and eager["cuda_graphs"] == 0
    assert eager["cpu_launch_s"] == pytest.approx(80 * (4 + 5 + 1 + 2) * 10e-6 + 5 * 10e-6)
    assert eager["step_s"] >= graphed["step_s"]
    # a small model with a short GPU step waits for the CPU
    tiny = dt.decode_step(sv.LLAMA70, batch=300, context_tokens=10, hw=sv.H100, engine=ENG.profile("sglang-0.3.0"),
                          tp=4, weight_precision="int4")
    assert tiny["step_s"] >= tiny["cpu_launch_s"]


def test_mtp_verification_tokens():
    base = _step(sv.DSV3, profile="deepseek-v3-infer", hw=sv.H800, batch=64, context_tokens=4989, tp=1, ep=144,
                 redundant_experts=32, weight_precision="fp8", ep_nodes=18, ep_overlap_frac=1.0)
    mtp = _step(sv.DSV3, profile="deepseek-v3-infer", hw=sv.H800, batch=64, context_tokens=4989, tp=1, ep=144,
                redundant_experts=32, weight_precision="fp8", ep_nodes=18, ep_overlap_frac=1.0,
                query_tokens_per_seq=2, tokens_per_step=1.85)
    assert mtp["attention_FLOPs"] == pytest.approx(2 * base["attention_FLOPs"])
    assert mtp["kv_read_bytes"] == base["kv_read_bytes"]
    assert mtp["tpot_s"] == pytest.approx(mtp["step_s"] / 1.85)


def test_bad_inputs():
    with pytest.raises(ValueError):
        _step(batch=0)
    with pytest.raises(ValueError):
        _step(context_tokens=-1)
    with pytest.raises(ValueError):
        _step(ep_overlap_frac=1.5)
    with pytest.raises(ValueError):
        _step(weight_precision="fp6")


# ----------------------------------------------------------------------------- properties
def test_two_micro_batches_run_the_stack_twice():
    """DeepSeek's decode (decode_micro_batches 2, profile-data README): a step of B is two passes of B/2,
    each streaming the weights; below two requests the step is not split under one request per pass."""
    kw = dict(tp=1, ep=144, redundant_experts=32, weight_precision="fp8", ep_nodes=18, ep_overlap_frac=1.0,
              context_tokens=4989)
    two = ENG.profile("deepseek-v3-infer")
    one = two.model_copy(update={"decode_micro_batches": 1})
    r = dt.decode_step(sv.DSV3, batch=88, hw=sv.H800, engine=two, **kw)
    half = dt.decode_step(sv.DSV3, batch=44, hw=sv.H800, engine=one, **kw)
    whole = dt.decode_step(sv.DSV3, batch=88, hw=sv.H800, engine=one, **kw)
    assert r["passes"] == 2 and whole["passes"] == 1
    for k in ("step_s", "gpu_s", "gemm_s", "weight_read_bytes", "small_kernels_s", "launch_s", "ep_alltoall_s"):
        assert r[k] == pytest.approx(2 * half[k], rel=1e-12), k
    assert r["kv_read_bytes"] == pytest.approx(whole["kv_read_bytes"], rel=1e-12)
    assert r["attention_s"] == pytest.approx(whole["attention_s"], rel=1e-12)  # FLOP-bound: same total
    assert r["weight_read_bytes"] > 1.9 * whole["weight_read_bytes"]  # every expert is hit in both passes
    assert r["tokens_per_s"] == pytest.approx(88 / r["step_s"], rel=1e-12)
    b1 = dt.decode_step(sv.DSV3, batch=1, hw=sv.H800, engine=two, **kw)
    assert b1["passes"] == 1 and b1["step_s"] == dt.decode_step(sv.DSV3, batch=1, hw=sv.H800, engine=one, **kw)["step_s"]
    b15 = dt.decode_step(sv.DSV3, batch=1.5, hw=sv.H800, engine=two, **kw)
    assert b15["passes"] == 1.5 and b15["step_s"] == pytest.approx(1.5 * b1["step_s"], rel=1e-12)


CASES = [
    (sv.LLAMA70, "vllm-0.6.0", sv.H100, dict(tp=4)),
    (sv.LLAMA70, "sglang-0.3.0", sv.H100, dict(tp=8)),
    (sv.QWEN235, "vllm-0.10", sv.H100, dict(tp=4, weight_precision="fp8")),
    (sv.DSV3, "deepseek-v3-infer", sv.H800, dict(tp=1, ep=144, redundant_experts=32, weight_precision="fp8",
                                                ep_nodes=18, ep_overlap_frac=1.0)),
    (sv.DSV3, "sglang-0.4", sv.H800, dict(tp=8, weight_precision="fp8")),
    (sv.LLAMA70, "tensorrt-llm-0.5", sv.H100, dict(tp=2, weight_precision="fp8", kv_precision="fp8")),
]


@settings(max_examples=150, deadline=None)
@given(case=st.sampled_from(CASES), b=st.one_of(st.floats(1, 2048), st.sampled_from([128.0, 160.0, 256.0, 512.0])),
       db=st.one_of(st.floats(0, 512), st.just(1.0)), ctx=st.floats(0, 131072),
       dctx=st.floats(0, 32768))
def test_tpot_never_falls_as_batch_or_context_grows(case, b, db, ctx, dctx):
    shape, profile, hw, kw = case
    eng = ENG.profile(profile)
    t = dt.decode_step(shape, batch=b, context_tokens=ctx, hw=hw, engine=eng, **kw)["tpot_s"]
    tb = dt.decode_step(shape, batch=b + db, context_tokens=ctx, hw=hw, engine=eng, **kw)["tpot_s"]
    tc = dt.decode_step(shape, batch=b, context_tokens=ctx + dctx, hw=hw, engine=eng, **kw)["tpot_s"]
    assert tb >= t * (1 - 1e-12) and tc >= t * (1 - 1e-12)


@settings(max_examples=60, deadline=None)
@given(shape=st.sampled_from([sv.LLAMA70, sv.QWEN235, sv.DSV3]), b=st.floats(1, 1024),
       prec=st.sampled_from(["bf16", "fp8", "int4"]))
def test_more_tp_never_lengthens_the_weight_read(shape, b, prec):
    eng = ENG.profile("vllm-0.10")
    reads = [dt.decode_step(shape, batch=b, context_tokens=1000, hw=sv.H100, engine=eng, tp=t,
                            weight_precision=prec)["weight_read_s"] for t in (1, 2, 4, 8, 16)]
    assert all(r2 <= r1 * (1 + 1e-12) for r1, r2 in zip(reads, reads[1:]))


def test_a_kernel_that_reads_the_cache_per_query_head_reads_it_group_times():
    """engines.yaml decode_attention_kernel (issue 22): per_query_head reads each KV byte once per query head of
    its group, (h/TP)/max(1, g/TP) = 8 for Llama-3-70B at TP 4; the shipped profiles read it once per KV head."""
    base = ENG.profile("vllm-0.10")
    old = base.model_copy(update={"decode_attention_kernel": "per_query_head"})
    kw = dict(batch=32, context_tokens=4000, hw=sv.H100, tp=4)
    a, b = dt.decode_step(sv.LLAMA70, engine=base, **kw), dt.decode_step(sv.LLAMA70, engine=old, **kw)
    assert dt.kv_reads_per_step(sv.LLAMA70, engine=old, tp=4) == 8.0
    assert b["kv_read_bytes"] == pytest.approx(8 * a["kv_read_bytes"], rel=1e-12)
    assert b["step_s"] > a["step_s"]
    # the one pre-XQA profile (TensorRT-LLM v0.5, the H200 launch blog's run) reads per query head
    assert {p.id for p in ENG.profiles if p.decode_attention_kernel == "per_query_head"} == {"tensorrt-llm-0.5"}


def test_the_pre_xqa_profile_is_the_pytorch_backend_but_for_its_kernel():
    """tensorrt-llm-0.5 copies tensorrt-llm (assumed) except the decode attention kernel, its version and text."""
    new, old = ENG.profile("tensorrt-llm-0.5"), ENG.profile("tensorrt-llm")
    text = {"id", "name", "version", "source", "as_of", "field_sources", "notes", "decode_attention_kernel"}
    differ = {k for k in type(new).model_fields if k not in text and getattr(new, k) != getattr(old, k)}
    assert not differ and new.decode_attention_kernel == "per_query_head"


@settings(max_examples=80, deadline=None)
@given(b=st.floats(1, 1024), ctx=st.floats(0, 32768), tp=st.sampled_from([1, 2, 4, 8]),
       prec=st.sampled_from(["bf16", "fp8"]))
def test_a_per_query_head_kernel_is_never_faster_and_the_same_on_mha(b, ctx, tp, prec):
    """Reading the cache once per query head never shortens a step (GQA), and changes nothing for MHA
    (Llama 2 13B: as many KV heads as query heads) or MLA (one latent per token)."""
    kw = dict(batch=b, context_tokens=ctx, hw=sv.H100, tp=tp, kv_precision=prec)
    new, old = ENG.profile("tensorrt-llm-0.5"), ENG.profile("tensorrt-llm")
    assert (dt.decode_step(sv.LLAMA70, engine=new, **kw)["step_s"]
            >= dt.decode_step(sv.LLAMA70, engine=old, **kw)["step_s"] * (1 - 1e-12))
    mha = dataclasses.replace(sv.LLAMA70, n_kv_heads=sv.LLAMA70.n_heads)
    assert dt.kv_reads_per_step(mha, engine=new, tp=tp) == 1.0
    assert dt.kv_reads_per_step(sv.DSV3, engine=new, tp=tp) == 1.0


@settings(max_examples=80, deadline=None)
@given(e=st.integers(1, 512), k_frac=st.floats(0, 1), n=st.floats(0, 4096), dn=st.floats(0, 4096))
def test_distinct_experts_lie_between_k_and_e_and_grow_with_tokens(e, k_frac, n, dn):
    """E(1 − (1 − k/E)^N): k at one token, never above E nor (for N >= 1) below k, non-decreasing in N."""
    from workbook.reference.serving_shape import expected_distinct_experts as d
    k = max(1, min(e, round(k_frac * e)))
    a, b = d(n_experts=e, top_k=k, tokens=n), d(n_experts=e, top_k=k, tokens=n + dn)
    assert 0 <= a <= e * (1 + 1e-12) and b >= a * (1 - 1e-12)
    assert d(n_experts=e, top_k=k, tokens=1) == pytest.approx(k)
    if n >= 1:
        assert a >= k * (1 - 1e-12)


def test_the_fused_moe_call_costs_its_layer_and_expert_times():
    """moe_experts_s = L_moe (t_layer + D_gpu t_expert) (engines.yaml moe_layer_us, moe_expert_us): 0 for a dense
    model and for an engine without the terms; at batch 1 Qwen3-235B-A22B at TP 8 touches 8 expert slices per layer."""
    eng = ENG.profile("vllm-0.10")
    assert eng.moe_expert_us > 0 and eng.moe_layer_us > 0
    assert ENG.profile("tensorrt-llm").moe_expert_us == 0 == ENG.profile("tensorrt-llm").moe_layer_us
    L = sv.QWEN235.moe_layers
    kw = dict(context_tokens=500, hw=sv.H100, tp=8, engine=eng)
    one = dt.decode_step(sv.QWEN235, batch=1, **kw)
    assert one["distinct_experts_per_gpu"] == pytest.approx(8)
    assert one["moe_experts_s"] == pytest.approx(L * (eng.moe_layer_us + 8 * eng.moe_expert_us) * 1e-6)
    big = dt.decode_step(sv.QWEN235, batch=4096, **kw)
    assert big["moe_experts_s"] == pytest.approx(L * (eng.moe_layer_us + 128 * eng.moe_expert_us) * 1e-6, rel=1e-6)
    assert dt.decode_step(sv.LLAMA70, batch=8, **kw)["moe_experts_s"] == 0
    off = eng.model_copy(update={"moe_expert_us": 0.0, "moe_layer_us": 0.0})
    r = dt.decode_step(sv.QWEN235, batch=8, **{**kw, "engine": off})
    assert r["moe_experts_s"] == 0
    on = dt.decode_step(sv.QWEN235, batch=8, **kw)
    assert on["step_s"] - r["step_s"] == pytest.approx(on["moe_experts_s"] * (1 + eng.cpu_overhead_frac), rel=1e-9)


def test_the_moe_kernel_fields_reproduce_the_published_kernel_table():
    """engines.yaml's vLLM/SGLang values from SGLang PR 11730 (Qwen3-235B-A22B FP8, TP 8, H200, fused_moe kernel time
    against the batch): the line a + s D through the table, s less the slice's bytes at the catalogue bandwidth,
    a less the align/activation/reduce kernels and the two GEMM launches the step already counts."""
    import numpy as np
    from workbook.reference.serving_shape import expected_distinct_experts as dist
    table = {1: 31.70, 2: 36.56, 4: 49.67, 8: 66.87, 16: 92.36, 24: 117.38, 32: 124.99}
    d = np.array([dist(n_experts=128, top_k=8, tokens=b) for b in table])
    a, s = np.linalg.lstsq(np.vstack([np.ones_like(d), d]).T, np.array(list(table.values())), rcond=None)[0]
    eng, h200 = ENG.profile("sglang-0.4"), sv.hardware("h200")
    slice_us = 3 * 4096 * 1536 / 8 / dt.decode_Bps(h200) * 1e6  # one FP8 expert slice at TP 8
    assert eng.moe_expert_us == pytest.approx(s - slice_us, abs=0.01)
    counted = 3 * eng.small_kernel_us + 2 * eng.graph_launch_us
    assert eng.moe_layer_us == pytest.approx(a - counted, abs=0.05)
    for p in ("vllm-0.6.0", "vllm-0.10", "sglang-0.3.0"):
        assert (ENG.profile(p).moe_expert_us, ENG.profile(p).moe_layer_us) == (eng.moe_expert_us, eng.moe_layer_us)


@settings(max_examples=80, deadline=None)
@given(shape=st.sampled_from([sv.QWEN235, sv.DSV3]), b=st.floats(1, 2048), db=st.floats(0, 2048),
       tp=st.sampled_from([1, 2, 4, 8]))
def test_the_fused_moe_time_never_falls_and_stops_at_every_expert(shape, b, db, tp):
    """The fused-MoE term grows with the batch (more distinct experts), from L_moe (t_layer + k t_expert) at one
    token to at most L_moe (t_layer + E t_expert)."""
    eng = ENG.profile("sglang-0.4")
    kw = dict(context_tokens=1000, hw=sv.H100, tp=tp, engine=eng, weight_precision="fp8")
    a = dt.decode_step(shape, batch=b, **kw)["moe_experts_s"]
    c = dt.decode_step(shape, batch=b + db, **kw)["moe_experts_s"]
    per = lambda n: shape.moe_layers * (eng.moe_layer_us + n * eng.moe_expert_us) * 1e-6
    assert a <= c * (1 + 1e-12) and c <= per(shape.n_experts) * (1 + 1e-12)
    assert a >= per(shape.top_k) * (1 - 1e-9)
