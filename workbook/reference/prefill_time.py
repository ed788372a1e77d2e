"""Prefill time and TTFT of a serving engine (docs/serving.md "Prefill").

The book's prefill is max(2·P·S/(TP·eff), W/BW) (spec F2). A batch of ``batch`` prompts of
``prompt_tokens`` each (T = batch·S tokens, after ``cached_tokens`` of prefix already in the KV
cache) is cut into chunks of at most C tokens (the engine's chunk / token budget); each chunk costs,
on one GPU of the TP group,

    t_chunk = ridge( W_read/(BW·e_hbm), F_lin(T_c)/(peak_c·e_gemm) )          weights, linear FLOPs
            + F_attn(chunk)/(peak·e_attn)                                       causal attention
            + L·n_ar·t_AR(T_c·d·b_act)  +  L·k_small·max(t_small, bytes/BW)     TP all-reduces, small ops
            + T_c·B_layout/BW                                                  MoE dispatch layout (EP > 1)
    with a CPU floor L·k_all·t_eager when the engine launches prefill eagerly (t = max(GPU, CPU)).

F_lin = 2·T_c·(P_active linear per token)/TP (MoE: k routed experts per token; the LM head only for
the last token of each prompt). Causal attention of a prompt with s_0 cached tokens:
F_attn = 2·h/TP·(d_qk + d_v)·L·(S·s_0 + S²/2), split over the chunks in proportion to what each
chunk attends to. With many tokens every expert is hit, so MoE weights are read whole.

Whole tokens. A load model's batch is a mean, often fractional, so batch·S need not be whole; a
scheduler prefills whole tokens. T is batch·S rounded up to a whole token, at least one, with a value
a hair above an integer (under FLOOR_EPS = 1e-9 token of floating-point noise) counting as that
integer, as the chunk count's ceil does: T = max(1, ceil(batch·S − 1e-9)) (``prefill_tokens``). Then
T, the chunk count n = ceil(T/C − 1e-9) and the last chunk T − (n − 1)·C are whole numbers that every
spreadsheet engine computes exactly (a fractional T just above a multiple of C made the last chunk a
tiny difference of two large numbers, which amplified the engines' last-bit differences). The linear
FLOPs, weight reads and per-token traffic follow the whole count (less than one token more than
batch·S); attention, the MLA re-expansion and the LM head are per prompt and stay on the batch's
prompts (batch·F_attn(S) ...), each chunk taking its share T_c/T of them, so the chunks' shares add
up to exactly one batch and the batch's time stays proportional to its prompts in those terms.

Small shapes (issue 22). The weight read W_read streams through the same GEMMs as decode's: at a few
hundred tokens they are skinny (M = tokens) and memory-bound, so the weights stream at decode's
measured GEMM bandwidth (engines.yaml device ``decode_hbm_efficiency``, 0.78 on the H100, from torch
GEMMs at M = 1-16), not at the large-transfer hbm_efficiency (0.9) the activation passes use. The
smooth roofline then gives the GEMM efficiency that falls as the token count shrinks: the achieved
share of the linear peak is t_comp / ridge(t_mem, t_comp), 0.44 at 128 tokens of Llama-3-8B on an H100
and 0.99 from 2,048. A compute-bound chunk (large T_c) does not see the change. Every request also
pays the engine's ``request_overhead_ms`` once on its way to the first token (input processing,
admission, the first token's sampling and output; ttft_s), so a 100-token prompt is not a few
milliseconds of GEMMs alone.

MLA prefills in the non-absorbed ("MHA") form, as vLLM and SGLang run it (vLLM
``vllm/v1/attention/backends/mla/common.py`` ``MLACommonImpl._forward_prefill`` and
``_compute_prefill_context``; SGLang ``python/sglang/srt/models/deepseek_v2.py`` ``forward_normal`` /
``forward_normal_chunked_kv``): kv_b_proj up-projects the latent of the new tokens *and of the cached
prefix* into per-head K (d_nope, plus the shared RoPE key) and V, and attention runs with
d_qk = d_nope + d_rope and d_v (DeepSeek-V3: 192 + 128 = 320 per head; decode's absorbed form uses
2·r_kv + d_rope = 1,088). The new tokens' up-projection is already in F_lin (kv_b_proj is an attention
weight); the context a chunk re-expands adds 2·L·h/TP·r_kv·(d_nope + d_v) FLOPs per token, at the
linear peak: per prompt of n = ceil(S/C) chunks, n·s_0 + C·n(n−1)/2 tokens (each chunk re-expands the
cached prefix and the prompt's earlier chunks). Simplifications: SGLang runs the absorbed form when a
batch's cached prefix is non-zero but below SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD (8,192 tokens);
this model always prefills MLA non-absorbed. Prompts of a batch do not straddle chunks. kv_b_proj's
weights are counted once per chunk (vLLM re-runs it per context workspace chunk: about 1 GB for
DeepSeek-V3 FP8, well under a millisecond).

ridge(a, b) = (a^p + b^p)^(1/p) is decode_time.gemm_time_s, the smooth roofline of a GEMM (p from
efficiency.yaml by precision; the ideal max() is p -> infinity).

With EP > 1 every MoE layer dispatches each chunk's tokens to the GPUs that hold their experts and
combines the results (FP8 dispatch, BF16 combine, as decode). Prefill runs DeepEP's normal kernels
(deepseek-ai/DeepEP README, "normal kernels": a token crosses to each remote *node* once over RDMA and
is forwarded to the destination GPUs over NVLink, the two links working at once), so per token and
MoE layer

    t_a2a = d·(b_disp + b_comb)·max( n_node/(BW_nic·e_net), n_gpu/(BW_nvl·e_nvl) ),   plus 2·alpha per layer
    n_node = (N − 1)·(1 − (1 − 1/N)^k)     remote nodes hit by k experts spread evenly over N nodes
    n_gpu  = (R − 1)·(1 − (1 − 1/R)^k)     other GPUs hit among the R = EP ranks

and ``ep_overlap_frac`` of it hides under the chunk's GPU work (two-batch overlap; 0 for the engines'
defaults). The normal kernels hold s SMs of the GPU's S while they run (engines.yaml
``prefill_comm_sms``: DeepEP's default Buffer.num_sms = 20; DeepSeek-V3 report §3.2.2, 20 of 132 on
the H800), so GPU work under the exchange runs at (1 − f), f = s/S. With G the chunk's GPU time and
C its all-to-all, o·G of the work can overlap: either the exchange outlasts it (t = (1 − o)·G + C) or
the work outlasts the exchange, slowed while it runs (t = G + f·C), whichever is longer:

    t_chunk = G + max(C − o·G, f·C)      (o = 0: G + C; f = 0: G + max(0, C − o·G))

Decode's low-latency kernels hold the SMs only while they send and receive: decode_time's decode_comm_sm_frac.

An engine that prefills in separate steps (``prefill_mode: separate``) runs every chunk as a scheduler
call of its own, and a call costs CPU time that is not overlapped with the GPU. The engine profile's
``cpu_overhead_frac`` is that per-call time over the GPU time of its steps, spread over the
``scheduler_steps`` decode steps of one call. So a prefill call costs c_cpu·n_steps·t_gpu,1, with t_gpu,1
the GPU time of a one-request decode step at a one-token context (``prefill_call_cpu_s``). For vLLM 0.6
(c_cpu 0.17, 10 steps) that is 1.7 GPU steps per call. LambdaLabs' ten prompts at once have a median TTFT
of 140.6 ms; their GPU prefill is 97.4 ms, and the call adds 28 ms. Mixed-mode engines prefill inside
decode steps, whose CPU time the step already counts.

TTFT = queue wait + the prefill of the request's batch (the last chunk samples the first token).
"""

from __future__ import annotations

from workbook.reference.args import nonnegative as _nonneg
from workbook.reference.args import positive as _pos

import math
from typing import Any

from workbook.reference.decode_time import (
    ALLREDUCES_PER_LAYER,
    EP_COMBINE_BYTES,
    EP_DISPATCH_BYTES,
    alltoall_alpha_s,
    decode_Bps,
    decode_step,
    GEMMS_PER_LAYER,
    SMALL_KERNELS_PER_LAYER,
    allreduce_time_s,
    compute_peak_TFLOPS,
    gemm_ridge_p,
    gemm_time_s,
    layer_kind,
)
from workbook.reference.serving import FLOOR_EPS
from workbook.reference.serving_shape import (
    ModelShape,
    expected_distinct_experts,
    weight_groups_per_gpu_bytes,
)
from workbook.units import GB, TERA

#: element passes per token per layer of the small prefill ops (norms, residuals, RoPE, activation)
PREFILL_ELEM_PASSES_D = 10.0
PREFILL_ELEM_PASSES_FFN = 3.0
#: MoE dispatch layout of DeepEP's normal path (SGLang ``DeepEPMoE.forward_deepgemm_contiguous``), bytes per
#: routed row (k rows a token): ep_scatter writes the row in FP8 and grouped GEMM 1 reads it (1 + 1 B per
#: hidden element), GEMM 2 writes it in BF16 and ep_gather reads it (2 + 2 B) ...
MOE_ROW_B_PER_D = 6.0
#: ... and per expert-width element beyond the FFN passes already counted (PREFILL_ELEM_PASSES_FFN x 2 B):
#: GEMM 1's gate-up output written and read in BF16 (2 x 2 x 2 B), SiLU-and-mul's output written and the FP8
#: quantiser's read (2 + 2 B), the FP8 row written and read by GEMM 2 (1 + 1 B): 14 B, less the 6 B counted
MOE_ROW_B_PER_FFN = 8.0
#: bytes per hidden element per received token: ep_scatter reads it (FP8, 1 B), ep_gather writes the
#: weighted sum (BF16, 2 B)
MOE_RECV_B_PER_D = 3.0




def prefill_alltoall(shape: ModelShape, *, hw: dict, engine: Any, ep: int = 1, ep_nodes: int = 1) -> dict[str, float]:
    """EP all-to-all of prefill (module docstring): the fixed time per chunk (2·alpha per MoE layer), the
    time per token over all MoE layers, and the remote nodes and other GPUs a token reaches. Zero for
    dense models and EP 1."""
    _pos(ep=ep, ep_nodes=ep_nodes)
    if not shape.moe or ep <= 1:
        return {"fixed_s": 0.0, "s_per_token": 0.0, "remote_nodes": 0.0, "other_gpus": 0.0,
                "alpha_s": alltoall_alpha_s(hw=hw, engine=engine, ep_nodes=ep_nodes),
                "comm_sm_frac": comm_sm_frac(hw=hw, engine=engine)}
    k = shape.top_k
    nodes = (ep_nodes - 1) * (1.0 - (1.0 - 1.0 / ep_nodes) ** k)
    gpus = (ep - 1) * (1.0 - (1.0 - 1.0 / ep) ** k)
    per_copy = shape.d_model * (EP_DISPATCH_BYTES + EP_COMBINE_BYTES)
    per_layer = per_copy * max(nodes / (hw["nic_GBps"] * GB * hw["network_efficiency"]),
                               gpus / (hw["nvlink_GBps"] * GB * hw["nvlink_efficiency"]))
    alpha = alltoall_alpha_s(hw=hw, engine=engine, ep_nodes=ep_nodes)
    return {"fixed_s": shape.moe_layers * 2.0 * alpha, "s_per_token": shape.moe_layers * per_layer,
            "remote_nodes": nodes, "other_gpus": gpus, "alpha_s": alpha,
            "comm_sm_frac": comm_sm_frac(hw=hw, engine=engine)}


def moe_layout_bytes_per_token(shape: ModelShape, *, ep: int = 1) -> float:
    """HBM bytes per prompt token, all MoE layers, of the dispatch layout an EP prefill adds around the
    grouped GEMMs: k·(6·d + 8·w_e) per token for its routed rows, plus 3·d for each GPU that receives it,
    EP·(1 − (1 − 1/EP)^k) (its own among them). 0 for dense models and EP 1, where the fused MoE kernel
    gathers the rows itself."""
    _pos(ep=ep)
    if not shape.moe or ep <= 1:
        return 0.0
    k, d = shape.top_k, shape.d_model
    reach = ep * (1.0 - (1.0 - 1.0 / ep) ** k)
    return shape.moe_layers * (k * (MOE_ROW_B_PER_D * d + MOE_ROW_B_PER_FFN * shape.expert_ffn_width)
                               + MOE_RECV_B_PER_D * d * reach)


def comm_sm_frac(*, hw: dict, engine: Any) -> float:
    """f = s/S: the share of the GPU's SMs the prefill all-to-all kernels hold (at most 1)."""
    _pos(sm_count=hw["sm_count"])
    return min(1.0, engine.prefill_comm_sms / hw["sm_count"])


def exposed_alltoall_s(*, alltoall_s: float, gpu_s: float, overlap_frac: float, sm_frac: float) -> float:
    """Time an all-to-all of ``alltoall_s`` adds to GPU work of ``gpu_s`` when ``overlap_frac`` of the work
    can run under it on the (1 − f) SMs it leaves free: max(C − o·G, f·C) (module docstring)."""
    _nonneg(alltoall_s=alltoall_s, gpu_s=gpu_s)
    return max(alltoall_s - overlap_frac * gpu_s, sm_frac * alltoall_s)


def linear_FLOPs_per_token(shape: ModelShape, *, tp: int = 1, ep: int = 1) -> float:
    """Linear FLOPs one prompt token costs on one GPU (no LM head): 2 per weight it meets."""
    L = shape.layers
    per = (L * (shape.attention_per_layer / tp + shape.attention_replicated_per_layer)
           + shape.dense_layers * shape.dense_ffn_per_layer / tp
           + shape.moe_layers * (shape.n_shared * shape.expert_params / tp + shape.router_per_layer))
    if shape.moe:
        per += shape.moe_layers * shape.top_k * shape.expert_params / (1.0 if ep > 1 else float(tp))
    return 2.0 * per


def prefill_attention_width(shape: ModelShape) -> float:
    """Per-head d_qk + d_v of prefill attention. MLA prefills non-absorbed: (d_nope + d_rope) + d_v
    (DeepSeek-V3 192 + 128 = 320), not decode's 2·r_kv + d_rope (module docstring)."""
    return shape.qk_head_dim + shape.v_head_dim


def prefill_attention_FLOPs_per_query(shape: ModelShape, *, context_tokens: float, tp: int = 1) -> float:
    """Prefill attention-core FLOPs of one query over ``context_tokens`` on one GPU, all layers:
    2·S·h/TP·(d_qk + d_v)·L at the prefill width (MLA non-absorbed)."""
    _nonneg(context_tokens=context_tokens)
    return 2.0 * context_tokens * shape.n_heads / tp * prefill_attention_width(shape) * shape.layers


def causal_attention_FLOPs(shape: ModelShape, *, prompt_tokens: float, cached_tokens: float = 0.0, tp: int = 1) -> float:
    """Attention-core FLOPs of one prompt on one GPU: 2·h/TP·(d_qk + d_v)·L·(S·s_0 + S²/2) (causal;
    MLA at the non-absorbed width)."""
    _nonneg(prompt_tokens=prompt_tokens, cached_tokens=cached_tokens)
    return prefill_attention_FLOPs_per_query(
        shape, context_tokens=prompt_tokens * cached_tokens + prompt_tokens**2 / 2.0, tp=tp)


def kv_up_FLOPs_per_token(shape: ModelShape, *, tp: int = 1) -> float:
    """FLOPs of re-expanding one cached MLA latent into per-head K and V on one GPU, all layers:
    2·L·h/TP·r_kv·(d_nope + d_v) (kv_b_proj); 0 for GQA, whose cache holds K and V."""
    if shape.attention != "mla":
        return 0.0
    nope = shape.qk_head_dim - shape.qk_rope_head_dim
    return 2.0 * shape.layers * shape.n_heads / tp * shape.kv_lora_rank * (nope + shape.v_head_dim)


def reexpanded_tokens(*, prompt_tokens: float, cached_tokens: float, chunk_tokens: float) -> float:
    """Context tokens one prompt's chunks up-project from the cache: n·s_0 + C·n(n−1)/2 with
    n = ceil(S/C) chunks (each re-expands the cached prefix and the prompt's earlier chunks)."""
    _pos(prompt_tokens=prompt_tokens, chunk_tokens=chunk_tokens)
    _nonneg(cached_tokens=cached_tokens)
    n = max(1, math.ceil(prompt_tokens / chunk_tokens - 1e-9))
    return n * cached_tokens + chunk_tokens * n * (n - 1) / 2.0


def prefill_tokens(*, batch: float, prompt_tokens: float) -> float:
    """Prompt tokens of a prefill of ``batch`` prompts, in whole tokens (module docstring, "Whole tokens"):
    batch·S rounded up, at least 1, a value under 1e-9 above an integer counting as that integer."""
    _pos(batch=batch, prompt_tokens=prompt_tokens)
    return float(max(1, math.ceil(batch * prompt_tokens - FLOOR_EPS)))


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


def prefill_call_cpu_s(shape: ModelShape, *, hw: dict, engine: Any, tp: int = 1, ep: int = 1,
                       redundant_experts: int = 0, weight_precision: str = "bf16", ep_nodes: int = 1,
                       ep_overlap_frac: float = 0.0) -> float:
    """CPU time of the scheduler call that runs one separate prefill step: c_cpu·n_steps·t_gpu of a
    one-request decode step at a one-token context (module docstring); 0 for mixed-mode engines."""
    if engine.prefill_mode != "separate" or engine.cpu_overhead_frac == 0:
        return 0.0
    one = decode_step(shape, batch=1, context_tokens=1, hw=hw, engine=engine, tp=tp, ep=ep,
                      redundant_experts=redundant_experts, weight_precision=weight_precision, ep_nodes=ep_nodes,
                      ep_overlap_frac=ep_overlap_frac)
    return call_cpu_from_step_s(engine, one_request_gpu_s=one["gpu_s"])


def call_cpu_from_step_s(engine: Any, *, one_request_gpu_s: float) -> float:
    """c_cpu·n_steps·t_gpu,1 for an engine that prefills in separate steps, else 0 (prefill_call_cpu_s, given
    the GPU time of the one-request decode step)."""
    if engine.prefill_mode != "separate":
        return 0.0
    return engine.cpu_overhead_frac * engine.scheduler_steps * one_request_gpu_s


def prefill_time(shape: ModelShape, *, prompt_tokens: float, hw: dict, engine: Any, batch: float = 1,
                 cached_tokens: float = 0.0, tp: int = 1, ep: int = 1, redundant_experts: int = 0,
                 weight_precision: str = "bf16", chunk_tokens: float | None = None,
                 keep_checkpoint_precision: bool = True, act_bytes: float = 2.0, ep_nodes: int = 1,
                 ep_overlap_frac: float = 0.0, call_cpu_s: float | None = None) -> dict[str, float]:
    """Prefill of ``batch`` prompts of ``prompt_tokens`` new tokens each (module docstring).

    ``call_cpu_s`` is the CPU time of each chunk's scheduler call; None takes prefill_call_cpu_s of this
    group (a disaggregated prefill pool passes 0: its calls' CPU time is not modelled).

    ``chunk_tokens`` defaults to the engine's prefill_chunk_tokens. With EP > 1, ``ep_nodes`` nodes
    share the EP group and ``ep_overlap_frac`` of each chunk's all-to-all hides under its GPU work.
    Returns the prompt tokens in whole tokens (``tokens``, prefill_tokens) and the chunk count, the time of
    the whole batch and its parts (s), the tokens/s of the group (whole tokens over that time), and a full
    and the last chunk's linear, all-reduce and GPU time and total (``full_*_s``, ``last_*_s``). The
    chunks add up to the whole tokens; attention, re-expansion and the LM head stay on ``batch`` prompts.
    """
    _pos(prompt_tokens=prompt_tokens, batch=batch, tp=tp, ep=ep)
    if not 0 <= ep_overlap_frac <= 1:
        raise ValueError(f"ep_overlap_frac must be in [0, 1], got {ep_overlap_frac!r}")
    a2a = prefill_alltoall(shape, hw=hw, engine=engine, ep=ep, ep_nodes=ep_nodes)
    _nonneg(cached_tokens=cached_tokens)
    C = float(engine.prefill_chunk_tokens if chunk_tokens is None else chunk_tokens)
    _pos(chunk_tokens=C)
    T = prefill_tokens(batch=batch, prompt_tokens=prompt_tokens)  # whole tokens: the chunks below are exact
    n_chunks = max(1, math.ceil(T / C - FLOOR_EPS))
    L = shape.layers
    kind = layer_kind(shape)
    bw = hw["hbm_bw_GBps"] * GB * hw["hbm_efficiency"]
    bw_w = decode_Bps(hw)  # the weights stream as decode's skinny GEMMs do (module docstring, "Small shapes")
    peak_lin = compute_peak_TFLOPS(hw, weight_precision=weight_precision) * TERA * hw["serving_gemm_efficiency"]
    ridge_p = gemm_ridge_p(hw, weight_precision=weight_precision)
    f_tok = linear_FLOPs_per_token(shape, tp=tp, ep=ep)
    f_head = 2.0 * shape.d_model * shape.vocab / tp * batch
    f_attn = batch * causal_attention_FLOPs(shape, prompt_tokens=prompt_tokens, cached_tokens=cached_tokens, tp=tp)
    t_attn = f_attn / (hw["peak_TFLOPS"] * TERA * hw["attention_efficiency"])
    f_up = batch * kv_up_FLOPs_per_token(shape, tp=tp) * reexpanded_tokens(
        prompt_tokens=prompt_tokens, cached_tokens=cached_tokens, chunk_tokens=C)

    n_ar = ALLREDUCES_PER_LAYER if tp > 1 else 0
    ffn_local = (shape.top_k * shape.expert_ffn_width if shape.moe else shape.dense_ffn_width) / (1 if ep > 1 else tp)
    kernels = L * (GEMMS_PER_LAYER[kind] + SMALL_KERNELS_PER_LAYER[kind] + 1 + n_ar)
    head = f_head / n_chunks
    layout_B = moe_layout_bytes_per_token(shape, ep=ep)

    def chunk(tc: float) -> dict[str, float]:
        """One chunk of ``tc`` tokens: its terms (all full chunks are alike, so each is computed once)."""
        w = prefill_weight_read_bytes(shape, tokens=tc, tp=tp, ep=ep, redundant_experts=redundant_experts,
                                      weight_precision=weight_precision,
                                      keep_checkpoint_precision=keep_checkpoint_precision)
        mem = w / bw_w
        comp = (f_tok * tc + head + f_up * tc / T) / peak_lin
        ar = L * n_ar * allreduce_time_s(message_bytes=tc * shape.d_model * act_bytes, tp=tp, hw=hw, engine=engine)
        elem = tc * (PREFILL_ELEM_PASSES_D * shape.d_model + PREFILL_ELEM_PASSES_FFN * ffn_local) * act_bytes / bw
        small = max(L * SMALL_KERNELS_PER_LAYER[kind] * engine.small_kernel_us * 1e-6, L * elem) + tc * layout_B / bw
        lin = gemm_time_s(memory_s=mem, compute_s=comp, ridge_p=ridge_p)
        gpu = lin + t_attn * tc / T + ar + small + kernels * engine.graph_launch_us * 1e-6
        cpu = 0.0 if engine.prefill_cuda_graphs else kernels * engine.eager_launch_us * 1e-6
        ep_c = a2a["fixed_s"] + tc * a2a["s_per_token"]
        exposed = exposed_alltoall_s(alltoall_s=ep_c, gpu_s=gpu, overlap_frac=ep_overlap_frac,
                                     sm_frac=a2a["comm_sm_frac"])
        return {"lin": lin, "mem": mem, "comp": comp, "ar": ar, "small": small, "cpu": cpu, "ep": ep_c,
                "exposed": exposed, "gpu": gpu, "total": max(gpu, cpu) + exposed}

    # (chunks - 1) full chunks of C tokens, then the last one (the calc rows lay it out the same way)
    full, tail = chunk(C), chunk(min(C, T - (n_chunks - 1) * C))
    parts = [(n_chunks - 1.0, full), (1.0, tail)]
    tot = {k: sum(n * part[k] for n, part in parts) for k in tail}
    t_lin, t_mem, t_comp, t_ar, t_small, t_cpu = (tot[k] for k in ("lin", "mem", "comp", "ar", "small", "cpu"))
    t_ep, t_ep_exposed, t_total = tot["ep"], tot["exposed"], tot["total"]
    if call_cpu_s is None:
        call_cpu_s = prefill_call_cpu_s(shape, hw=hw, engine=engine, tp=tp, ep=ep, redundant_experts=redundant_experts,
                                        weight_precision=weight_precision, ep_nodes=ep_nodes,
                                        ep_overlap_frac=ep_overlap_frac)
    t_call = n_chunks * call_cpu_s
    t_total += t_call
    return {
        "tokens": T,
        "chunks": float(n_chunks),
        "linear_s": t_lin,
        "weight_read_s": t_mem,
        "linear_compute_s": t_comp,
        "attention_s": t_attn,
        "kv_up_FLOPs": f_up,
        "allreduce_s": t_ar,
        "small_kernels_s": t_small,
        "cpu_launch_s": t_cpu,
        "call_cpu_s": t_call,
        "ep_alltoall_s": t_ep,
        "ep_exposed_s": t_ep_exposed,
        "prefill_s": t_total,
        "tokens_per_s": T / t_total,
        "compute_bound": float(t_comp >= t_mem),
        **{f"{name}_{k}_s": part[k] for name, part in (("full", full), ("last", tail)) for k in ("lin", "ar", "gpu")},
        "full_chunk_s": full["total"],
        "last_chunk_s": tail["total"],
    }


def marginal_prefill_s_per_token(shape: ModelShape, *, prompt_tokens: float, hw: dict, engine: Any, tp: int = 1,
                                 ep: int = 1, weight_precision: str = "bf16", act_bytes: float = 2.0,
                                 ep_nodes: int = 1, ep_overlap_frac: float = 0.0) -> float:
    """Extra time one prompt token adds when it rides in a step whose weights are read anyway
    (chunked prefill mixed into decode): its linear FLOPs, its share of causal attention (MLA
    non-absorbed), its all-reduce bytes and the share of its EP all-to-all that costs time,
    max(1 − o, f)·t_a2a (what is not hidden, or the SMs the exchange holds). The weight-read floor is the decode step's; no cached prefix, so no MLA re-expansion."""
    _pos(prompt_tokens=prompt_tokens)
    peak_lin = compute_peak_TFLOPS(hw, weight_precision=weight_precision) * TERA * hw["serving_gemm_efficiency"]
    lin = linear_FLOPs_per_token(shape, tp=tp, ep=ep) / peak_lin
    attn = causal_attention_FLOPs(shape, prompt_tokens=prompt_tokens, tp=tp) / prompt_tokens / (
        hw["peak_TFLOPS"] * TERA * hw["attention_efficiency"])
    ar = 0.0
    if tp > 1:
        eff = hw["nvlink_efficiency"]
        ar = shape.layers * ALLREDUCES_PER_LAYER * 2 * (tp - 1) / tp * shape.d_model * act_bytes / (
            hw["nvlink_GBps"] * GB * eff)
    a2a = prefill_alltoall(shape, hw=hw, engine=engine, ep=ep, ep_nodes=ep_nodes)
    return lin + attn + ar + max(1.0 - ep_overlap_frac, a2a["comm_sm_frac"]) * a2a["s_per_token"]


def request_overhead_s(engine: Any) -> float:
    """Fixed time of one request on its way to the first token besides the GPU prefill (engines.yaml
    ``request_overhead_ms``; 0 for a profile without one)."""
    return float(getattr(engine, "request_overhead_ms", 0.0) or 0.0) / 1000.0


def ttft_s(*, wait_s: float, prefill_s: float, overhead_s: float = 0.0) -> float:
    """Time to first token: wait for the scheduler to take the request, then its prefill, plus the
    request's fixed time (request_overhead_s)."""
    _nonneg(wait_s=wait_s, prefill_s=prefill_s, overhead_s=overhead_s)
    return wait_s + prefill_s + overhead_s


def book_prefill_s(shape: ModelShape, *, prompt_tokens: float, hw: dict, tp: int = 1, efficiency: float = 0.7) -> float:
    """The book's prefill for comparison (spec F2, no memory floor, no attention): 2·P·S/(TP·peak·eta)."""
    return 2 * shape.params_total * prompt_tokens / (tp * hw["peak_TFLOPS"] * TERA * efficiency)
