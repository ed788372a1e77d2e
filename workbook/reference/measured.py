"""Training time at a measured throughput, and utilisation against a stated peak (issue 7 item 5).

A measured TFLOP/s per GPU, as a profiler or Megatron's log reports it, counts hardware FLOPs: the
recompute passes are included (Narayanan et al. 2021, arXiv 2104.04473, eq. 3 counts 4 passes under
full recompute). The step time at that rate is therefore hardware FLOPs per step / (N x rate). MFU
counts model FLOPs and HFU hardware FLOPs, both over the same stated peak (dense BF16 unless the
user asks for the training precision's, e.g. FP8; Chowdhery et al. 2022, PaLM, appendix B).

Pure functions: numbers in, numbers out. Times in s; rates and peaks in TFLOP/s per GPU.
"""

from __future__ import annotations

import math

from workbook.units import TERA


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a finite positive number, got {v!r}")


def step_time_at_rate_s(*, hardware_FLOPs_per_step: float, num_gpus: float, TFLOPS_per_gpu: float) -> float:
    """Step time at a sustained hardware rate: hardware FLOPs per step / (N x TFLOP/s x 1e12)."""
    _pos(num_gpus=num_gpus, TFLOPS_per_gpu=TFLOPS_per_gpu)
    return hardware_FLOPs_per_step / (num_gpus * TFLOPS_per_gpu * TERA)


def TFLOPS_per_gpu(*, FLOPs_per_step: float, num_gpus: float, step_s: float) -> float:  # noqa: N802
    """FLOPs per step over (N x step time), in TFLOP/s per GPU (model FLOPs: the model rate)."""
    _pos(num_gpus=num_gpus, step_s=step_s)
    return FLOPs_per_step / (num_gpus * step_s) / TERA


def utilisation_frac(*, FLOPs_per_step: float, num_gpus: float, step_s: float, peak_TFLOPS: float) -> float:
    """FLOPs per step / (N x peak x step time): the MFU of model FLOPs, the HFU of hardware FLOPs."""
    _pos(num_gpus=num_gpus, step_s=step_s, peak_TFLOPS=peak_TFLOPS)
    return FLOPs_per_step / (step_s * num_gpus * (peak_TFLOPS * TERA))  # the order of step_time.step_time
