"""Step Time sheet, last block: the training time the plan uses (the scenario's ``time_model``).

``step`` (the default): the step-time model of this sheet; ``mfu`` ("MFU given"): the Plan sheet's
6PD / (N·peak·MFU) with the typed MFU (spec 17.5.3), as the book's worked cases do. Cost, Checks,
Summary, Comm and Storage read these rows; the Plan rows stay the MFU-given figures.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import train_cost as tc
from workbook.reference import training as tr
from workbook.units import SECONDS_PER_DAY

QUANTITIES = [
    Q("train_time_step_flag", "0/1", "Time model in use: 1 = the step-time model, 0 = MFU given", "Plan"),
    Q("train_step_time_s", "s", "Step time in use (step model, else at the MFU given)", "17.5.5"),
    Q("train_tokens_per_s", "tokens/s", "Cluster throughput in use", "17.5.2"),
    Q("train_tokens_per_s_per_gpu", "tokens/s", "Throughput per GPU in use", "17.5.2"),
    Q("train_tokens_per_day", "tokens", "Training tokens per day in use", "17.5.2"),
    Q("train_mfu", "fraction", "MFU in use (the step model's prediction, else the MFU given)", "17.5.2"),
    Q("train_days", "days", "Training days in use, incl. the overhead factor", "17.5.3"),
    Q("train_job_gpu_hours", "GPU-h", "GPU-hours of the job in use (N·days·24)", "17.5.9"),
    Q("train_meets_target_flag", "0/1", "The job's GPUs finish within the target days in use (1 = yes)", "17.5.4"),
    Q("train_gpus_needed", "GPUs", "GPUs the target days need, time model in use (step model, else MFU given)",
      "17.5.4", note="advisory: the job runs on its input N"),
    Q("train_days_at_needed_gpus", "days", "Training days on the GPUs needed, time model in use (incl. overhead)",
      "17.5.4"),
    Q("train_mfu_in_band_flag", "0/1", "MFU in use inside the plausible 20-60 % band (1 = yes)", "17.5.2"),
    Q("train_step_vs_mfu_days_x", "x", "Training days of the step model / at the MFU given", "docs/step_time.md"),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q = ctx.s.training, ctx.q
    step = t.time_model == "step"
    tok_s = q["st_tokens_per_s"] if step else q["plan_tokens_per_s"]
    days = q["st_train_days_with_overhead"] if step else q["plan_train_days_with_overhead"]
    mfu = q["st_mfu"] if step else t.mfu
    return {
        "train_time_step_flag": step,
        "train_step_time_s": q["st_step_s"] if step else q["plan_step_time_s"],
        "train_tokens_per_s": tok_s,
        "train_tokens_per_s_per_gpu": tok_s / t.num_gpus,
        "train_tokens_per_day": tok_s * SECONDS_PER_DAY,
        "train_mfu": mfu,
        "train_days": days,
        "train_job_gpu_hours": tc.gpu_hours(num_gpus=t.num_gpus, days=days),
        "train_meets_target_flag": days <= t.target_days,
        "train_gpus_needed": q["st_gpus_needed"] if step else q["plan_gpus_needed"],
        "train_days_at_needed_gpus": q["st_days_at_needed_gpus"] if step else q["plan_days_at_needed_gpus"],
        "train_mfu_in_band_flag": tr.MFU_WARN_LOW_FRAC <= mfu <= tr.MFU_WARN_HIGH_FRAC,
        "train_step_vs_mfu_days_x": q["st_train_days_with_overhead"] / q["plan_train_days_with_overhead"],
    }
