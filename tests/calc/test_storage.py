"""Storage sheet against hand calculations (spec 17.7)."""

from __future__ import annotations

import math

import pytest

from tests.calc._ctx import P, make_ctx, mfu_in_use, run
from workbook.calc import plan, storage


def test_quantities_complete_and_finite():
    ctx = make_ctx()
    ctx.q.update(plan.compute(ctx))
    ctx.q.update(mfu_in_use.compute(ctx))
    out = storage.compute(ctx)
    names = [x.name for x in storage.QUANTITIES]
    assert set(out) == set(names) and len(names) == len(set(names)) and 10 <= len(names) <= 40
    assert len({x.label for x in storage.QUANTITIES}) == len(names)
    assert all(math.isfinite(float(v)) and float(v) >= 0 for v in out.values())


def test_dataset_and_checkpoint():
    q = run(plan, mfu_in_use, storage)
    assert q["storage_dataset_raw_TB"] == pytest.approx(4.0)  # 1e12 tokens x 4 B
    assert q["storage_dataset_total_TB"] == pytest.approx(6.0)
    assert q["storage_tokenized_TB"] == pytest.approx(2.0)  # vocab 32000 -> uint16
    assert q["ckpt_size_GB"] == pytest.approx(P * 16 / 1e9)  # 107.84 GB
    assert q["ckpt_retention_TB"] == pytest.approx(20 * 0.10784)
    assert q["ckpt_cluster_mtbf_h"] == pytest.approx(10000 / 64)
    step = q["train_step_time_s"]
    assert q["ckpt_interval_max_steps"] == pytest.approx(10000 / 64 * 3600 / (step * 5))
    assert q["ckpt_sync_write_GBps"] == pytest.approx(107.84 / step)
    assert q["ckpt_async_write_GBps"] == pytest.approx(107.84 / (1000 * step))
    assert q["ckpt_save_time_s"] == pytest.approx(1.0784)
    assert q["ckpt_load_time_s"] == pytest.approx(1.0784)  # min(64 x 7, 100) = 100 GB/s


def test_read_bw_and_logs():
    q = run(plan, mfu_in_use, storage)
    step = q["train_step_time_s"]
    assert q["storage_read_MBps"] == pytest.approx(2_097_152 * 4 / step / 1e6)
    days = q["train_days"]
    assert q["logs_nccl_GB"] == pytest.approx(64 * 1 * days / 1e3)
    assert q["logs_prometheus_GB"] == pytest.approx(20 * 64 * days * 86400 / 15 * 1.5 / 1e9)
