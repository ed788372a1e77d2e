"""Unit tests for workbook.reference.infer_memory (spec 17.4.11)."""

import pytest

from workbook.reference import infer_memory as im


def test_table17_54_tp4():
    per = im.inference_per_gpu(weights_GB=140, kv_GB=42.94967296, tp=4, act_GB=2, overhead_GB=2)
    assert per["total_GB"] == pytest.approx(49.73741824)
    assert im.min_tp_to_fit(weights_GB=140, kv_GB=42.94967296, hbm_GB=80, act_GB=2, overhead_GB=2) == 4


def test_kv_heads_limit_tp_split():
    per = im.inference_per_gpu(weights_GB=16, kv_GB=8, tp=16, n_kv_heads=8)
    assert per["kv_GB"] == 1
    assert im.dominant_term(weights_GB=140, kv_GB=2748.8) == "kv"
    assert im.gpus_that_fit(need_GB=85.4, hbm_GB={"H800": 80, "H20": 96}) == ["H20"]
