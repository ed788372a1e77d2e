"""calc.train_memory on LLaMA-7B / H800 (spec 17.4.1-17.4.7)."""

import pytest

from tests.calc.part_a_context import make_context, run

P = 6_738_415_616


def test_adam_bf16_full_recompute():
    q = run(make_context(), "train_memory")
    assert q["train_static_bytes_per_param"] == 16
    assert q["train_static_GB"] == pytest.approx(16 * P / 1e9)
    assert q["train_optimizer_share_frac"] == pytest.approx(0.75)
    assert q["train_activations_GB"] == pytest.approx(1.073741824)
    assert q["train_total_GB"] == pytest.approx(16 * P / 1e9 + 1.073741824 + 2)
    assert q["train_min_gpus_zero3"] == 2
    assert q["act_no_recompute_GB"] == pytest.approx(44.426067968)


def test_fp32_has_no_separate_master_and_override():
    q = run(make_context(training={"precision": "fp32", "grad_precision": "fp32", "recompute": "none",
                                   "act_GB": 5.0}), "train_memory")
    assert q["train_static_bytes_per_param"] == 16  # 4 w + 4 g + 8 m,v
    assert q["train_master_GB"] == 0
    assert q["train_activations_GB"] == 5.0
