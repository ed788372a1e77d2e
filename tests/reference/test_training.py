"""Unit and property tests of workbook.reference.training (spec 17.5.1-17.5.7)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from workbook.reference import training as tr

pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
mfus = st.floats(min_value=0.01, max_value=1.0)


def test_mfu_roundtrip_llama7b():
    # 17.5.2: 40,000 tok/s on 8 x H800 for 6.74e9 params -> 20.4 %
    mfu = tr.mfu_from_throughput_frac(tokens_per_s=40_000, params=6.74e9, num_gpus=8, peak_TFLOPS=989.5)
    assert mfu == pytest.approx(0.20435, rel=1e-4)
    assert tr.tokens_per_s_from_mfu(num_gpus=8, peak_TFLOPS=989.5, mfu=mfu, params=6.74e9) == pytest.approx(40_000)


def test_time_and_backsolve_are_inverse():
    c = tr.train_compute_FLOP(params=70e9, tokens=2e12)
    n = tr.gpus_raw(total_FLOP=c, target_days=30, peak_TFLOPS=989.5, mfu=0.38)
    assert tr.train_time_days(total_FLOP=c, num_gpus=n, peak_TFLOPS=989.5, mfu=0.38) == pytest.approx(30)
    assert tr.round_gpus_to_group(gpus=n, tp=8, pp=4) == {"groups": 27, "gpus": 864}


def test_overhead_and_spares():
    c = 1e23
    base = tr.train_time_s(total_FLOP=c, num_gpus=64, peak_TFLOPS=989.5, mfu=0.4)
    assert tr.train_time_s(total_FLOP=c, num_gpus=64, peak_TFLOPS=989.5, mfu=0.4, overhead_factor=1.1) == pytest.approx(1.1 * base)
    assert tr.gpus_with_spares(gpus=864, spare_frac=0.05) == 908  # ceil(907.2)
    assert tr.gpus_with_spares(gpus=100, spare_frac=0.1) == 110  # no float creep to 111


def test_ceil_count_float_noise():
    assert tr.ceil_count(1120 / 7) == 160
    assert tr.ceil_count(160.0001) == 161


def test_step_time_models():
    kw = dict(t_fwd_s=0.3, t_bwd_s=0.6, t_comm_s=0.5, t_opt_s=0.002)
    assert tr.step_time_s(**kw) == pytest.approx(0.902)
    assert tr.step_time_s(**kw, model="none") == pytest.approx(1.402)
    assert tr.step_time_s(**dict(kw, t_comm_s=1.0)) == pytest.approx(1.302)
    assert tr.step_time_s(**kw, model="book_max", exposed_comm_frac=1 / 3) == pytest.approx(0.902)
    with pytest.raises(ValueError):
        tr.step_time_s(**kw, model="bogus")
    assert tr.comm_hidden(t_comm_s=0.5, t_bwd_s=0.6)


def test_layout_memory_zero_stages():
    m0 = tr.layout_memory_per_gpu_GB(params=70e9, tp=8, pp=4, dp=2, zero_stage=0)
    assert m0["total_GB"] == pytest.approx(35.0)
    m3 = tr.layout_memory_per_gpu_GB(params=70e9, tp=8, pp=4, dp=2, zero_stage=3)
    assert m3["total_GB"] == pytest.approx(17.5)
    with pytest.raises(ValueError):
        tr.layout_memory_per_gpu_GB(params=1, zero_stage=4)


def test_batch_checks_and_ga():
    assert tr.grad_accum_min(pp=4) == 4 and tr.grad_accum_min(pp=4, efficient=True) == 16
    flags = tr.batch_checks(micro_batch=1, grad_accum=2, dp=4, seq_len=4096, pp=4, micro_batch_max=8)
    assert flags == {"memory_ok": True, "global_batch_ok": False, "PP_min_ok": False, "PP_efficiency_ok": False}
    assert tr.lr_multiplier(batch_from=256, batch_to=1024, rule="sqrt") == 2


@given(c=st.floats(min_value=1e18, max_value=1e26), n=st.integers(1, 100_000), extra=st.integers(1, 100_000),
       peak=st.floats(min_value=10, max_value=5000), mfu=mfus)
def test_more_gpus_never_slower(c, n, extra, peak, mfu):
    t1 = tr.train_time_s(total_FLOP=c, num_gpus=n, peak_TFLOPS=peak, mfu=mfu)
    t2 = tr.train_time_s(total_FLOP=c, num_gpus=n + extra, peak_TFLOPS=peak, mfu=mfu)
    assert t2 <= t1 and math.isfinite(t1) and t2 >= 0


@given(c=st.floats(min_value=1e15, max_value=1e27), days=st.floats(min_value=0.1, max_value=3650),
       peak=st.floats(min_value=10, max_value=5000), mfu=mfus, tp=st.integers(1, 8), pp=st.integers(1, 16))
def test_backsolve_meets_deadline(c, days, peak, mfu, tp, pp):
    n = tr.gpus_raw(total_FLOP=c, target_days=days, peak_TFLOPS=peak, mfu=mfu)
    r = tr.round_gpus_to_group(gpus=n, tp=tp, pp=pp)
    assert r["gpus"] % (tp * pp) == 0 and r["gpus"] >= n - 1e-6 * n
    assert tr.train_time_days(total_FLOP=c, num_gpus=r["gpus"], peak_TFLOPS=peak, mfu=mfu) <= days * (1 + 1e-6)


@given(p=pos, b=st.integers(1, 64), s=st.integers(1, 131072), peak=st.floats(min_value=10, max_value=5000), eff=mfus)
def test_step_time_finite_nonneg(p, b, s, peak, eff):
    t = tr.compute_time_s(FLOP=tr.fwd_FLOP(params=p * 1e6, micro_batch=b, seq_len=s), peak_TFLOPS=peak, eff_frac=eff)
    step = tr.step_time_s(t_fwd_s=t, t_bwd_s=2 * t, t_comm_s=t)
    assert math.isfinite(step) and step >= 3 * t >= 0
