"""ZeRO stages (spec 17.4.8): per-GPU static memory for stages 0-3 and ZeRO-3 traffic. GB.

``zero_per_gpu_GB(stage=3)`` is the spec's plain (w + g + o)/N (the book variant); the ZeRO-3
working set (the gathered largest layer, DeepSpeed's estimator) is ``zero3_working_set_bytes``.
"""

from __future__ import annotations

from workbook.units import GB, MiB

STAGES = (0, 1, 2, 3)


def zero_per_gpu_bytes_per_param(*, stage: int, n: int, weight_bytes: float = 2.0, grad_bytes: float = 2.0,
                                 optimizer_bytes: float = 12.0) -> float:
    """Bytes per parameter held by one data-parallel rank (spec 17.4.8, corrected per-GPU totals).

    ZeRO-0: w + g + o; ZeRO-1: w + g + o/N; ZeRO-2: w + (g + o)/N; ZeRO-3: (w + g + o)/N.
    With the 16 B ledger: 16P, 4P + 12P/N, 2P + 14P/N, 16P/N.
    """
    if stage not in STAGES:
        raise ValueError(f"ZeRO stage must be 0-3, got {stage}")
    if n < 1:
        raise ValueError("data-parallel degree n must be >= 1")
    if min(weight_bytes, grad_bytes, optimizer_bytes) < 0:
        raise ValueError("bytes per parameter must be non-negative")
    w, g, o = weight_bytes, grad_bytes, optimizer_bytes
    if stage == 0:
        return w + g + o
    if stage == 1:
        return w + g + o / n
    if stage == 2:
        return w + (g + o) / n
    return (w + g + o) / n


def zero_per_gpu_GB(*, params: float, stage: int, n: int, weight_bytes: float = 2.0, grad_bytes: float = 2.0,
                    optimizer_bytes: float = 12.0, model_parallel: int = 1) -> float:
    """Static memory per GPU for a ZeRO stage, params split over a model-parallel group of
    ``model_parallel`` = TP·PP GPUs first (spec 17.4.8, 17.4.7 Table 17-45)."""
    if params < 0 or model_parallel < 1:
        raise ValueError("params >= 0 and model_parallel >= 1")
    b = zero_per_gpu_bytes_per_param(stage=stage, n=n, weight_bytes=weight_bytes, grad_bytes=grad_bytes,
                                     optimizer_bytes=optimizer_bytes)
    return params / model_parallel * b / GB


def zero_sharded_slice_GB(*, params: float, stage: int, n: int, weight_bytes: float = 2.0,
                          grad_bytes: float = 2.0, optimizer_bytes: float = 12.0) -> float:
    """Only the sharded part per GPU (the book's Table 17-46 'formula' for ZeRO-1/2: 12P/N, 14P/N)."""
    sharded = {0: 0.0, 1: optimizer_bytes, 2: grad_bytes + optimizer_bytes,
               3: weight_bytes + grad_bytes + optimizer_bytes}[stage]
    return params * sharded / n / GB


def zero3_traffic_GB(*, params: float, bytes_per_elem: float = 2.0, n: int | None = None) -> float:
    """ZeRO-3 bytes moved per GPU per step: forward all-gather + backward all-gather + gradient
    reduce-scatter = 3 × P·bytes (6P in BF16), × (N−1)/N when N is given (spec 17.4.8, corrected)."""
    factor = 1.0 if n is None else (n - 1) / n
    return 3 * params * bytes_per_elem * factor / GB


def dp_allreduce_traffic_GB(*, params: float, bytes_per_elem: float = 2.0, n: int | None = None) -> float:
    """Plain DP gradient all-reduce: 2 × P·bytes (4P in BF16), × (N−1)/N when N is given (spec 17.4.8)."""
    factor = 1.0 if n is None else (n - 1) / n
    return 2 * params * bytes_per_elem * factor / GB


# --------------------------------------------------------------------------- ZeRO-3 working set (DeepSpeed)
#: copies of a layer's weight bytes that ZeRO-3 holds while the layer runs: the gathered 16-bit
#: weights and the 16-bit gradients computed before the reduce-scatter (DeepSpeed
#: docs/code-docs/source/memory.rst: "largest_layer_memory = 4*largest_layer_params ... 2 bytes fp16
#: params are gathered and 2 bytes fp16 grads are computed (total 4x)")
ZERO3_GATHERED_COPIES = 2.0


def zero3_working_set_bytes(*, layer_params: float, weight_bytes: float = 2.0,
                            copies: float = ZERO3_GATHERED_COPIES) -> float:
    """Bytes of the largest layer gathered by ZeRO-3 on one GPU: layer params x weight bytes x 2
    (gathered weights + their gradients; 4 B/param in BF16 as DeepSpeed's estimator counts it)."""
    if layer_params < 0 or weight_bytes < 0 or copies < 0:
        raise ValueError("layer_params, weight_bytes and copies must be non-negative")
    return layer_params * weight_bytes * copies


def deepspeed_zero3_gpu_bytes(*, total_params: float, largest_layer_params: float, total_gpus: int,
                              state_bytes_per_param: float = 18.0) -> float:
    """DeepSpeed's ZeRO-3 estimate per GPU without offload (deepspeed/runtime/zero/stage3.py
    ``estimate_zero3_model_states_mem_needs``, cpu_offload=False: ``4 * largest_layer_params +
    int(18 * total_params / total_gpus)``; 18 = fp16 params 2 + fp32 grads 4 + fp32 master and
    Adam m, v 12). Bytes; its printout divides by 2**30 and labels the result "GB"."""
    if total_gpus < 1 or total_params < 0 or largest_layer_params < 0:
        raise ValueError("total_gpus >= 1, parameter counts >= 0")
    return (zero3_working_set_bytes(layer_params=largest_layer_params)
            + int(state_bytes_per_param * total_params / total_gpus))


# --------------------------------------------------------------------------- what a fit compares with
def device_capacity_GB(*, hbm_device_MiB: float, allocatable_frac: float) -> float:
    """Memory a training job can fill on one GPU, GB: the device's bytes as nvidia-smi reports them
    (MiB = 2^20 B; 81,559 MiB = 85.5 GB on an "80 GB" H100) x the share the caching allocator can
    hand out (fragmentation; the CUDA context and NCCL buffers are the runtime overhead)."""
    if hbm_device_MiB <= 0 or not 0 < allocatable_frac <= 1:
        raise ValueError("hbm_device_MiB > 0 and 0 < allocatable_frac <= 1")
    return hbm_device_MiB * MiB / GB * allocatable_frac


def fits(*, need_GB: float, capacity_GB: float) -> bool:
    """The memory fit check: need <= capacity."""
    return need_GB <= capacity_GB
