"""calc.step_measured and the measured time model in use (calc.train_time), and the MFU peak basis, on a
catalogue scenario (Llama 3 70B on 256 H100, TP 8 x PP 4)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.calc.test_step_time import CATALOG, _scenario
from workbook.calc import compute
from workbook.scenario.model import TrainingInputs


def test_measured_rate_sets_the_step_from_the_hardware_flops():
    q = compute(_scenario(time_model="measured", measured_TFLOPS_per_gpu=400, overhead_factor=1.1), CATALOG)
    assert q["meas_TFLOPS_per_gpu"] == 400
    assert q["meas_step_s"] == pytest.approx(q["st_hardware_FLOPs_per_step"] / (256 * 400e12))
    assert q["meas_tokens_per_s"] == pytest.approx(q["st_tokens_per_step"] / q["meas_step_s"])
    assert q["meas_train_days_with_overhead"] == pytest.approx(1.1 * 1e12 / q["meas_tokens_per_s"] / 86400)
    # HFU is the measured rate over the BF16 peak; MFU removes the recompute share
    assert q["meas_hfu"] == pytest.approx(400 / 989.5)
    assert q["meas_mfu"] == pytest.approx(q["meas_hfu"] * q["st_model_FLOPs_per_step"] / q["st_hardware_FLOPs_per_step"])
    # the rows in use follow, and Cost with them
    assert q["train_time_model_position"] == 3
    for use, meas in (("train_days", "meas_train_days_with_overhead"), ("train_step_time_s", "meas_step_s"),
                      ("train_tokens_per_s", "meas_tokens_per_s"), ("train_mfu", "meas_mfu"),
                      ("train_gpus_needed", "meas_gpus_needed"), ("train_days_at_needed_gpus", "meas_days_at_needed_gpus")):
        assert q[use] == q[meas], use
    assert q["train_days_actual"] == q["train_days"]
    assert q["train_job_gpu_hours"] == pytest.approx(256 * 24 * q["train_days"])


def test_days_follow_the_measured_rate_inversely():
    a = compute(_scenario(time_model="measured", measured_TFLOPS_per_gpu=300), CATALOG)
    b = compute(_scenario(time_model="measured", measured_TFLOPS_per_gpu=450), CATALOG)
    assert b["train_days"] == pytest.approx(a["train_days"] * 300 / 450)
    assert b["train_cost_usd"] == pytest.approx(a["train_cost_usd"] * 300 / 450)
    assert a["st_train_days_with_overhead"] == b["st_train_days_with_overhead"]  # the step model does not move


def test_recompute_counts_in_the_hardware_rate():
    # full recompute: the same measured rate does more FLOPs per step, so the step is longer and MFU lower
    none = compute(_scenario(time_model="measured", measured_TFLOPS_per_gpu=400), CATALOG)
    full = compute(_scenario(time_model="measured", measured_TFLOPS_per_gpu=400, recompute="full"), CATALOG)
    assert full["meas_step_s"] > none["meas_step_s"] and full["meas_mfu"] < none["meas_mfu"]
    assert none["meas_mfu"] == pytest.approx(none["meas_hfu"])  # no recompute: model FLOPs = hardware FLOPs
    assert full["meas_hfu"] == none["meas_hfu"]


def test_blank_rate_is_the_step_models_and_is_refused_under_measured():
    q = compute(_scenario(time_model="step"), CATALOG)
    assert q["meas_TFLOPS_per_gpu"] == q["st_hardware_TFLOPS_per_gpu"]
    assert q["meas_step_s"] == pytest.approx(q["st_step_s"])
    with pytest.raises(ValidationError, match="measured_TFLOPS_per_gpu"):
        TrainingInputs(time_model="measured")
    assert TrainingInputs(time_model="mfu").measured_TFLOPS_per_gpu is None


def test_mfu_given_refers_to_the_stated_peak():
    """An FP8 run at MFU 0.4: over the BF16 peak by default; over the FP8 peak (half the days) when asked."""
    bf16 = compute(_scenario(time_model="mfu", precision="fp8"), CATALOG)
    fp8 = compute(_scenario(time_model="mfu", precision="fp8", mfu_peak="precision"), CATALOG)
    assert bf16["mfu_peak_TFLOPS"] == 989.5 and fp8["mfu_peak_TFLOPS"] == 1979
    assert bf16["train_peak_TFLOPS"] == fp8["train_peak_TFLOPS"] == 1979  # the roofline keeps the FP8 peak
    assert fp8["plan_train_days_with_overhead"] == pytest.approx(bf16["plan_train_days_with_overhead"] * 989.5 / 1979)
    assert fp8["ideal_gpu_days"] == pytest.approx(bf16["ideal_gpu_days"] * 989.5 / 1979)
    # the step model computes at the BF16 rates either way; only its reported MFU and HFU change basis
    assert fp8["st_step_s"] == bf16["st_step_s"]
    assert fp8["st_mfu"] == pytest.approx(bf16["st_mfu"] / 2) and fp8["st_hfu"] == pytest.approx(bf16["st_hfu"] / 2)
