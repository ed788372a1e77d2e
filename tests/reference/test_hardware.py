"""Unit tests for workbook.reference.hardware (spec 17.1)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbook.reference import hardware as hw


def test_ridge_and_ratio_h100():
    assert hw.ridge_FLOP_per_byte(peak_TFLOPS=989.5, hbm_bw_GBps=3350) == pytest.approx(295.373134328)
    assert 1e3 * hw.bw_per_flop_B_per_FLOP(hbm_bw_GBps=4000, peak_TFLOPS=148) == pytest.approx(27.027027027)


def test_numeric_formats():
    assert hw.numeric_format("fp16")["max_finite"] == 65504
    assert hw.numeric_format("fp16")["min_normal"] == 2**-14
    assert hw.numeric_format("fp8_e4m3")["max_finite"] == 448
    assert hw.numeric_format("fp8_e5m2")["max_finite"] == 57344
    assert hw.numeric_format("bf16")["bytes"] == 2
    assert hw.numeric_format("tf32")["bytes"] == 4
    assert hw.numeric_format("int4") == {"bytes": 0.5, "min": -8, "max": 7}
    with pytest.raises(ValueError):
        hw.numeric_format("fp7")


def test_network_and_allreduce():
    assert hw.nic_aggregate_GBps(nics=8, gbit_per_port=400) == 400
    assert hw.ring_allreduce_time_s(size_GB=140, n=8, bw_GBps=400) == pytest.approx(0.6125)
    assert hw.tree_allreduce_time_s(size_GB=140, bw_GBps=400) == pytest.approx(0.7)
    assert hw.bisection_bw_GBps(gpus=8, per_gpu_bw_GBps=400) == 1600
    assert hw.derated_bw_GBps(bw_GBps=400, efficiency=0.8, direction_factor=0.5) == 160


def test_roofline():
    assert hw.attainable_TFLOPS(intensity_FLOP_per_byte=1, peak_TFLOPS=989.5, hbm_bw_GBps=3350) == pytest.approx(3.35)
    assert hw.attainable_TFLOPS(intensity_FLOP_per_byte=1e4, peak_TFLOPS=989.5, hbm_bw_GBps=3350) == 989.5


@given(st.floats(1, 1e4), st.floats(1, 1e5), st.integers(1, 1024))
def test_finite_nonneg(tflops, bw, n):
    vals = [hw.ridge_FLOP_per_byte(peak_TFLOPS=tflops, hbm_bw_GBps=bw),
            hw.ring_allreduce_time_s(size_GB=10, n=n, bw_GBps=bw)]
    assert all(math.isfinite(v) and v >= 0 for v in vals)
