"""Closed-form training step time of one layout (docs/step_time.md).

Predicts the time of one optimizer step for a model, a GPU and a parallel layout (TP, CP, PP, DP,
EP, micro-batch, number of micro-batches, sequence length, pipeline schedule, recompute mode), and
from it tokens/s, MFU, HFU and TFLOP/s per GPU. Every term is a closed form (no loop over
micro-batches, no search), so that a spreadsheet can hold it as formulas.

Structure (Narayanan et al. 2021, arXiv 2104.04473, §2.2 and eq. 1; Calculon, Isaev et al. SC'23,
calculon/llm/llm.py ``_compute_batch_stats``):

    t_step = (m + B_units) * t_mb  +  t_dp_exposed  +  t_optimizer
    t_mb   = t_compute + t_tp_exposed + t_pp + t_ep_exposed + t_cp_exposed + t_zero3_exposed

``t_mb`` is the time of one micro-batch (forward + backward, and recompute) through the slowest
pipeline stage on one GPU; ``B_units = (PP-1)/v`` micro-batch slots of pipeline bubble (1F1B: v = 1;
interleaved: v virtual stages per GPU; zero-bubble: 0), i.e. a bubble fraction (PP-1)/(m v) of the
useful time.

Compute time of a micro-batch on a stage (per GPU):

    t_compute = F_gemm / (peak * e_gemm) + F_attn / (peak * e_attn) + Q_elem / (BW_hbm * e_hbm)

with F_gemm the matmul FLOPs (6 x active matmul parameters x tokens, plus recompute), F_attn the
attention-core FLOPs (QK^T and AV; Korthikanti et al. 2022, arXiv 2205.05198, §3: 4 b s^2 h per
layer forward, halved for causal kernels that skip masked blocks), and Q_elem the bytes moved by
the memory-bound element-wise operators (norms, residual adds, activation, unfused softmax and
dropout), all divided by TP x CP (the sequence is split by CP; TP splits matmuls and, with sequence
parallelism, also the element-wise operators).

Communication uses the alpha-beta model (spec 17.6.2): ``t = alpha + k * bytes / BW``, with the
effective one-direction bandwidth per GPU BW = link bandwidth x efficiency: NVLink inside a node, the
GPU's NIC across nodes. Volumes (bytes sent per GPU) follow spec 17.6.3-17.6.7.

Conventions: bytes sent per GPU; GB = 1e9 B; bandwidths GB/s one direction; times in s; FLOPs are
counts, FLOPS rates. Model FLOPs (MFU numerator) exclude recompute; hardware FLOPs (HFU) include it.
Both are taken against the dense BF16 peak.
"""

from __future__ import annotations

from workbook.reference.args import nonnegative as _nonneg
from workbook.reference.args import positive as _pos

import functools
import math
from typing import Any

from workbook.reference import fp8
from workbook.reference.activations import op_sac_gemm_recompute_frac
from workbook.reference.decode_time import gemm_time_s
from workbook.reference.hardware import nic_aggregate_GBps
from workbook.reference.params import ffn_matrices, mla_attention_params
from workbook.units import GB, TERA

SCHEDULES = ("1f1b", "interleaved", "zero_bubble")
RECOMPUTE_MODES = ("none", "selective", "full", "op_selective")
ATTENTION_KERNELS = ("flash", "unfused")

#: forward-equivalents of training: forward 1 + backward 2 (Narayanan et al. 2021 §5.1, spec 17.1.1)
FWD_UNITS = 1.0
BWD_UNITS = 2.0
#: element-wise bytes of the backward relative to the forward (reads saved inputs and the incoming
#: gradient, writes the outgoing gradient: about twice the forward traffic)
ELEMENTWISE_BWD_OVER_FWD = 2.0
#: element-wise tensor passes per layer forward, in elements per token (counted in docs/step_time.md):
#: two norms (read + write d each = 4 d), two residual adds (read 2 d, write d each = 6 d)
ELEM_PASSES_PER_D_MODEL = 10.0
#: activation: GeLU reads and writes d_ff (2), a gated unit (SwiGLU/GeGLU) reads 2 d_ff, writes d_ff (3)
ELEM_PASSES_PER_D_FF = {2: 2.0, 3: 3.0}
#: unfused attention (Megatron 2021-22): fused scale-mask-softmax reads + writes the a x s scores (2),
#: dropout on the probabilities reads + writes them and writes a 1-byte mask (2.5 at 2-byte values)
ELEM_PASSES_PER_SCORE_SOFTMAX = 2.0
ELEM_PASSES_PER_SCORE_DROPOUT = 2.5
#: dropout on the two residual branches (GPT-3-style models; Megatron bias-dropout-add writes a mask)
ELEM_PASSES_PER_D_MODEL_DROPOUT = 1.0
#: optimizer step traffic per local parameter, mixed-precision Adam: reads FP32 master, m, v and the
#: gradient, writes master, m, v and the 16-bit weight (4+4+4+4 + 4+4+4+2 = 30 bytes with FP32 grads)
ADAM_BYTES_PER_PARAM = 30.0




def _frac(**values: float) -> None:
    for name, v in values.items():
        if v is None or not 0 <= v <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {v!r}")


# --------------------------------------------------------------------------- per-layer FLOPs
def attention_matmul_params(*, d_model: float, n_heads: float, n_kv_heads: float, head_dim: float,
                            attention: str = "gqa", q_lora_rank: float | None = None,
                            kv_lora_rank: float | None = None, qk_rope_head_dim: float | None = None,
                            qk_nope_head_dim: float | None = None, v_head_dim: float | None = None) -> float:
    """Weights of one layer's attention projections that take part in matmuls (count).

    MHA/GQA/MQA: Q d*h*d_h, K and V d*g*d_h each, O h*d_h*d (spec 17.2.1). MLA (DeepSeek-V2/V3):
    params.mla_attention_params' linear part (low-rank Q, KV down/up projections, O).
    """
    if attention == "mla":
        return mla_attention_params(d_model=d_model, n_heads=n_heads, q_lora_rank=q_lora_rank,
                                    kv_lora_rank=kv_lora_rank, qk_rope_head_dim=qk_rope_head_dim,
                                    qk_nope_head_dim=qk_nope_head_dim, v_head_dim=v_head_dim)["linear"]
    _pos(d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim)
    return d_model * head_dim * (2 * n_heads + 2 * n_kv_heads)


def attention_core_FLOPs_per_token(*, seq_len: float, n_heads: float, qk_head_dim: float, v_head_dim: float,
                                   mask_frac: float = 1.0) -> float:
    """Forward QK^T + AV FLOPs per token of one layer: 2 * s * h_q * (d_qk + d_v) * mask_frac.

    With d_qk = d_v = d/h this is 4*s*d per token, i.e. 4 b s^2 h per layer (Korthikanti et al. 2022
    §3; Narayanan et al. 2021 eq. 3's s/6h term). mask_frac = 1 counts the full s x s score matrix
    (unfused Megatron kernels compute it, and eq. 3 counts it); 0.5 is a causal kernel that skips the
    masked half (FlashAttention). MLA: d_qk = nope + rope head dims, d_v = v_head_dim.
    """
    _nonneg(seq_len=seq_len, n_heads=n_heads, qk_head_dim=qk_head_dim, v_head_dim=v_head_dim)
    _frac(mask_frac=mask_frac)
    return 2 * seq_len * n_heads * (qk_head_dim + v_head_dim) * mask_frac


def layer_profile(*, layers: int, d_model: float, d_ff: float, n_heads: float, n_kv_heads: float,
                  head_dim: float, vocab: float, ffn: str = "swiglu", attention: str = "gqa",
                  q_lora_rank: float | None = None, kv_lora_rank: float | None = None,
                  qk_rope_head_dim: float | None = None, qk_nope_head_dim: float | None = None,
                  v_head_dim: float | None = None, moe: bool = False, n_routed_experts: float | None = None,
                  top_k: float | None = None, n_shared_experts: float = 0, expert_d_ff: float | None = None,
                  n_dense_layers: float = 0, dense_d_ff: float | None = None) -> dict[str, float]:
    """Per-layer averages over the model of what the time model needs (counts per token, forward).

    Returns: gemm_params_active (matmul weights a token meets per layer, averaged over dense and MoE
    layers), params_per_layer (weights stored per layer, all experts), expert_params_per_layer (the
    routed experts' share of params_per_layer), moe_layer_frac, qk_head_dim, v_head_dim,
    kv_width (K and V elements per token per layer that context parallelism passes), ffn_width_active
    (activation elements per token: d_ff x active experts), head_params (LM head d*V).
    """
    _pos(layers=layers, d_model=d_model, d_ff=d_ff, vocab=vocab)
    n_mat = ffn_matrices(ffn)
    attn = attention_matmul_params(d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim,
                                   attention=attention, q_lora_rank=q_lora_rank, kv_lora_rank=kv_lora_rank,
                                   qk_rope_head_dim=qk_rope_head_dim, qk_nope_head_dim=qk_nope_head_dim,
                                   v_head_dim=v_head_dim)
    if attention == "mla":
        qk = float(qk_nope_head_dim) + float(qk_rope_head_dim)
        vd = float(v_head_dim)
        kv_width = n_heads * (qk + vd)  # K and V after the up-projection (what a KV ring passes)
    else:
        qk = vd = float(head_dim)
        kv_width = 2 * n_kv_heads * head_dim
    if moe:
        if n_routed_experts is None or top_k is None or expert_d_ff is None:
            raise ValueError("moe needs n_routed_experts, top_k and expert_d_ff")
        expert = n_mat * d_model * expert_d_ff
        router = d_model * n_routed_experts
        moe_layers = layers - n_dense_layers
        dense_ffn = n_mat * d_model * (dense_d_ff if dense_d_ff is not None else d_ff)
        ffn_active = (n_dense_layers * dense_ffn + moe_layers * ((top_k + n_shared_experts) * expert + router)) / layers
        ffn_stored = (n_dense_layers * dense_ffn
                      + moe_layers * ((n_routed_experts + n_shared_experts) * expert + router)) / layers
        experts_stored = moe_layers * n_routed_experts * expert / layers
        width = (n_dense_layers * (dense_d_ff if dense_d_ff is not None else d_ff)
                 + moe_layers * (top_k + n_shared_experts) * expert_d_ff) / layers
        moe_frac = moe_layers / layers
    else:
        ffn_active = ffn_stored = n_mat * d_model * d_ff
        experts_stored = 0.0
        width = float(d_ff)
        moe_frac = 0.0
    return {
        "gemm_params_active": attn + ffn_active,
        "params_per_layer": attn + ffn_stored,
        "expert_params_per_layer": experts_stored,
        "moe_layer_frac": moe_frac,
        "qk_head_dim": qk,
        "v_head_dim": vd,
        "kv_width": kv_width,
        "ffn_width_active": width,
        "ffn_matrices": float(n_mat),
        "head_params": d_model * vocab,
    }


def recompute_fwd_frac(recompute: str, op_sac_gemm_frac: float | None = None) -> dict[str, float]:
    """Extra forward work per layer of a recompute mode (Korthikanti et al. 2022 §4-5):
    full: the whole layer forward again (matmuls, attention, element-wise);
    selective: only the attention core (QK^T, softmax, dropout, AV); none: nothing;
    op_selective (torchtitan's op-level selective AC, workbook.reference.activations.op_sac_matmuls): the
    matmuls whose outputs it does not save (``op_sac_gemm_frac`` of the layer's matmul FLOPs, every
    second one) and every element-wise op; the attention op's output is saved, so the core is not run
    again, nor the reduce-scatters, but the SP all-gathers are (one all-reduce's worth).
    Keys: gemm, attn, elem (all element-wise bytes), elem_scores (the unfused softmax/dropout bytes
    alone), each in forward passes; tp the extra TP all-reduces per layer (full 2, op_selective 1)."""
    if recompute == "full":
        return {"gemm": 1.0, "attn": 1.0, "elem": 1.0, "elem_scores": 0.0, "tp": 2.0}
    if recompute == "selective":
        return {"gemm": 0.0, "attn": 1.0, "elem": 0.0, "elem_scores": 1.0, "tp": 0.0}
    if recompute == "none":
        return {"gemm": 0.0, "attn": 0.0, "elem": 0.0, "elem_scores": 0.0, "tp": 0.0}
    if recompute == "op_selective":
        if op_sac_gemm_frac is None:
            raise ValueError("recompute 'op_selective' needs op_sac_gemm_frac (the share of matmul FLOPs recomputed)")
        _frac(op_sac_gemm_frac=op_sac_gemm_frac)
        return {"gemm": float(op_sac_gemm_frac), "attn": 0.0, "elem": 1.0, "elem_scores": 0.0, "tp": 1.0}
    raise ValueError(f"unknown recompute mode {recompute!r}; expected one of {RECOMPUTE_MODES}")


# --------------------------------------------------------------------------- pipeline bubble
def bubble_frac(*, pp: int, micro_batches: float, schedule: str = "1f1b", virtual_stages: int = 1) -> float:
    """Pipeline bubble relative to the useful time (Narayanan et al. 2021 §2.2):
    1F1B (PipeDream-Flush) (PP-1)/m; interleaved (PP-1)/(m v); zero-bubble (Qi et al. 2023,
    arXiv 2401.10241, ZB-V/ZB-2p) ~0."""
    _pos(pp=pp, micro_batches=micro_batches, virtual_stages=virtual_stages)
    if schedule == "1f1b":
        return (pp - 1) / micro_batches
    if schedule == "interleaved":
        return (pp - 1) / (micro_batches * virtual_stages)
    if schedule == "zero_bubble":
        return 0.0
    raise ValueError(f"unknown schedule {schedule!r}; expected one of {SCHEDULES}")


def pipeline_time_s(*, micro_batches: float, microbatch_s: float, bubble_frac: float) -> float:
    """Forward + backward of all micro-batches through the pipeline: m * t_mb * (1 + bubble)
    (Narayanan et al. 2021 eq. 1, (m + (p-1)/v) slots of one micro-batch's stage time)."""
    _pos(micro_batches=micro_batches)
    _nonneg(microbatch_s=microbatch_s, bubble_frac=bubble_frac)
    return micro_batches * microbatch_s * (1 + bubble_frac)


# --------------------------------------------------------------------------- collectives (alpha-beta)
def collective_time_s(*, primitive: str, size_GB: float, n: int, bw_GBps: float, alpha_s: float = 0.0) -> float:
    """Ring collective time, alpha + k * size / BW (spec 17.6.1-17.6.2). size = full buffer for
    all_reduce, reduce_scatter and all_to_all, the gathered result for all_gather; k = 2(n-1)/n
    (all-reduce), (n-1)/n (reduce-scatter, all-gather, all-to-all), 1 (p2p). n = 1: 0."""
    _nonneg(size_GB=size_GB, alpha_s=alpha_s)
    _pos(n=n, bw_GBps=bw_GBps)
    if n == 1 and primitive != "p2p":
        return 0.0
    k = {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n, "all_gather": (n - 1) / n,
         "all_to_all": (n - 1) / n, "p2p": 1.0}
    if primitive not in k:
        raise ValueError(f"unknown primitive {primitive!r}")
    return alpha_s + k[primitive] * size_GB / bw_GBps


def hierarchical_allreduce_time_s(*, size_GB: float, n: int, ranks_per_node: int, nvlink_GBps: float,
                                  nic_GBps: float, alpha_nvlink_s: float = 0.0, alpha_nic_s: float = 0.0,
                                  fraction: float = 1.0) -> float:
    """All-reduce of ``size_GB`` over ``n`` ranks, ``ranks_per_node`` of them in each node (spec 17.6.10):
    NVLink reduce-scatter + all-gather inside the node (2(r-1)/r G / BW_nvl) and a ring over the
    k = n/r nodes on the G/r shard, each GPU on its own NIC (2(k-1)/k G/r / BW_nic).
    ``fraction`` = 0.5 gives the reduce-scatter (or the all-gather) half alone."""
    _pos(n=n, ranks_per_node=ranks_per_node)
    if n == 1:
        return 0.0
    r = min(ranks_per_node, n)
    k = n / r
    intra = collective_time_s(primitive="all_reduce", size_GB=size_GB, n=r, bw_GBps=nvlink_GBps,
                              alpha_s=alpha_nvlink_s) if r > 1 else 0.0
    inter = 0.0
    if k > 1:
        inter = alpha_nic_s + 2 * (k - 1) / k * size_GB / r / nic_GBps
    return fraction * (intra + inter)


# --------------------------------------------------------------------------- the step
@functools.lru_cache(maxsize=1024, typed=True)
def stage_terms(
    *,
    # model
    layers: int,
    d_model: float,
    d_ff: float,
    n_heads: float,
    n_kv_heads: float,
    head_dim: float,
    vocab: float,
    ffn: str = "swiglu",
    attention: str = "gqa",
    q_lora_rank: float | None = None,
    kv_lora_rank: float | None = None,
    qk_rope_head_dim: float | None = None,
    qk_nope_head_dim: float | None = None,
    v_head_dim: float | None = None,
    moe: bool = False,
    n_routed_experts: float | None = None,
    top_k: float | None = None,
    n_shared_experts: float = 0,
    expert_d_ff: float | None = None,
    n_dense_layers: float = 0,
    dense_d_ff: float | None = None,
    dropout: bool = False,
    # layout
    tp: int = 1,
    cp: int = 1,
    pp: int = 1,
    ep: int = 1,
    micro_batch: int = 1,
    seq_len: int,
    schedule: str = "1f1b",
    virtual_stages: int = 1,
    recompute: str = "none",
    sequence_parallel: bool = True,
    last_stage_layers: float | None = None,
    pp_scatter_gather: bool = True,
    attention_kernel: str = "flash",
    attention_mask_frac: float = 0.5,
    # numerics
    act_bytes: float = 2.0,
    grad_bytes: float = 4.0,
    weight_bytes: float = 2.0,
    optimizer_bytes_per_param: float = ADAM_BYTES_PER_PARAM,
    fp8_recipe: str | None = None,
    fp8_peak_TFLOPS: float | None = None,
    elementwise_bytes_factor: float = 1.0,
    gemm_ridge_p: float | None = None,
    # overlap
    dp_overlap_frac: float = 1.0,
    tp_overlap_frac: float = 0.0,
    ep_overlap_frac: float = 0.0,
    cp_overlap_frac: float = 1.0,
    zero3_overlap_frac: float = 1.0,
    reshard_after_forward: bool = True,
    # hardware
    peak_TFLOPS: float,
    hbm_bw_GBps: float,
    nvlink_GBps: float,
    nic_GBps: float,
    gpus_per_node: int = 8,
    gemm_efficiency: float,
    attention_efficiency: float,
    hbm_efficiency: float,
    nvlink_efficiency: float,
    network_efficiency: float,
    nvlink_latency_s: float = 0.0,
    network_latency_s: float = 0.0,
    fp8_gemm_efficiency: float | None = None,
) -> dict[str, Any]:
    """Everything of one training step that depends neither on DP, nor on the number of micro-batches,
    nor on the ZeRO stage: the keywords of :func:`step_time` but those three, checked, and by name the
    per-layer profile (``prof``), the recompute passes (``rc``), the rates (``peak``, ``bw_hbm``,
    ``bw_nvl``, ``bw_nic``), the times of one micro-batch through a layer and through the busiest
    stage (compute, exposed TP, CP and EP communication, LM head: ``t_stage_mb``), the parameters of
    one GPU and the model FLOPs per token. Memoised on all its keywords (a planner asks for the same
    shape at many DPs); the returned dict is shared, read it only.
    """
    for name, v in (("schedule", schedule), ("recompute", recompute), ("attention_kernel", attention_kernel)):
        allowed = {"schedule": SCHEDULES, "recompute": RECOMPUTE_MODES, "attention_kernel": ATTENTION_KERNELS}[name]
        if v not in allowed:
            raise ValueError(f"unknown {name} {v!r}; expected one of {allowed}")
    _pos(tp=tp, cp=cp, pp=pp, ep=ep, micro_batch=micro_batch,
         seq_len=seq_len, virtual_stages=virtual_stages, peak_TFLOPS=peak_TFLOPS, hbm_bw_GBps=hbm_bw_GBps,
         nvlink_GBps=nvlink_GBps, nic_GBps=nic_GBps, gpus_per_node=gpus_per_node, act_bytes=act_bytes,
         grad_bytes=grad_bytes, weight_bytes=weight_bytes, gemm_efficiency=gemm_efficiency,
         attention_efficiency=attention_efficiency, hbm_efficiency=hbm_efficiency,
         nvlink_efficiency=nvlink_efficiency, network_efficiency=network_efficiency)
    _frac(dp_overlap_frac=dp_overlap_frac, tp_overlap_frac=tp_overlap_frac, ep_overlap_frac=ep_overlap_frac,
          cp_overlap_frac=cp_overlap_frac, zero3_overlap_frac=zero3_overlap_frac,
          attention_mask_frac=attention_mask_frac, gemm_efficiency=gemm_efficiency,
          attention_efficiency=attention_efficiency, hbm_efficiency=hbm_efficiency,
          nvlink_efficiency=nvlink_efficiency, network_efficiency=network_efficiency)
    if schedule != "interleaved" and virtual_stages != 1:
        raise ValueError("virtual_stages > 1 needs schedule 'interleaved'")

    prof = layer_profile(layers=layers, d_model=d_model, d_ff=d_ff, n_heads=n_heads, n_kv_heads=n_kv_heads,
                         head_dim=head_dim, vocab=vocab, ffn=ffn, attention=attention, q_lora_rank=q_lora_rank,
                         kv_lora_rank=kv_lora_rank, qk_rope_head_dim=qk_rope_head_dim,
                         qk_nope_head_dim=qk_nope_head_dim, v_head_dim=v_head_dim, moe=moe,
                         n_routed_experts=n_routed_experts, top_k=top_k, n_shared_experts=n_shared_experts,
                         expert_d_ff=expert_d_ff, n_dense_layers=n_dense_layers, dense_d_ff=dense_d_ff)
    tokens_mb = micro_batch * seq_len  # tokens of one micro-batch (whole sequence)
    tokens_gpu = tokens_mb / cp  # tokens a GPU's TP group processes per micro-batch
    shard = tp * cp  # split of a micro-batch's work inside one stage
    peak = peak_TFLOPS * TERA
    bw_hbm = hbm_bw_GBps * GB * hbm_efficiency
    bw_nvl = nvlink_GBps * nvlink_efficiency
    bw_nic = nic_GBps * network_efficiency
    mask = 1.0 if attention_kernel == "unfused" else attention_mask_frac
    op_frac = None
    if recompute == "op_selective":
        if moe or attention == "mla":
            raise ValueError("recompute 'op_selective' is modelled for dense GQA/MHA models only (not MLA, not MoE)")
        op_frac = op_sac_gemm_recompute_frac(d_model=d_model, n_heads=n_heads, d_ff=d_ff, head_dim=head_dim,
                                             n_kv_heads=n_kv_heads, ffn=ffn)
    rc = recompute_fwd_frac(recompute, op_frac)
    mb_units = FWD_UNITS + BWD_UNITS  # forward + backward in forward-equivalents

    # ---- FLOPs per layer per micro-batch (whole TP*CP group), forward
    gemm_fwd = 2 * tokens_mb * prof["gemm_params_active"]
    attn_fwd = tokens_mb * attention_core_FLOPs_per_token(seq_len=seq_len, n_heads=n_heads,
                                                          qk_head_dim=prof["qk_head_dim"],
                                                          v_head_dim=prof["v_head_dim"], mask_frac=mask)
    head_fwd = 2 * tokens_mb * prof["head_params"]

    # ---- element-wise bytes per layer per micro-batch per GPU, forward
    h_split = shard if sequence_parallel else cp  # norms/residuals split by TP only with SP
    passes_d = ELEM_PASSES_PER_D_MODEL + (ELEM_PASSES_PER_D_MODEL_DROPOUT if dropout else 0.0)
    elem_d = tokens_mb * d_model * passes_d / h_split
    elem_ff = tokens_mb * prof["ffn_width_active"] * ELEM_PASSES_PER_D_FF[int(prof["ffn_matrices"])] / shard
    elem_scores = 0.0
    if attention_kernel == "unfused":
        per_score = ELEM_PASSES_PER_SCORE_SOFTMAX + (ELEM_PASSES_PER_SCORE_DROPOUT if dropout else 0.0)
        elem_scores = tokens_mb * seq_len * n_heads * per_score / shard
    # the framework's element-wise bytes vs Megatron's fused kernels (catalog/frameworks.yaml)
    elem_fwd_B = act_bytes * (elem_d + elem_ff + elem_scores) * elementwise_bytes_factor
    elem_scores_B = act_bytes * elem_scores * elementwise_bytes_factor

    # ---- FP8 recipe (workbook.reference.fp8): layer GEMMs at the FP8 rate, operands quantised through HBM
    gemm_peak, t_cast = peak, 0.0
    # GEMM operand elements per token and layer forward (inputs of Q/K/V, output, FFN up, FFN down)
    gemm_io_tok = fp8.cast_elems_per_token(d_model=d_model, n_heads=n_heads, v_head_dim=prof["v_head_dim"],
                                           ffn_width=prof["ffn_width_active"])
    if fp8_recipe is not None:
        rec = fp8.recipe(fp8_recipe)
        gemm_peak = TERA * fp8.fp8_gemm_peak_TFLOPS(bf16_dense_TFLOPS=peak_TFLOPS, fp8_dense_TFLOPS=fp8_peak_TFLOPS,
                                                    gemm_rate_frac=rec.gemm_rate_frac)
        t_cast = tokens_mb * gemm_io_tok / shard * (FWD_UNITS + FWD_UNITS + rc["gemm"]) * rec.cast_bytes_per_elem / bw_hbm

    # ---- time per layer per micro-batch per GPU (fwd + bwd + recompute)
    # an FP8 recipe's layer GEMMs at their own end-to-end efficiency (fp8_gemm_efficiency; default: the BF16 one)
    # (a GPU without FP8 units runs them as BF16 GEMMs: gemm_efficiency)
    fp8_units = fp8_recipe is not None and bool(fp8_peak_TFLOPS) and fp8_gemm_efficiency is not None
    layer_eff = fp8_gemm_efficiency if fp8_units else gemm_efficiency
    t_gemm_comp = gemm_fwd / shard * (mb_units + rc["gemm"]) / (gemm_peak * layer_eff)
    # shape: the layer GEMMs' HBM traffic (their weights on this GPU and their activation operands in and
    # out) against their FLOPs on the serving models' smooth roofline (decode_time.gemm_time_s, p fitted to
    # GEMM tables); small token counts per micro-batch and TP-split matrices approach the memory bound
    t_gemm_mem = 0.0
    t_gemm = t_gemm_comp
    if gemm_ridge_p is not None:
        operand_B = 1.0 if fp8_recipe is not None else act_bytes
        pass_B = prof["gemm_params_active"] / tp * operand_B + 2 * tokens_gpu * gemm_io_tok / tp * act_bytes
        t_gemm_mem = pass_B * (mb_units + rc["gemm"]) / bw_hbm
        t_gemm = gemm_time_s(memory_s=t_gemm_mem, compute_s=t_gemm_comp, ridge_p=gemm_ridge_p)
    attn_eff = gemm_efficiency if attention_kernel == "unfused" else attention_efficiency
    t_attn = attn_fwd / shard * (mb_units + rc["attn"]) / (peak * attn_eff)
    elem_units = 1.0 + ELEMENTWISE_BWD_OVER_FWD
    t_elem = (elem_fwd_B * (elem_units + rc["elem"]) + elem_scores_B * rc["elem_scores"]) / bw_hbm
    t_layer_compute = t_gemm + t_attn + t_elem + t_cast
    # the forward pass alone (what hides a ZeRO-3 forward gather, less its share of the CP ring below): each part's
    # one forward-equivalent, so that a recompute, which runs in the backward, never widens the forward window
    t_fwd_layer = (t_gemm * FWD_UNITS / (mb_units + rc["gemm"]) + t_attn * FWD_UNITS / (mb_units + rc["attn"])
                   + elem_fwd_B / bw_hbm + t_cast * FWD_UNITS / (FWD_UNITS + FWD_UNITS + rc["gemm"]))
    # LM head (last stage): matmul fwd + bwd, no recompute; logits element-wise ignored
    t_head = head_fwd / shard * mb_units / (peak * gemm_efficiency)

    # ---- TP: 2 all-reduces (or all-gather + reduce-scatter pairs with SP) per layer forward,
    # 2 backward, 2 more with full recompute (Narayanan 2021 §3.2; Korthikanti 2022 §4.2)
    tp_link_bw, tp_alpha = (bw_nvl, nvlink_latency_s) if tp <= gpus_per_node else (bw_nic, network_latency_s)
    act_GB = tokens_gpu * d_model * act_bytes / GB
    n_tp = 2 * 2 + rc["tp"]
    t_tp_layer = n_tp * collective_time_s(primitive="all_reduce", size_GB=act_GB, n=tp, bw_GBps=tp_link_bw,
                                          alpha_s=tp_alpha) if tp > 1 else 0.0
    t_tp_layer_exposed = (1 - tp_overlap_frac) * t_tp_layer

    # ---- CP: K,V passed around the CP ring (cp-1 chunks) forward; K,V and dK,dV backward (x2);
    # again with full recompute; overlappable with the attention core (Liu et al. 2023 ring attention)
    t_cp_layer_exposed = 0.0
    t_cp_layer = 0.0
    if cp > 1:
        kv_local = prof["kv_width"] / min(tp, max(1.0, n_kv_heads if attention != "mla" else n_heads))
        cp_inside = tp * cp <= gpus_per_node
        cp_bw, cp_alpha = (bw_nvl, nvlink_latency_s) if cp_inside else (bw_nic, network_latency_s)
        chunk_GB = micro_batch * (seq_len / cp) * kv_local * act_bytes / GB
        passes = 1 + 2 + (1 if recompute == "full" else 0)
        t_cp_layer = passes * ((cp - 1) * cp_alpha + (cp - 1) * chunk_GB / cp_bw)
        # ring step by step: each of the c-1 transfers hides under the attention of one chunk pair, 1/c of
        # the core; the local (diagonal) chunk's attention runs before any transfer and hides nothing
        t_attn_ring = t_attn * (cp - 1) / cp
        t_cp_layer_exposed = max(0.0, t_cp_layer - cp_overlap_frac * t_attn_ring)
    # the stretch of attention compute that hides the ring is busy: it is no window for the ZeRO-3 gathers and
    # reduce-scatters nor for the DP reduction (docs/step_time.md "Overlap windows"), so it is netted out of
    # theirs; spread over the passes as the attention core is (the ring is set against all of it above)
    t_cp_layer_hidden = t_cp_layer - t_cp_layer_exposed
    t_window_layer = t_layer_compute - t_cp_layer_hidden
    t_fwd_window_layer = t_fwd_layer - t_cp_layer_hidden * FWD_UNITS / (mb_units + rc["attn"])

    # ---- EP: all-to-all dispatch + combine per MoE layer forward, twice backward, again with full
    # recompute; top_k copies of each token (spec 17.6.6 with the top-k factor)
    t_ep_layer = 0.0
    if moe and ep > 1:
        ep_inside = tp * ep <= gpus_per_node
        ep_bw, ep_alpha = (bw_nvl, nvlink_latency_s) if ep_inside else (bw_nic, network_latency_s)
        tok = tokens_gpu / (tp if sequence_parallel else 1)
        a2a_GB = tok * top_k * d_model * act_bytes / GB
        n_a2a = 2 * (2 + (1 if recompute == "full" else 0))
        t_ep_layer = prof["moe_layer_frac"] * n_a2a * collective_time_s(
            primitive="all_to_all", size_GB=a2a_GB, n=ep, bw_GBps=ep_bw, alpha_s=ep_alpha)
    t_ep_layer_exposed = (1 - ep_overlap_frac) * t_ep_layer

    # ---- per stage: layers on the busiest stage
    lps = math.ceil(layers / pp)
    last = float(lps if last_stage_layers is None else last_stage_layers)
    t_layer = t_layer_compute + t_tp_layer_exposed + t_cp_layer_exposed + t_ep_layer_exposed
    t_mid = lps * t_layer
    t_last = last * t_layer + t_head
    t_stage_mb = max(t_mid, t_last)

    # ---- parameters held by one GPU (its stage, its TP shard, its EP shard of the experts)
    stage_params = lps * prof["params_per_layer"] + (prof["head_params"] if pp == 1 else 0.0)
    expert_params = lps * prof["expert_params_per_layer"]
    dense_params_gpu = (stage_params - expert_params) / tp
    expert_params_gpu = expert_params / (tp * ep)
    params_gpu = dense_params_gpu + expert_params_gpu

    # ---- model FLOPs per token (the step's FLOPs are these times its tokens)
    model_mask = attention_mask_frac if attention_kernel == "flash" else 1.0
    attn_model_fwd_tok = attention_core_FLOPs_per_token(seq_len=seq_len, n_heads=n_heads,
                                                        qk_head_dim=prof["qk_head_dim"],
                                                        v_head_dim=prof["v_head_dim"], mask_frac=model_mask)
    fwd_tok = layers * (2 * prof["gemm_params_active"] + attn_model_fwd_tok) + 2 * prof["head_params"]
    # the DP overlap window: the backward of the last micro-batch, net of the compute hiding the CP ring
    t_bwd_window = lps * (t_window_layer * BWD_UNITS / (mb_units + rc["gemm"]))
    return dict(locals())


def zero3_exposed_mb_s(*, all_gather_s: float, reduce_scatter_s: float, layers_per_stage: float, forward_s: float,
                       compute_s: float, overlap_frac: float = 1.0, reshard_after_forward: bool = True) -> float:
    """Exposed ZeRO-3 / FSDP communication of one micro-batch on one stage (docs/step_time.md "ZeRO-3").

    ``all_gather_s``: gathering the stage's weights once; ``reduce_scatter_s``: reduce-scattering its
    gradients once. Per layer with prefetch (FSDP2 / DeepSpeed ZeRO-3): the first layer's gather and the
    last layer's reduce-scatter are exposed (1/L_stage of each); the other gathers of the forward hide
    under ``overlap_frac`` x the forward compute, the backward's gathers (when the weights were resharded
    after the forward) and the other reduce-scatters under ``overlap_frac`` x the rest of the compute
    (backward and recompute). ``forward_s`` and ``compute_s`` are the compute free for it: step_time passes
    them net of the attention compute that already hides the CP ring (docs/step_time.md "Overlap windows")."""
    _nonneg(all_gather_s=all_gather_s, reduce_scatter_s=reduce_scatter_s, forward_s=forward_s, compute_s=compute_s)
    _pos(layers_per_stage=layers_per_stage)
    _frac(overlap_frac=overlap_frac)
    rest = 1 - 1 / layers_per_stage
    edge = (all_gather_s + reduce_scatter_s) / layers_per_stage
    fwd = max(0.0, all_gather_s * rest - overlap_frac * forward_s)
    bwd_ag = all_gather_s if reshard_after_forward else 0.0
    bwd = max(0.0, bwd_ag + reduce_scatter_s * rest - overlap_frac * (compute_s - forward_s))
    return edge + fwd + bwd


def step_time(*, dp: int = 1, micro_batches: int = 1, zero_stage: int = 1, stage: dict[str, Any] | None = None,
              **shape: Any) -> dict[str, float]:
    """Time of one optimizer step and its breakdown (module docstring; docs/step_time.md).

    Keywords: ``dp``, ``micro_batches``, ``zero_stage`` and those of :func:`stage_terms` (model,
    layout, numerics, overlap, hardware), which computes, once per shape, what does not depend on the
    three; or, from a caller that steps through DPs of one shape, ``stage`` = ``stage_terms(**shape)``
    instead of them.

    Layout: N = TP*CP*PP*DP GPUs; EP is carved out of DP*CP (Megatron, spec 17.5.8); the global batch
    is micro_batch * micro_batches * DP sequences of seq_len tokens (CP splits each sequence).
    Rank order TP, CP, DP, PP from the fastest (Megatron's default): TP (and CP while TP*CP fits)
    inside a node, PP across nodes. ``last_stage_layers`` (default ceil(L/PP)) holds the LM head too.

    Bandwidths are one-direction per GPU (nvlink_GBps = the catalogue's bidirectional NVLink / 2;
    nic_GBps the GPU's NIC); the efficiencies scale them (catalog/efficiency.yaml).

    Returns step_s, tokens_per_s, mfu, hfu, model_TFLOPS_per_gpu, hardware_TFLOPS_per_gpu,
    bubble_frac and the components (seconds per micro-batch ``*_mb_s``, per step ``*_step_s``).
    """
    if stage is not None and shape:
        raise TypeError("step_time takes the shape's keywords or its stage_terms, not both")
    s = stage_terms(**shape) if stage is None else stage
    _pos(dp=dp, micro_batches=micro_batches)
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError("zero_stage must be 0..3")
    tp, cp, pp, ep, gpn = s["tp"], s["cp"], s["pp"], s["ep"], s["gpus_per_node"]
    if (dp * cp) % ep:
        raise ValueError(f"ep={ep} must divide dp*cp={dp * cp} (EP is carved out of DP, spec 17.5.8)")
    bw_nvl, bw_nic, alpha_nvl, alpha_nic = s["bw_nvl"], s["bw_nic"], s["nvlink_latency_s"], s["network_latency_s"]
    lps, t_layer_compute = s["lps"], s["t_layer_compute"]
    num_gpus = tp * cp * pp * dp

    # ---- PP: activation forward + gradient backward per micro-batch per virtual stage, across nodes
    # (spec 17.6.5); scatter/gather sends 1/TP of it per GPU (Narayanan 2021 §4.1)
    t_pp_mb = 0.0
    if pp > 1:
        pp_inside = tp * cp * dp * pp <= gpn
        pp_bw, pp_alpha = (bw_nvl, alpha_nvl) if pp_inside else (bw_nic, alpha_nic)
        p2p_GB = s["tokens_gpu"] * s["d_model"] * s["act_bytes"] / GB / (tp if s["pp_scatter_gather"] else 1)
        t_pp_mb = 2 * s["virtual_stages"] * collective_time_s(primitive="p2p", size_GB=p2p_GB, n=2, bw_GBps=pp_bw,
                                                              alpha_s=pp_alpha)

    # ---- ZeRO-3 / FSDP per micro-batch: each layer's weights all-gathered before its forward (and again
    # before its backward when resharded after the forward), its gradients reduce-scattered after its
    # backward; the next layer's gather is prefetched under this layer's compute, so the first layer's
    # gather and the last layer's reduce-scatter have nothing to hide under (zero3_overlap_frac of the
    # forward / backward compute hides the rest, net of the compute that already hides the CP ring)
    dp_group = dp * cp  # ranks holding the same dense weights
    ranks_node = max(1, min(dp_group, gpn // min(gpn, tp)))
    g_dense_GB = s["dense_params_gpu"] * s["grad_bytes"] / GB
    expert_params_gpu = s["expert_params_gpu"]
    g_expert_GB = expert_params_gpu * s["grad_bytes"] / GB
    t_zero3_mb = t_ag = t_rs = 0.0
    if zero_stage == 3 and dp_group > 1:
        half = dict(n=dp_group, ranks_per_node=ranks_node, nvlink_GBps=bw_nvl, nic_GBps=bw_nic,
                    alpha_nvlink_s=alpha_nvl, alpha_nic_s=alpha_nic, fraction=0.5)
        t_ag = hierarchical_allreduce_time_s(size_GB=s["params_gpu"] * s["weight_bytes"] / GB, **half)
        t_rs = hierarchical_allreduce_time_s(size_GB=g_dense_GB + g_expert_GB, **half)
        t_zero3_mb = zero3_exposed_mb_s(all_gather_s=t_ag, reduce_scatter_s=t_rs, layers_per_stage=lps,
                                        forward_s=lps * s["t_fwd_window_layer"],
                                        compute_s=lps * s["t_window_layer"], overlap_frac=s["zero3_overlap_frac"],
                                        reshard_after_forward=s["reshard_after_forward"])

    t_mb = s["t_stage_mb"] + t_pp_mb + t_zero3_mb
    bub = bubble_frac(pp=pp, micro_batches=micro_batches, schedule=s["schedule"], virtual_stages=s["virtual_stages"])
    t_pipeline = pipeline_time_s(micro_batches=micro_batches, microbatch_s=t_mb, bubble_frac=bub)

    # ---- DP: gradient reduce (all-reduce, or reduce-scatter + all-gather with ZeRO-1/2; both move
    # 2(n-1)/n of the buffer), hidden under the last micro-batch's backward by dp_overlap_frac; ZeRO-3
    # reduce-scatters every micro-batch, its exposed part is in t_zero3_mb above
    t_dp = 0.0
    if zero_stage == 3:
        t_dp = t_rs * micro_batches
    else:
        t_dp = hierarchical_allreduce_time_s(size_GB=g_dense_GB, n=dp_group, ranks_per_node=ranks_node,
                                             nvlink_GBps=bw_nvl, nic_GBps=bw_nic, alpha_nvlink_s=alpha_nvl,
                                             alpha_nic_s=alpha_nic)
        if expert_params_gpu and dp_group // ep > 1:
            t_dp += hierarchical_allreduce_time_s(size_GB=g_expert_GB, n=dp_group // ep,
                                                  ranks_per_node=max(1, ranks_node // ep), nvlink_GBps=bw_nvl,
                                                  nic_GBps=bw_nic, alpha_nvlink_s=alpha_nvl,
                                                  alpha_nic_s=alpha_nic)
    t_dp_exposed = 0.0 if zero_stage == 3 else max(0.0, t_dp - s["dp_overlap_frac"] * s["t_bwd_window"])

    # ---- optimizer: memory-bound Adam over the local (ZeRO >= 1: 1/DP) parameters
    opt_params = s["params_gpu"] / (dp_group if zero_stage >= 1 else 1)
    t_opt = opt_params * s["optimizer_bytes_per_param"] / s["bw_hbm"]

    step_s = t_pipeline + t_dp_exposed + t_opt

    # ---- FLOPs per step (global) and the rates
    seqs = s["micro_batch"] * micro_batches * dp
    tokens_step = seqs * s["seq_len"]
    prof, rc, peak, mb_units = s["prof"], s["rc"], s["peak"], s["mb_units"]
    model_FLOPs = mb_units * s["fwd_tok"] * tokens_step
    hw_FLOPs = model_FLOPs + tokens_step * s["layers"] * (2 * prof["gemm_params_active"] * rc["gemm"]
                                                          + s["attn_model_fwd_tok"] * rc["attn"])
    per_gpu = step_s * num_gpus
    return {
        "step_s": step_s,
        "tokens_per_step": tokens_step,
        "tokens_per_s": tokens_step / step_s,
        "num_gpus": num_gpus,
        "model_FLOPs_per_step": model_FLOPs,
        "hardware_FLOPs_per_step": hw_FLOPs,
        "model_TFLOPS_per_gpu": model_FLOPs / per_gpu / TERA,
        "hardware_TFLOPS_per_gpu": hw_FLOPs / per_gpu / TERA,
        "mfu": model_FLOPs / (per_gpu * peak),
        "hfu": hw_FLOPs / (per_gpu * peak),
        "bubble_frac": bub,
        "pipeline_step_s": t_pipeline,
        "microbatch_s": t_mb,
        "stage_compute_mb_s": lps * t_layer_compute,
        "gemm_mb_s": lps * s["t_gemm"],
        "gemm_compute_mb_s": lps * s["t_gemm_comp"],
        "gemm_memory_mb_s": lps * s["t_gemm_mem"],
        "attention_mb_s": lps * s["t_attn"],
        "elementwise_mb_s": lps * s["t_elem"],
        "fp8_cast_mb_s": lps * s["t_cast"],
        "head_mb_s": s["t_head"] if s["t_last"] >= s["t_mid"] else 0.0,
        "tp_comm_mb_s": lps * s["t_tp_layer"],
        "tp_comm_step_s": micro_batches * lps * s["t_tp_layer"],
        "tp_exposed_mb_s": lps * s["t_tp_layer_exposed"],
        "cp_comm_mb_s": lps * s["t_cp_layer"],
        "cp_exposed_mb_s": lps * s["t_cp_layer_exposed"],
        "ep_comm_mb_s": lps * s["t_ep_layer"],
        "ep_exposed_mb_s": lps * s["t_ep_layer_exposed"],
        "pp_comm_mb_s": t_pp_mb,
        "zero3_all_gather_mb_s": t_ag,
        "zero3_reduce_scatter_mb_s": t_rs,
        "zero3_exposed_mb_s": t_zero3_mb,
        "cp_hidden_mb_s": lps * s["t_cp_layer_hidden"],
        "window_compute_mb_s": lps * s["t_window_layer"],
        "forward_window_mb_s": lps * s["t_fwd_window_layer"],
        "bwd_window_s": s["t_bwd_window"],
        "bubble_step_s": micro_batches * t_mb * bub,
        "dp_comm_step_s": t_dp,
        "dp_exposed_step_s": t_dp_exposed,
        "optimizer_step_s": t_opt,
        "params_per_gpu": s["params_gpu"],
    }


# --------------------------------------------------------------------------- catalogue adapters
def arch_from_model(m: Any) -> dict[str, Any]:
    """The architecture keywords of step_time from a catalogue Model (workbook/catalog/models.py)."""
    keys = ("layers", "d_model", "d_ff", "n_heads", "n_kv_heads", "head_dim", "vocab", "ffn", "attention",
            "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "moe",
            "n_routed_experts", "top_k", "n_shared_experts", "expert_d_ff", "n_dense_layers", "dense_d_ff")
    return {k: getattr(m, k) for k in keys}


def nic_GBps_per_gpu(*, nic_Gbps: float, nics_per_node: float, gpus_per_node: float) -> float:
    """Scale-out bandwidth per GPU, one direction: NICs per node x line rate / 8 / GPUs per node
    (spec 17.1.2): 8 x 400 Gbit/s on 8 GPUs = 50 GB/s."""
    _pos(nic_Gbps=nic_Gbps, nics_per_node=nics_per_node, gpus_per_node=gpus_per_node)
    return nic_aggregate_GBps(nics=nics_per_node, gbit_per_port=nic_Gbps) / gpus_per_node


def hardware_from_catalog(*, gpu: Any, efficiency: Any, nic_Gbps: float | None = None,
                          nics_per_node: float | None = None) -> dict[str, float]:
    """The hardware keywords of step_time from a catalogue Gpu and its efficiency record.

    NVLink: the catalogue quotes the bidirectional aggregate, one direction is half (spec 17.6 link
    table); a GPU without NVLink talks over PCIe (quoted per direction). The NIC per GPU is the
    efficiency record's (a typical system of that GPU) unless the scenario gives its network
    (``nic_Gbps`` and ``nics_per_node``, both): then :func:`nic_GBps_per_gpu` of them."""
    nvl = gpu.nvlink_bw_GBps / 2 if gpu.nvlink_bw_GBps else gpu.pcie_bw_GBps
    nic = efficiency.nic_GBps_per_gpu
    if nic_Gbps is not None and nics_per_node is not None:
        nic = nic_GBps_per_gpu(nic_Gbps=nic_Gbps, nics_per_node=nics_per_node, gpus_per_node=gpu.gpus_per_node)
    return {
        "peak_TFLOPS": gpu.bf16_dense_TFLOPS,
        "hbm_bw_GBps": gpu.hbm_bw_GBps,
        "nvlink_GBps": nvl,
        "nic_GBps": nic,
        "gpus_per_node": gpu.gpus_per_node,
        "gemm_efficiency": efficiency.gemm_efficiency,
        "fp8_gemm_efficiency": efficiency.fp8_gemm_efficiency,
        "attention_efficiency": efficiency.attention_efficiency,
        "hbm_efficiency": efficiency.hbm_efficiency,
        "nvlink_efficiency": efficiency.nvlink_efficiency,
        "network_efficiency": efficiency.network_efficiency,
        "nvlink_latency_s": efficiency.nvlink_latency_us * 1e-6,
        "network_latency_s": efficiency.network_latency_us * 1e-6,
    }
