"""Unit and property tests for workbook.reference.infer_cost (spec 17.8.11 F11, 17.9 T8)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbook.reference import infer_cost as ic
from workbook.reference import inference as inf


def test_cost_book_values():
    assert ic.cost_per_1M_tokens_usd(num_gpus=8, gpu_hour_usd=3.0, throughput_tok_per_s=2500) == pytest.approx(2.66667, rel=1e-5)
    assert ic.breakeven_M_tokens_per_day(num_gpus=4, gpu_hour_usd=2.5, api_usd_per_1M=2.5, infra_usd_per_1M=0.5) == 120
    assert ic.breakeven_M_tokens_per_day(num_gpus=4, gpu_hour_usd=2.5, api_usd_per_1M=0.5, infra_usd_per_1M=0.5) == math.inf
    assert ic.cost_per_request_usd(prompt_tokens=3600, output_tokens=0, throughput_tok_per_s=1, num_gpus=1, gpu_hour_usd=2) == 2
    assert ic.spot_saving_within(on_demand_range_usd=(2.5, 4.0), spot_range_usd=(0.8, 1.2))
    assert not ic.spot_saving_within(on_demand_range_usd=(2.5, 4.0), spot_range_usd=(2.0, 1.2))
    assert ic.lora_extra_GB(adapters=100, adapter_MB=50) == 5
    assert ic.owned_break_even_hours(capex_usd_per_gpu=100, gpu_hour_usd=1, opex_usd_per_gpu_hour=2) == math.inf


@given(b1=st.integers(1, 512), b2=st.integers(1, 512), w=st.floats(1e9, 2e11), kv=st.floats(0, 5e9),
       bw=st.floats(500, 10000), price=st.floats(0.1, 10), n=st.integers(1, 16))
def test_cost_per_token_non_increasing_in_batch_while_memory_bound(b1, b2, w, kv, bw, price, n):
    """Memory-bound decode: a larger batch never raises the cost per 1M tokens (spec F3, F11)."""
    lo, hi = sorted((b1, b2))

    def cost(b):
        s = inf.decode_step(params_per_gpu=1.0, batch=b, weight_bytes_per_gpu=w, kv_bytes_per_request_per_gpu=kv,
                            peak_TFLOPS=1e6, hbm_bw_GBps=bw)  # compute negligible: memory-bound
        assert s.memory_bound
        return ic.cost_per_1M_tokens_usd(num_gpus=n, gpu_hour_usd=price, throughput_tok_per_s=s.throughput_tok_per_s)

    assert cost(hi) <= cost(lo) * (1 + 1e-12)
