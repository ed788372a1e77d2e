"""Inference memory (spec 17.4.11): weights + KV + peak activation + overhead, TP sharding, fit checks."""

from __future__ import annotations

import math
from typing import Mapping

from workbook.units import GB

#: INT4 bytes per parameter including scales and zero points (spec 17.4.11)
INT4_WITH_SCALES_BYTES_PER_PARAM = 0.55


def inference_weights_GB(*, params: float, bytes_per_param: float = 2.0) -> float:
    """M_w = P·bytes: BF16 2, FP8 1, INT4 ≈0.55 with scales (spec 17.4.11)."""
    if params < 0 or bytes_per_param < 0:
        raise ValueError("params and bytes_per_param must be non-negative")
    return params * bytes_per_param / GB


def peak_activation_GB(*, n_heads: float, batch: float, seq_len: float, act_bytes: float = 2.0) -> float:
    """Prefill QKᵀ without FlashAttention/chunking, h·B·S²·bytes (spec 17.4.11)."""
    return n_heads * batch * seq_len**2 * act_bytes / GB


def inference_total_GB(*, weights_GB: float, kv_GB: float, act_GB: float = 0.0, overhead_GB: float = 0.0) -> float:
    """M_infer = M_w + M_KV + M_act + M_ovh (spec 17.4.11)."""
    for k, v in dict(weights_GB=weights_GB, kv_GB=kv_GB, act_GB=act_GB, overhead_GB=overhead_GB).items():
        if v < 0:
            raise ValueError(f"{k} must be non-negative")
    return weights_GB + kv_GB + act_GB + overhead_GB


def kv_shard_divisor(*, tp: int, n_kv_heads: float | None = None) -> float:
    """KV split by heads over TP: divides by t while t ≤ g, else by g (heads replicated) (spec 17.4.11)."""
    if tp < 1:
        raise ValueError("tp must be >= 1")
    return float(tp) if n_kv_heads is None else float(min(tp, n_kv_heads))


def inference_per_gpu(*, weights_GB: float, kv_GB: float, tp: int = 1, act_GB: float = 0.0,
                      overhead_GB: float = 0.0, n_kv_heads: float | None = None) -> dict[str, float]:
    """Per-GPU memory with TP = t: weights/t + KV/min(t, g) + act + overhead (spec 17.4.11)."""
    if tp < 1:
        raise ValueError("tp must be >= 1")
    w = weights_GB / tp
    kv = kv_GB / kv_shard_divisor(tp=tp, n_kv_heads=n_kv_heads)
    return {"weights_GB": w, "kv_GB": kv, "total_GB": inference_total_GB(weights_GB=w, kv_GB=kv, act_GB=act_GB,
                                                                          overhead_GB=overhead_GB)}


def dominant_term(*, weights_GB: float, kv_GB: float) -> str:
    """'weights' or 'kv', whichever is larger (spec 17.4.11, Table 17-53)."""
    return "kv" if kv_GB > weights_GB else "weights"


def fits(*, need_GB: float, hbm_GB: float) -> bool:
    """Fit check: need ≤ HBM (spec 17.4.11)."""
    return need_GB <= hbm_GB


def min_tp_to_fit(*, weights_GB: float, kv_GB: float, hbm_GB: float, act_GB: float = 0.0,
                  overhead_GB: float = 0.0, n_kv_heads: float | None = None, max_tp: int = 64) -> int | None:
    """Smallest power-of-two TP whose per-GPU memory fits (None if none up to max_tp) (spec 17.4.11)."""
    tp = 1
    while tp <= max_tp:
        per = inference_per_gpu(weights_GB=weights_GB, kv_GB=kv_GB, tp=tp, act_GB=act_GB,
                                overhead_GB=overhead_GB, n_kv_heads=n_kv_heads)["total_GB"]
        if fits(need_GB=per, hbm_GB=hbm_GB):
            return tp
        tp *= 2
    return None


def gpus_that_fit(*, need_GB: float, hbm_GB: Mapping[str, float]) -> list[str]:
    """GPU names whose HBM holds need_GB (spec 17.4.11 capacity list)."""
    return [k for k, v in hbm_GB.items() if fits(need_GB=need_GB, hbm_GB=v)]


def headroom_GB(*, hbm_GB: float, used_GB: float) -> float:
    """HBM left after a load (negative = shortfall) (spec 17.4.2, 17.4.7)."""
    if not math.isfinite(hbm_GB):
        raise ValueError("hbm_GB must be finite")
    return hbm_GB - used_GB
