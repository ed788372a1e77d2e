"""Inference sheet, engine decode block: the hardware and per-step costs the decode model reads, and
one decode step at the scenario's batch and mean context (docs/serving.md "Decode step";
workbook.reference.decode_time.decode_step).

A decode step is laid out as seven rows (:func:`decode_quantities`): the weights read, the GEMM time
(larger of weight stream and FLOPs), the attention time, the TP all-reduces, the GPU time and the
step (CPU launch floor, EP all-to-all, CPU overhead). The load block reuses the same seven rows at
other batches. The step is per GPU of the serving group; TP ranks run in lockstep.
"""

from __future__ import annotations

from typing import Any

from workbook.calc.base import Context, Q
from workbook.calc.serving_memory import device_of, engine_of, ep_overlap_frac
from workbook.reference import decode_time as dt
from workbook.reference import serving_load as sl
from workbook.reference.attention_dp import group_nodes
from workbook.reference.serving_shape import model_shape
from workbook.units import GB, MS_PER_S, TERA

_S = "docs/serving.md"
#: the seven rows of one decode step: suffix, unit, label
DECODE_ROWS = [
    ("passes", "count", "passes of the step: min(engine micro-batches, max(1, batch))"),
    ("weight_read_B", "B", "weights read in the step, every micro-batch pass (dense + distinct experts + embedding rows)"),
    ("gemm_s", "s", "GEMM time: smooth roofline of the weight stream and the linear FLOPs"),
    ("attn_s", "s", "attention time: larger of the KV read, the attention FLOPs and the small-kernel floor"),
    ("ar_s", "s", "TP all-reduces (two per layer, alpha-beta, custom kernel or NCCL)"),
    ("gpu_s", "s", "GPU time: GEMM + attention + small kernels + all-reduce + sampler + launches"),
    ("ep_exposed_s", "s", "EP all-to-all not hidden under the GPU work"),
    ("step_s", "s", "step: max(GPU, CPU launch) + exposed EP all-to-all + CPU overhead"),
]


def decode_quantities(prefix: str, what: str) -> list[Q]:
    """The seven rows of one decode step named ``{prefix}_{suffix}``; ``what`` says at which batch."""
    return [Q(f"{prefix}_{suf}", unit, f"Decode {what}: {label}", _S) for suf, unit, label in DECODE_ROWS]


def decode_values(prefix: str, step: dict[str, float]) -> dict[str, float]:
    """decode_time.decode_step's result as the seven rows."""
    return {
        f"{prefix}_passes": step["passes"],
        f"{prefix}_weight_read_B": step["weight_read_bytes"],
        f"{prefix}_gemm_s": step["gemm_s"],
        f"{prefix}_attn_s": step["attention_s"],
        f"{prefix}_ar_s": step["allreduce_s"],
        f"{prefix}_gpu_s": step["gpu_s"],
        f"{prefix}_ep_exposed_s": step["ep_exposed_s"],
        f"{prefix}_step_s": step["step_s"],
    }


def running_context(ctx: Context) -> float:
    """The running requests' mean context of the scenario (serving_load.running_context_tokens)."""
    inf = ctx.s.inference
    return sl.running_context_tokens(prompt_tokens=float(inf.prompt_tokens), output_tokens=float(inf.output_tokens),
                                     output_lengths=inf.output_lengths)


def hardware(ctx: Context) -> dict[str, float]:
    """serving_hardware of the scenario's GPU (device record or its fallback)."""
    return dt.serving_hardware(gpu=ctx.gpu, efficiency=ctx.eff, device=device_of(ctx))


def ep_nodes(ctx: Context, ep: int | None = None) -> int:
    """Nodes one serving group of TP x EP GPUs spans (EP: the scenario's, or ``ep``, a prefill pool's)."""
    inf = ctx.s.inference
    return group_nodes(tp=inf.tp, ep=inf.ep if ep is None else ep, gpus_per_node=int(ctx.gpu.gpus_per_node))


def ss_slots(ctx: Context, shape: Any) -> float:
    """Routed-expert slots per GPU per MoE layer (serving_shape.experts_per_gpu; 0 for a dense model)."""
    from workbook.reference.serving_shape import experts_per_gpu

    inf = ctx.s.inference
    return experts_per_gpu(shape, ep=inf.ep, redundant_experts=inf.redundant_experts) if shape.moe else 0.0


def decode_kwargs(ctx: Context) -> dict[str, Any]:
    """Keywords of decode_time.decode_step for the scenario (besides batch and context)."""
    inf = ctx.s.inference
    return dict(hw=hardware(ctx), engine=engine_of(ctx), tp=inf.tp, ep=inf.ep, redundant_experts=inf.redundant_experts,
                weight_precision=inf.weight_precision, kv_precision=inf.kv_precision, ep_nodes=ep_nodes(ctx),
                ep_overlap_frac=ep_overlap_frac(ctx))


def decode(ctx: Context, batch: float, context_tokens: float) -> dict[str, float]:
    return dt.decode_step(model_shape(ctx.model), batch=batch, context_tokens=context_tokens, **decode_kwargs(ctx))


QUANTITIES = [
    Q("srv_decode_hbm_efficiency", "fraction", "Decode weight-streaming efficiency (device record, else the GPU's HBM efficiency)", _S),
    Q("srv_decode_Bps", "B/s", "Decode HBM bandwidth (peak x decode efficiency)", _S),
    Q("srv_fp8_TFLOPS", "TFLOPS", "FP8 peak (BF16 where the GPU has no FP8 units)", _S),
    Q("srv_linear_TFLOPS", "TFLOPS", "Peak of the weight GEMMs (FP8 units for FP8/INT8 weights, else BF16)", _S),
    Q("srv_linear_FLOPS", "FLOP/s", "Sustained GEMM rate (peak x matmul efficiency)", _S),
    Q("srv_gemm_ridge_p", "exponent", "GEMM smooth-roofline exponent p at the weight precision, "
      "(t_mem^p + t_comp^p)^(1/p)", _S),
    Q("srv_attn_FLOPS", "FLOP/s", "Sustained attention rate (BF16 peak x attention efficiency)", _S),
    Q("srv_layer_kind", "count", "Layer kind for the kernel counts: 1 dense, 2 GQA + MoE, 3 MLA", _S),
    Q("srv_gemms_per_layer", "count", "GEMM kernels per layer of a decode step", _S),
    Q("srv_small_per_layer", "count", "Small kernels per layer (norms, RoPE, KV write, activation, routing)", _S),
    Q("srv_ar_per_layer", "ops", "TP all-reduces per layer (2 at TP > 1)", _S),
    Q("srv_kernels_per_step", "count", "Kernels per decode step (layers x per layer + sampler tail)", _S),
    Q("srv_small_kernels_s", "s", "Small kernels of one step", _S),
    Q("srv_attn_floor_s", "s", "Attention floor: one short kernel per layer", _S),
    Q("srv_moe_experts_all_s", "s", "Fixed time of the touched experts when a step touches every expert slot on the GPU "
      "(MoE layers x slots x the engine's per-expert time; a step pays its distinct-expert share of it)", _S),
    Q("srv_moe_layers_fixed_s", "s", "Fixed time of a pass's fused MoE calls besides bytes and counted kernels "
      "(MoE layers x the engine's per-layer time)", _S),
    Q("srv_kv_reads_per_step", "x", "Times a decode step reads each KV byte (1: GQA-aware kernel; per query head: "
      "query heads per KV head on a GPU)", _S),
    Q("srv_launch_s", "s", "Kernel boundaries inside a CUDA graph", _S),
    Q("srv_eager_launch_s", "s", "CPU launch time of an eager step (no CUDA graph, or batch above the captured ones)", _S),
    Q("srv_sampler_fixed_s", "s", "Sampler tail kernels", _S),
    Q("srv_sampler_s_per_token", "s", "Sampler logits passes per token (FP32 logits read three times)", _S),
    Q("srv_dense_read_B", "B", "Weights every decode step reads whole (all but routed experts and the embedding table)", _S),
    Q("srv_emb_row_B", "B", "Embedding row bytes per token (0 when tied: the table is read as the head)", _S),
    Q("srv_expert_tokens_factor", "x", "Tokens entering an MoE layer per local token (EP with DP attention: EP)", _S),
    Q("srv_experts_safe", "count", "Routed experts (at least 1, for the distinct-expert share)", _S),
    Q("srv_ffn_local_width", "count", "FFN width per token on one GPU (MoE: k·d_e)", _S),
    Q("srv_act_B_per_token", "B/token", "Activation bytes per token per step (10 d + 3 w_ffn per layer)", _S),
    Q("srv_prefill_FLOP_per_token", "FLOP", "Linear FLOPs per prompt token on one GPU (no LM head)", _S),
    Q("srv_decode_FLOP_per_token", "FLOP", "Linear FLOPs per decode token on one GPU (with the LM head)", _S),
    Q("srv_attn_FLOP_per_ctx_token", "FLOP", "Attention FLOPs per query token per context token on one GPU", _S),
    Q("srv_ar_count", "ops", "TP all-reduces per step (layers x per layer)", _S),
    Q("srv_ar_B_per_token", "B/token", "All-reduce message bytes per token (d x 2 B)", _S),
    Q("srv_custom_max_B", "B", "Largest message of the engine's custom all-reduce", _S),
    Q("srv_nccl_alpha_s", "s", "NCCL all-reduce fixed time", _S),
    Q("srv_nccl_s_per_B", "s", "NCCL all-reduce time per message byte (2(n-1)/n over NVLink x efficiency)", _S),
    Q("srv_custom_alpha_s", "s", "Custom all-reduce fixed time", _S),
    Q("srv_custom_s_per_B", "s", "Custom all-reduce time per message byte", _S),
    Q("srv_ep_flag", "0/1", "MoE served with EP > 1 (all-to-all per MoE layer)", _S),
    Q("srv_ep_nodes", "nodes", "Nodes one serving group spans (TP x EP / GPUs per node, rounded up)", _S),
    Q("srv_ep_remote_frac", "fraction", "Share of the all-to-all that leaves the node", _S),
    Q("srv_ep_alpha_s", "s", "All-to-all latency (network across nodes, else the NVLink kernel)", _S),
    Q("srv_ep_fixed_s", "s", "All-to-all fixed time per step (dispatch and combine per MoE layer)", _S),
    Q("srv_ep_s_per_token", "s", "All-to-all time per token (FP8 dispatch + BF16 combine of k copies)", _S),
    Q("srv_output_length_cv2", "x", "Output lengths' squared coefficient of variation: 1 exponential (a chat "
      "mix), 0 fixed (inference.output_lengths)", _S),
    Q("srv_running_context_tokens", "tokens", "Mean context of the running requests at a decode step: prompt + "
      "output x (1 + cv^2)/2 (a step meets long requests more often; fixed lengths: prompt + output/2)", _S),
    *decode_quantities("srv_dec", "at the scenario batch and the running requests' mean context"),
    Q("srv_decode_weight_read_ms", "ms", "Weight-read time of one decode step at the batch", _S),
    Q("srv_decode_step_ms", "ms", "Decode step at the batch and mean context (engine model)", _S),
    Q("srv_decode_tokens_per_s_per_gpu", "tokens/s", "Decode output tokens/s per GPU at the batch (no prefill)", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    inf, m, q = ctx.s.inference, ctx.model, ctx.q
    hw = hardware(ctx)
    eng = engine_of(ctx)
    shape = model_shape(m)
    kind = dt.layer_kind(shape)
    tp, L, d = float(inf.tp), float(shape.layers), float(shape.d_model)
    n_ar = dt.ALLREDUCES_PER_LAYER if inf.tp > 1 else 0
    kernels = L * (dt.GEMMS_PER_LAYER[kind] + dt.SMALL_KERNELS_PER_LAYER[kind] + 1 + n_ar) + dt.SAMPLER_KERNELS
    bw = dt.decode_Bps(hw)
    wr1 = dt.decode_weight_read_bytes(shape, query_tokens=1.0, tp=inf.tp, ep=inf.ep, weight_precision=inf.weight_precision,
                                      redundant_experts=inf.redundant_experts)
    ffn_local = (shape.top_k * shape.expert_ffn_width if shape.moe else shape.dense_ffn_width) / (1 if inf.ep > 1 else tp)
    from workbook.reference.prefill_time import linear_FLOPs_per_token

    f_pre = linear_FLOPs_per_token(shape, tp=inf.tp, ep=inf.ep)
    vol = 2 * (tp - 1) / tp
    nodes = ep_nodes(ctx)
    ep_on = float(shape.moe and inf.ep > 1)
    remote = (nodes - 1) / nodes
    alpha_ep = dt.alltoall_alpha_s(hw=hw, engine=eng, ep_nodes=nodes)
    per_tok_ep = shape.top_k * d * (dt.EP_DISPATCH_BYTES + dt.EP_COMBINE_BYTES) * (
        remote / (hw["nic_GBps"] * GB * hw["network_efficiency"])
        + (1 - remote) / (hw["nvlink_GBps"] * GB * hw["nvlink_efficiency"]))
    ctx_tokens = running_context(ctx)
    step = decode(ctx, inf.batch, ctx_tokens)
    out = {
        "srv_output_length_cv2": sl.output_length_cv2(inf.output_lengths),
        "srv_running_context_tokens": ctx_tokens,
        "srv_decode_hbm_efficiency": hw["decode_hbm_efficiency"],
        "srv_decode_Bps": bw,
        "srv_fp8_TFLOPS": hw["fp8_TFLOPS"],
        "srv_linear_TFLOPS": dt.compute_peak_TFLOPS(hw, weight_precision=inf.weight_precision),
        "srv_linear_FLOPS": (dt.compute_peak_TFLOPS(hw, weight_precision=inf.weight_precision) * TERA
                             * hw["serving_gemm_efficiency"]),
        "srv_gemm_ridge_p": dt.gemm_ridge_p(hw, weight_precision=inf.weight_precision),
        "srv_attn_FLOPS": hw["peak_TFLOPS"] * TERA * hw["attention_efficiency"],
        "srv_layer_kind": float(["dense", "moe", "mla_moe"].index(kind) + 1),
        "srv_gemms_per_layer": float(dt.GEMMS_PER_LAYER[kind]),
        "srv_small_per_layer": float(dt.SMALL_KERNELS_PER_LAYER[kind]),
        "srv_ar_per_layer": float(n_ar),
        "srv_kernels_per_step": kernels,
        "srv_small_kernels_s": L * dt.SMALL_KERNELS_PER_LAYER[kind] * eng.small_kernel_us * 1e-6,
        "srv_attn_floor_s": L * eng.small_kernel_us * 1e-6,
        "srv_moe_experts_all_s": dt.moe_expert_time_s(shape, engine=eng.model_copy(update={"moe_layer_us": 0.0}),
                                                      distinct_experts_per_gpu=ss_slots(ctx, shape)),
        "srv_moe_layers_fixed_s": dt.moe_expert_time_s(shape, engine=eng, distinct_experts_per_gpu=0.0),
        "srv_kv_reads_per_step": dt.kv_reads_per_step(model_shape(ctx.model), engine=eng, tp=inf.tp),
        "srv_launch_s": kernels * eng.graph_launch_us * 1e-6,
        "srv_eager_launch_s": kernels * eng.eager_launch_us * 1e-6,
        "srv_sampler_fixed_s": dt.SAMPLER_KERNELS * eng.small_kernel_us * 1e-6,
        "srv_sampler_s_per_token": shape.vocab / tp * dt.FP32_BYTES * dt.SAMPLER_LOGIT_PASSES / bw,
        "srv_dense_read_B": wr1["dense"],
        "srv_emb_row_B": 0.0 if shape.tied else d * 2.0,
        "srv_expert_tokens_factor": float(inf.ep if inf.ep > 1 else 1),
        "srv_experts_safe": float(max(1, shape.n_experts)),
        "srv_ffn_local_width": ffn_local,
        "srv_act_B_per_token": L * (dt.ACT_PASSES_D * d + dt.ACT_PASSES_FFN * ffn_local) * 2.0,
        "srv_prefill_FLOP_per_token": f_pre,
        "srv_decode_FLOP_per_token": dt.decode_gemm_FLOPs(shape, query_tokens=1.0, tp=inf.tp, ep=inf.ep),
        "srv_attn_FLOP_per_ctx_token": dt.attention_FLOPs_per_query(shape, context_tokens=1.0, tp=inf.tp),
        "srv_ar_count": L * n_ar,
        "srv_ar_B_per_token": d * 2.0,
        "srv_custom_max_B": eng.custom_allreduce_max_MB * 2**20,
        "srv_nccl_alpha_s": eng.nccl_alpha_us * 1e-6,
        "srv_nccl_s_per_B": vol / (hw["nvlink_GBps"] * GB * hw["nvlink_efficiency"]),
        "srv_custom_alpha_s": eng.allreduce_alpha_us * 1e-6,
        "srv_custom_s_per_B": vol / (hw["nvlink_GBps"] * GB * eng.allreduce_bus_efficiency),
        "srv_ep_flag": ep_on,
        "srv_ep_nodes": float(nodes),
        "srv_ep_remote_frac": remote,
        "srv_ep_alpha_s": alpha_ep,
        "srv_ep_fixed_s": ep_on * shape.moe_layers * 2 * alpha_ep,
        "srv_ep_s_per_token": ep_on * shape.moe_layers * per_tok_ep,
        **decode_values("srv_dec", step),
        "srv_decode_weight_read_ms": step["weight_read_s"] * MS_PER_S,
        "srv_decode_step_ms": step["step_s"] * MS_PER_S,
        "srv_decode_tokens_per_s_per_gpu": step["tokens_per_s"] / tp,
    }
    return out
