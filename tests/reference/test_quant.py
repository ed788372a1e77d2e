"""Unit tests for workbook.reference.quant (spec 17.8.10, F10)."""

import pytest

from workbook.reference import quant


def test_quant():
    assert quant.weight_bytes(params=70e9, bytes_per_param=0.5) == 35e9
    assert quant.decode_speedup_vs_bf16_x(bytes_per_param=0.5) == 4
    assert quant.practical_throughput_tok_per_s(bound_tok_per_s=4000, practical_speedup_x=3, theoretical_speedup_x=4) == 3000
    assert quant.perplexity_increase_pct(ppl_baseline=5.47, ppl_quantised=5.62) == pytest.approx(2.74223, rel=1e-5)
    assert quant.kv_bytes_scaled(kv_bytes_bf16=10, kv_bytes_per_elem=1) == 5
    with pytest.raises(ValueError):
        quant.decode_speedup_vs_bf16_x(bytes_per_param=0)
