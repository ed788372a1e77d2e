"""Serving: max batch, concurrency, continuous batching, paged KV, speculative decoding, chunked
prefill (spec 17.8.4-17.8.9, families F5-F9).

Memory quantities are in GB (1e9 bytes) where the name says so, KV per token in bytes.
"""

from __future__ import annotations

import math

from workbook.reference.excel import excel_round
from workbook.reference.inference import effective_FLOPS, prefill_FLOPs, weight_read_time_s
from workbook.units import MB

#: KV usable-fraction presets (spec 17.8 §2.4, §10): book 1, paged 0.9 (seed 000), 0.96 (seed 001), safety 0.85
KV_USABLE_FRAC = {"book": 1.0, "paged_000": 0.9, "paged_001": 0.96, "safety_001": 0.85, "traditional": 0.2}
#: static vs continuous-batching utilisation by workload (Table 17-105, spec 17.8.5)
BATCHING_UTILISATION_17_105 = {
    "equal-length": (0.80, 0.95),
    "mixed": (0.40, 0.90),
    "high-conc-short": (0.20, 0.90),
    "bursty-long": (0.60, 0.92),
}
#: measured speculative-decoding speed-ups (Table 17-115, spec 17.8.8): not derivable, reference only
MEASURED_SPECULATIVE_SPEEDUP_17_115 = {"68M-7B-chat": 2.1, "160M-13B-code": 1.9, "1B-70B-summ": 2.3}
#: default paged-attention block size (tokens) and chunk size (tokens) (spec F7, F9)
DEFAULT_BLOCK_TOKENS = 16
DEFAULT_CHUNK_TOKENS = 512
FLOOR_EPS = 1e-9


def _floor(x: float) -> int:
    """Floor robust to binary noise just below an integer."""
    return int(math.floor(x + FLOOR_EPS))


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a finite positive number, got {v!r}")


# --------------------------------------------------------------------------- F5 capacity (17.8.4, 17.8.6)
def free_memory_per_gpu_GB(*, hbm_GB: float, weight_per_gpu_GB: float, overhead_GB: float = 0.0) -> float:
    """Memory left for KV on one GPU: M_GPU − W_gpu − overhead (may be negative: does not fit) (spec F5)."""
    return hbm_GB - weight_per_gpu_GB - overhead_GB


def max_batch_per_group(
    *, hbm_GB: float, weight_per_gpu_GB: float, kv_per_gpu_GB: float, overhead_GB: float = 0.0, usable_frac: float = 1.0
) -> int:
    """B_max = floor(u·(M_GPU − W_gpu − overhead)/KV_gpu), 0 if the weights do not fit (spec F5, erratum 9)."""
    _pos(kv_per_gpu_GB=kv_per_gpu_GB, usable_frac=usable_frac)
    free = free_memory_per_gpu_GB(hbm_GB=hbm_GB, weight_per_gpu_GB=weight_per_gpu_GB, overhead_GB=overhead_GB)
    return max(0, _floor(usable_frac * free / kv_per_gpu_GB))


def model_replicas(*, num_gpus: int, tp: int = 1, pp: int = 1) -> int:
    """N_groups = N_GPU/(TP·PP) whole replicas (spec F5)."""
    _pos(num_gpus=num_gpus, tp=tp, pp=pp)
    return int(num_gpus // (tp * pp))


def total_concurrency(*, replicas: int, batch_per_group: int) -> int:
    """N_concurrent = N_groups·B_max (spec F5)."""
    return int(replicas * batch_per_group)


def concurrency_from_kv_pool(*, free_GB: float, kv_per_request_GB: float) -> float:
    """Theoretical concurrency = free KV memory / KV per request (seed 001 §0.1)."""
    _pos(kv_per_request_GB=kv_per_request_GB)
    return free_GB / kv_per_request_GB


# --------------------------------------------------------------------------- F6 continuous batching (17.8.5)
def static_batch_utilisation_frac(*, alive_steps: list[tuple[float, float]], batch: float, max_steps: float) -> float:
    """eta_static = Σ n_i·t_i / (B·T_max): n_i requests alive for t_i steps (spec F6)."""
    _pos(batch=batch, max_steps=max_steps)
    return sum(n * t for n, t in alive_steps) / (batch * max_steps)


def phase_utilisation_frac(*, remaining: float, batch: float) -> float:
    """Utilisation of a static-batch phase with ``remaining`` live requests of B (Table 17-106)."""
    _pos(batch=batch)
    return remaining / batch


def continuous_batching_gain_x(*, static_utilisation_frac: float, cb_utilisation_frac: float) -> float:
    """Speed-up of continuous batching = eta_CB / eta_static (spec F6)."""
    _pos(static_utilisation_frac=static_utilisation_frac)
    return cb_utilisation_frac / static_utilisation_frac


# --------------------------------------------------------------------------- F7 paged KV (17.8.7)
def blocks_needed(*, tokens: float, block_tokens: int = DEFAULT_BLOCK_TOKENS) -> int:
    """Blocks = ceil(tokens/b) (spec F7)."""
    _pos(block_tokens=block_tokens)
    return int(math.ceil(tokens / block_tokens - FLOOR_EPS))


def block_bytes(*, kv_bytes_per_token: float, block_tokens: int = DEFAULT_BLOCK_TOKENS) -> float:
    """Bytes of one KV block = 2·L·b·d_kv·b_kv = KV_token·b (spec F7)."""
    return kv_bytes_per_token * block_tokens


def kv_utilisation_frac(*, used_tokens: float, allocated_tokens: float) -> float:
    """Used / preallocated KV (spec F7); waste = 1 − this."""
    _pos(allocated_tokens=allocated_tokens)
    return used_tokens / allocated_tokens


def prefix_shared_tokens(*, requests: int, shared_prefix_tokens: int, tokens_per_request: int) -> int:
    """KV tokens stored with prefix sharing: p + R·(n − p) (spec F7)."""
    return shared_prefix_tokens + requests * (tokens_per_request - shared_prefix_tokens)


def effective_concurrency(*, nominal: float, utilisation_frac: float) -> int:
    """Nominal slots × KV utilisation, rounded (spec 17.8.7)."""
    return int(excel_round(nominal * utilisation_frac))


def cost_reduction_frac(*, capacity_gain_x: float) -> float:
    """GPU cost saved for the same load after a capacity gain: 1 − 1/gain (spec 17.8.7, erratum 16)."""
    _pos(capacity_gain_x=capacity_gain_x)
    return 1.0 - 1.0 / capacity_gain_x


def improvement_x(*, before: float, after: float, higher_is_better: bool = True) -> float:
    """Improvement factor after/before (or before/after for latencies) (Table 17-112)."""
    _pos(before=before, after=after)
    return after / before if higher_is_better else before / after


# --------------------------------------------------------------------------- F8 speculative (17.8.8)
def expected_tokens_per_step(*, alpha: float, draft_tokens: int) -> float:
    """E = (1 − α^(K+1))/(1 − α) tokens per target forward (spec F8); K+1 when α = 1."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    if draft_tokens < 0:
        raise ValueError("draft_tokens must be non-negative")
    if alpha == 1:
        return float(draft_tokens + 1)
    return (1 - alpha ** (draft_tokens + 1)) / (1 - alpha)


def draft_overhead_frac(*, draft_tokens: int, params_draft: float, params_target: float) -> float:
    """Draft cost relative to one target step: K·P_draft/P_target (spec F8)."""
    _pos(params_target=params_target)
    return draft_tokens * params_draft / params_target


def speculative_speedup_x(*, alpha: float, draft_tokens: int, overhead_frac: float = 0.0) -> float:
    """Effective speed-up E/(1 + overhead) (spec F8)."""
    return expected_tokens_per_step(alpha=alpha, draft_tokens=draft_tokens) / (1 + overhead_frac)


def draft_memory_MB(*, params_draft: float, bytes_per_param: float = 2.0) -> float:
    """Draft-model weight memory in MB (spec 17.8.8)."""
    return params_draft * bytes_per_param / MB


# --------------------------------------------------------------------------- F9 chunked prefill (17.8.9)
def chunk_time_s(*, params: float, chunk_tokens: int, peak_TFLOPS: float, efficiency_frac: float, tp: int = 1) -> float:
    """T_chunk = 2·P·C/(TP·eff_FLOPS) (spec F9; linear FLOPs only)."""
    return prefill_FLOPs(params=params, prompt_tokens=chunk_tokens) / (
        tp * effective_FLOPS(peak_TFLOPS=peak_TFLOPS, efficiency_frac=efficiency_frac)
    )


def n_chunks(*, prompt_tokens: int, chunk_tokens: int = DEFAULT_CHUNK_TOKENS) -> int:
    """ceil(S_in/C) chunks (spec F9)."""
    return blocks_needed(tokens=prompt_tokens, block_tokens=chunk_tokens)


def fused_step_extra_s(*, params: float, prompt_tokens: int, eff_FLOPS: float, tp: int = 1) -> float:
    """Extra compute of a short prompt riding in a fused chunk step: 2·P·S_own/(TP·eff) (spec F9)."""
    _pos(eff_FLOPS=eff_FLOPS, tp=tp)
    return prefill_FLOPs(params=params, prompt_tokens=prompt_tokens) / (tp * eff_FLOPS)


def standalone_prefill_s(
    *, params: float, prompt_tokens: int, eff_FLOPS: float, weight_bytes_per_gpu: float, hbm_bw_GBps: float, tp: int = 1
) -> float:
    """A prefill run alone: max(compute, weight-read floor) (spec F2, erratum 15)."""
    t_comp = fused_step_extra_s(params=params, prompt_tokens=prompt_tokens, eff_FLOPS=eff_FLOPS, tp=tp)
    return max(t_comp, weight_read_time_s(weight_bytes_per_gpu=weight_bytes_per_gpu, hbm_bw_GBps=hbm_bw_GBps))


def ttft_worst_fused_s(*, chunk_s: float, own_extra_s: float) -> float:
    """Worst-case TTFT with the fused scheduler: 2·T_chunk + own compute (spec F9)."""
    return 2 * chunk_s + own_extra_s


def ttft_worst_prefill_priority_s(*, chunk_s: float, own_prefill_s: float) -> float:
    """Worst-case TTFT with a prefill-priority scheduler: T_chunk + T_prefill(own) (spec F9)."""
    return chunk_s + own_prefill_s


def ttft_worst_token_budget_s(*, chunk_s: float) -> float:
    """Worst-case TTFT with a fixed token budget per step: about 2·T_chunk (spec F9)."""
    return 2 * chunk_s


def ttft_unchunked_s(*, long_prefill_s: float, arrival_gap_s: float, own_prefill_s: float) -> float:
    """Without chunking: T_prefill(long) − (arrival_new − arrival_long) + T_prefill(own) (spec F9)."""
    return max(0.0, long_prefill_s - arrival_gap_s) + own_prefill_s


def ttft_improvement_x(*, waited_s: float, ttft_s: float) -> float:
    """Queueing improvement: time waited without chunking / TTFT with it (spec 17.8.9)."""
    _pos(ttft_s=ttft_s)
    return waited_s / ttft_s

