"""Unit tests for workbook.reference.ledger (seed 001 lecture; spec T4, T5, §9)."""

import pytest

from workbook.reference import ledger


def test_ledgers():
    assert ledger.ledger_bytes_per_param() == 16
    assert ledger.ledger_bytes_per_param(grad_bytes=4) == 18
    assert ledger.ledger_bytes_per_param(bucket_bytes=4) == 20
    assert ledger.ledger_bytes_per_param(grad_bytes=4, bucket_bytes=4) == 22


@pytest.mark.parametrize("stage,expected_GB", [(0, 1120), (1, 385), (2, 262.5), (3, 140)])
def test_zero_stages_seed001(stage, expected_GB):
    assert ledger.zero_per_gpu(params=70e9, stage=stage, dp=8).total_bytes / 1e9 == pytest.approx(expected_GB)


def test_zero1_8P_option_keeps_master():
    z = ledger.zero_per_gpu(params=236e9, stage=1, dp=8, model_parallel=8, sharded_optimizer_bytes=8)
    assert z.total_bytes / 1e9 == pytest.approx(265.5)
    with pytest.raises(ValueError):
        ledger.zero_per_gpu(params=1, stage=4, dp=1)


def test_activations_and_planner():
    assert ledger.activation_bytes_per_layer(batch=1, seq_len=1, d_model=1, n_heads=1, recompute="full") == 2
    with pytest.raises(ValueError):
        ledger.activation_bytes_per_layer(batch=1, seq_len=1, d_model=1, n_heads=1, recompute="some")
    p = ledger.planner_params(layers=80, d_model=8192, n_heads=64, n_kv_heads=8, d_ffn=28672)
    r = ledger.planner_infer(params_total=p["total"], layers=80, d_model=8192, n_heads=64, n_kv_heads=8, num_gpus=8,
                             seq_len=16384)
    assert r["max_concurrency"] == 93
    t = ledger.planner_train(params_total=p["total"], params_non_embed=p["non_embed"], layers=80, d_model=8192,
                             n_heads=64, num_gpus=1024)
    assert t["tokens_per_step"] == 4194304 and t["tokens_per_step_true"] == 524288
    assert t["step_FLOPs"] / 1e15 == pytest.approx(1722.6, rel=1e-4)
