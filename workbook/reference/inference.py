"""Inference roofline, prefill/TTFT, decode/TPOT and throughput (spec 17.8.1-17.8.4, families F1-F3).

Conventions (spec 17.8 §1, §3): bytes, FLOPs and seconds inside; peaks in TFLOPS (dense), HBM
bandwidth in GB/s (catalogue ``hbm_bw_GBps``). Under TP x PP each GPU holds 1/(TP·PP) of the
weights and 1/(min(TP, H_kv)·PP) of every request's KV cache. A step (prefill or decode) costs the
larger of its compute time and its memory time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbook.reference.infer_memory import kv_shard_divisor
from workbook.units import GB, TERA

#: FLOPs per parameter per token of a forward pass: one multiply + one add (spec F1)
FWD_FLOPS_PER_PARAM_TOKEN = 2.0
#: book defaults (spec 17.8 §2.4): prefill / decode compute efficiency, HBM bandwidth efficiency
DEFAULT_PREFILL_EFFICIENCY_FRAC = 0.7
DEFAULT_DECODE_COMPUTE_EFFICIENCY_FRAC = 0.7
DEFAULT_HBM_EFFICIENCY_FRAC = 1.0
#: causal-mask factor on the optional quadratic attention term (spec F2)
CAUSAL_FRAC = 0.5


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a finite positive number, got {v!r}")


def _nonneg(**values: float) -> None:
    for name, v in values.items():
        if v is None or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a finite non-negative number, got {v!r}")


# --------------------------------------------------------------------------- F1 roofline (17.8.1)
def prefill_FLOPs(*, params: float, prompt_tokens: float) -> float:
    """Prefill FLOPs 2·P·S_in (spec 17.8.1, F1)."""
    _nonneg(params=params, prompt_tokens=prompt_tokens)
    return FWD_FLOPS_PER_PARAM_TOKEN * params * prompt_tokens


def decode_FLOPs(*, params: float, batch: float = 1) -> float:
    """Decode FLOPs of one step for a batch of B: 2·P·B (spec 17.8.1, F1)."""
    _nonneg(params=params, batch=batch)
    return FWD_FLOPS_PER_PARAM_TOKEN * params * batch


def attention_FLOPs_prefill(*, layers: float, d_model: float, prompt_tokens: float, causal_frac: float = CAUSAL_FRAC) -> float:
    """Optional quadratic attention term of a prefill, 4·L·S²·d·c_causal (spec F2, off by default)."""
    _nonneg(layers=layers, d_model=d_model, prompt_tokens=prompt_tokens, causal_frac=causal_frac)
    return 4.0 * layers * prompt_tokens**2 * d_model * causal_frac


def attention_FLOPs_decode_per_token(*, layers: float, d_model: float, context_tokens: float) -> float:
    """Optional attention FLOPs over the KV per generated token, 4·L·S_ctx·d (spec F3, off by default)."""
    _nonneg(layers=layers, d_model=d_model, context_tokens=context_tokens)
    return 4.0 * layers * context_tokens * d_model


def prefill_intensity_FLOP_per_byte(*, params: float, prompt_tokens: float, weight_bytes_per_param: float = 2.0) -> float:
    """Prefill arithmetic intensity 2·P·S_in / (b_w·P) (= S_in in BF16) (spec 17.8.1)."""
    _pos(params=params, weight_bytes_per_param=weight_bytes_per_param)
    return prefill_FLOPs(params=params, prompt_tokens=prompt_tokens) / (weight_bytes_per_param * params)


def decode_intensity_FLOP_per_byte(
    *, params: float, batch: float = 1, weight_bytes_per_param: float = 2.0, kv_read_bytes_per_request: float = 0.0
) -> float:
    """Decode intensity 2·P·B / (b_w·P + B·KV_read) (about B; spec 17.8.1, erratum 1)."""
    _pos(params=params, weight_bytes_per_param=weight_bytes_per_param)
    _nonneg(kv_read_bytes_per_request=kv_read_bytes_per_request)
    bytes_read = weight_bytes_per_param * params + batch * kv_read_bytes_per_request
    return decode_FLOPs(params=params, batch=batch) / bytes_read


# --------------------------------------------------------------------------- sharding (§1 rule 3)
def weights_per_gpu_bytes(*, weight_bytes: float, tp: int = 1, pp: int = 1) -> float:
    """Weight bytes held by one GPU: W/(TP·PP) (spec 17.8 §1 rule 3, F5)."""
    _nonneg(weight_bytes=weight_bytes)
    _pos(tp=tp, pp=pp)
    return weight_bytes / (tp * pp)


def kv_share_divisor(*, tp: int = 1, n_kv_heads: int | None = None, pp: int = 1) -> float:
    """Divisor of one request's KV per GPU: min(TP, H_kv)·PP (spec 17.8 §1 rule 3, F5)."""
    _pos(tp=tp, pp=pp)
    return kv_shard_divisor(tp=tp, n_kv_heads=n_kv_heads) * pp


def kv_per_gpu_bytes(*, kv_request_bytes: float, tp: int = 1, n_kv_heads: int | None = None, pp: int = 1) -> float:
    """One request's KV bytes on one GPU: KV_req/(min(TP, H_kv)·PP) (spec F5)."""
    _nonneg(kv_request_bytes=kv_request_bytes)
    return kv_request_bytes / kv_share_divisor(tp=tp, n_kv_heads=n_kv_heads, pp=pp)


# --------------------------------------------------------------------------- F2 prefill / TTFT (17.8.2)
def effective_FLOPS(*, peak_TFLOPS: float, efficiency_frac: float) -> float:
    """Achieved FLOP/s = peak·1e12·eta (spec F2: 692.65 TFLOPS for the H800 at 0.7)."""
    _pos(peak_TFLOPS=peak_TFLOPS, efficiency_frac=efficiency_frac)
    return peak_TFLOPS * TERA * efficiency_frac


def weight_read_time_s(*, weight_bytes_per_gpu: float, hbm_bw_GBps: float, hbm_efficiency_frac: float = 1.0) -> float:
    """Time to read the weights once from HBM: W_gpu/(BW·eta_bw) (spec F2 memory floor, F3)."""
    _nonneg(weight_bytes_per_gpu=weight_bytes_per_gpu)
    _pos(hbm_bw_GBps=hbm_bw_GBps, hbm_efficiency_frac=hbm_efficiency_frac)
    return weight_bytes_per_gpu / (hbm_bw_GBps * GB * hbm_efficiency_frac)


def prefill_compute_time_s(
    *,
    params: float,
    prompt_tokens: float,
    peak_TFLOPS: float,
    efficiency_frac: float = DEFAULT_PREFILL_EFFICIENCY_FRAC,
    tp: int = 1,
    attention_FLOPs: float = 0.0,
) -> float:
    """Compute time of a prefill: (2·P·S_in + attention)/(TP·eff_FLOPS), linear TP scaling (spec F2)."""
    _pos(tp=tp)
    _nonneg(attention_FLOPs=attention_FLOPs)
    flops = prefill_FLOPs(params=params, prompt_tokens=prompt_tokens) + attention_FLOPs
    return flops / (tp * effective_FLOPS(peak_TFLOPS=peak_TFLOPS, efficiency_frac=efficiency_frac))


def prefill_time_s(
    *,
    params: float,
    prompt_tokens: float,
    peak_TFLOPS: float,
    efficiency_frac: float = DEFAULT_PREFILL_EFFICIENCY_FRAC,
    tp: int = 1,
    weight_bytes_per_gpu: float = 0.0,
    hbm_bw_GBps: float | None = None,
    hbm_efficiency_frac: float = DEFAULT_HBM_EFFICIENCY_FRAC,
    attention_FLOPs: float = 0.0,
) -> float:
    """T_prefill = max(compute time, weight-read floor W_gpu/BW) (spec F2).

    Without ``hbm_bw_GBps`` the memory floor is left out (compute-bound prompts, the book's form).
    """
    t_comp = prefill_compute_time_s(
        params=params, prompt_tokens=prompt_tokens, peak_TFLOPS=peak_TFLOPS,
        efficiency_frac=efficiency_frac, tp=tp, attention_FLOPs=attention_FLOPs,
    )
    if hbm_bw_GBps is None:
        return t_comp
    t_mem = weight_read_time_s(
        weight_bytes_per_gpu=weight_bytes_per_gpu, hbm_bw_GBps=hbm_bw_GBps, hbm_efficiency_frac=hbm_efficiency_frac
    )
    return max(t_comp, t_mem)


def ttft_s(*, prefill_s: float, first_decode_step_s: float = 0.0) -> float:
    """Time to first token: T_prefill + first decode step (≈ T_prefill) (spec F2)."""
    _nonneg(prefill_s=prefill_s, first_decode_step_s=first_decode_step_s)
    return prefill_s + first_decode_step_s


def compute_bound_prompt_tokens(*, peak_TFLOPS: float, efficiency_frac: float, hbm_bw_GBps: float, weight_bytes_per_param: float = 2.0) -> float:
    """Prompt length above which a prefill is compute-bound: b_w/2 · eff_FLOPS/BW (spec F2: 207 on H800)."""
    _pos(hbm_bw_GBps=hbm_bw_GBps, weight_bytes_per_param=weight_bytes_per_param)
    eff = effective_FLOPS(peak_TFLOPS=peak_TFLOPS, efficiency_frac=efficiency_frac)
    return eff / (hbm_bw_GBps * GB) * weight_bytes_per_param / FWD_FLOPS_PER_PARAM_TOKEN


def tp_to_match_prefill(*, reference_tp: float, reference_peak_TFLOPS: float, peak_TFLOPS: float) -> float:
    """TP a slower GPU needs to match a reference prefill time: TP_ref·peak_ref/peak (spec 17.8.2, erratum 2)."""
    _pos(reference_tp=reference_tp, reference_peak_TFLOPS=reference_peak_TFLOPS, peak_TFLOPS=peak_TFLOPS)
    return reference_tp * reference_peak_TFLOPS / peak_TFLOPS


# --------------------------------------------------------------------------- F3 decode (17.8.3-17.8.4)
@dataclass(frozen=True)
class DecodeStep:
    """One decode step of a TP group (spec F3). Times in s, bytes per GPU, rates in tokens/s."""

    t_comp_s: float
    t_mem_s: float
    t_step_s: float
    bytes_per_gpu: float
    throughput_tok_per_s: float  # per TP group (x replicas)
    per_user_tok_per_s: float
    memory_bound: bool

    @property
    def tpot_s(self) -> float:
        """Time per output token = the step time for every request in the batch."""
        return self.t_step_s


def decode_compute_time_s(
    *, params_per_gpu: float, batch: float, peak_TFLOPS: float,
    compute_efficiency_frac: float = DEFAULT_DECODE_COMPUTE_EFFICIENCY_FRAC, extra_FLOPs_per_token: float = 0.0,
) -> float:
    """T_comp(B) = (2·P/TP + extra)·B / (peak·eta_c) (spec F3, with B: erratum 8)."""
    _nonneg(params_per_gpu=params_per_gpu, batch=batch, extra_FLOPs_per_token=extra_FLOPs_per_token)
    flops = (decode_FLOPs(params=params_per_gpu, batch=1) + extra_FLOPs_per_token) * batch
    return flops / effective_FLOPS(peak_TFLOPS=peak_TFLOPS, efficiency_frac=compute_efficiency_frac)


def decode_memory_time_s(
    *, weight_bytes_per_gpu: float, kv_bytes_per_request_per_gpu: float, batch: float,
    hbm_bw_GBps: float, hbm_efficiency_frac: float = DEFAULT_HBM_EFFICIENCY_FRAC,
) -> float:
    """T_mem(B) = (W_gpu + B·KV_gpu)/(BW·eta_bw) (spec F3)."""
    _nonneg(kv_bytes_per_request_per_gpu=kv_bytes_per_request_per_gpu, batch=batch)
    return weight_read_time_s(
        weight_bytes_per_gpu=weight_bytes_per_gpu + batch * kv_bytes_per_request_per_gpu,
        hbm_bw_GBps=hbm_bw_GBps, hbm_efficiency_frac=hbm_efficiency_frac,
    )


def decode_step(
    *,
    params_per_gpu: float,
    batch: float,
    weight_bytes_per_gpu: float,
    kv_bytes_per_request_per_gpu: float,
    peak_TFLOPS: float,
    hbm_bw_GBps: float,
    compute_efficiency_frac: float = DEFAULT_DECODE_COMPUTE_EFFICIENCY_FRAC,
    hbm_efficiency_frac: float = DEFAULT_HBM_EFFICIENCY_FRAC,
    replicas: float = 1,
    extra_FLOPs_per_token: float = 0.0,
    overlap: bool = True,
) -> DecodeStep:
    """Decode step of one TP group: T_step = max(T_comp, T_mem) (spec F3).

    ``overlap=False`` gives the pessimistic bracket T_comp + T_mem. Throughput = replicas·B/T_step.
    """
    _pos(batch=batch, replicas=replicas)
    t_comp = decode_compute_time_s(
        params_per_gpu=params_per_gpu, batch=batch, peak_TFLOPS=peak_TFLOPS,
        compute_efficiency_frac=compute_efficiency_frac, extra_FLOPs_per_token=extra_FLOPs_per_token,
    )
    t_mem = decode_memory_time_s(
        weight_bytes_per_gpu=weight_bytes_per_gpu, kv_bytes_per_request_per_gpu=kv_bytes_per_request_per_gpu,
        batch=batch, hbm_bw_GBps=hbm_bw_GBps, hbm_efficiency_frac=hbm_efficiency_frac,
    )
    t_step = max(t_comp, t_mem) if overlap else t_comp + t_mem
    if t_step <= 0:
        raise ValueError("decode step time is zero: give weights, KV or parameters")
    return DecodeStep(
        t_comp_s=t_comp,
        t_mem_s=t_mem,
        t_step_s=t_step,
        bytes_per_gpu=weight_bytes_per_gpu + batch * kv_bytes_per_request_per_gpu,
        throughput_tok_per_s=replicas * batch / t_step,
        per_user_tok_per_s=1.0 / t_step,
        memory_bound=t_mem >= t_comp,
    )


def decode_throughput_bound_tok_per_s(
    *, batch: float, weight_bytes_per_gpu: float, kv_bytes_per_request_per_gpu: float = 0.0,
    hbm_bw_GBps: float, hbm_efficiency_frac: float = DEFAULT_HBM_EFFICIENCY_FRAC, replicas: float = 1,
) -> float:
    """Bandwidth-only upper bound replicas·B/T_mem(B) (spec F3; with KV = 0 Table 17-122's convention)."""
    _pos(batch=batch, replicas=replicas)
    t_mem = decode_memory_time_s(
        weight_bytes_per_gpu=weight_bytes_per_gpu, kv_bytes_per_request_per_gpu=kv_bytes_per_request_per_gpu,
        batch=batch, hbm_bw_GBps=hbm_bw_GBps, hbm_efficiency_frac=hbm_efficiency_frac,
    )
    return replicas * batch / t_mem


def decode_compute_ceiling_tok_per_s(
    *, params_per_gpu: float, peak_TFLOPS: float, compute_efficiency_frac: float = DEFAULT_DECODE_COMPUTE_EFFICIENCY_FRAC
) -> float:
    """Compute ceiling of a TP group: eff_FLOPS/(2·P/TP) tokens/s (spec F3: 2960 for 70B TP4 on H20)."""
    _pos(params_per_gpu=params_per_gpu)
    return effective_FLOPS(peak_TFLOPS=peak_TFLOPS, efficiency_frac=compute_efficiency_frac) / decode_FLOPs(
        params=params_per_gpu, batch=1
    )


def compute_bound_batch(
    *, params_per_gpu: float, weight_bytes_per_gpu: float, kv_bytes_per_request_per_gpu: float,
    peak_TFLOPS: float, hbm_bw_GBps: float,
    compute_efficiency_frac: float = DEFAULT_DECODE_COMPUTE_EFFICIENCY_FRAC,
    hbm_efficiency_frac: float = DEFAULT_HBM_EFFICIENCY_FRAC,
) -> float:
    """Batch at which T_comp(B) = T_mem(B); inf if decode never turns compute-bound (spec F3, erratum 8)."""
    per_req_comp = decode_compute_time_s(
        params_per_gpu=params_per_gpu, batch=1, peak_TFLOPS=peak_TFLOPS, compute_efficiency_frac=compute_efficiency_frac
    )
    bw = hbm_bw_GBps * GB * hbm_efficiency_frac
    slope = per_req_comp - kv_bytes_per_request_per_gpu / bw
    if slope <= 0:
        return math.inf
    return (weight_bytes_per_gpu / bw) / slope


def kv_weights_crossover_batch(*, weight_bytes_per_gpu: float, kv_bytes_per_request_per_gpu: float) -> float:
    """Batch at which the KV read equals the weight read: W_gpu/KV_gpu (spec 17.8.4, erratum 7)."""
    _pos(kv_bytes_per_request_per_gpu=kv_bytes_per_request_per_gpu)
    return weight_bytes_per_gpu / kv_bytes_per_request_per_gpu


def kv_weights_crossover_tokens(*, weight_bytes: float, kv_bytes_per_token: float) -> float:
    """Largest context (whole tokens) whose KV read stays ≤ the weight read: floor(W/KV_token) (17.8.3, erratum 4)."""
    _pos(kv_bytes_per_token=kv_bytes_per_token)
    return float(math.floor(weight_bytes / kv_bytes_per_token))


def total_latency_s(*, ttft_s: float, output_tokens: float, tpot_s: float) -> float:
    """End-to-end latency TTFT + (O − 1)·TPOT (spec 17.8.6)."""
    _nonneg(ttft_s=ttft_s, tpot_s=tpot_s)
    _pos(output_tokens=output_tokens)
    return ttft_s + (output_tokens - 1) * tpot_s
