"""Activations sheet, first part: the bytes one transformer layer keeps for backward, per GPU and
micro-batch, grouped by tensor (the tensor memory model, ``training.memory_model: tensors``).

Every value comes from ``workbook.reference.activations`` (Korthikanti et al. 2022, arXiv
2205.05198, §4.1-4.3 and Table 2, generalised to GQA/MQA, MLA, SwiGLU, MoE top-k, FlashAttention,
sequence and context parallelism; Megatron-LM ``theoretical_memory_usage.py``): the tensors of
``layer_saved_tensors`` summed by group, the layer totals of ``layer_activation_bytes``, and the
embedding and output layers of ``embedding_saved_bytes`` / ``output_layer_saved_bytes``. The
pipeline stages that hold them are the second part (``workbook.calc.act_stages``).
"""

from __future__ import annotations

from typing import Any, get_args

from workbook.calc.base import Context, Q
from workbook.reference import activations as ra
from workbook.scenario.model import Recompute
from workbook.units import GB

#: tensor group (quantity name) -> the tensors of reference.activations.layer_saved_tensors it sums
GROUPS: dict[str, tuple[str, ...]] = {
    "act_norms_GB": ("attn_norm_input", "attn_norm_stats", "qkv_input", "mlp_norm_input", "mlp_norm_stats",
                     "mlp_input"),
    "act_mla_latents_GB": ("q_down_output", "q_up_input", "kv_down_output", "kv_up_input"),
    "act_qkv_GB": ("q", "k", "v"),
    "act_out_proj_GB": ("out_proj_input",),
    "act_scores_GB": ("softmax_lse", "softmax_output", "attn_dropout_mask", "attn_dropout_output"),
    "act_dropout_masks_GB": ("attn_residual_dropout_mask", "mlp_residual_dropout_mask"),
    "act_mlp_GB": ("mlp_fc1_output", "mlp_gate", "mlp_up", "mlp_fc2_input"),
    "act_router_GB": ("router_scores",),
    "act_routed_GB": ("expert_fc1_input", "expert_act_input", "expert_fc2_input"),
    "act_shared_GB": ("shared_expert_fc1_output", "shared_expert_gate", "shared_expert_up",
                      "shared_expert_fc2_input"),
}
#: groups taken from an MoE layer's tensors (the others from a dense layer's)
MOE_GROUPS = ("act_router_GB", "act_routed_GB", "act_shared_GB")

_K = "Korthikanti 2022 §4.1"
_T = "torchtitan parallelize.py _save_list (op SAC)"
#: op-level selective AC tensors (reference.activations._op_sac_tensors) by quantity
OP_SAC_MM = ("q", "v", "mlp_gate", "mlp_fc1_output", "mlp_down_output")
OP_SAC_RS = ("attn_reduce_scatter_output", "mlp_reduce_scatter_output")
QUANTITIES = [
    Q("act_sp_flag", "0/1", "Sequence parallelism on (1 = norm and dropout tensors split over TP)", "Korthikanti 2022 §4.2.2"),
    Q("act_flash_flag", "0/1", "FlashAttention on (1 = no s x s score tensors kept)", "Dao et al. 2022"),
    Q("act_dropout_flag", "0/1", "Dropout on (1 = 1-byte dropout masks kept)", _K),
    Q("act_tokens", "tokens", "Tokens of one micro-batch on one CP rank, S·B/CP", _K),
    Q("act_hidden_tokens", "tokens", "Tokens per GPU in the residual stream: S·B/CP, divided by TP with SP", _K),
    Q("act_heads_per_gpu", "heads", "Query heads per TP rank, ceil(a/TP)", _K),
    Q("act_kv_heads_per_gpu", "heads", "KV heads per TP rank, ceil(g/TP) (replicated when g < TP)", _K),
    Q("act_norm_stats_width", "count", "fp32 norm statistics per token (LayerNorm mean + rstd 2, RMSNorm rstd 1)", _K),
    Q("act_dense_d_ff", "count", "FFN width of a dense layer (an MoE model's leading dense layers: dense_d_ff)", "17.2.2"),
    Q("act_expert_d_ff", "count", "FFN width of one expert (expert_d_ff, else d_ff)", "17.2.2"),
    Q("act_norms_GB", "GB", "Per layer: norm inputs, fp32 statistics and outputs (QKV and MLP inputs)", _K),
    Q("act_mla_latents_GB", "GB", "Per layer: MLA query and KV latents (down outputs, up inputs)", "DeepSeek-V2 §2.1"),
    Q("act_qkv_GB", "GB", "Per layer: Q, K and V on one TP rank", _K),
    Q("act_out_proj_GB", "GB", "Per layer: attention output-projection input", _K),
    Q("act_scores_GB", "GB", "Per layer: core attention (softmax, dropout mask and output; FlashAttention: fp32 LSE)", _K),
    Q("act_dropout_masks_GB", "GB", "Per layer: residual dropout masks (1 byte)", _K),
    Q("act_mlp_GB", "GB", "Per dense layer: FFN intermediates (GELU 2, SwiGLU 3 tensors of d_ff/TP)", _K),
    Q("act_router_GB", "GB", "Per MoE layer: fp32 router scores over all experts", "Megatron MoE"),
    Q("act_routed_tokens", "tokens", "Per MoE layer: routed token copies per GPU, tokens/TP·top_k·ETP", "Megatron MoE"),
    Q("act_routed_GB", "GB", "Per MoE layer: routed experts' fc1 input, activation input and fc2 input", "Megatron MoE"),
    Q("act_shared_GB", "GB", "Per MoE layer: shared experts' intermediates", "DeepSeekMoE"),
    Q("act_dense_layer_none_GB", "GB", "Dense layer without recompute (sum of its tensors)", "Korthikanti 2022 Table 2"),
    Q("act_moe_layer_none_GB", "GB", "MoE layer without recompute (0 for a dense model)", "Korthikanti 2022 Table 2"),
    Q("act_layer_input_GB", "GB", "Layer input, all that full recompute keeps (divided by TP with SP)", "Korthikanti 2022 §4.3"),
    Q("act_op_sac_mm_GB", "GB", "Per dense layer, op-level selective AC: outputs of the saved matmuls (Q, V, "
      "the gate or fc1 output; gated: the down projection's output, tokens x d per TP rank; 0 for MoE/MLA)", _T),
    Q("act_op_sac_rs_GB", "GB", "Per dense layer, op-level selective AC with TP and SP: the two reduce-scatter "
      "outputs (saved; 0 otherwise)", _T),
    Q("act_op_sac_layer_GB", "GB", "Dense layer kept for backward under op-level selective AC: layer input + saved "
      "matmul outputs + attention output and statistics + reduce-scatter outputs (0 for MoE/MLA models)", _T),
    Q("act_recompute_option", "count", "Recompute mode as a number (1 none, 2 selective, 3 full, 4 op_selective)",
      "17.4.6"),
    Q("act_dense_layer_GB", "GB", "Dense layer kept for backward at the chosen recompute mode", "Korthikanti 2022 Table 2"),
    Q("act_moe_layer_GB", "GB", "MoE layer kept for backward at the chosen recompute mode", "Korthikanti 2022 Table 2"),
    Q("act_dense_work_GB", "GB", "Recompute working set of one dense layer (what the chosen mode recomputes)",
      "Megatron recompute"),
    Q("act_moe_work_GB", "GB", "Recompute working set of one MoE layer (what the chosen mode recomputes)",
      "Megatron recompute"),
    Q("act_embedding_GB", "GB", "First stage, per micro-batch in flight: token ids and embedding-dropout mask",
      "Korthikanti 2022 §4.3"),
    Q("act_output_layer_GB", "GB", "Last stage, one micro-batch: final-norm and LM-head inputs, fp32 logits",
      "Korthikanti 2022 §4.3"),
]


def _on(value: str) -> bool:
    return value == "on"


def tensor_kwargs(ctx: Context) -> dict[str, Any]:
    """The scenario's keywords for the reference's per-layer functions (one micro-batch, one GPU)."""
    t = ctx.s.training
    return dict(seq_len=float(t.seq_len), micro_batch=float(t.micro_batch), tp=t.tp, cp=t.cp,
                etp=int(ctx.q["plan_etp"]), sequence_parallel=_on(t.sequence_parallel),
                flash_attention=_on(t.flash_attention), dropout=_on(t.dropout),
                bytes_per_element=ctx.q["train_act_bytes_per_elem"])


def _groups(tensors: list[dict[str, Any]]) -> dict[str, float]:
    known = {n: g for g, names in GROUPS.items() for n in names}
    out = {g: 0.0 for g in GROUPS}
    for x in tensors:
        if x["name"] not in known:
            raise RuntimeError(f"tensor {x['name']!r} of reference.activations has no group in calc.activations")
        out[known[x["name"]]] += x["bytes"] / GB
    return out


def compute(ctx: Context) -> dict[str, float]:
    t, m = ctx.s.training, ctx.model
    kw = tensor_kwargs(ctx)
    moe = bool(m.moe)
    dense_shape = ra.layer_shape_from_model(m, moe_layer=False)
    moe_shape = ra.layer_shape_from_model(m, moe_layer=True)
    dense_tensors = ra.layer_saved_tensors(**dense_shape, **kw, recompute="none")
    moe_tensors = ra.layer_saved_tensors(**moe_shape, **kw, recompute="none") if moe else []
    dense, routed = _groups(dense_tensors), _groups(moe_tensors)
    tokens_of = {x["name"]: x["tokens"] for x in dense_tensors + moe_tensors}
    groups = {g: (routed.get(g, 0.0) if g in MOE_GROUPS else v) for g, v in dense.items()}

    def layer(shape: dict[str, Any], mode: str) -> float:
        return ra.layer_activation_bytes(**shape, **kw, recompute=mode) / GB

    op = {"act_op_sac_mm_GB": 0.0, "act_op_sac_rs_GB": 0.0, "act_op_sac_layer_GB": 0.0}
    if not moe and m.attention != "mla":
        op_tensors = ra.layer_saved_tensors(**dense_shape, **kw, recompute="op_selective")
        op = {"act_op_sac_mm_GB": sum(x["bytes"] for x in op_tensors if x["name"] in OP_SAC_MM) / GB,
              "act_op_sac_rs_GB": sum(x["bytes"] for x in op_tensors if x["name"] in OP_SAC_RS) / GB,
              "act_op_sac_layer_GB": sum(x["bytes"] for x in op_tensors) / GB}
    common = dict(seq_len=kw["seq_len"], micro_batch=kw["micro_batch"], d_model=float(m.d_model), tp=t.tp,
                  cp=t.cp, sequence_parallel=kw["sequence_parallel"])
    return {
        "act_sp_flag": float(_on(t.sequence_parallel)),
        "act_flash_flag": float(_on(t.flash_attention)),
        "act_dropout_flag": float(_on(t.dropout)),
        "act_tokens": tokens_of["q"],
        "act_hidden_tokens": tokens_of["attn_norm_input"],
        "act_heads_per_gpu": float(-(-int(m.n_heads) // t.tp)),
        "act_kv_heads_per_gpu": float(-(-int(m.n_kv_heads) // t.tp)),
        "act_norm_stats_width": 2.0 if m.norm == "layernorm" else 1.0,
        "act_dense_d_ff": float(dense_shape["d_ff"]),
        "act_expert_d_ff": float(moe_shape["expert_d_ff"]) if moe else float(m.expert_d_ff or m.d_ff),
        **groups,
        "act_routed_tokens": tokens_of.get("expert_fc1_input", 0.0),
        "act_dense_layer_none_GB": layer(dense_shape, "none"),
        "act_moe_layer_none_GB": layer(moe_shape, "none") if moe else 0.0,
        "act_layer_input_GB": layer(dense_shape, "full"),
        **op,
        "act_recompute_option": float(get_args(Recompute).index(t.recompute) + 1),
        "act_dense_layer_GB": layer(dense_shape, t.recompute),
        "act_moe_layer_GB": layer(moe_shape, t.recompute) if moe else 0.0,
        "act_dense_work_GB": max(0.0, layer(dense_shape, "none") - layer(dense_shape, t.recompute)),
        "act_moe_work_GB": max(0.0, layer(moe_shape, "none") - layer(moe_shape, t.recompute)) if moe else 0.0,
        "act_embedding_GB": ra.embedding_saved_bytes(**common, dropout=kw["dropout"]) / GB,
        "act_output_layer_GB": ra.output_layer_saved_bytes(
            **common, vocab=float(m.vocab), norm=m.norm, bytes_per_element=kw["bytes_per_element"]) / GB,
    }
