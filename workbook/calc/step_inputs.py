"""Step Time sheet, first block: what the step-time model reads (docs/step_time.md "Inputs").

The GPU's efficiency factors (Efficiency sheet, catalog/efficiency.yaml), the link and memory rates
they give, the layout (N = TP·CP·PP·DP, rank order TP, CP, DP, PP from the fastest), the choices as
numbers, and the per-layer averages of the model (workbook.reference.step_time.layer_profile).

:func:`step_kwargs` maps a scenario to the keywords of :func:`workbook.reference.step_time.step_time`;
:func:`reference_step` runs it. The later Step Time modules read its outputs.
"""

from __future__ import annotations

import math
from typing import Any

from workbook.calc.base import Context, Q
from workbook.catalog.frameworks import shipped_frameworks
from workbook.reference import fp8
from workbook.reference import step_time as stm
from workbook.units import BYTES_PER_ELEMENT, GB, TERA

#: bytes of an activation element by training precision: FP32 4, else 2 (FP8 recipes keep BF16 activations
#: between layers; only GEMM operands are quantised, workbook.reference.fp8)
ACT_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 2.0}
#: optimizer traffic per local parameter besides the gradient read and the weight write: mixed-precision
#: Adam reads and writes the FP32 master, m and v (2 x 12 B) - step_time.ADAM_BYTES_PER_PARAM = 24 + 4 + 2
ADAM_STATE_RW_BYTES = 24.0
#: network inputs that, when one of them is given, make the step model take its NIC from the network block
#: (line rate x NICs per node / GPUs per node) instead of the efficiency record's nic_GBps_per_gpu
NIC_INPUTS = frozenset({"nic_Gbps", "nics_per_node"})
#: the causal half of the score matrix that FlashAttention computes (step_time attention_mask_frac)
CAUSAL_MASK_FRAC = 0.5

_EFF = [("gemm_efficiency", "fraction", "Sustained matmul FLOP/s / dense BF16 peak in end-to-end training"),
        ("fp8_gemm_efficiency", "fraction", "Sustained FP8 matmul FLOP/s / dense FP8 peak in end-to-end FP8 training"),
        ("attention_efficiency", "fraction", "FlashAttention forward + backward FLOP/s / dense BF16 peak"),
        ("hbm_efficiency", "fraction", "Achieved streaming bandwidth / HBM peak"),
        ("nvlink_efficiency", "fraction", "Collective bus bandwidth / one-direction NVLink (PCIe without NVLink)"),
        ("network_efficiency", "fraction", "Collective bus bandwidth / NIC line rate"),
        ("nic_GBps_per_gpu", "GB/s", "Scale-out NIC per GPU of a typical system, one direction"),
        ("nvlink_latency_us", "us", "Latency of one intra-node collective"),
        ("network_latency_us", "us", "Latency of one inter-node collective"),
        ("serving_gemm_efficiency", "fraction", "Serving GEMM compute ceiling: large-GEMM FLOP/s / dense BF16 peak"),
        ("gemm_ridge_p_bf16", "exponent", "Smooth-roofline exponent p of a BF16 GEMM (serving models)"),
        ("gemm_ridge_p_fp8", "exponent", "Smooth-roofline exponent p of an FP8 (W8A8) GEMM (serving models)")]
_S = "docs/step_time.md"

QUANTITIES = [
    *[Q(f"eff_{f}", unit, f"Efficiency: {label}", "catalog/efficiency.yaml") for f, unit, label in _EFF],
    Q("st_fw_gemm_factor", "x", "Framework: matmul efficiency vs Megatron's (Constants framework table)",
      "catalog/frameworks.yaml"),
    Q("st_fw_attn_factor", "x", "Framework: attention kernel efficiency vs Megatron's", "catalog/frameworks.yaml"),
    Q("st_fw_elem_factor", "x", "Framework: element-wise HBM bytes vs Megatron's fused kernels",
      "catalog/frameworks.yaml"),
    Q("st_gemm_efficiency", "fraction", "Matmul efficiency in use: the GPU's x the framework's factor", _S),
    Q("st_fp8_gemm_efficiency", "fraction", "FP8 matmul efficiency: the GPU's x the framework's factor (0: no FP8 units)",
      _S),
    Q("st_attention_efficiency", "fraction", "Attention efficiency in use: the GPU's x the framework's factor", _S),
    Q("st_peak_TFLOPS", "TFLOPS", "Dense BF16 peak the step model computes at", _S),
    Q("st_gemm_FLOPS", "FLOP/s", "Sustained BF16 matmul rate: peak x matmul efficiency (LM head; layers in BF16)", _S),
    Q("st_fp8_flag", "0/1", "FP8 training (precision fp8): the layer GEMMs run at the recipe's FP8 rate", _S),
    Q("st_fp8_recipe_index", "count", "Row of the FP8 recipe in the recipe table (blank = delayed, the first)", _S),
    Q("st_fp8_gemm_rate_frac", "fraction", "FP8 GEMM rate of the recipe / (FP8 peak x matmul efficiency)",
      "workbook/reference/fp8.py"),
    Q("st_fp8_cast_bytes", "B/element", "HBM bytes per quantised GEMM operand element (reads + FP8 writes)",
      "workbook/reference/fp8.py"),
    Q("st_fp8_gemm_peak_TFLOPS", "TFLOPS", "FP8 GEMM peak of the recipe: FP8 dense peak x its rate (BF16 peak "
      "without FP8 units)", "workbook/reference/fp8.py"),
    Q("st_layer_gemm_peak_TFLOPS", "TFLOPS", "Peak the layer GEMMs run at: BF16, or FP8 x the recipe's rate "
      "(BF16 without FP8 units)", _S),
    Q("st_layer_gemm_FLOPS", "FLOP/s", "Sustained layer matmul rate: layer GEMM peak x matmul efficiency", _S),
    Q("st_attn_FLOPS", "FLOP/s", "Attention-core rate (Flash: attention efficiency; unfused: matmul efficiency)", _S),
    Q("st_hbm_Bps", "B/s", "Streaming HBM bandwidth: HBM x HBM efficiency", _S),
    Q("st_link_GBps", "GB/s", "Intra-node link, one direction: NVLink (quoted bidirectional) / 2, else PCIe", _S),
    Q("st_nvlink_bw_GBps", "GB/s", "Intra-node collective bandwidth (link x NVLink efficiency)", _S),
    Q("st_nic_GBps", "GB/s", "Scale-out NIC per GPU, one direction: the network inputs' NICs x line rate / GPUs "
      "per node when one is given, else the efficiency record's", _S),
    Q("st_nic_bw_GBps", "GB/s", "Inter-node collective bandwidth per GPU (NIC x network efficiency)", _S),
    Q("st_nvlink_alpha_s", "s", "Latency per intra-node collective", _S),
    Q("st_nic_alpha_s", "s", "Latency per inter-node collective", _S),
    Q("st_dp", "GPUs", "Data-parallel degree of the step model, N / (TP·CP·PP)", _S),
    Q("st_dp_group", "GPUs", "Ranks holding the same dense weights, DP·CP (gradient reduction group)", _S),
    Q("st_shard", "GPUs", "GPUs sharing one micro-batch inside a stage, TP·CP", _S),
    Q("st_tokens_mb", "tokens", "Tokens of one micro-batch, B_micro·S", _S),
    Q("st_virtual_stages", "count", "Virtual stages in use (the input under the interleaved schedule, else 1)", _S),
    Q("st_layers_per_stage", "layers", "Layers on the busiest stage, L/PP rounded up", _S),
    Q("st_last_stage_layers", "layers", "Layers on the last stage (input, blank = L/PP rounded up)", _S),
    Q("st_flash_flag", "0/1", "FlashAttention kernels (1) or unfused attention (0)", _S),
    Q("st_sp_flag", "0/1", "Sequence parallelism on (1 = yes)", "Korthikanti 2022 §4.2.2"),
    Q("st_dropout_flag", "0/1", "Dropout on (1 = yes)", _S),
    Q("st_recompute_gemm_frac", "passes", "Recomputed forward passes of the matmuls (full 1; op_selective the "
      "share of the matmul FLOPs it does not save)", "Korthikanti 2022 §5; torchtitan op SAC"),
    Q("st_recompute_attn_frac", "passes", "Recomputed forward passes of the attention core (full, selective 1)",
      "Korthikanti 2022 §5"),
    Q("st_recompute_elem_frac", "passes", "Recomputed forward passes of all element-wise bytes (full, op_selective 1)",
      _S),
    Q("st_recompute_scores_frac", "passes", "Recomputed passes of the unfused score bytes alone (selective 1)", _S),
    Q("st_recompute_full_flag", "0/1", "Full recompute (1): TP, CP, EP collectives run again", _S),
    Q("st_recompute_tp_extra", "count", "Extra TP all-reduces per layer from recompute (full 2; op_selective 1: the "
      "SP all-gathers run again, the reduce-scatter outputs are saved)", "Korthikanti 2022 §4.2; torchtitan op SAC"),
    Q("st_act_bytes", "B", "Bytes per activation element (FP32 4, else 2)", _S),
    Q("st_weight_bytes", "B/param", "Bytes per weight in the ZeRO-3 all-gather (training precision)", "17.1.4"),
    Q("st_grad_bytes", "B/param", "Bytes per gradient in the DP reduction (gradient precision)", "17.1.4"),
    Q("st_opt_bytes_per_param", "B/param", "Optimizer-step traffic per local parameter (Adam: 24 + gradient + weight)",
      _S),
    Q("st_attn_matmul_params", "count", "Attention projection weights per layer in matmuls (no bias)", "17.2.1"),
    Q("st_ffn_active_params", "count", "FFN weights a token meets per layer (average over dense and MoE layers)",
      "17.2.2"),
    Q("st_ffn_stored_params", "count", "FFN weights stored per layer, all experts (average)", "17.2.2"),
    Q("st_gemm_params", "count", "Matmul weights a token meets per layer, P_act (average)", _S),
    Q("st_layer_params", "count", "Weights stored per layer (average)", _S),
    Q("st_expert_layer_params", "count", "Routed-expert weights stored per layer (average)", _S),
    Q("st_moe_layer_frac", "fraction", "MoE layers / layers", _S),
    Q("st_ffn_width", "count", "FFN activation width a token meets per layer, d_ff x active experts (average)", _S),
    Q("st_qk_head_dim", "count", "Query/key head width (MLA: no-RoPE + RoPE)", "17.2.2"),
    Q("st_v_head_dim", "count", "Value head width", "17.2.2"),
    Q("st_kv_width", "count", "K and V elements per token per layer that context parallelism passes", _S),
    Q("st_kv_heads_split", "count", "TP ranks the K and V heads split over, min(TP, KV heads)", _S),
    Q("st_head_params", "count", "LM head weights d·V (last stage)", "17.3.6"),
    Q("st_fp8_cast_elems", "elements", "GEMM operand elements quantised per token and layer forward "
      "(inputs of Q/K/V, output, FFN up, FFN down: 2d + a·d_v + d_ff active)", "workbook/reference/fp8.py"),
    Q("st_attn_mask_frac", "fraction", "Share of the s x s scores computed (Flash: causal half; unfused: all)", _S),
]


def _on(v: str) -> bool:
    return v == "on"


def hardware(ctx: Context) -> dict[str, float]:
    """The hardware keywords of step_time (reference.step_time.hardware_from_catalog)."""
    if ctx.eff is None:
        raise ValueError(f"GPU {ctx.gpu.id!r}: no efficiency record (catalog/efficiency.yaml)")
    if not getattr(ctx.s, "_network_given", frozenset()) & NIC_INPUTS:  # (a planner's context has no network)
        return stm.hardware_from_catalog(gpu=ctx.gpu, efficiency=ctx.eff)
    net = ctx.s.network
    return stm.hardware_from_catalog(gpu=ctx.gpu, efficiency=ctx.eff, nic_Gbps=net.nic_Gbps,
                                     nics_per_node=net.nics_per_node)


def step_kwargs(ctx: Context) -> dict[str, Any]:
    """The scenario as keywords of workbook.reference.step_time.step_time."""
    t = ctx.s.training
    interleaved = t.pipeline_schedule == "interleaved"
    recipe = fp8_recipe(t)
    fw = shipped_frameworks()[t.framework]
    hw = hardware(ctx)
    hw["gemm_efficiency"] *= fw.gemm_efficiency_factor
    if hw["fp8_gemm_efficiency"] is not None:
        hw["fp8_gemm_efficiency"] *= fw.gemm_efficiency_factor
    hw["attention_efficiency"] *= fw.attention_efficiency_factor
    grad_b = BYTES_PER_ELEMENT[t.grad_precision]
    weight_b = fp8.recipe(recipe).weight_bytes if recipe else BYTES_PER_ELEMENT[t.precision]
    return dict(
        stm.arch_from_model(ctx.model), dropout=_on(t.dropout),
        tp=t.tp, cp=t.cp, pp=t.pp, dp=t.num_gpus // (t.tp * t.cp * t.pp), ep=t.ep,
        micro_batch=t.micro_batch, micro_batches=t.grad_accum, seq_len=t.seq_len,
        schedule=t.pipeline_schedule, virtual_stages=t.virtual_stages if interleaved else 1,
        recompute=t.recompute, sequence_parallel=_on(t.sequence_parallel), zero_stage=t.zero_stage,
        last_stage_layers=t.last_stage_layers,
        attention_kernel="flash" if _on(t.flash_attention) else "unfused", attention_mask_frac=CAUSAL_MASK_FRAC,
        act_bytes=ACT_BYTES[t.precision], grad_bytes=grad_b, weight_bytes=weight_b,
        optimizer_bytes_per_param=ADAM_STATE_RW_BYTES + grad_b + weight_b,
        fp8_recipe=recipe, fp8_peak_TFLOPS=ctx.gpu.fp8_dense_TFLOPS,
        elementwise_bytes_factor=fw.elementwise_bytes_factor,
        gemm_ridge_p=ctx.eff.gemm_ridge_p_fp8 if recipe else ctx.eff.gemm_ridge_p_bf16,
        dp_overlap_frac=t.dp_overlap_frac, tp_overlap_frac=t.tp_overlap_frac, ep_overlap_frac=t.ep_overlap_frac,
        cp_overlap_frac=t.cp_overlap_frac, zero3_overlap_frac=t.zero3_overlap_frac,
        reshard_after_forward=_on(t.reshard_after_forward),
        **hw,
    )


def fp8_recipe_name(t: Any) -> str:
    """The FP8 recipe input, blank = the default (delayed); the rows show it whatever the precision."""
    return t.fp8_recipe or fp8.DEFAULT_RECIPE


def fp8_recipe(t: Any) -> str | None:
    """The FP8 recipe in use: the input (blank = delayed) under precision fp8, else None."""
    return fp8_recipe_name(t) if t.precision == "fp8" else None


def reference_step(ctx: Context) -> dict[str, float]:
    """workbook.reference.step_time.step_time on the scenario (its step time and every term)."""
    return stm.step_time(**step_kwargs(ctx))


def compute(ctx: Context) -> dict[str, float]:
    t, m, kw = ctx.s.training, ctx.model, step_kwargs(ctx)
    prof = stm.layer_profile(**stm.arch_from_model(m))
    rc = stm.recompute_fwd_frac(t.recompute, ctx.q["op_sac_gemm_recompute_frac"])
    flash = kw["attention_kernel"] == "flash"
    dp = kw["dp"]
    lps = math.ceil(m.layers / t.pp)
    mla = m.attention == "mla"
    out = {f"eff_{f}": float(getattr(ctx.eff, f) or 0.0) for f, _, _ in _EFF}  # blank (no FP8) reads 0
    fw = shipped_frameworks()[t.framework]
    recipe = fp8.recipe(fp8_recipe_name(t))
    on = kw["fp8_recipe"] is not None
    fp8_peak = fp8.fp8_gemm_peak_TFLOPS(bf16_dense_TFLOPS=kw["peak_TFLOPS"], fp8_dense_TFLOPS=kw["fp8_peak_TFLOPS"],
                                        gemm_rate_frac=recipe.gemm_rate_frac)
    layer_peak = fp8_peak if on else kw["peak_TFLOPS"]
    out.update({
        "st_fw_gemm_factor": fw.gemm_efficiency_factor,
        "st_fw_attn_factor": fw.attention_efficiency_factor,
        "st_fw_elem_factor": fw.elementwise_bytes_factor,
        "st_gemm_efficiency": kw["gemm_efficiency"],
        "st_fp8_gemm_efficiency": kw["fp8_gemm_efficiency"] or 0.0,
        "st_attention_efficiency": kw["attention_efficiency"],
        "st_peak_TFLOPS": kw["peak_TFLOPS"],
        "st_gemm_FLOPS": kw["peak_TFLOPS"] * TERA * kw["gemm_efficiency"],
        "st_fp8_flag": on,
        "st_fp8_recipe_index": fp8.FP8_RECIPES.index(fp8_recipe_name(t)) + 1,
        "st_fp8_gemm_rate_frac": recipe.gemm_rate_frac,
        "st_fp8_cast_bytes": recipe.cast_bytes_per_elem,
        "st_fp8_gemm_peak_TFLOPS": fp8_peak,
        "st_layer_gemm_peak_TFLOPS": layer_peak,
        "st_layer_gemm_FLOPS": layer_peak * TERA * (kw["fp8_gemm_efficiency"] if on and kw["fp8_peak_TFLOPS"]
                                                    else kw["gemm_efficiency"]),
        "st_attn_FLOPS": kw["peak_TFLOPS"] * TERA * (kw["attention_efficiency"] if flash else kw["gemm_efficiency"]),
        "st_hbm_Bps": kw["hbm_bw_GBps"] * GB * kw["hbm_efficiency"],
        "st_link_GBps": kw["nvlink_GBps"],
        "st_nvlink_bw_GBps": kw["nvlink_GBps"] * kw["nvlink_efficiency"],
        "st_nic_GBps": kw["nic_GBps"],
        "st_nic_bw_GBps": kw["nic_GBps"] * kw["network_efficiency"],
        "st_nvlink_alpha_s": kw["nvlink_latency_s"],
        "st_nic_alpha_s": kw["network_latency_s"],
        "st_dp": dp,
        "st_dp_group": dp * t.cp,
        "st_shard": t.tp * t.cp,
        "st_tokens_mb": t.micro_batch * t.seq_len,
        "st_virtual_stages": kw["virtual_stages"],
        "st_layers_per_stage": lps,
        "st_last_stage_layers": lps if t.last_stage_layers is None else t.last_stage_layers,
        "st_flash_flag": flash,
        "st_sp_flag": kw["sequence_parallel"],
        "st_dropout_flag": kw["dropout"],
        "st_recompute_gemm_frac": rc["gemm"],
        "st_recompute_attn_frac": rc["attn"],
        "st_recompute_elem_frac": rc["elem"],
        "st_recompute_scores_frac": rc["elem_scores"],
        "st_recompute_full_flag": t.recompute == "full",
        "st_recompute_tp_extra": rc["tp"],
        "st_act_bytes": kw["act_bytes"],
        "st_weight_bytes": kw["weight_bytes"],
        "st_grad_bytes": kw["grad_bytes"],
        "st_opt_bytes_per_param": kw["optimizer_bytes_per_param"],
        "st_attn_matmul_params": stm.attention_matmul_params(
            d_model=m.d_model, n_heads=m.n_heads, n_kv_heads=m.n_kv_heads, head_dim=m.head_dim,
            attention=m.attention, q_lora_rank=m.q_lora_rank, kv_lora_rank=m.kv_lora_rank,
            qk_rope_head_dim=m.qk_rope_head_dim, qk_nope_head_dim=m.qk_nope_head_dim, v_head_dim=m.v_head_dim),
        "st_gemm_params": prof["gemm_params_active"],
        "st_layer_params": prof["params_per_layer"],
        "st_expert_layer_params": prof["expert_params_per_layer"],
        "st_moe_layer_frac": prof["moe_layer_frac"],
        "st_ffn_width": prof["ffn_width_active"],
        "st_qk_head_dim": prof["qk_head_dim"],
        "st_v_head_dim": prof["v_head_dim"],
        "st_kv_width": prof["kv_width"],
        "st_kv_heads_split": min(t.tp, max(1.0, m.n_heads if mla else m.n_kv_heads)),
        "st_head_params": prof["head_params"],
        "st_fp8_cast_elems": fp8.cast_elems_per_token(d_model=m.d_model, n_heads=m.n_heads,
                                                      v_head_dim=prof["v_head_dim"], ffn_width=prof["ffn_width_active"]),
        "st_attn_mask_frac": CAUSAL_MASK_FRAC if flash else 1.0,
    })
    out["st_ffn_active_params"] = prof["gemm_params_active"] - out["st_attn_matmul_params"]
    out["st_ffn_stored_params"] = prof["params_per_layer"] - out["st_attn_matmul_params"]
    return {q.name: out[q.name] for q in QUANTITIES}
