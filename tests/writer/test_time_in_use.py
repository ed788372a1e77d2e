"""Behaviour test of the time model in use (issue 7 follow-up): in the built default workbook, switch
a scenario to the step-time model and change an input that moves the step model's time (GA), recalculate
with LibreOffice, and check that the Comm and Storage rows reading the step time in use move with it;
switched back to the MFU given, they equal the MFU-given figures again. Expectations are equalities
and ratios between recalculated cells, never cached values.

Scenario 0 of the default workbook is llama-7b on 256 H800 (GA 16, pure DP, ZeRO-3, MFU given);
scenario 3 is llama-3-70b on 640 H800 (TP, PP; its communication share is over the 20 % limit at the
MFU-given step time).
"""

from __future__ import annotations

import math

import pytest

from tests.writer.edits import EditBook, Layout, Recalc, recalc_edited
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

REL = 1e-9
GA = "training.grad_accum"
TM = "training.time_model"


def _step(b: EditBook, i: int) -> None:
    b.plan(TM, i, "step")


def _ga_x2(b: EditBook, i: int) -> None:
    b.plan(GA, i, 2 * b.plan_cell(GA, i).value)


EDITS = {
    "roundtrip": [],
    "step_0": [lambda b: _step(b, 0)],
    "step_0_ga_x2": [lambda b: _step(b, 0), lambda b: _ga_x2(b, 0)],
    "step_0_ga_x2_back_to_mfu": [lambda b: _step(b, 0), lambda b: _ga_x2(b, 0), lambda b: b.plan(TM, 0, "mfu")],
    "step_3": [lambda b: _step(b, 3)],
}


def close(a, b, rel=REL) -> bool:
    return isinstance(a, float) and math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


@pytest.fixture(scope="module")
def rc(built, tmp_path_factory) -> dict[str, Recalc]:
    return recalc_edited(built[0], tmp_path_factory.mktemp("time_in_use"), EDITS, Layout(built[0]))


#: Storage and Comm rows proportional to the step time (x) or to its inverse (1/x), and to the run's days
PER_STEP = [("Storage", "ckpt_interval_min"), ("Comm", "comm_compute_step_s")]
PER_INVERSE_STEP = [("Storage", "ckpt_sync_write_GBps"), ("Storage", "ckpt_async_write_GBps"),
                    ("Storage", "ckpt_interval_max_steps"), ("Comm", "comm_dp_bw_needed_GBps")]
PER_DAY = [("Storage", "ckpt_failures_expected"), ("Storage", "logs_stdout_GB"), ("Storage", "logs_nccl_GB")]


def _step_and_days(r: Recalc, i: int, model: str) -> tuple[float, float]:
    if model == "step":
        return r.get("Step Time", "st_step_s", i), r.get("Step Time", "st_train_days_with_overhead", i)
    return r.get("Plan", "plan_step_time_s", i), r.get("Plan", "plan_train_days_with_overhead", i)


def _assert_reads(r: Recalc, base: Recalc, i: int, model: str) -> None:
    """Every per-step and per-day row of *r* is the base's scaled by the step time and days of *model*."""
    step, days = _step_and_days(r, i, model)
    step0, days0 = _step_and_days(base, i, "mfu")
    assert r.get("Step Time", "train_step_time_s", i) == step and r.get("Step Time", "train_days", i) == days
    tokens = r.get("Plan", "plan_tokens_per_step", i) / base.get("Plan", "plan_tokens_per_step", i)
    for sheet, key in PER_STEP:
        assert close(r.get(sheet, key, i), base.get(sheet, key, i) * step / step0), key
    for sheet, key in PER_INVERSE_STEP:
        assert close(r.get(sheet, key, i), base.get(sheet, key, i) * step0 / step), key
    for sheet, key in PER_DAY:
        assert close(r.get(sheet, key, i), base.get(sheet, key, i) * days / days0), key
    assert close(r.get("Storage", "storage_read_MBps", i), base.get("Storage", "storage_read_MBps", i)
                 * tokens * step0 / step)
    assert close(r.get("Storage", "ckpt_count_written", i), base.get("Storage", "ckpt_count_written", i)
                 * days / days0 * step0 / step)
    total = r.get("Comm", "comm_total_time_s", i)
    assert close(r.get("Comm", "comm_share_frac", i), total / (total + step))


def test_base_reads_the_mfu_given_figures(rc):
    base = rc["roundtrip"]
    for i in (0, 3):
        assert base.get("Step Time", "train_step_time_s", i) == base.get("Plan", "plan_step_time_s", i)
        assert base.get("Comm", "comm_compute_step_s", i) == base.get("Plan", "plan_step_time_s", i)
        assert base.get("Step Time", "train_gpus_needed", i) == base.get("Plan", "plan_gpus_needed", i)


def test_step_model_drives_storage_and_comm(rc):
    r, base = rc["step_0"], rc["roundtrip"]
    _assert_reads(r, base, 0, "step")
    assert not close(r.get("Step Time", "st_step_s", 0), base.get("Plan", "plan_step_time_s", 0), rel=1e-3)
    # the step model's shorter step brings the checkpoint interval inside the MTBF rule
    assert base.get("Checks", "warn_ckpt_interval", 0) == 1.0 and r.get("Checks", "warn_ckpt_interval", 0) == 0.0
    assert r.get("Summary", "summary_ckpt_interval", 0) == "PASS"
    assert r.get("Plan", "plan_step_time_s", 0) == base.get("Plan", "plan_step_time_s", 0)  # MFU given, still shown
    for j in (1, 2, 3):  # the other scenarios keep the MFU given
        assert r.get("Storage", "ckpt_interval_min", j) == base.get("Storage", "ckpt_interval_min", j)


def test_a_larger_ga_moves_the_step_model_and_what_reads_it(rc):
    r, step_0, base = rc["step_0_ga_x2"], rc["step_0"], rc["roundtrip"]
    assert r.get("Step Time", "st_step_s", 0) > 1.5 * step_0.get("Step Time", "st_step_s", 0)  # about 2x
    _assert_reads(r, base, 0, "step")
    assert close(r.get("Storage", "ckpt_interval_min", 0), step_0.get("Storage", "ckpt_interval_min", 0)
                 * r.get("Step Time", "st_step_s", 0) / step_0.get("Step Time", "st_step_s", 0))


def test_back_to_mfu_the_rows_are_the_mfu_given_figures(rc):
    r, base = rc["step_0_ga_x2_back_to_mfu"], rc["roundtrip"]
    _assert_reads(r, base, 0, "mfu")
    assert close(r.get("Plan", "plan_step_time_s", 0), 2 * base.get("Plan", "plan_step_time_s", 0))
    assert r.get("Step Time", "train_gpus_needed", 0) == r.get("Plan", "plan_gpus_needed", 0)
    assert r.get("Step Time", "train_days_at_needed_gpus", 0) == r.get("Plan", "plan_days_at_needed_gpus", 0)


def test_comm_share_warning_follows_the_step_time_in_use(rc):
    r, base, i = rc["step_3"], rc["roundtrip"], 3
    _assert_reads(r, base, i, "step")
    for x in (r, base):
        share = x.get("Comm", "comm_share_frac", i)
        assert x.get("Checks", "warn_comm_share", i) == x.get("Comm", "comm_over_limit_flag", i)
        assert x.get("Summary", "summary_comm_share", i) == ("WARN" if x.get("Comm", "comm_over_limit_flag", i)
                                                            else "PASS")
        assert 0 < share < 1
    # at the MFU-given step the share is over the 20 % limit; the step model's longer step brings it under
    assert base.get("Checks", "warn_comm_share", i) == 1.0 and r.get("Checks", "warn_comm_share", i) == 0.0
    assert r.get("Comm", "comm_share_frac", i) < base.get("Comm", "comm_share_frac", i)


def test_gpus_needed_in_use_under_the_step_model(rc):
    r, i = rc["step_0"], 0
    n, days = r.get("Summary", "training.num_gpus", i), r.get("Step Time", "st_train_days_with_overhead", i)
    target, unit = r.get("Summary", "training.target_days", i), r.get("Step Time", "st_gpu_step", i)
    assert unit == 8  # pure DP on 8-GPU nodes: whole nodes
    raw = r.get("Step Time", "st_gpus_time_raw", i)
    assert close(raw, n * days / target)
    need = r.get("Step Time", "st_gpus_needed", i)
    assert need % unit == 0 and need >= raw > need - unit
    assert r.get("Step Time", "train_gpus_needed", i) == need
    assert close(r.get("Step Time", "train_days_at_needed_gpus", i), days * n / need)
    assert r.get("Step Time", "train_days_at_needed_gpus", i) <= target
