"""Training efficiency (spec 17.5.1-17.5.7): effective compute, MFU, time, GPU back-solve,
step time and overlap, batch and gradient accumulation, micro-batch limits, memory per GPU.

Pure functions: numbers in, numbers out. Times in s unless the name says ms; peaks in TFLOPS.
"""

from __future__ import annotations

import math

from workbook.reference.excel import excel_ceiling, excel_round
from workbook.reference.flops import train_FLOPs
from workbook.reference.hardware import attainable_TFLOPS
from workbook.units import GB, SECONDS_PER_DAY, TERA

#: Table 17-57 (spec 17.5.2, [external]): published MFU benchmarks, a validation band for the MFU input
MFU_BENCHMARKS: dict[str, dict] = {
    "GPT-3-175B": {"hardware": "V100", "MFU_pct": 22},
    "Chinchilla-70B": {"hardware": "TPUv3", "MFU_pct": 32},
    "PaLM-540B": {"hardware": "TPUv4", "MFU_pct": 46.2},
    "LLaMA-65B": {"hardware": "A100", "MFU_pct": 38},
    "LLaMA-2-70B-single-node": {"hardware": "A100", "MFU_pct": 55},
    "1000-GPU-cluster-low": {"hardware": "H100/H800", "MFU_pct": 40},
    "1000-GPU-cluster-high": {"hardware": "H100/H800", "MFU_pct": 52},
    "DeepSeek-V3-671B": {"hardware": "H800", "MFU_pct": 43},
}
#: plausible MFU band for the input cell warning (spec 17.5.2)
MFU_WARN_LOW_FRAC = 0.2
MFU_WARN_HIGH_FRAC = 0.6
#: convergence floor on the global batch (spec 17.5.7): 256K tokens
MIN_GLOBAL_BATCH_TOKENS = 262144
#: backward/forward FLOP ratio (spec 17.5.5)
BWD_OVER_FWD = 2.0


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a finite positive number, got {v!r}")


def ceil_count(x: float) -> int:
    """CEILING(x, 1) of a count, after rounding to 12 significant digits to drop float noise
    (1120/7 must give 160; a tiny positive x still gives 1)."""
    if x == 0 or not math.isfinite(x):
        return int(excel_ceiling(x, 1)) if math.isfinite(x) else int(x)
    digits = 12 - math.ceil(math.log10(abs(x)))
    return int(excel_ceiling(excel_round(x, digits), 1))


# --------------------------------------------------------------------------- 17.5.1 effective compute
def eff_ratio_frac(*, achieved_TFLOPS: float, peak_TFLOPS: float) -> float:
    """Efficiency = achieved / peak (spec 17.5.1)."""
    _pos(peak_TFLOPS=peak_TFLOPS)
    return achieved_TFLOPS / peak_TFLOPS


def effective_TFLOPS(*, eff_frac: float, peak_TFLOPS: float) -> float:
    """Effective compute = efficiency x peak (spec 17.5.1)."""
    return eff_frac * peak_TFLOPS


def memory_bound_util_frac(*, intensity_FLOP_per_byte: float, hbm_bw_GBps: float, peak_TFLOPS: float) -> float:
    """Roofline utilisation min(peak, I*BW)/peak (spec 17.5.1); I = 1 on H800 gives 0.339 %."""
    _pos(peak_TFLOPS=peak_TFLOPS)
    att = attainable_TFLOPS(intensity_FLOP_per_byte=intensity_FLOP_per_byte, peak_TFLOPS=peak_TFLOPS,
                            hbm_bw_GBps=hbm_bw_GBps)
    return att / peak_TFLOPS


# --------------------------------------------------------------------------- 17.5.2 MFU
def train_FLOP_per_token(params: float) -> float:
    """6P FLOP per token (spec 17.5.2; attention ignored)."""
    return 6.0 * params


def mfu_from_throughput_frac(*, tokens_per_s: float, params: float, num_gpus: float, peak_TFLOPS: float) -> float:
    """MFU = tok/s (cluster) * 6P / (N * peak) (spec 17.5.2, method 1)."""
    _pos(num_gpus=num_gpus, peak_TFLOPS=peak_TFLOPS)
    return tokens_per_s * train_FLOP_per_token(params) / (num_gpus * peak_TFLOPS * TERA)


def cluster_FLOP_per_s(*, num_gpus: float, peak_TFLOPS: float, mfu: float) -> float:
    """Achieved cluster FLOP/s = N * peak * MFU (spec 17.5.2, 17.5.3)."""
    return num_gpus * peak_TFLOPS * TERA * mfu


def tokens_per_s_from_mfu(*, num_gpus: float, peak_TFLOPS: float, mfu: float, params: float) -> float:
    """Inverse: tok/s = N * peak * MFU / (6P) (spec 17.5.2)."""
    _pos(params=params)
    return cluster_FLOP_per_s(num_gpus=num_gpus, peak_TFLOPS=peak_TFLOPS, mfu=mfu) / train_FLOP_per_token(params)


# --------------------------------------------------------------------------- 17.5.3 time
def train_compute_FLOP(*, params: float, tokens: float) -> float:
    """C = 6 P D (spec 17.5.3), via flops.train_FLOPs (no recompute: MFU counts model FLOPs)."""
    return train_FLOPs(params=params, tokens=tokens)


def train_time_s(*, total_FLOP: float, num_gpus: float, peak_TFLOPS: float, mfu: float,
                 overhead_factor: float = 1.0) -> float:
    """T = C / (N * peak * MFU) x overhead (spec 17.5.3; overhead 1.10-1.15 at scale)."""
    _pos(num_gpus=num_gpus, peak_TFLOPS=peak_TFLOPS, mfu=mfu, overhead_factor=overhead_factor)
    return total_FLOP / cluster_FLOP_per_s(num_gpus=num_gpus, peak_TFLOPS=peak_TFLOPS, mfu=mfu) * overhead_factor


def train_time_days(**kw: float) -> float:
    """Training time in days (spec 17.5.3); same keywords as train_time_s."""
    return train_time_s(**kw) / SECONDS_PER_DAY


def rescale_time_for_mfu(*, time: float, mfu_from: float, mfu_to: float) -> float:
    """T(MFU2) = T(MFU1) * MFU1/MFU2 (spec 17.5.3); any time unit."""
    _pos(mfu_to=mfu_to)
    return time * mfu_from / mfu_to


# --------------------------------------------------------------------------- 17.5.4 GPU back-solve
def gpus_raw(*, total_FLOP: float, target_days: float, peak_TFLOPS: float, mfu: float) -> float:
    """N_raw = C / (T_days * 86400 * peak * MFU) (spec 17.5.4), unrounded."""
    _pos(target_days=target_days, peak_TFLOPS=peak_TFLOPS, mfu=mfu)
    return total_FLOP / (target_days * SECONDS_PER_DAY * peak_TFLOPS * TERA * mfu)


def round_gpus_to_group(*, gpus: float, tp: int = 1, pp: int = 1) -> dict[str, int]:
    """Round up to a multiple of one replica TP*PP (spec 17.5.4): {groups (= DP), gpus}."""
    _pos(tp=tp, pp=pp)
    group = tp * pp
    groups = ceil_count(gpus / group)
    return {"groups": groups, "gpus": groups * group}


def gpus_with_spares(*, gpus: float, spare_frac: float) -> int:
    """GPUs to buy = ceil(N * (1 + spare)) (spec 17.5.4; spares 5-10 %)."""
    if spare_frac < 0:
        raise ValueError("spare_frac must be >= 0")
    return ceil_count(gpus * (1 + spare_frac))


def convert_gpu_count(*, gpus: float, peak_from_TFLOPS: float, peak_to_TFLOPS: float,
                      mfu_from: float, mfu_to: float, factor: float = 1.0) -> float:
    """N_to = N_from * (peak_from/peak_to) * (MFU_from/MFU_to) * factor (spec 17.5.4, 17.5.9)."""
    _pos(peak_to_TFLOPS=peak_to_TFLOPS, mfu_to=mfu_to)
    return gpus * peak_from_TFLOPS / peak_to_TFLOPS * mfu_from / mfu_to * factor


# --------------------------------------------------------------------------- 17.5.5 step time
def fwd_FLOP(*, params: float, micro_batch: float, seq_len: float) -> float:
    """Forward FLOPs of one micro-batch = 2 P B S (spec 17.5.5, with S restored)."""
    return 2.0 * params * micro_batch * seq_len


def compute_time_s(*, FLOP: float, peak_TFLOPS: float, eff_frac: float) -> float:
    """t = FLOP / (peak * eff) (spec 17.5.5; eff 0.7 for the matmul part)."""
    _pos(peak_TFLOPS=peak_TFLOPS, eff_frac=eff_frac)
    return FLOP / (peak_TFLOPS * TERA * eff_frac)


def step_time_s(*, t_fwd_s: float, t_bwd_s: float, t_comm_s: float, t_opt_s: float = 0.0,
                t_other_s: float = 0.0, model: str = "overlap_bwd", exposed_comm_frac: float = 1.0) -> float:
    """Step time (spec 17.5.5). model:
    "none":        t_fwd + t_bwd + t_comm + t_opt + t_other;
    "overlap_bwd": t_fwd + max(t_bwd, t_comm) + t_opt + t_other (gradient AR hides under backward);
    "book_max":    max(t_fwd + t_bwd, exposed_comm_frac * t_comm) + t_opt + t_other (optimistic).
    """
    if model == "none":
        return t_fwd_s + t_bwd_s + t_comm_s + t_opt_s + t_other_s
    if model == "overlap_bwd":
        return t_fwd_s + max(t_bwd_s, t_comm_s) + t_opt_s + t_other_s
    if model == "book_max":
        return max(t_fwd_s + t_bwd_s, exposed_comm_frac * t_comm_s) + t_opt_s + t_other_s
    raise ValueError(f"unknown step model {model!r}")


def comm_hidden(*, t_comm_s: float, t_bwd_s: float) -> bool:
    """Gradient communication is hidden iff t_comm <= t_bwd (spec 17.5.5)."""
    return t_comm_s <= t_bwd_s


# --------------------------------------------------------------------------- 17.5.6 batch and GA
def global_batch_seqs(*, micro_batch: float, grad_accum: float, dp: float) -> float:
    """B_eff = B_micro * GA * DP sequences (spec 17.5.6)."""
    return micro_batch * grad_accum * dp


def tokens_per_step(*, micro_batch: float, grad_accum: float, dp: float, seq_len: float) -> float:
    """Tokens per optimizer step = B_eff * S (spec 17.5.6)."""
    return global_batch_seqs(micro_batch=micro_batch, grad_accum=grad_accum, dp=dp) * seq_len


def allreduce_frequency_frac(grad_accum: float) -> float:
    """All-reduces per micro-batch = 1/GA (spec 17.5.6)."""
    _pos(grad_accum=grad_accum)
    return 1.0 / grad_accum


def comm_bw_needed_GBps(*, grad_GB: float, dp: float, t_compute_s: float, grad_accum: float = 1) -> float:
    """BW to hide the ring all-reduce: 2(DP-1)/DP * M_grad / (GA * T_compute) (spec 17.5.6)."""
    _pos(dp=dp, t_compute_s=t_compute_s, grad_accum=grad_accum)
    return 2 * (dp - 1) / dp * grad_GB / (grad_accum * t_compute_s)


def comm_share_frac(*, t_comm: float, t_compute: float) -> float:
    """Share of time spent communicating without overlap: t_comm / (t_comm + t_compute) (spec 17.5.6)."""
    total = t_comm + t_compute
    return t_comm / total if total > 0 else 0.0


def comm_share_ga_frac(*, t_allreduce: float, t_micro: float, grad_accum: float) -> float:
    """t_AR / (GA * t_micro + t_AR) (spec 17.5.6)."""
    return comm_share_frac(t_comm=t_allreduce, t_compute=grad_accum * t_micro)


def lr_multiplier(*, batch_from: float, batch_to: float, rule: str = "linear") -> float:
    """LR scaling with batch (table 17-60): linear B2/B1, sqrt, or adaptive (1) (spec 17.5.6)."""
    _pos(batch_from=batch_from)
    ratio = batch_to / batch_from
    if rule == "linear":
        return ratio
    if rule == "sqrt":
        return math.sqrt(ratio)
    if rule == "adaptive":
        return 1.0
    raise ValueError(f"unknown rule {rule!r}")


# --------------------------------------------------------------------------- 17.5.7 micro-batch limits
def micro_batch_max(*, hbm_GB: float, static_GB: float, act_per_token_MB: float, seq_len: float) -> dict[str, float]:
    """M_avail = M_GPU - M_wog; tokens_max = floor(M_avail/M_act/token); B_max = floor(tokens/S) (spec 17.5.7)."""
    _pos(act_per_token_MB=act_per_token_MB, seq_len=seq_len)
    avail_GB = hbm_GB - static_GB
    tokens_max = max(0, math.floor(excel_round(avail_GB * 1e3 / act_per_token_MB, 9)))
    return {"avail_GB": avail_GB, "tokens_max": tokens_max, "micro_batch_max": tokens_max // int(seq_len)}


def global_batch_min_seqs(*, min_tokens: float = MIN_GLOBAL_BATCH_TOKENS, seq_len: float) -> float:
    """Smallest global batch in sequences meeting the token floor: ceil(min_tokens/S) (spec 17.5.7)."""
    return ceil_count(min_tokens / seq_len)


def grad_accum_min(*, pp: int, efficient: bool = False) -> int:
    """GA >= PP (1F1B), GA >= 4*PP for efficiency (spec 17.5.7, corrected: B_micro does not count)."""
    return 4 * pp if efficient else pp


def batch_checks(*, micro_batch: int, grad_accum: int, dp: int, seq_len: int, pp: int,
                 micro_batch_max: int, min_global_tokens: float = MIN_GLOBAL_BATCH_TOKENS) -> dict[str, bool]:
    """Feasibility flags of a batch config (spec 17.5.7)."""
    tokens = tokens_per_step(micro_batch=micro_batch, grad_accum=grad_accum, dp=dp, seq_len=seq_len)
    return {
        "memory_ok": micro_batch <= micro_batch_max,
        "global_batch_ok": tokens >= min_global_tokens,
        "PP_min_ok": grad_accum >= grad_accum_min(pp=pp),
        "PP_efficiency_ok": grad_accum >= grad_accum_min(pp=pp, efficient=True),
    }


# --------------------------------------------------------------------------- F7 memory per GPU under a layout
def layout_memory_per_gpu_GB(*, params: float, tp: int = 1, pp: int = 1, dp: int = 1, zero_stage: int = 0,
                             weight_bytes: float = 2, grad_bytes: float = 2, opt_bytes: float = 12) -> dict[str, float]:
    """Weights/grads/optimizer per GPU in GB (spec 17.5.7, 17.5.10 step 5): each / (TP*PP);
    optimizer / DP for ZeRO >= 1, grads / DP for ZeRO >= 2, weights / DP for ZeRO 3."""
    _pos(tp=tp, pp=pp, dp=dp)
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError("zero_stage must be 0..3")
    shard = params / (tp * pp) / GB
    w = weight_bytes * shard / (dp if zero_stage >= 3 else 1)
    g = grad_bytes * shard / (dp if zero_stage >= 2 else 1)
    o = opt_bytes * shard / (dp if zero_stage >= 1 else 1)
    return {"weights_GB": w, "grads_GB": g, "optimizer_GB": o, "total_GB": w + g + o}


def checkpointed_activation_GB(*, micro_batch: float, seq_len: float, d_model: float, layers: float,
                               tp: int = 1, pp: int = 1, copies_in_flight: float = 1, act_bytes: float = 2) -> float:
    """Layer-input checkpoints, full recompute + SP: B*S*d*(L/PP)*2 B/TP * copies (spec 17.5.7, F7)."""
    _pos(tp=tp, pp=pp)
    return micro_batch * seq_len * d_model * (layers / pp) * act_bytes / tp * copies_in_flight / GB
