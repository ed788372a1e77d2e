"""Unit and property tests of workbook.reference.measured (time at a measured hardware rate; MFU, HFU)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from workbook.reference import measured as mea

pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_gpt3_175b_at_153_tflops_is_the_papers_eq3_time():
    # Narayanan et al. 2021 eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh) FLOPs per iteration (full recompute)
    b, s, l, h, v = 1536, 2048, 96, 12288, 51200
    flops = 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))
    step_s = mea.step_time_at_rate_s(hardware_FLOPs_per_step=flops, num_gpus=384, TFLOPS_per_gpu=153)
    days = 300e9 / (b * s / step_s) / 86400
    assert days == pytest.approx(84.75, abs=0.01)  # Table 2: 84 days
    # the model FLOPs are 3/4 of the hardware FLOPs under full recompute: MFU = 3/4 x HFU
    hfu = mea.utilisation_frac(FLOPs_per_step=flops, num_gpus=384, step_s=step_s, peak_TFLOPS=312)
    mfu = mea.utilisation_frac(FLOPs_per_step=0.75 * flops, num_gpus=384, step_s=step_s, peak_TFLOPS=312)
    assert hfu == pytest.approx(153 / 312) and mfu == pytest.approx(0.75 * 153 / 312)


@given(flops=pos, n=pos, rate=pos)
def test_the_rate_at_the_step_time_is_the_measured_one(flops, n, rate):
    step_s = mea.step_time_at_rate_s(hardware_FLOPs_per_step=flops, num_gpus=n, TFLOPS_per_gpu=rate)
    assert mea.TFLOPS_per_gpu(FLOPs_per_step=flops, num_gpus=n, step_s=step_s) == pytest.approx(rate)


@given(flops=pos, n=pos, rate=pos, k=st.floats(min_value=1.01, max_value=100))
def test_a_faster_rate_shortens_the_step_inversely(flops, n, rate, k):
    a = mea.step_time_at_rate_s(hardware_FLOPs_per_step=flops, num_gpus=n, TFLOPS_per_gpu=rate)
    b = mea.step_time_at_rate_s(hardware_FLOPs_per_step=flops, num_gpus=n, TFLOPS_per_gpu=k * rate)
    assert b == pytest.approx(a / k)


def test_nonpositive_rates_and_peaks_are_refused():
    with pytest.raises(ValueError, match="TFLOPS_per_gpu"):
        mea.step_time_at_rate_s(hardware_FLOPs_per_step=1e18, num_gpus=8, TFLOPS_per_gpu=0)
    with pytest.raises(ValueError, match="peak_TFLOPS"):
        mea.utilisation_frac(FLOPs_per_step=1e18, num_gpus=8, step_s=1, peak_TFLOPS=0)
