"""Parallel layout (spec 17.5.8, 17.5.10): decomposition N = TP*PP*DP, range rules, pipeline bubble,
and the layout procedure (memory floor, time-driven GPU count, rounding to whole replicas).

EP convention: Megatron (EP is carved out of DP, N = TP*PP*DP, DP % EP == 0) by default; the
book's N = TP*PP*DP*EP is available as ep_convention="book".
"""

from __future__ import annotations

import math

from workbook.reference import args
from workbook.reference.training import ceil_count, gpus_raw, round_gpus_to_group
from workbook.units import GB, MB, TB

#: table 17-62 (spec 17.5.8): range rule of each parallel dimension
PARALLEL_RANGES: dict[str, dict] = {
    "TP": {"min": 1, "max": 8, "reason": "inside one NVLink domain; collapses across nodes"},
    "PP": {"min": 1, "max": "L", "reason": "at least 1 layer per stage; 2-16 in practice"},
    "DP": {"min": 1, "max": None, "reason": "no upper bound; easiest to scale"},
    "EP": {"min": "2*top_k", "max": "2*top_k", "reason": "for load balance (MoE)"},
}
TP_MAX = 8
#: bytes of training state per parameter (spec 17.5.10 step 1): BF16 W 2 + G 2 + FP32 master/m/v 12
TRAIN_STATE_BYTES_PER_PARAM = 16
#: usable HBM per GPU for the memory floor in the book's procedure (spec 17.5.10 step 2)
USABLE_GB_PER_GPU_BOOK = 60


def world_size(*, tp: int, pp: int, dp: int, ep: int = 1, ep_convention: str = "megatron") -> int:
    """N = TP*PP*DP (Megatron, EP inside DP) or TP*PP*DP*EP (book) (spec 17.5.8)."""
    if ep_convention == "megatron":
        return tp * pp * dp
    if ep_convention == "book":
        return tp * pp * dp * ep
    raise ValueError(f"unknown ep_convention {ep_convention!r}")


def dp_degree(*, num_gpus: float, tp: int, pp: int) -> float:
    """DP = N / (TP*PP); non-integer means the layout is invalid (spec 17.5.8, 17.5.10)."""
    return num_gpus / (tp * pp)


def layers_per_stage(*, layers: int, pp: int) -> float:
    """L / PP (spec 17.5.8)."""
    return layers / pp


def tp_possible(*, num_gpus: int, tp: int, gpus_per_node: int = 8) -> bool:
    """TP works iff N % TP == 0 and TP fits in one NVLink node (spec 17.5.8, corrected N=100 example)."""
    return num_gpus % tp == 0 and tp <= gpus_per_node


def layout_checks(*, num_gpus: int, tp: int, pp: int, layers: int, ep: int = 1,
                  gpus_per_node: int = 8) -> dict[str, bool]:
    """Range rules of table 17-62 for one layout (spec 17.5.8)."""
    dp = dp_degree(num_gpus=num_gpus, tp=tp, pp=pp)
    dp_int = float(dp).is_integer()
    return {
        "product_ok": dp_int and dp >= 1,
        "tp_ok": 1 <= tp <= min(TP_MAX, gpus_per_node),
        "pp_ok": 1 <= pp <= layers,
        "pp_divides_layers": layers % pp == 0,
        "ep_divides_dp": dp_int and int(dp) % ep == 0,
        "whole_nodes": num_gpus % gpus_per_node == 0 or num_gpus < gpus_per_node,
    }


def ep_recommended(top_k: int) -> int:
    """EP ~ 2 * top_k for load balance (table 17-62)."""
    return 2 * top_k


def strategy(*, model_fits_one_gpu: bool, layer_fits_one_gpu: bool) -> str:
    """Decision tree of figure 17-26 (spec 17.5.8): "DP", "PP+DP" or "TP+PP+DP"."""
    if model_fits_one_gpu:
        return "DP"
    if layer_fits_one_gpu:
        return "PP+DP"
    return "TP+PP+DP"


def nodes(*, num_gpus: float, gpus_per_node: int = 8) -> int:
    """Whole nodes holding N GPUs (spec 17.5.10 tables 17-68/17-70, corrected)."""
    return ceil_count(num_gpus / gpus_per_node)


# --------------------------------------------------------------------------- pipeline bubble
def bubble_frac(*, pp: int, micro_batches: float) -> float:
    """Bubble relative to useful time, (PP-1)/m (spec 17.5.8, table 17-64; the book's form)."""
    if micro_batches <= 0:
        raise ValueError("micro_batches must be positive")
    return (pp - 1) / micro_batches


def bubble_share_frac(*, pp: int, micro_batches: float) -> float:
    """Bubble as a share of total time, (PP-1)/(m+PP-1), always in [0, 1) (spec 17.5.8)."""
    if micro_batches <= 0:
        raise ValueError("micro_batches must be positive")
    return (pp - 1) / (micro_batches + pp - 1)


# --------------------------------------------------------------------------- 17.5.10 procedure
def train_state_TB(*, params: float, bytes_per_param: float = TRAIN_STATE_BYTES_PER_PARAM) -> float:
    """Step 1: full training state P * 16 B in TB (spec 17.5.10)."""
    return params * bytes_per_param / TB


def gpus_for_memory(*, params: float, usable_GB_per_gpu: float = USABLE_GB_PER_GPU_BOOK,
                    bytes_per_param: float = TRAIN_STATE_BYTES_PER_PARAM) -> int:
    """Step 2: N_mem = ceil(P * 16 / M_usable) (ZeRO-3 + recompute) (spec 17.5.10)."""
    if usable_GB_per_gpu <= 0:
        raise ValueError("usable_GB_per_gpu must be positive")
    return ceil_count(params * bytes_per_param / (usable_GB_per_gpu * GB))


def plan_gpus(*, total_FLOP: float, target_days: float, peak_TFLOPS: float, mfu: float, tp: int, pp: int,
              gpus_memory: float = 0) -> dict[str, float]:
    """Steps 3-4: N_time, then N = ceil(max(N_mem, N_time)/(TP*PP))*(TP*PP), DP = N/(TP*PP) (spec 17.5.10)."""
    n_time = gpus_raw(total_FLOP=total_FLOP, target_days=target_days, peak_TFLOPS=peak_TFLOPS, mfu=mfu)
    r = round_gpus_to_group(gpus=max(n_time, gpus_memory), tp=tp, pp=pp)
    return {"gpus_time": n_time, "gpus_memory": gpus_memory, "gpus": r["gpus"], "dp": r["groups"]}


def layout_gpu_step(*, gpus_per_node: int, tp: int, cp: int, pp: int, etp: int, ep: int) -> int:
    """The step in which a layout's GPU count grows: whole nodes, whole TP·CP·PP replicas, and ETP·EP·PP
    dividing N. The largest of GPUs per node, TP·CP·PP and ETP·EP·PP when it is a multiple of the other
    two (powers of two, the usual case: then it is their least common multiple), else their product (a
    common multiple, not always the least; the workbook's function list has no LCM)."""
    args.positive(gpus_per_node=gpus_per_node, tp=tp, cp=cp, pp=pp, etp=etp, ep=ep)
    parts = (gpus_per_node, tp * cp * pp, etp * ep * pp)
    top = max(parts)
    return top if all(top % x == 0 for x in parts) else math.prod(parts)


def gpus_for_target_at_layout(*, num_gpus: float, days: float, target_days: float, gpu_step: int,
                              gpus_memory: float = 0) -> dict[str, float]:
    """GPUs the target days need if the layout's per-GPU throughput stays what it is at *num_gpus*:
    N_time = N·days / target days (days scale as 1/N; an approximation: more DP replicas at the same
    TP, CP, PP, EP, micro-batch and GA, DP communication assumed no more exposed), then
    max(N_time, N_mem) rounded up to whole *gpu_step*s, and the days at that count (spec 17.5.4's
    procedure at a modelled throughput instead of a typed MFU)."""
    args.positive(num_gpus=num_gpus, days=days, target_days=target_days, gpu_step=gpu_step)
    args.nonnegative(gpus_memory=gpus_memory)
    n_time = num_gpus * days / target_days
    steps = ceil_count(max(n_time, gpus_memory) / gpu_step)
    n = steps * gpu_step
    return {"gpus_time": n_time, "gpus": n, "days": days * num_gpus / n}


def sensitivity_factor(*, tokens_factor: float = 1.0, mfu_from: float = 1.0, mfu_to: float = 1.0,
                       days_factor: float = 1.0) -> float:
    """N scales with D, 1/MFU and 1/T (table 17-69): factor on N."""
    if mfu_to <= 0 or days_factor <= 0:
        raise ValueError("mfu_to and days_factor must be positive")
    return tokens_factor * (mfu_from / mfu_to) / days_factor


def weights_per_gpu_MB_zero3(*, params: float, num_gpus: float, bytes_per_param: float = 2) -> float:
    """Step 5: BF16 weight bytes per GPU under ZeRO-3 over all N GPUs (spec 17.5.10; 162 MB, not 162M params)."""
    return params * bytes_per_param / num_gpus / MB if num_gpus > 0 else math.inf
