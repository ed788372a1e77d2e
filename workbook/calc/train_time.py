"""Step Time sheet, last block: the training time the plan uses (the scenario's ``time_model``).

``step`` (the default): the step-time model of this sheet; ``mfu`` ("MFU given"): the Plan sheet's
6PD / (N·peak·MFU) with the typed MFU (spec 17.5.3), as the book's worked cases do; ``measured``: the
step model's hardware FLOPs per step at a measured TFLOP/s per GPU (block above). Cost, Checks,
Summary, Comm and Storage read these rows; the Plan rows stay the MFU-given figures.
"""

from __future__ import annotations

from typing import get_args

from workbook.calc.base import Context, Q
from workbook.reference import train_cost as tc
from workbook.reference import training as tr
from workbook.scenario.model import TimeModel
from workbook.units import SECONDS_PER_DAY

#: the time models in their list order (the CHOOSE position of the rows below)
TIME_MODELS = get_args(TimeModel)

QUANTITIES = [
    Q("train_time_model_position", "count", "Time model in use: position in the list step, mfu, measured", "Plan"),
    Q("train_step_time_s", "s", "Step time in use (step model, MFU given or measured rate)", "17.5.5"),
    Q("train_tokens_per_s", "tokens/s", "Cluster throughput in use", "17.5.2"),
    Q("train_tokens_per_s_per_gpu", "tokens/s", "Throughput per GPU in use", "17.5.2"),
    Q("train_tokens_per_day", "tokens", "Training tokens per day in use", "17.5.2"),
    Q("train_mfu", "fraction", "MFU in use (the step model's prediction, the MFU given, or the measured rate's)",
      "17.5.2"),
    Q("train_days", "days", "Training days in use, incl. the overhead factor", "17.5.3"),
    Q("train_job_gpu_hours", "GPU-h", "GPU-hours of the job in use (N·days·24)", "17.5.9"),
    Q("train_meets_target_flag", "0/1", "The job's GPUs finish within the target days in use (1 = yes)", "17.5.4"),
    Q("train_gpus_needed", "GPUs", "GPUs the target days need, time model in use", "17.5.4",
      note="advisory: the job runs on its input N"),
    Q("train_days_at_needed_gpus", "days", "Training days on the GPUs needed, time model in use (incl. overhead)",
      "17.5.4"),
    Q("train_mfu_in_band_flag", "0/1", "MFU in use inside the plausible 20-60 % band (1 = yes)", "17.5.2"),
    Q("train_step_vs_mfu_days_x", "x", "Training days of the step model / at the MFU given", "docs/step_time.md"),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q = ctx.s.training, ctx.q
    pos = TIME_MODELS.index(t.time_model)

    def pick(step: str, mfu: str, measured: str) -> float:
        return q[(step, mfu, measured)[pos]]

    tok_s = pick("st_tokens_per_s", "plan_tokens_per_s", "meas_tokens_per_s")
    days = pick("st_train_days_with_overhead", "plan_train_days_with_overhead", "meas_train_days_with_overhead")
    mfu = (q["st_mfu"], t.mfu, q["meas_mfu"])[pos]
    return {
        "train_time_model_position": pos + 1,
        "train_step_time_s": pick("st_step_s", "plan_step_time_s", "meas_step_s"),
        "train_tokens_per_s": tok_s,
        "train_tokens_per_s_per_gpu": tok_s / t.num_gpus,
        "train_tokens_per_day": tok_s * SECONDS_PER_DAY,
        "train_mfu": mfu,
        "train_days": days,
        "train_job_gpu_hours": tc.gpu_hours(num_gpus=t.num_gpus, days=days),
        "train_meets_target_flag": days <= t.target_days,
        "train_gpus_needed": pick("st_gpus_needed", "plan_gpus_needed", "meas_gpus_needed"),
        "train_days_at_needed_gpus": pick("st_days_at_needed_gpus", "plan_days_at_needed_gpus",
                                          "meas_days_at_needed_gpus"),
        "train_mfu_in_band_flag": tr.MFU_WARN_LOW_FRAC <= mfu <= tr.MFU_WARN_HIGH_FRAC,
        "train_step_vs_mfu_days_x": q["st_train_days_with_overhead"] / q["plan_train_days_with_overhead"],
    }
