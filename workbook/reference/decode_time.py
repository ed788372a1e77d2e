"""Decode step time of a serving engine (docs/serving.md "Decode step").

The book's decode time is max(2·P·B/FLOPS, (W + B·KV)/BW) (spec F3). Measured engines are slower:
a step also waits for TP all-reduces, small latency-bound kernels, kernel launches, the sampler and
the CPU. Per step of one GPU of the serving group (TP ranks run in lockstep, so this is the group's
step), with n = B·q query tokens (q = 1, or 1 + draft tokens when a speculative/MTP step verifies):

    t_gemm  = ridge( W_read / (BW·e_dec),  F_gemm / (peak_c·e_gemm) )        weights and linear FLOPs
              ridge(a, b) = (a^p + b^p)^(1/p), p by precision (efficiency.yaml gemm_ridge_p_*)
    t_attn  = max( KV_read / (BW·e_dec), F_attn / (peak·e_attn), L·t_small )  attention over the context
    t_small = L·k_small·t_small_kernel                                        norms, RoPE, KV write, act.
    t_ar    = L·n_ar·(alpha + 2(TP−1)/TP·n·d·b_act / (BW_nvl·e_ar))           TP all-reduces (TP > 1)
    t_ep    = L_moe·(2·alpha_net + n·k·d·(b_disp + b_comb)·f_remote / (BW_nic·e_net))   EP all-to-all
    t_samp  = n·V·4 B·3 / (BW·e_dec) + k_samp·t_small_kernel                  logits read by the sampler
    t_moe   = L_moe·(t_moe_layer + D_gpu·t_expert)                            fused MoE call (MoE): D_gpu distinct
              experts on the GPU per layer (below); engines.yaml moe_layer_us, moe_expert_us
    t_gpu   = t_gemm + t_attn + t_small + t_ar + t_samp + t_moe + L·k_all·t_launch_graph
    t_step  = max(t_gpu, t_cpu_launch) + max(t_ep − o_ep·t_gpu, f_sm·t_ep) + c_cpu·t_gpu + B·c_seq
              (f_sm: the share of the exchange whose kernels hold the SMs, engines.yaml decode_comm_sm_frac;
              c_seq: unoverlapped CPU time per running sequence, engines.yaml cpu_per_seq_us)

W_read is what one step reads: the dense, shared, router and norm weights on the GPU, the LM head,
the embedding rows of the batch and, for MoE, the expected distinct experts the step's tokens hit,
E_g·(1 − (1 − k/E)^N) of the E_g expert slots on the GPU with N tokens entering the layer (N = n with
expert-TP, n·EP with DP attention + EP). KV_read is B·S_ctx·KV_token_gpu (the KV of every running
request at its current context); F_attn = 2·n·S_ctx·h_gpu·(d_qk + d_v)·L (MLA, absorbed:
d_qk + d_v = r_kv + d_rope + r_kv). W_read also counts the activations, n·L·(10 d + 3 w_ffn/TP)·b_act.

Every kernel boundary costs t_launch_graph on the GPU (the cost inside a CUDA graph). Without CUDA
graphs (or above the largest captured batch) every op is also launched from the CPU:
t_cpu_launch = L·k_all·t_eager, and the GPU waits for it when it is the longer. e_dec is the device's
decode weight-streaming efficiency, e_gemm / e_attn the GPU's serving GEMM ceiling (serving_gemm_efficiency) and attention efficiency
(efficiency.yaml), the rest engine-profile factors (engines.yaml). TPOT = t_step / tokens accepted
per step.

An engine that splits the batch into m micro-batches (engines.yaml ``decode_micro_batches``; DeepSeek's
decode runs two so that one's all-to-all hides under the other's compute, deepseek-ai/profile-data
README) runs the stack m times per step: t_step(B) = m'·t_pass(B/m'), m' = min(m, max(1, B)). Every pass streams the weights
again (a layer's weights, 100+ MB, do not stay in a 50 MB L2 between the passes) and launches its own
kernels; the KV read and the FLOPs are the same in total.

Every term is non-decreasing in B and S_ctx, and W_read per GPU never grows with TP.
"""

from __future__ import annotations

from workbook.reference.args import nonnegative as _nonneg
from workbook.reference.args import positive as _pos

from typing import Any

from workbook.reference.serving_shape import (
    ModelShape,
    expected_distinct_experts,
    experts_per_gpu,
    kv_bytes_per_token_per_gpu,
    linear_bytes_per_param,
    weight_groups_per_gpu_bytes,
)
from workbook.units import BYTES_PER_ELEMENT, GB, TERA

#: kernels per layer of a decode step, counted from the engines' decoder layers (vLLM LlamaDecoderLayer,
#: Qwen3MoeDecoderLayer, DeepseekV2DecoderLayer; SGLang's equivalents): GEMMs and small kernels
#: (fused add-RMSNorm x2, RoPE, KV-cache write, activation; MoE adds top-k softmax, align/sort,
#: reduce and for Qwen3 the QK-norm; MLA adds the q_a / kv_a norms and two absorbed BMMs).
#: The attention kernel is timed on its own (t_attn).
GEMMS_PER_LAYER = {"dense": 4, "moe": 5, "mla_moe": 9}
SMALL_KERNELS_PER_LAYER = {"dense": 5, "moe": 9, "mla_moe": 11}
#: sampler and LM-head tail of a step: final norm, logits gather, softmax/argmax, copy-out
SAMPLER_KERNELS = 5
#: sampler passes over the FP32 logits (read, softmax, select)
SAMPLER_LOGIT_PASSES = 3.0
FP32_BYTES = 4.0
#: activation element passes per token per layer (residual adds and norms 10 d, FFN activations 3 w)
ACT_PASSES_D = 10.0
ACT_PASSES_FFN = 3.0
#: all-reduces per layer under TP (attention output, FFN output)
ALLREDUCES_PER_LAYER = 2
#: EP payloads per token and expert: FP8 dispatch + BF16 combine (DeepSeek day 6: dispatch in FP8,
#: combine in BF16)
EP_DISPATCH_BYTES = 1.0
EP_COMBINE_BYTES = 2.0




def layer_kind(shape: ModelShape) -> str:
    """'dense', 'moe' (GQA + MoE) or 'mla_moe' (DeepSeek-style) for the kernel counts."""
    if shape.attention == "mla":
        return "mla_moe"
    return "moe" if shape.moe else "dense"


def serving_hardware(*, gpu: Any, efficiency: Any, device: Any) -> dict[str, float]:
    """Hardware keywords of the serving models from a catalogue Gpu, its efficiency record
    (efficiency.yaml) and its device record (engines.yaml). NVLink one direction = half the quoted
    bidirectional figure (PCIe per direction without NVLink)."""
    nvl = gpu.nvlink_bw_GBps / 2 if gpu.nvlink_bw_GBps else gpu.pcie_bw_GBps
    return {
        "peak_TFLOPS": gpu.bf16_dense_TFLOPS,
        "fp8_TFLOPS": gpu.fp8_dense_TFLOPS or gpu.bf16_dense_TFLOPS,
        "hbm_bw_GBps": gpu.hbm_bw_GBps,
        "nvlink_GBps": nvl,
        "nic_GBps": efficiency.nic_GBps_per_gpu,
        "gpus_per_node": gpu.gpus_per_node,
        "sm_count": gpu.sm_count,
        "gemm_efficiency": efficiency.gemm_efficiency,
        "serving_gemm_efficiency": efficiency.serving_gemm_efficiency,
        "attention_efficiency": efficiency.attention_efficiency,
        "hbm_efficiency": efficiency.hbm_efficiency,
        "nvlink_efficiency": efficiency.nvlink_efficiency,
        "network_efficiency": efficiency.network_efficiency,
        "network_latency_s": efficiency.network_latency_us * 1e-6,
        "gemm_ridge_p_bf16": efficiency.gemm_ridge_p_bf16,
        "gemm_ridge_p_fp8": efficiency.gemm_ridge_p_fp8,
        "decode_hbm_efficiency": device.decode_hbm_efficiency,
        "device_total_GiB": device.cuda_total_GiB,
    }


def compute_peak_TFLOPS(hw: dict, *, weight_precision: str) -> float:
    """Matmul peak used for the weights' GEMMs: FP8 tensor cores for FP8/INT8 weights with FP8
    activations (W8A8), BF16 otherwise (INT4 W4A16 dequantises to BF16, spec F3)."""
    return hw["fp8_TFLOPS"] if weight_precision.lower() in ("fp8", "int8") else hw["peak_TFLOPS"]


def gemm_ridge_p(hw: dict, *, weight_precision: str) -> float:
    """Smooth-roofline exponent of the weights' GEMMs, on the same precision split as
    compute_peak_TFLOPS: FP8/INT8 (W8A8) the FP8 fit, else the BF16 fit (efficiency.yaml)."""
    fp8 = weight_precision.lower() in ("fp8", "int8")
    return hw["gemm_ridge_p_fp8"] if fp8 else hw["gemm_ridge_p_bf16"]


def decode_Bps(hw: dict) -> float:
    """Bandwidth the skinny GEMMs stream their weights (and decode its KV) at: HBM x the device record's
    decode_hbm_efficiency (engines.yaml, from torch GEMMs at M = 1-16); prefill chunks stream weights at it too."""
    return hw["hbm_bw_GBps"] * GB * hw["decode_hbm_efficiency"]


def gemm_time_s(*, memory_s: float, compute_s: float, ridge_p: float) -> float:
    """Time of a GEMM from its memory and compute bounds, smooth roofline (t_mem^p + t_comp^p)^(1/p).
    Real GEMMs near the ridge (M ~ peak/BW) reach neither bound; p is fitted to published GEMM tables
    (docs/serving.md "Factors"); p -> infinity is the ideal max()."""
    _nonneg(memory_s=memory_s, compute_s=compute_s)
    _pos(ridge_p=ridge_p)
    return (memory_s**ridge_p + compute_s**ridge_p) ** (1.0 / ridge_p)


def allreduce_time_s(*, message_bytes: float, tp: int, hw: dict, engine: Any) -> float:
    """One TP all-reduce, alpha-beta (spec 17.6.2): alpha + 2(n−1)/n·S/(BW_nvl·e). NCCL uses the engine's
    nccl_alpha_us and the GPU's nvlink_efficiency; up to its size limit the engine's custom kernel
    (allreduce_alpha_us, allreduce_bus_efficiency) is used when it is the faster, as engines dispatch."""
    _nonneg(message_bytes=message_bytes)
    if tp <= 1:
        return 0.0
    volume = 2 * (tp - 1) / tp * message_bytes
    nccl = engine.nccl_alpha_us * 1e-6 + volume / (hw["nvlink_GBps"] * GB * hw["nvlink_efficiency"])
    if message_bytes > engine.custom_allreduce_max_MB * 2**20:
        return nccl
    custom = engine.allreduce_alpha_us * 1e-6 + volume / (hw["nvlink_GBps"] * GB * engine.allreduce_bus_efficiency)
    return min(custom, nccl)


def alltoall_alpha_s(*, hw: dict, engine: Any, ep_nodes: int) -> float:
    """Fixed time of one EP dispatch or combine: the network latency across nodes, else the engine's NVLink
    kernel (its all-reduce alpha)."""
    return hw["network_latency_s"] if ep_nodes > 1 else engine.allreduce_alpha_us * 1e-6


def kv_reads_per_step(shape: ModelShape, *, engine: Any, tp: int = 1) -> float:
    """Times a decode step reads each KV byte: 1 with a GQA-aware kernel (engines.yaml ``decode_attention_kernel``
    per_kv_head: the query heads of a group share one read); the query heads per KV head on a GPU,
    (h/TP)/max(1, g/TP), with a kernel that walks the cache once per query head (per_query_head). MLA's
    latent is read once either way."""
    if getattr(engine, "decode_attention_kernel", "per_kv_head") != "per_query_head" or shape.attention == "mla":
        return 1.0
    return (shape.n_heads / tp) / max(1.0, shape.n_kv_heads / tp)


def decode_weight_read_bytes(shape: ModelShape, *, query_tokens: float, tp: int = 1, ep: int = 1,
                             redundant_experts: int = 0, weight_precision: str = "bf16",
                             keep_checkpoint_precision: bool = True) -> dict[str, float]:
    """Weight bytes one decode step reads on one GPU: everything but the embedding table and the
    routed experts, plus the embedding rows of the step's tokens and the expected distinct experts.

    ``query_tokens`` is the step's tokens on this GPU (B·q). With ep > 1 (DP attention + EP) each
    MoE layer receives the tokens of all EP ranks, N = query_tokens·ep.
    """
    _nonneg(query_tokens=query_tokens)
    g = weight_groups_per_gpu_bytes(shape, weight_precision=weight_precision, tp=tp, ep=ep,
                                    redundant_experts=redundant_experts,
                                    keep_checkpoint_precision=keep_checkpoint_precision)
    dense = g["attention"] + g["dense_ffn"] + g["shared"] + g["router"] + g["norms"] + g["head"]
    b_emb = 2.0 if keep_checkpoint_precision else linear_bytes_per_param(weight_precision)
    emb_rows = min(query_tokens, shape.vocab) * shape.d_model * b_emb
    if shape.tied:
        dense += g["embedding"]  # the tied table is the head, read whole
        emb_rows = 0.0
    routed = 0.0
    distinct = 0.0
    if shape.moe:
        slots = experts_per_gpu(shape, ep=ep, redundant_experts=redundant_experts)
        tokens_in = query_tokens * (ep if ep > 1 else 1)
        frac = expected_distinct_experts(n_experts=shape.n_experts, top_k=shape.top_k, tokens=tokens_in) / shape.n_experts
        distinct = slots * frac
        routed = g["routed"] * frac
    return {"dense": dense, "routed": routed, "embedding_rows": emb_rows, "distinct_experts_per_gpu": distinct,
            "total": dense + routed + emb_rows}


def moe_expert_time_s(shape: ModelShape, *, distinct_experts_per_gpu: float, engine: Any) -> float:
    """Fixed time of the fused MoE calls of one pass besides their weight bytes: L_moe·(t_layer + D_gpu·t_expert),
    0 for a dense model.

    A fused MoE call (vLLM's and SGLang's Triton fused_moe) at a few tokens per expert does not stream its
    experts' slices at the bandwidth from the first byte: its two grouped GEMMs have a ramp and tail of their
    own (t_layer, engines.yaml ``moe_layer_us``, beyond the align/sort, activation and reduce kernels and the
    launches the step counts already), and each distinct expert adds a little besides its bytes (t_expert,
    ``moe_expert_us``). Both from a published kernel table (SGLang PR 11730: fused_moe time against the
    batch for Qwen3-235B-A22B FP8 at TP 8 on an H200; docs/serving.md "Decode step"). D_gpu =
    slots·(1 − (1 − k/E)^N) grows from k·slots/E at one token to all slots."""
    _nonneg(distinct_experts_per_gpu=distinct_experts_per_gpu)
    if not shape.moe:
        return 0.0
    per_layer = (float(getattr(engine, "moe_layer_us", 0.0) or 0.0)
                 + distinct_experts_per_gpu * float(getattr(engine, "moe_expert_us", 0.0) or 0.0))
    return shape.moe_layers * per_layer * 1e-6


def decode_gemm_FLOPs(shape: ModelShape, *, query_tokens: float, tp: int = 1, ep: int = 1) -> float:
    """Linear FLOPs of one decode step on one GPU: 2 per weight a token meets (attention, dense FFN,
    shared experts, router, LM head: sharded by TP; routed: k experts per token, balanced over EP)."""
    _nonneg(query_tokens=query_tokens)
    L = shape.layers
    per_tok = (L * (shape.attention_per_layer / tp + shape.attention_replicated_per_layer)
               + shape.dense_layers * shape.dense_ffn_per_layer / tp
               + shape.moe_layers * (shape.n_shared * shape.expert_params / tp + shape.router_per_layer)
               + shape.d_model * shape.vocab / tp)
    if shape.moe:
        shard = 1.0 if ep > 1 else float(tp)
        per_tok += shape.moe_layers * shape.top_k * shape.expert_params / shard
    return 2.0 * per_tok * query_tokens


def attention_FLOPs_per_query(shape: ModelShape, *, context_tokens: float, tp: int = 1) -> float:
    """Attention-core FLOPs of one query token over ``context_tokens`` on one GPU, all layers:
    GQA 2·S·h_gpu·(d_qk + d_v)·L; MLA (absorbed) 2·S·h_gpu·(r_kv + d_rope + r_kv)·L."""
    _nonneg(context_tokens=context_tokens)
    heads = shape.n_heads / tp
    if shape.attention == "mla":
        width = 2 * shape.kv_lora_rank + shape.qk_rope_head_dim
    else:
        width = shape.qk_head_dim + shape.v_head_dim
    return 2.0 * context_tokens * heads * width * shape.layers


def decode_step(shape: ModelShape, *, batch: float, context_tokens: float, hw: dict, engine: Any, tp: int = 1,
                ep: int = 1, redundant_experts: int = 0, weight_precision: str = "bf16", kv_precision: str = "bf16",
                query_tokens_per_seq: float = 1.0, tokens_per_step: float = 1.0, ep_overlap_frac: float = 0.0,
                ep_nodes: int = 1, keep_checkpoint_precision: bool = True, act_bytes: float = 2.0) -> dict[str, float]:
    """Time of one decode step for ``batch`` running requests at a mean ``context_tokens`` (module docstring).

    ``batch`` is per GPU of the serving group (with TP every rank sees the whole batch; with DP
    attention + EP, tp = 1, each GPU its own). ``hw`` from serving_hardware; ``engine`` an
    EngineProfile. ``query_tokens_per_seq`` > 1 verifies draft tokens (MTP/speculative);
    ``tokens_per_step`` is the tokens a request gains per step (1 + accepted drafts) for TPOT.
    ``ep_overlap_frac`` of the all-to-all hides under the step's GPU work (DeepSeek's two micro-batches:
    1; the passes themselves come from the engine's ``decode_micro_batches``); ``ep_nodes`` nodes share the EP group (the remote fraction of the all-to-all is (nodes−1)/nodes,
    NVLink for the rest). Returns every component in s, the step, TPOT, tokens/s of the GPU and flags.
    """
    _pos(batch=batch, tp=tp, ep=ep, query_tokens_per_seq=query_tokens_per_seq, tokens_per_step=tokens_per_step,
         ep_nodes=ep_nodes)
    _nonneg(context_tokens=context_tokens)
    if not 0 <= ep_overlap_frac <= 1:
        raise ValueError(f"ep_overlap_frac must be in [0, 1], got {ep_overlap_frac!r}")
    kw = dict(context_tokens=context_tokens, hw=hw, engine=engine, tp=tp, ep=ep, redundant_experts=redundant_experts,
              weight_precision=weight_precision, kv_precision=kv_precision, query_tokens_per_seq=query_tokens_per_seq,
              tokens_per_step=tokens_per_step, ep_overlap_frac=ep_overlap_frac, ep_nodes=ep_nodes,
              keep_checkpoint_precision=keep_checkpoint_precision, act_bytes=act_bytes)
    m = decode_passes(engine, batch)
    one = _decode_pass(shape, batch=batch / m, **kw)
    return _repeat_passes(one, m)


def decode_passes(engine: Any, batch: float) -> float:
    """Passes of a decode step: min(m, max(1, B)) with m the engine's ``decode_micro_batches`` (1 when the
    profile has none): a batch smaller than m requests is not split below one request per pass."""
    m = int(getattr(engine, "decode_micro_batches", 1) or 1)
    if m < 1:
        raise ValueError(f"decode_micro_batches must be >= 1, got {m!r}")
    return min(float(m), max(1.0, batch))


#: components of one pass that add up over the passes of a step (times, bytes, FLOPs, tokens/s stays per step)
_PER_PASS_SUMS = ("weight_read_bytes", "routed_read_bytes", "kv_read_bytes", "gemm_FLOPs", "attention_FLOPs",
                  "weight_read_s", "gemm_memory_s", "gemm_compute_s", "gemm_s", "attention_memory_s",
                  "attention_compute_s", "attention_s", "small_kernels_s", "allreduce_s", "sampler_s", "moe_experts_s", "launch_s",
                  "cpu_launch_s", "gpu_s", "ep_alltoall_s", "ep_exposed_s", "cpu_overhead_s", "cpu_sequences_s", "step_s", "tpot_s")


def _repeat_passes(one: dict[str, float], m: float) -> dict[str, float]:
    """A step of ``m`` micro-batches run one after another (DeepSeek's two-micro-batch decode, profile-data
    README): every pass reads the weights again, launches its kernels and exchanges its tokens, so each
    time, byte and FLOP of one pass at B/m adds m times; the batch, hence tokens/s, is the whole step's."""
    out = dict(one, passes=m)
    for k in _PER_PASS_SUMS:
        out[k] = one[k] * m
    out["tokens_per_s"] = one["tokens_per_s"]  # (B/m)·q/t_pass = B·q/(m·t_pass)
    return out


def _decode_pass(shape: ModelShape, *, batch: float, context_tokens: float, hw: dict, engine: Any, tp: int,
                 ep: int, redundant_experts: int, weight_precision: str, kv_precision: str,
                 query_tokens_per_seq: float, tokens_per_step: float, ep_overlap_frac: float, ep_nodes: int,
                 keep_checkpoint_precision: bool, act_bytes: float) -> dict[str, float]:
    """One pass of the decoder stack over ``batch`` requests (the whole step when the engine runs one)."""
    n = batch * query_tokens_per_seq
    L = shape.layers
    bw = decode_Bps(hw)
    kind = layer_kind(shape)

    wr = decode_weight_read_bytes(shape, query_tokens=n, tp=tp, ep=ep, redundant_experts=redundant_experts,
                                  weight_precision=weight_precision, keep_checkpoint_precision=keep_checkpoint_precision)
    ffn_local = (shape.top_k * shape.expert_ffn_width if shape.moe else shape.dense_ffn_width) / (1 if ep > 1 else tp)
    act = n * L * (ACT_PASSES_D * shape.d_model + ACT_PASSES_FFN * ffn_local) * act_bytes
    t_mem_gemm = (wr["total"] + act) / bw
    f_gemm = decode_gemm_FLOPs(shape, query_tokens=n, tp=tp, ep=ep)
    t_comp_gemm = f_gemm / (compute_peak_TFLOPS(hw, weight_precision=weight_precision) * TERA
                           * hw["serving_gemm_efficiency"])
    t_gemm = gemm_time_s(memory_s=t_mem_gemm, compute_s=t_comp_gemm,
                         ridge_p=gemm_ridge_p(hw, weight_precision=weight_precision))

    kv_tok = kv_bytes_per_token_per_gpu(shape, kv_precision=kv_precision, tp=tp)
    kv_read = batch * context_tokens * kv_tok * kv_reads_per_step(shape, engine=engine, tp=tp)
    f_attn = n * attention_FLOPs_per_query(shape, context_tokens=context_tokens, tp=tp)
    t_attn_mem = kv_read / bw
    t_attn_comp = f_attn / (hw["peak_TFLOPS"] * TERA * hw["attention_efficiency"])
    t_attn = max(t_attn_mem, t_attn_comp, L * engine.small_kernel_us * 1e-6)

    t_small = L * SMALL_KERNELS_PER_LAYER[kind] * engine.small_kernel_us * 1e-6
    n_ar = ALLREDUCES_PER_LAYER if tp > 1 else 0
    t_ar = L * n_ar * allreduce_time_s(message_bytes=n * shape.d_model * act_bytes, tp=tp, hw=hw, engine=engine)
    t_samp = (n * shape.vocab / tp * FP32_BYTES * SAMPLER_LOGIT_PASSES / bw
              + SAMPLER_KERNELS * engine.small_kernel_us * 1e-6)
    kernels = L * (GEMMS_PER_LAYER[kind] + SMALL_KERNELS_PER_LAYER[kind] + 1 + n_ar) + SAMPLER_KERNELS
    graphed = bool(engine.cuda_graphs) and batch <= engine.cuda_graph_max_batch
    t_launch = kernels * engine.graph_launch_us * 1e-6  # every kernel boundary, graphed or not
    t_cpu_launch = 0.0 if graphed else kernels * engine.eager_launch_us * 1e-6
    t_moe = moe_expert_time_s(shape, distinct_experts_per_gpu=wr["distinct_experts_per_gpu"], engine=engine)
    t_gpu = t_gemm + t_attn + t_small + t_ar + t_samp + t_moe + t_launch

    t_ep = 0.0
    if shape.moe and ep > 1:
        remote = (ep_nodes - 1) / ep_nodes
        payload = n * shape.top_k * shape.d_model * (EP_DISPATCH_BYTES + EP_COMBINE_BYTES)
        bw_net = hw["nic_GBps"] * GB * hw["network_efficiency"]
        bw_nvl = hw["nvlink_GBps"] * GB * hw["nvlink_efficiency"]
        t_layer = payload * remote / bw_net + payload * (1 - remote) / bw_nvl
        alpha = alltoall_alpha_s(hw=hw, engine=engine, ep_nodes=ep_nodes)
        t_ep = shape.moe_layers * (2 * alpha + t_layer)
    t_ep_exposed = max(t_ep - ep_overlap_frac * t_gpu, float(engine.decode_comm_sm_frac) * t_ep)
    t_cpu = engine.cpu_overhead_frac * t_gpu
    t_cpu_seqs = batch * engine.cpu_per_seq_us * 1e-6
    t_step = max(t_gpu, t_cpu_launch) + t_ep_exposed + t_cpu + t_cpu_seqs
    return {
        "weight_read_bytes": wr["total"],
        "routed_read_bytes": wr["routed"],
        "distinct_experts_per_gpu": wr["distinct_experts_per_gpu"],
        "kv_read_bytes": kv_read,
        "gemm_FLOPs": f_gemm,
        "attention_FLOPs": f_attn,
        "weight_read_s": wr["total"] / bw,
        "gemm_memory_s": t_mem_gemm,
        "gemm_compute_s": t_comp_gemm,
        "gemm_s": t_gemm,
        "attention_memory_s": t_attn_mem,
        "attention_compute_s": t_attn_comp,
        "attention_s": t_attn,
        "small_kernels_s": t_small,
        "allreduce_s": t_ar,
        "sampler_s": t_samp,
        "moe_experts_s": t_moe,
        "launch_s": t_launch,
        "cpu_launch_s": t_cpu_launch,
        "gpu_s": t_gpu,
        "ep_alltoall_s": t_ep,
        "ep_exposed_s": t_ep_exposed,
        "cpu_overhead_s": t_cpu,
        "cpu_sequences_s": t_cpu_seqs,
        "step_s": t_step,
        "tpot_s": t_step / tokens_per_step,
        "tokens_per_s": batch * tokens_per_step / t_step,
        "memory_bound": float(t_mem_gemm >= t_comp_gemm),
        "cuda_graphs": float(graphed),
    }


def book_decode_step_s(shape: ModelShape, *, batch: float, context_tokens: float, hw: dict, tp: int = 1,
                       weight_precision: str = "bf16", kv_precision: str = "bf16",
                       compute_efficiency: float = 0.7, hbm_efficiency: float = 1.0) -> float:
    """The book's roofline for comparison (spec F3): max(2·P/TP·B/(peak·eta_c), (P·b_w/TP + B·KV_gpu)/BW)."""
    w = shape.params_total * BYTES_PER_ELEMENT[weight_precision.lower()] / tp
    kv = batch * context_tokens * kv_bytes_per_token_per_gpu(shape, kv_precision=kv_precision, tp=tp)
    t_mem = (w + kv) / (hw["hbm_bw_GBps"] * GB * hbm_efficiency)
    t_comp = 2 * shape.params_total / tp * batch / (hw["peak_TFLOPS"] * TERA * compute_efficiency)
    return max(t_mem, t_comp)
