"""Unit tests for workbook.reference.flops (spec 17.1.1, 17.3)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbook.reference import flops as fl


def test_llama7b_layer():
    lay = fl.layer_linear_FLOPs(batch=1, seq_len=4096, d_model=4096, d_ff=11008)
    assert lay["qkv"] == 412_316_860_416
    assert lay["total"] == pytest.approx(1657.85737626e9)
    gqa = fl.layer_linear_FLOPs(batch=1, seq_len=1, d_model=4096, d_ff=0, n_heads=32, n_kv_heads=8, head_dim=128)
    assert gqa["qkv"] == 2 * 4096 * (4096 + 2 * 8 * 128)


def test_attention_and_per_token():
    assert fl.attention_core_FLOPs(batch=1, seq_len=4096, d_model=4096) == 274_877_906_944
    assert fl.forward_FLOPs_per_token(params=6.74e9, layers=32, seq_len=4096, d_model=4096) == pytest.approx(15.627483648e9)
    assert fl.train_FLOPs(params=1, tokens=1) == 6
    assert fl.train_FLOPs(params=1, tokens=1, recompute_fwd_frac=1) == 8


def test_gpu_days():
    assert fl.gpu_days(FLOPs=8.088e22, peak_TFLOPS=989.5, mfu=0.4) == pytest.approx(2365.11144798)
    with pytest.raises(ValueError):
        fl.gpu_days(FLOPs=1, peak_TFLOPS=989.5, mfu=0)


@given(st.integers(1, 64), st.integers(1, 131072), st.integers(64, 32768), st.floats(0, 1))
def test_finite_nonneg(b, s, d, f):
    vals = [fl.attention_core_FLOPs(batch=b, seq_len=s, d_model=d), fl.train_FLOPs(params=d, tokens=s, recompute_fwd_frac=f),
            fl.layer_linear_FLOPs(batch=b, seq_len=s, d_model=d, d_ff=4 * d)["total"]]
    assert all(math.isfinite(v) and v >= 0 for v in vals)
