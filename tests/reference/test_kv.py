"""Unit tests for workbook.reference.kv (spec 17.2.3, 17.4.9-17.4.10)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbook.reference import kv


def test_llama3_70b():
    assert kv.kv_cache_GB(layers=80, batch=1, seq_len=131072, n_kv_heads=8, head_dim=128) == pytest.approx(42.94967296)
    assert kv.kv_bytes_per_token(layers=80, n_kv_heads=8, head_dim=128) == 327_680
    assert kv.mla_kv_bytes_per_token(layers=1, kv_lora_rank=512, qk_rope_head_dim=64, kv_bytes=1) == 576


def test_schemes():
    assert kv.scheme_factor("none") == 1
    assert kv.scheme_factor("gqa-int8") == 0.5
    assert kv.scheme_factor("mla-8x") == 0.125
    assert kv.scheme_factor("evict-50pct") == 0.5
    assert kv.scheme_factor("mqa", mqa_vs_baseline=1 / 64) == 1 / 64
    with pytest.raises(ValueError):
        kv.scheme_factor("zip")


@given(L=st.integers(1, 200), b=st.integers(1, 512), s=st.integers(1, 1_000_000), g=st.integers(1, 128),
       dh=st.sampled_from([64, 128, 256]), by=st.sampled_from([0.5, 1, 2, 4]), k=st.integers(2, 16))
def test_linear_in_seq_and_batch(L, b, s, g, dh, by, k):
    base = kv.kv_cache_GB(layers=L, batch=b, seq_len=s, n_kv_heads=g, head_dim=dh, kv_bytes=by)
    assert math.isfinite(base) and base > 0
    assert kv.kv_cache_GB(layers=L, batch=b, seq_len=k * s, n_kv_heads=g, head_dim=dh, kv_bytes=by) == pytest.approx(k * base)
    assert kv.kv_cache_GB(layers=L, batch=k * b, seq_len=s, n_kv_heads=g, head_dim=dh, kv_bytes=by) == pytest.approx(k * base)
