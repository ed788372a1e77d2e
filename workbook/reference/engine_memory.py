"""KV-cache capacity as serving engines size it (docs/serving.md "Engine memory").

The book's capacity (spec F5) divides HBM minus weights by KV per request. Engines reserve more and
measure differently; three rules cover vLLM, SGLang and TensorRT-LLM (catalog/engines.yaml
``memory_rule``), all per GPU, in bytes:

    total_fraction  (vLLM, gpu_memory_utilization u; vllm/v1/worker/gpu_worker.py since PR 19312)
        KV = u * M_total - W - A_peak - N_nontorch [- G_graph if the graph pool is in the budget]

    static_fraction (SGLang, mem_fraction_static f; model_runner.profile_max_num_token)
        M_0 = M_total - C_context - N_nontorch           free memory at SGLang's first reading
        KV  = (M_0 - W) - (1 - f) * M_0  =  f * M_0 - W

    free_fraction   (TensorRT-LLM, free_gpu_memory_fraction f; estimate_max_kv_cache_tokens)
        KV = f * (M_total - C_context - N_nontorch - W - A_peak) [- G_graph]

M_total is what the CUDA runtime reports (engines.yaml devices.cuda_total_GiB: 79.22 GiB on an
"80 GB" H100), W the weights per GPU (serving_shape, with embeddings and head in checkpoint
precision), A_peak the activation peak of the engine's memory profile, N_nontorch the NCCL /
custom-all-reduce / cuBLAS memory outside PyTorch's allocator:

    A_peak = max( A_forward(max_num_batched_tokens),  max_num_seqs * V * s_logit )   (vLLM profiles both)
    A_forward(T) = T * b_act * (4 d + w_qkv/TP + 3 w_ffn/TP [+ k (d + 3 d_e/TP) for MoE])

The sampler term is what dominates vLLM's profile: it runs max_num_seqs rows through the sampler
(FP32 logits, sort, softmax, masks); s_logit = 38.6 B per (row, vocab) entry is measured from vLLM
logs (engines.yaml). The KV budget is cut into blocks: tokens = floor(KV / (kv_token * block)) * block.
"""

from __future__ import annotations

import math
from typing import Any

from workbook.reference.serving_shape import (
    ModelShape,
    kv_bytes_per_token_per_gpu,
    weights_per_gpu_bytes,
)
from workbook.units import BYTES_PER_ELEMENT, GiB

MEMORY_RULES = ("total_fraction", "static_fraction", "free_fraction")
#: activation element passes per token in the profiled forward: residual, norm output, attention
#: output and the all-reduce buffer (4 d); QKV; gate/up and the activation output (3 w_ffn)
FWD_PASSES_PER_D_MODEL = 4.0
FWD_PASSES_PER_FFN = 3.0
_EPS = 1e-9


def _nonneg(**values: float) -> None:
    for name, v in values.items():
        if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a finite non-negative number, got {v!r}")


def _frac(**values: float) -> None:
    for name, v in values.items():
        if v is None or not 0 < v <= 1:
            raise ValueError(f"{name} must be in (0, 1], got {v!r}")


def forward_activation_bytes(shape: ModelShape, *, tokens: float, tp: int = 1, act_bytes: float = 2.0) -> float:
    """Transient activation bytes of one forward over ``tokens`` tokens on one GPU (the profiled dummy
    forward): T·b·(4d + w_qkv/TP + 3·w_ffn/TP), for MoE the fused-MoE workspace T·k·(d + 3·d_e/TP)
    (vLLM fused_moe intermediate caches M·topk·max(2N, K))."""
    _nonneg(tokens=tokens)
    d = shape.d_model
    qkv = (shape.n_heads * shape.qk_head_dim + 2 * shape.n_kv_heads * shape.head_dim) / tp
    if shape.moe:
        ffn = shape.top_k * (d + FWD_PASSES_PER_FFN * shape.expert_ffn_width / tp)
        ffn = max(ffn, FWD_PASSES_PER_FFN * shape.dense_ffn_width / tp if shape.dense_layers else 0.0)
    else:
        ffn = FWD_PASSES_PER_FFN * shape.dense_ffn_width / tp
    return tokens * act_bytes * (FWD_PASSES_PER_D_MODEL * d + qkv + ffn)


def sampler_profile_bytes(shape: ModelShape, *, rows: float, bytes_per_logit: float) -> float:
    """Peak bytes of the sampler run on ``rows`` rows: rows·V·s_logit."""
    _nonneg(rows=rows, bytes_per_logit=bytes_per_logit)
    return rows * shape.vocab * bytes_per_logit


def activation_peak_bytes(shape: ModelShape, *, engine: Any, tp: int = 1, max_num_seqs: float | None = None,
                          max_num_batched_tokens: float | None = None) -> float:
    """A_peak of an engine's memory profile: the larger of the forward at max_num_batched_tokens and
    (when the profile samples) the sampler at max_num_seqs rows."""
    seqs = engine.max_num_seqs if max_num_seqs is None else max_num_seqs
    toks = engine.max_num_batched_tokens if max_num_batched_tokens is None else max_num_batched_tokens
    fwd = forward_activation_bytes(shape, tokens=toks, tp=tp)
    if not engine.profile_sampler:
        return fwd
    return max(fwd, sampler_profile_bytes(shape, rows=min(seqs, toks), bytes_per_logit=engine.sampler_bytes_per_logit))


def kv_budget_bytes(*, rule: str, memory_fraction: float, device_total_bytes: float, weights_bytes: float,
                    activation_bytes: float = 0.0, non_torch_bytes: float = 0.0, context_bytes: float = 0.0,
                    graph_bytes: float = 0.0, graph_in_budget: bool = False) -> float:
    """KV bytes per GPU under one of the three memory rules (module docstring); 0 when it does not fit."""
    _frac(memory_fraction=memory_fraction)
    _nonneg(device_total_bytes=device_total_bytes, weights_bytes=weights_bytes, activation_bytes=activation_bytes,
            non_torch_bytes=non_torch_bytes, context_bytes=context_bytes, graph_bytes=graph_bytes)
    graph = graph_bytes if graph_in_budget else 0.0
    if rule == "total_fraction":
        kv = memory_fraction * device_total_bytes - weights_bytes - activation_bytes - non_torch_bytes - graph
    elif rule == "static_fraction":
        m0 = device_total_bytes - context_bytes - non_torch_bytes
        kv = memory_fraction * m0 - weights_bytes - graph
    elif rule == "free_fraction":
        free = device_total_bytes - context_bytes - non_torch_bytes - weights_bytes - activation_bytes
        kv = memory_fraction * max(0.0, free) - graph
    else:
        raise ValueError(f"unknown memory rule {rule!r} (one of {', '.join(MEMORY_RULES)})")
    return max(0.0, kv)


def kv_tokens(*, kv_bytes: float, kv_bytes_per_token: float, block_tokens: int = 1) -> int:
    """Tokens the KV budget holds, whole blocks only: floor(KV/(kv_token·block))·block."""
    _nonneg(kv_bytes=kv_bytes)
    if kv_bytes_per_token <= 0 or block_tokens < 1:
        raise ValueError("kv_bytes_per_token must be positive and block_tokens >= 1")
    return int(math.floor(kv_bytes / (kv_bytes_per_token * block_tokens) + _EPS)) * int(block_tokens)


def concurrent_requests(*, kv_tokens_total: float, tokens_per_request: float, block_tokens: int = 1,
                        max_num_seqs: float | None = None) -> int:
    """Requests the pool holds at once: floor(tokens / (tokens per request rounded up to blocks)),
    capped by the engine's max_num_seqs."""
    if tokens_per_request <= 0:
        raise ValueError("tokens_per_request must be positive")
    per = math.ceil(tokens_per_request / block_tokens - _EPS) * block_tokens
    n = int(math.floor(kv_tokens_total / per + _EPS))
    return n if max_num_seqs is None else int(min(n, max_num_seqs))


def kv_capacity(shape: ModelShape, *, engine: Any, device_total_GiB: float, tp: int = 1, ep: int = 1,
                redundant_experts: int = 0, weight_precision: str = "bf16", kv_precision: str = "bf16",
                memory_fraction: float | None = None, max_num_seqs: float | None = None,
                max_num_batched_tokens: float | None = None, keep_checkpoint_precision: bool = True,
                tokens_per_request: float | None = None) -> dict[str, float]:
    """KV capacity of one GPU of a serving group under an engine profile (module docstring).

    ``engine`` is a catalog EngineProfile (or any object with its fields); ``memory_fraction``,
    ``max_num_seqs`` and ``max_num_batched_tokens`` override the profile's defaults as launch flags do.
    Returns the ledger in GiB (weights, activation, non-torch, context, graph, KV budget), the KV
    bytes per token, the KV tokens (block-rounded) and, with ``tokens_per_request``, the concurrent
    requests (capped by max_num_seqs). With TP the pool holds the same tokens on every rank, so the
    group's token capacity equals one GPU's.
    """
    _nonneg(device_total_GiB=device_total_GiB)
    frac = engine.memory_fraction if memory_fraction is None else memory_fraction
    seqs = engine.max_num_seqs if max_num_seqs is None else max_num_seqs
    w = weights_per_gpu_bytes(shape, weight_precision=weight_precision, tp=tp, ep=ep,
                              redundant_experts=redundant_experts, keep_checkpoint_precision=keep_checkpoint_precision)
    act = 0.0
    if engine.memory_rule in ("total_fraction", "free_fraction"):
        act = activation_peak_bytes(shape, engine=engine, tp=tp, max_num_seqs=seqs,
                                    max_num_batched_tokens=max_num_batched_tokens)
    non_torch = engine.non_torch_GiB(tp) * GiB
    ctx = engine.cuda_context_GiB * GiB
    graph = engine.cuda_graph_GiB * GiB
    total = device_total_GiB * GiB
    kv = kv_budget_bytes(rule=engine.memory_rule, memory_fraction=frac, device_total_bytes=total, weights_bytes=w,
                         activation_bytes=act, non_torch_bytes=non_torch, context_bytes=ctx, graph_bytes=graph,
                         graph_in_budget=engine.cuda_graph_in_budget)
    per_tok = kv_bytes_per_token_per_gpu(shape, kv_precision=kv_precision, tp=tp)
    toks = kv_tokens(kv_bytes=kv, kv_bytes_per_token=per_tok, block_tokens=engine.block_size_tokens)
    out = {
        "device_total_GiB": device_total_GiB,
        "memory_fraction": frac,
        "weights_GiB": w / GiB,
        "activation_GiB": act / GiB,
        "non_torch_GiB": non_torch / GiB,
        "context_GiB": ctx / GiB,
        "graph_GiB": graph / GiB,
        "kv_budget_GiB": kv / GiB,
        "kv_bytes_per_token": per_tok,
        "kv_tokens": float(toks),
        "fits": float(kv > 0),
    }
    if tokens_per_request is not None:
        out["concurrent_requests"] = float(concurrent_requests(
            kv_tokens_total=toks, tokens_per_request=tokens_per_request, block_tokens=engine.block_size_tokens,
            max_num_seqs=seqs))
    return out


def book_kv_tokens(shape: ModelShape, *, hbm_GB: float, tp: int = 1, weight_precision: str = "bf16",
                   kv_precision: str = "bf16", overhead_GB: float = 0.0, usable_frac: float = 1.0) -> float:
    """The book's capacity for comparison (spec F5): u·(HBM_GB·1e9 − P·b_w/TP − overhead)/KV_token, with
    the datasheet GB, every weight at the quantised width and no engine reserve."""
    w = shape.params_total * BYTES_PER_ELEMENT[weight_precision.lower()] / tp
    free = usable_frac * (hbm_GB * 1e9 - w - overhead_GB * 1e9)
    return max(0.0, free) / kv_bytes_per_token_per_gpu(shape, kv_precision=kv_precision, tp=tp)
