"""Unit tests for workbook.reference.serving (spec 17.8.4-17.8.9, F5-F9)."""

from __future__ import annotations

import pytest

from workbook.reference import serving as sv


def test_capacity():
    assert sv.max_batch_per_group(hbm_GB=80, weight_per_gpu_GB=35, kv_per_gpu_GB=1.34217728 / 4, overhead_GB=2) == 128
    assert sv.max_batch_per_group(hbm_GB=80, weight_per_gpu_GB=140, kv_per_gpu_GB=1.3) == 0
    assert sv.model_replicas(num_gpus=16, tp=8, pp=2) == 1
    assert sv.total_concurrency(replicas=2, batch_per_group=128) == 256


def test_paged_and_prefix():
    assert sv.blocks_needed(tokens=700) == 44 and sv.blocks_needed(tokens=4096) == 256
    assert sv.prefix_shared_tokens(requests=20, shared_prefix_tokens=128, tokens_per_request=700) == 11568
    assert sv.effective_concurrency(nominal=64, utilisation_frac=0.2) == 13
    assert sv.cost_reduction_frac(capacity_gain_x=4.5) == pytest.approx(0.7778, rel=1e-4)


def test_speculative():
    assert sv.expected_tokens_per_step(alpha=0.8, draft_tokens=5) == pytest.approx(3.68928)
    assert sv.expected_tokens_per_step(alpha=1.0, draft_tokens=5) == 6
    assert sv.expected_tokens_per_step(alpha=0.0, draft_tokens=5) == 1
    with pytest.raises(ValueError):
        sv.expected_tokens_per_step(alpha=1.2, draft_tokens=5)


def test_chunked_schedulers():
    chunk = sv.chunk_time_s(params=70e9, chunk_tokens=512, peak_TFLOPS=989.5, efficiency_frac=0.7)
    assert chunk * 1e3 == pytest.approx(103.487, rel=5e-6)
    assert sv.n_chunks(prompt_tokens=131072) == 256
    assert sv.ttft_worst_token_budget_s(chunk_s=chunk) == 2 * chunk
    assert sv.ttft_unchunked_s(long_prefill_s=26.5, arrival_gap_s=1, own_prefill_s=0.04) == pytest.approx(25.54)
