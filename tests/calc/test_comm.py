"""Comm sheet against hand calculations (spec 17.6)."""

from __future__ import annotations

import math

import pytest

from tests.calc._ctx import P, make_ctx, mfu_in_use, run
from workbook.calc import comm, plan


def test_quantities_complete_and_finite():
    ctx = make_ctx()
    ctx.q.update(plan.compute(ctx))
    ctx.q.update(mfu_in_use.compute(ctx))
    out = comm.compute(ctx)
    names = [x.name for x in comm.QUANTITIES]
    assert set(out) == set(names) and len(names) == len(set(names)) and 10 <= len(names) <= 40
    assert len({x.label for x in comm.QUANTITIES}) == len(names)
    assert all(math.isfinite(float(v)) for v in out.values())


def test_pure_dp_over_ib():
    q = run(plan, mfu_in_use, comm)
    grad = 2 * P / 1e9  # 13.48 GB
    assert q["comm_ib_per_gpu_GBps"] == 50
    assert q["comm_dp_volume_GB"] == pytest.approx(2 * 63 / 64 * grad)
    assert q["comm_dp_time_s"] == pytest.approx(2 * 63 / 64 * grad / 50)  # 0.531 s
    assert q["comm_tp_time_s"] == 0 and q["comm_pp_time_s"] == 0
    share = q["comm_dp_time_s"] / (q["comm_dp_time_s"] + q["train_step_time_s"])
    assert q["comm_share_frac"] == pytest.approx(share)  # about 13.7 %
    assert q["comm_over_limit_flag"] == 0
    assert q["comm_dp_weak_limit_s"] == pytest.approx(2 * grad / 50)
    # hierarchical: 8 DP ranks per node, ring over 8 nodes on 1/8 of the gradient
    assert q["comm_dp_bw_needed_hier_GBps"] == pytest.approx(2 * 7 / 8 * grad / 8 / q["train_step_time_s"])


def test_tp_pp_volumes():
    q = run(plan, mfu_in_use, comm, tp=4, pp=2, num_gpus=64, grad_accum=8)
    v_tp = 8 * (32 / 2) * 16 * 1 * 4096 * 4096 * 3 / 4 / 1e9  # GA x L/PP x 16BSd(t-1)/t
    assert q["comm_tp_volume_GB"] == pytest.approx(v_tp)
    assert q["comm_tp_time_s"] == pytest.approx(v_tp / 150)  # NVLink 400 x 0.375
    assert q["comm_pp_volume_GB"] == pytest.approx(8 * 4 * 4096 * 4096 / 1e9)
    assert q["comm_dp_grad_shard_GB"] == pytest.approx(2 * P / 8 / 1e9)
    assert q["comm_step_time_s"] >= q["comm_compute_step_s"]
