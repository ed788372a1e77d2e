"""Unit tests for workbook.reference.train_memory (spec 17.4.1-17.4.7)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbook.reference import train_memory as tm


def test_ledger_and_optimizers():
    assert tm.STATIC_BYTES_PER_PARAM == 16
    assert tm.optimizer_bytes_per_param("adam") == 12
    assert tm.optimizer_bytes_per_param("adam_8bit") == 6
    assert tm.optimizer_bytes_per_param("sgd_momentum") == 8
    assert tm.optimizer_bytes_per_param("adam_mini") == 8
    assert tm.optimizer_GB(params=6.74e9) == pytest.approx(80.88)
    with pytest.raises(ValueError):
        tm.optimizer_bytes_per_param("lion")


def test_activations_llama7b():
    kw = dict(layers=32, batch=1, seq_len=4096, d_model=4096)
    assert tm.activations_no_recompute_GB(d_ff=11008, n_heads=32, **kw) == pytest.approx(44.426067968)
    assert tm.activations_full_recompute_GB(**kw) == pytest.approx(1.073741824)
    assert tm.activations_megatron_GB(n_heads=32, **kw) == pytest.approx(104.0, rel=0.01)


def test_min_gpus():
    assert tm.min_gpus_zero3(static_GB=1120, hbm_GB=80, activations_GB=5.36870912, overhead_GB=2) == 16
    assert tm.min_gpus_zero3(static_GB=6480, hbm_GB=80, activations_GB=16.911433728, overhead_GB=2) == 107
    with pytest.raises(ValueError):
        tm.min_gpus_zero3(static_GB=1, hbm_GB=2, activations_GB=1, overhead_GB=2)


@given(st.floats(1e6, 1e13), st.sampled_from(sorted(tm.OPTIMIZER_COMPONENTS)), st.integers(1, 256),
       st.integers(1, 131072))
def test_finite_nonneg(p, opt, L, s):
    vals = [tm.optimizer_GB(params=p, optimizer=opt), tm.grads_GB(params=p),
            tm.activations_full_recompute_GB(layers=L, batch=1, seq_len=s, d_model=4096)]
    assert all(math.isfinite(v) and v >= 0 for v in vals)
