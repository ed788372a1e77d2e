"""Unit tests for workbook.reference.zero (spec 17.4.8)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbook.reference import zero as zr


def test_table17_46_corrected():
    assert zr.zero_per_gpu_GB(params=6.74e9, stage=1, n=8) == pytest.approx(37.07)
    assert zr.zero_per_gpu_GB(params=6.74e9, stage=2, n=8) == pytest.approx(25.275)
    assert zr.zero_per_gpu_GB(params=6.74e9, stage=3, n=8) == pytest.approx(13.48)
    assert zr.zero_sharded_slice_GB(params=6.74e9, stage=1, n=8) == pytest.approx(10.11)
    assert zr.zero3_traffic_GB(params=6.74e9) == pytest.approx(40.44)
    with pytest.raises(ValueError):
        zr.zero_per_gpu_GB(params=1, stage=4, n=1)


@given(p=st.floats(1e6, 1e13), n=st.integers(1, 100_000), w=st.floats(0, 8), g=st.floats(0, 8), o=st.floats(0, 16),
       mp=st.integers(1, 512))
def test_each_stage_needs_no_more_than_previous(p, n, w, g, o, mp):
    mem = [zr.zero_per_gpu_GB(params=p, stage=s, n=n, weight_bytes=w, grad_bytes=g, optimizer_bytes=o,
                              model_parallel=mp) for s in zr.STAGES]
    assert all(math.isfinite(m) and m >= 0 for m in mem)
    for a, b in zip(mem, mem[1:]):
        assert b <= a * (1 + 1e-12)
