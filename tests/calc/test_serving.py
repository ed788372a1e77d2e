"""calc.serving_memory, serving_step, serving_prefill, serving_load, serving_use: the engine rows of a
scenario equal the serving reference (engine_memory, decode_time, prefill_time, serving_load), the
in-use rows pick engine / book / measured, and the properties of issue 8 hold at scenario level."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from workbook.calc import compute
from workbook.catalog import load_catalog
from workbook.reference import decode_time as dt
from workbook.reference import engine_memory as em
from workbook.reference import prefill_time as pt
from workbook.reference import serving_load as sl
from workbook.reference.serving_shape import model_shape
from workbook.scenario.model import Scenario

CAT = load_catalog()
ENG = CAT.engines


def _sc(model: str = "llama-3-70b", gpu: str = "h100", **inference) -> Scenario:
    inf = dict(tp=4, prompt_tokens=224, output_tokens=194, batch=32, engine="vllm-0.6.0")
    inf.update(inference)
    return Scenario(name="t", model=model, gpu=gpu, purpose="serving", inference=inf)


def _hw(gpu: str = "h100") -> dict:
    return dt.serving_hardware(gpu=CAT.gpu(gpu), efficiency=CAT.efficiency[gpu], device=ENG.device(gpu))


def test_kv_capacity_is_the_reference_qwen3_fp8():
    r = compute(_sc(engine="vllm-0.10", weight_precision="fp8", model="qwen3-235b-a22b"), CAT)
    want = em.kv_capacity(model_shape(CAT.model("qwen3-235b-a22b")), engine=ENG.profile("vllm-0.10"),
                          device_total_GiB=79.22, tp=4, weight_precision="fp8")
    assert r["srv_kv_tokens"] == want["kv_tokens"]
    assert r["srv_kv_budget_GiB"] == pytest.approx(want["kv_budget_GiB"], rel=1e-12)
    assert r["srv_weights_per_gpu_GiB"] == pytest.approx(want["weights_GiB"], rel=1e-12)


def test_decode_step_and_prefill_are_the_reference():
    r = compute(_sc(batch=55, prompt_tokens=130, output_tokens=200, output_lengths="fixed"), CAT)
    shape, eng = model_shape(CAT.model("llama-3-70b")), ENG.profile("vllm-0.6.0")
    step = dt.decode_step(shape, batch=55, context_tokens=230, hw=_hw(), engine=eng, tp=4)
    assert r["srv_running_context_tokens"] == 230  # fixed lengths: prompt + output/2
    assert r["srv_decode_step_ms"] == pytest.approx(step["step_s"] * 1e3, rel=1e-12)
    # exponential outputs (the default): the running requests' mean context is prompt + output
    e = compute(_sc(batch=55, prompt_tokens=130, output_tokens=200), CAT)
    step_e = dt.decode_step(shape, batch=55, context_tokens=330, hw=_hw(), engine=eng, tp=4)
    assert e["srv_running_context_tokens"] == 330 and e["decode_context_tokens"] == 230
    assert e["srv_decode_step_ms"] == pytest.approx(step_e["step_s"] * 1e3, rel=1e-12)
    pf = pt.prefill_time(shape, prompt_tokens=130, hw=_hw(), engine=eng, tp=4)
    assert r["srv_prefill_ms"] == pytest.approx(pf["prefill_s"] * 1e3, rel=1e-12)


@pytest.mark.parametrize("engine", ["vllm-0.6.0", "sglang-0.3.0", "vllm-0.10", "tensorrt-llm"])
@pytest.mark.parametrize("rps", [0.5, 4.0, 8.0, 40.0])
def test_steady_state_unrolled_is_the_reference(engine, rps):
    """The sheet's refinement blocks give serving_load.steady_state (both prefill modes, saturation)."""
    r = compute(_sc(engine=engine, arrival_rate_rps=rps), CAT)
    shape = model_shape(CAT.model("llama-3-70b"))
    st_ = sl.steady_state(shape, hw=_hw(), engine=ENG.profile(engine), prompt_tokens=224, output_tokens=194,
                          arrival_rate_per_s=rps, tp=4, kv_tokens=r["srv_kv_tokens"])
    assert r["srv_load_tpot_ms"] == pytest.approx(st_["tpot_s"] * 1e3, rel=1e-12)
    assert r["srv_load_batch"] == pytest.approx(st_["batch"], rel=1e-12)
    assert r["srv_load_saturated_flag"] == st_["saturated"]
    assert r["srv_load_tokens_per_s_per_gpu"] == pytest.approx(st_["per_gpu_tok_per_s"], rel=1e-12)


def test_blank_arrival_is_offline_throughput():
    r = compute(_sc(), CAT)
    off = sl.offline_throughput(model_shape(CAT.model("llama-3-70b")), hw=_hw(), engine=ENG.profile("vllm-0.6.0"),
                                prompt_tokens=224, output_tokens=194, tp=4, kv_tokens=r["srv_kv_tokens"])
    assert r["srv_offline_tokens_per_s"] == pytest.approx(off["throughput_tok_per_s"], rel=1e-12)
    assert r["srv_load_tokens_per_s"] == pytest.approx(off["throughput_tok_per_s"], rel=1e-9)
    assert r["srv_ttft_ms_in_use"] == r["srv_ttft_idle_ms"]


def test_in_use_rows_pick_the_model_and_the_measured_throughput():
    book = compute(_sc(serving_model="book"), CAT)
    assert book["srv_tpot_ms_in_use"] == book["tpot_ms"] and book["srv_gpus_in_use"] == book["infer_num_gpus"]
    assert book["infer_tokens_per_s_used"] == book["decode_tokens_per_s_total"]  # utilisation 1
    eng = compute(_sc(), CAT)
    assert eng["srv_tpot_ms_in_use"] == eng["srv_load_tpot_ms"]
    assert eng["srv_tokens_per_s_per_gpu_in_use"] == eng["srv_load_tokens_per_s_per_gpu"]
    m1 = compute(_sc(measured_tokens_per_s_per_gpu=500.0), CAT)
    m2 = compute(_sc(measured_tokens_per_s_per_gpu=1000.0), CAT)
    assert m1["srv_tokens_per_s_per_gpu_in_use"] == 500.0
    assert m1["srv_tokens_per_s_per_gpu_model"] == eng["srv_tokens_per_s_per_gpu_model"]  # kept beside it
    assert m1["infer_usd_per_1M_tokens"] == pytest.approx(2 * m2["infer_usd_per_1M_tokens"], rel=1e-12)


def test_targets_and_saturation_fail_the_serving_checks():
    ok = compute(_sc(arrival_rate_rps=4.0, ttft_target_ms=1e4, tpot_target_ms=1e3), CAT)
    assert ok["check_ttft_target"] == ok["check_tpot_target"] == ok["check_serving_load_stable"] == 0
    miss = compute(_sc(arrival_rate_rps=4.0, tpot_target_ms=1.0), CAT)
    assert miss["check_tpot_target"] == 1 and miss["check_ttft_target"] == 0
    over = compute(_sc(arrival_rate_rps=1e4, ttft_target_ms=1e7), CAT)
    assert over["srv_load_saturated_flag"] == 1
    assert over["check_serving_load_stable"] == 1 and over["check_ttft_target"] == 1


@settings(max_examples=15, deadline=None)
@given(b=st.integers(1, 300), db=st.integers(0, 300), p=st.integers(16, 4000), dp=st.integers(0, 4000),
       engine=st.sampled_from(["vllm-0.6.0", "vllm-0.10", "sglang-0.4"]))
def test_tpot_never_falls_as_batch_or_context_grows(b, db, p, dp, engine):
    a = compute(_sc(engine=engine, batch=b, prompt_tokens=p), CAT)["srv_decode_step_ms"]
    c = compute(_sc(engine=engine, batch=b + db, prompt_tokens=p + dp), CAT)["srv_decode_step_ms"]
    assert c >= a * (1 - 1e-12)


@settings(max_examples=15, deadline=None)
@given(hi=st.floats(0.5, 1.0), drop=st.floats(0.0, 0.4), engine=st.sampled_from([p.id for p in ENG.profiles]),
       model=st.sampled_from(["llama-3-70b", "qwen3-235b-a22b", "mixtral-8x7b"]))
def test_kv_capacity_never_rises_as_the_memory_fraction_falls(hi, drop, engine, model):
    kw = dict(engine=engine, model=model, weight_precision="fp8", tp=8)
    a = compute(_sc(memory_fraction=hi, **kw), CAT)["srv_kv_tokens"]
    b = compute(_sc(memory_fraction=hi - drop, **kw), CAT)["srv_kv_tokens"]
    assert b <= a


@pytest.mark.parametrize("model", ["llama-3-70b", "qwen3-235b-a22b", "deepseek-v3", "mixtral-8x7b"])
@pytest.mark.parametrize("batch", [1, 64])
def test_more_tp_never_lengthens_the_weight_read(model, batch):
    reads = [compute(_sc(model=model, tp=tp, batch=batch, weight_precision="fp8"), CAT)["srv_decode_weight_read_ms"]
             for tp in (1, 2, 4, 8)]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(reads, reads[1:])), reads


def test_the_in_use_rows_follow_the_load_model():
    """Issue 22: inference.load picks the arrival-rate, closed-loop or static rows for TTFT, TPOT and tokens/s;
    the rate model is the default and unchanged."""
    base = dict(engine="vllm-0.10", tp=4, prompt_tokens=2000, output_tokens=300, concurrency=25, batch=8,
                arrival_rate_rps=2.0)
    rate, conc, static = (compute(_sc(load=load, **base), CAT) for load in ("rate", "concurrency", "static"))
    assert rate["srv_ttft_ms_in_use"] == rate["srv_load_ttft_ms"] >= rate["srv_ttft_idle_ms"]
    assert conc["srv_ttft_ms_in_use"] == conc["srv_conc_ttft_ms"] >= conc["srv_ttft_idle_ms"]
    assert conc["srv_tpot_ms_in_use"] == conc["srv_conc_tpot_ms"]
    assert static["srv_tpot_ms_in_use"] == static["srv_static_tpot_ms"]
    assert static["srv_tokens_per_s_per_gpu_in_use"] == static["srv_static_tokens_per_s_per_gpu"]
    assert rate["srv_load_ttft_p99_ms"] > rate["srv_load_ttft_p90_ms"] > rate["srv_load_ttft_ms"]


def test_a_saturated_rate_has_no_ttft():
    r = compute(_sc(engine="vllm-0.10", tp=4, prompt_tokens=2000, output_tokens=300, arrival_rate_rps=50.0), CAT)
    assert r["srv_load_saturated_flag"] == 1 and r["srv_ttft_defined_flag"] == 0
    ok = compute(_sc(engine="vllm-0.10", tp=4, prompt_tokens=2000, output_tokens=300, arrival_rate_rps=1.0), CAT)
    assert ok["srv_ttft_defined_flag"] == 1 and ok["srv_load_ttft_ms"] > 0


@pytest.mark.parametrize("extra,tokens,chunks,last", [(1e-10, 0, 2, 4096.0), (1e-7, 1, 3, 1.0), (0.3, 1, 3, 1.0)])
def test_prefill_rows_count_whole_tokens_just_above_a_chunk_boundary(extra, tokens, chunks, last):
    """A load refinement prefills 8.192... prompts of 1,000 tokens: batch x prompt 1e-10 token above two chunks
    of 4,096 is two full chunks; 1e-7 or 0.3 token above is a token more, a third chunk of one token. The rows
    are the reference's, and the chunks add up to the whole tokens."""
    from tests.calc.prefill_boundary import PROMPT, boundary_scenario

    sc, kc = boundary_scenario(CAT, extra)
    r = compute(sc, CAT)
    C = r["srv_eng_prefill_chunk_tokens"]
    assert (r["srv_ss1_pf_tokens"], r["srv_ss1_pf_chunks"], r["srv_ss1_pf_last_tokens"]) == (kc + tokens, chunks, last)
    assert (r["srv_ss1_pf_chunks"] - 1) * C + r["srv_ss1_pf_last_tokens"] == r["srv_ss1_pf_tokens"]
    pf = pt.prefill_time(model_shape(CAT.model("llama-3-70b")), prompt_tokens=PROMPT, batch=r["srv_ss1_pf_batch"],
                         hw=_hw(), engine=ENG.profile("vllm-0.6.0"), tp=4, chunk_tokens=C,
                         call_cpu_s=r["srv_prefill_call_cpu_s"])
    assert (pf["tokens"], pf["chunks"]) == (r["srv_ss1_pf_tokens"], r["srv_ss1_pf_chunks"])
    assert r["srv_ss1_pf_prefill_s"] == pytest.approx(pf["prefill_s"], rel=1e-12)
