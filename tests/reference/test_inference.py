"""Unit and property tests for workbook.reference.inference (spec 17.8.1-17.8.4, F1-F3)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbook.reference import inference as inf


def test_prefill_book_values():
    assert inf.prefill_FLOPs(params=8e9, prompt_tokens=4096) == 6.5536e13
    t = inf.prefill_time_s(params=70e9, prompt_tokens=4096, peak_TFLOPS=989.5, efficiency_frac=0.7, tp=8)
    assert t * 1e3 == pytest.approx(103.487, rel=5e-6)
    # memory floor binds for a short prompt (17.8.9: 41.8 ms)
    t = inf.prefill_time_s(params=70e9, prompt_tokens=50, peak_TFLOPS=989.5, weight_bytes_per_gpu=140e9, hbm_bw_GBps=3350)
    assert t * 1e3 == pytest.approx(41.791, rel=1e-4)
    assert inf.compute_bound_prompt_tokens(peak_TFLOPS=989.5, efficiency_frac=0.7, hbm_bw_GBps=3350) == pytest.approx(206.8, rel=1e-3)


def test_decode_h20_turns_compute_bound():
    kw = dict(params_per_gpu=17.5e9, weight_bytes_per_gpu=35e9, kv_bytes_per_request_per_gpu=1.34217728e9 / 4,
              peak_TFLOPS=148, hbm_bw_GBps=4000, compute_efficiency_frac=0.7)
    assert inf.decode_step(batch=64, **kw).throughput_tok_per_s == pytest.approx(2960.0)
    assert inf.compute_bound_batch(**kw) == pytest.approx(35, abs=1)
    assert inf.compute_bound_batch(**{**kw, "peak_TFLOPS": 989.5, "hbm_bw_GBps": 3350}) == math.inf
    assert inf.decode_compute_ceiling_tok_per_s(params_per_gpu=17.5e9, peak_TFLOPS=148) == pytest.approx(2960.0)


def test_sharding_and_errors():
    assert inf.kv_per_gpu_bytes(kv_request_bytes=8, tp=16, n_kv_heads=8, pp=2) == 0.5
    assert inf.weights_per_gpu_bytes(weight_bytes=810, tp=8, pp=2) == pytest.approx(50.625)
    with pytest.raises(ValueError):
        inf.effective_FLOPS(peak_TFLOPS=-1, efficiency_frac=0.7)
    assert inf.kv_weights_crossover_tokens(weight_bytes=140e9, kv_bytes_per_token=327680) == 427246


POS = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)


@given(p=st.floats(1e8, 1e12), b=st.integers(1, 4096), w=st.floats(1e8, 1e12), kv=st.floats(0, 1e10),
       peak=st.floats(10, 5000), bw=st.floats(100, 10000), ec=st.floats(0.05, 1), eb=st.floats(0.05, 1))
def test_step_is_max_of_compute_and_memory(p, b, w, kv, peak, bw, ec, eb):
    s = inf.decode_step(params_per_gpu=p, batch=b, weight_bytes_per_gpu=w, kv_bytes_per_request_per_gpu=kv,
                        peak_TFLOPS=peak, hbm_bw_GBps=bw, compute_efficiency_frac=ec, hbm_efficiency_frac=eb)
    assert s.t_step_s == max(s.t_comp_s, s.t_mem_s)
    for v in (s.t_comp_s, s.t_mem_s, s.throughput_tok_per_s, s.per_user_tok_per_s):
        assert math.isfinite(v) and v >= 0
    assert s.memory_bound == (s.t_mem_s >= s.t_comp_s)


@given(p=st.floats(1e8, 1e12), s_in=st.integers(1, 1_000_000), peak=st.floats(10, 5000), eff=st.floats(0.05, 1),
       tp=st.integers(1, 64), w=st.floats(0, 1e12), bw=st.floats(100, 10000))
def test_prefill_finite_non_negative(p, s_in, peak, eff, tp, w, bw):
    t = inf.prefill_time_s(params=p, prompt_tokens=s_in, peak_TFLOPS=peak, efficiency_frac=eff, tp=tp,
                           weight_bytes_per_gpu=w, hbm_bw_GBps=bw)
    assert math.isfinite(t) and t >= 0
    assert inf.ttft_s(prefill_s=t) == t
