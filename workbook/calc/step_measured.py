"""Step Time sheet, fifth block: the training time at a measured hardware TFLOP/s per GPU
(``time_model: measured``; workbook.reference.measured).

A measured rate counts hardware FLOPs (recompute included, as a profiler or Megatron's log reports it),
so the step takes the step model's hardware FLOPs per step (Narayanan et al. 2021 eq. 3 counting) over
N x the rate. MFU (model FLOPs) and HFU (hardware FLOPs) follow, over the peak an MFU refers to. A
blank rate takes the step model's predicted hardware TFLOP/s (then this block equals the step model);
the time model ``measured`` requires a typed rate. The GPUs the target days need hold the per-GPU rate
(the same approximation as the step model's count, workbook.calc.step_gpus).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.calc.plan import ceil_count_xl
from workbook.reference import measured as mea
from workbook.units import SECONDS_PER_DAY

_S = "docs/step_time.md"
_NOTE = "advisory, per-GPU rate held at the measured one"

QUANTITIES = [
    Q("meas_TFLOPS_per_gpu", "TFLOPS", "Hardware TFLOP/s per GPU in use: the measured rate (blank = the step model's)",
      "Narayanan 2021 eq. 3", note="recompute counted"),
    Q("meas_step_s", "s", "Step time at the measured rate: hardware FLOPs per step / (N·TFLOP/s)", _S),
    Q("meas_tokens_per_s", "tokens/s", "Cluster throughput at the measured rate", _S),
    Q("meas_model_TFLOPS_per_gpu", "TFLOPS", "Model TFLOP/s per GPU at the measured rate", _S),
    Q("meas_mfu", "fraction", "MFU implied by the measured rate (model FLOPs / (N·MFU peak·step))", _S),
    Q("meas_hfu", "fraction", "HFU of the measured rate (hardware FLOPs / (N·MFU peak·step))", _S),
    Q("meas_train_days", "days", "Training days at the measured rate, compute only", _S),
    Q("meas_train_days_with_overhead", "days", "Training days at the measured rate incl. the overhead factor", "17.5.3"),
    Q("meas_gpus_time_raw", "GPUs", "GPUs the target days need at the measured rate, unrounded", "17.5.4", note=_NOTE),
    Q("meas_gpus_needed", "GPUs", "GPUs the target days need at the measured rate: max(memory, time) in whole steps",
      "17.5.4", note=_NOTE),
    Q("meas_days_at_needed_gpus", "days", "Training days at the measured rate on its needed GPU count (incl. overhead)",
      "17.5.4", note=_NOTE),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q = ctx.s.training, ctx.q
    n = t.num_gpus
    rate = q["st_hardware_TFLOPS_per_gpu"] if t.measured_TFLOPS_per_gpu is None else t.measured_TFLOPS_per_gpu
    step_s = mea.step_time_at_rate_s(hardware_FLOPs_per_step=q["st_hardware_FLOPs_per_step"], num_gpus=n,
                                     TFLOPS_per_gpu=rate)
    at_peak = dict(num_gpus=n, step_s=step_s, peak_TFLOPS=q["mfu_peak_TFLOPS"])
    tok_s = q["st_tokens_per_step"] / step_s
    days = t.tokens / tok_s / SECONDS_PER_DAY
    days_ovh = days * t.overhead_factor
    n_time = n * days_ovh / t.target_days
    gpu_step = q["st_gpu_step"]
    needed = ceil_count_xl(max(n_time, q["plan_gpus_memory_floor"]) / gpu_step) * gpu_step
    return {
        "meas_TFLOPS_per_gpu": rate,
        "meas_step_s": step_s,
        "meas_tokens_per_s": tok_s,
        "meas_model_TFLOPS_per_gpu": mea.TFLOPS_per_gpu(FLOPs_per_step=q["st_model_FLOPs_per_step"], num_gpus=n,
                                                        step_s=step_s),
        "meas_mfu": mea.utilisation_frac(FLOPs_per_step=q["st_model_FLOPs_per_step"], **at_peak),
        "meas_hfu": mea.utilisation_frac(FLOPs_per_step=q["st_hardware_FLOPs_per_step"], **at_peak),
        "meas_train_days": days,
        "meas_train_days_with_overhead": days_ovh,
        "meas_gpus_time_raw": n_time,
        "meas_gpus_needed": needed,
        "meas_days_at_needed_gpus": days_ovh * n / needed,
    }
