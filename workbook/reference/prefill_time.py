"""Prefill time and TTFT of a serving engine (docs/serving.md "Prefill").

The book's prefill is max(2·P·S/(TP·eff), W/BW) (spec F2). A batch of ``batch`` prompts of
``prompt_tokens`` each (T = batch·S tokens, after ``cached_tokens`` of prefix already in the KV
cache) is cut into chunks of at most C tokens (the engine's chunk / token budget); each chunk costs,
on one GPU of the TP group,

    t_chunk = ridge( W_read/(BW·e_hbm), F_lin(T_c)/(peak_c·e_gemm) )          weights, linear FLOPs
            + F_attn(chunk)/(peak·e_attn)                                       causal attention
            + L·n_ar·t_AR(T_c·d·b_act)  +  L·k_small·max(t_small, bytes/BW)     TP all-reduces, small ops
    with a CPU floor L·k_all·t_eager when the engine launches prefill eagerly (t = max(GPU, CPU)).

F_lin = 2·T_c·(P_active linear per token)/TP (MoE: k routed experts per token; the LM head only for
the last token of each prompt). Causal attention of a prompt with s_0 cached tokens:
F_attn = 2·h/TP·(d_qk + d_v)·L·(S·s_0 + S²/2), split over the chunks in proportion to what each
chunk attends to. With many tokens every expert is hit, so MoE weights are read whole. The prefill
weight stream runs at the GPU's large-transfer hbm_efficiency (efficiency.yaml), not decode's.

ridge(a, b) = (a^p + b^p)^(1/p) is decode_time.gemm_time_s, the smooth roofline of a GEMM (p from
efficiency.yaml by precision; the ideal max() is p -> infinity).

TTFT = queue wait + the prefill of the request's batch (the last chunk samples the first token).
"""

from __future__ import annotations

from workbook.reference.args import nonnegative as _nonneg
from workbook.reference.args import positive as _pos

import math
from typing import Any

from workbook.reference.decode_time import (
    ALLREDUCES_PER_LAYER,
    GEMMS_PER_LAYER,
    SMALL_KERNELS_PER_LAYER,
    allreduce_time_s,
    compute_peak_TFLOPS,
    gemm_ridge_p,
    gemm_time_s,
    layer_kind,
)
from workbook.reference.serving_shape import (
    ModelShape,
    expected_distinct_experts,
    weight_groups_per_gpu_bytes,
)
from workbook.units import GB, TERA

#: element passes per token per layer of the small prefill ops (norms, residuals, RoPE, activation)
PREFILL_ELEM_PASSES_D = 10.0
PREFILL_ELEM_PASSES_FFN = 3.0




def linear_FLOPs_per_token(shape: ModelShape, *, tp: int = 1, ep: int = 1) -> float:
    """Linear FLOPs one prompt token costs on one GPU (no LM head): 2 per weight it meets."""
    L = shape.layers
    per = (L * (shape.attention_per_layer / tp + shape.attention_replicated_per_layer)
           + shape.dense_layers * shape.dense_ffn_per_layer / tp
           + shape.moe_layers * (shape.n_shared * shape.expert_params / tp + shape.router_per_layer))
    if shape.moe:
        per += shape.moe_layers * shape.top_k * shape.expert_params / (1.0 if ep > 1 else float(tp))
    return 2.0 * per


def causal_attention_FLOPs(shape: ModelShape, *, prompt_tokens: float, cached_tokens: float = 0.0, tp: int = 1) -> float:
    """Attention-core FLOPs of one prompt on one GPU: 2·h/TP·(d_qk + d_v)·L·(S·s_0 + S²/2) (causal)."""
    _nonneg(prompt_tokens=prompt_tokens, cached_tokens=cached_tokens)
    heads = shape.n_heads / tp
    width = (2 * shape.kv_lora_rank + shape.qk_rope_head_dim) if shape.attention == "mla" else (
        shape.qk_head_dim + shape.v_head_dim)
    return 2.0 * heads * width * shape.layers * (prompt_tokens * cached_tokens + prompt_tokens**2 / 2.0)


def prefill_weight_read_bytes(shape: ModelShape, *, tokens: float, tp: int = 1, ep: int = 1,
                              redundant_experts: int = 0, weight_precision: str = "bf16",
                              keep_checkpoint_precision: bool = True) -> float:
    """Weights one prefill chunk of ``tokens`` tokens reads on one GPU (routed experts: the expected
    distinct ones; the embedding table is gathered, not streamed)."""
    g = weight_groups_per_gpu_bytes(shape, weight_precision=weight_precision, tp=tp, ep=ep,
                                    redundant_experts=redundant_experts,
                                    keep_checkpoint_precision=keep_checkpoint_precision)
    read = g["attention"] + g["dense_ffn"] + g["shared"] + g["router"] + g["norms"] + g["head"]
    if shape.tied:
        read += g["embedding"]
    if shape.moe:
        n = tokens * (ep if ep > 1 else 1)
        read += g["routed"] * expected_distinct_experts(n_experts=shape.n_experts, top_k=shape.top_k, tokens=n) / shape.n_experts
    return read


def prefill_time(shape: ModelShape, *, prompt_tokens: float, hw: dict, engine: Any, batch: float = 1,
                 cached_tokens: float = 0.0, tp: int = 1, ep: int = 1, redundant_experts: int = 0,
                 weight_precision: str = "bf16", chunk_tokens: float | None = None,
                 keep_checkpoint_precision: bool = True, act_bytes: float = 2.0) -> dict[str, float]:
    """Prefill of ``batch`` prompts of ``prompt_tokens`` new tokens each (module docstring).

    ``chunk_tokens`` defaults to the engine's prefill_chunk_tokens. Returns the chunk count, the time of
    the whole batch and its parts (s), and the tokens/s of the group.
    """
    _pos(prompt_tokens=prompt_tokens, batch=batch, tp=tp, ep=ep)
    _nonneg(cached_tokens=cached_tokens)
    C = float(engine.prefill_chunk_tokens if chunk_tokens is None else chunk_tokens)
    _pos(chunk_tokens=C)
    T = batch * prompt_tokens
    n_chunks = max(1, math.ceil(T / C - 1e-9))
    L = shape.layers
    kind = layer_kind(shape)
    bw = hw["hbm_bw_GBps"] * GB * hw["hbm_efficiency"]
    peak_lin = compute_peak_TFLOPS(hw, weight_precision=weight_precision) * TERA * hw["gemm_efficiency"]
    ridge_p = gemm_ridge_p(hw, weight_precision=weight_precision)
    f_tok = linear_FLOPs_per_token(shape, tp=tp, ep=ep)
    f_head = 2.0 * shape.d_model * shape.vocab / tp * batch
    f_attn = batch * causal_attention_FLOPs(shape, prompt_tokens=prompt_tokens, cached_tokens=cached_tokens, tp=tp)
    t_attn = f_attn / (hw["peak_TFLOPS"] * TERA * hw["attention_efficiency"])

    n_ar = ALLREDUCES_PER_LAYER if tp > 1 else 0
    ffn_local = (shape.top_k * shape.expert_ffn_width if shape.moe else shape.dense_ffn_width) / (1 if ep > 1 else tp)
    kernels = L * (GEMMS_PER_LAYER[kind] + SMALL_KERNELS_PER_LAYER[kind] + 1 + n_ar)
    t_lin = t_mem = t_comp = t_ar = t_small = t_cpu = t_total = 0.0
    remaining = T
    for i in range(n_chunks):
        tc = min(C, remaining)
        remaining -= tc
        w = prefill_weight_read_bytes(shape, tokens=tc, tp=tp, ep=ep, redundant_experts=redundant_experts,
                                      weight_precision=weight_precision,
                                      keep_checkpoint_precision=keep_checkpoint_precision)
        head = f_head / n_chunks
        mem = w / bw
        comp = (f_tok * tc + head) / peak_lin
        ar = L * n_ar * allreduce_time_s(message_bytes=tc * shape.d_model * act_bytes, tp=tp, hw=hw, engine=engine)
        elem = tc * (PREFILL_ELEM_PASSES_D * shape.d_model + PREFILL_ELEM_PASSES_FFN * ffn_local) * act_bytes / bw
        small = max(L * SMALL_KERNELS_PER_LAYER[kind] * engine.small_kernel_us * 1e-6, L * elem)
        attn = t_attn * tc / T
        lin = gemm_time_s(memory_s=mem, compute_s=comp, ridge_p=ridge_p)
        gpu = lin + attn + ar + small + kernels * engine.graph_launch_us * 1e-6
        cpu = 0.0 if engine.prefill_cuda_graphs else kernels * engine.eager_launch_us * 1e-6
        t_lin += lin
        t_mem += mem
        t_comp += comp
        t_ar += ar
        t_small += small
        t_cpu += cpu
        t_total += max(gpu, cpu)
    return {
        "tokens": T,
        "chunks": float(n_chunks),
        "linear_s": t_lin,
        "weight_read_s": t_mem,
        "linear_compute_s": t_comp,
        "attention_s": t_attn,
        "allreduce_s": t_ar,
        "small_kernels_s": t_small,
        "cpu_launch_s": t_cpu,
        "prefill_s": t_total,
        "tokens_per_s": T / t_total,
        "compute_bound": float(t_comp >= t_mem),
    }


def marginal_prefill_s_per_token(shape: ModelShape, *, prompt_tokens: float, hw: dict, engine: Any, tp: int = 1,
                                 ep: int = 1, weight_precision: str = "bf16", act_bytes: float = 2.0) -> float:
    """Extra time one prompt token adds when it rides in a step whose weights are read anyway
    (chunked prefill mixed into decode): its linear FLOPs, its share of causal attention, its
    all-reduce bytes. The weight-read floor is the decode step's."""
    _pos(prompt_tokens=prompt_tokens)
    peak_lin = compute_peak_TFLOPS(hw, weight_precision=weight_precision) * TERA * hw["gemm_efficiency"]
    lin = linear_FLOPs_per_token(shape, tp=tp, ep=ep) / peak_lin
    attn = causal_attention_FLOPs(shape, prompt_tokens=prompt_tokens, tp=tp) / prompt_tokens / (
        hw["peak_TFLOPS"] * TERA * hw["attention_efficiency"])
    ar = 0.0
    if tp > 1:
        eff = hw["nvlink_efficiency"]
        ar = shape.layers * ALLREDUCES_PER_LAYER * 2 * (tp - 1) / tp * shape.d_model * act_bytes / (
            hw["nvlink_GBps"] * GB * eff)
    return lin + attn + ar


def ttft_s(*, wait_s: float, prefill_s: float) -> float:
    """Time to first token: wait for the scheduler to take the request, then its prefill."""
    _nonneg(wait_s=wait_s, prefill_s=prefill_s)
    return wait_s + prefill_s


def book_prefill_s(shape: ModelShape, *, prompt_tokens: float, hw: dict, tp: int = 1, efficiency: float = 0.7) -> float:
    """The book's prefill for comparison (spec F2, no memory floor, no attention): 2·P·S/(TP·peak·eta)."""
    return 2 * shape.params_total * prompt_tokens / (tp * hw["peak_TFLOPS"] * TERA * efficiency)
