"""Step Time sheet, second block: one micro-batch through the busiest pipeline stage, per GPU
(docs/step_time.md "Equations"; Narayanan et al. 2021 arXiv 2104.04473 §2-4; Korthikanti et al.
2022 arXiv 2205.05198 §3-5; alpha-beta collectives, spec 17.6.2).

Compute (matmuls, attention core, element-wise bytes), the exposed TP, CP and EP communication,
the LM head on the last stage, the PP sends and the exposed ZeRO-3 weight all-gathers. The terms
are workbook.reference.step_time.step_time's own outputs; the rows between them are the pieces
the sheet's formulas are built from.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.calc.step_inputs import step_kwargs
from workbook.reference import step_time as stm
from workbook.units import GB

_S = "docs/step_time.md"
#: TP all-reduces per layer and micro-batch: 2 forward + 2 backward, 2 more with full recompute
TP_COLLECTIVES = 4
TP_COLLECTIVES_RECOMPUTE = 2

QUANTITIES = [
    Q("st_gemm_fwd_FLOP", "FLOP", "Matmul FLOPs of one layer forward, one micro-batch (2·T·P_act)", _S),
    Q("st_attn_fwd_FLOP", "FLOP", "Attention-core FLOPs of one layer forward, one micro-batch (QKᵀ and AV)",
      "Korthikanti 2022 §3"),
    Q("st_head_fwd_FLOP", "FLOP", "LM head FLOPs forward, one micro-batch (2·T·d·V)", "17.3.6"),
    Q("st_elem_d_elems", "elements", "Element-wise elements of width d per layer forward per GPU (norms, residuals)",
      _S),
    Q("st_elem_ff_elems", "elements", "Element-wise elements of the FFN activation per layer forward per GPU", _S),
    Q("st_elem_scores_elems", "elements", "Unfused softmax and dropout score elements per layer forward per GPU", _S),
    Q("st_elem_fwd_B", "B", "Element-wise bytes of one layer forward per GPU (Q_fwd)", _S),
    Q("st_gemm_ridge_p", "exponent", "Smooth-roofline exponent of the layer GEMMs (Efficiency: BF16, or FP8 "
      "under an FP8 recipe)", "docs/serving.md (Factors)"),
    Q("st_gemm_compute_mb_s", "s", "Matmul compute bound per micro-batch on the busiest stage (fwd + bwd + "
      "recompute)", _S),
    Q("st_gemm_operand_bytes", "B", "Bytes per GEMM weight operand read (FP8 recipe 1, else the activation's)", _S),
    Q("st_gemm_memory_mb_s", "s", "Matmul memory bound per micro-batch: the layer's weights on the GPU and its "
      "GEMM activations in and out, per pass, over HBM", _S),
    Q("st_gemm_mb_s", "s", "Matmul time per micro-batch on the busiest stage: smooth roofline of the two bounds "
      "(decode_time.gemm_time_s)", _S),
    Q("st_attention_mb_s", "s", "Attention-core time per micro-batch on the busiest stage", _S),
    Q("st_elementwise_mb_s", "s", "Element-wise (memory-bound) time per micro-batch on the busiest stage", _S),
    Q("st_fp8_cast_mb_s", "s", "FP8 quantisation per micro-batch on the busiest stage: operands of the layer GEMMs "
      "cast forward, their gradients backward, again with full recompute (0 without FP8)", "workbook/reference/fp8.py"),
    Q("st_stage_compute_mb_s", "s", "Compute per micro-batch on the busiest stage (matmul + attention + element-wise "
      "+ FP8 casts)", _S),
    Q("st_head_s", "s", "LM head per micro-batch on the last stage (fwd + bwd)", _S),
    Q("st_tp_bw_GBps", "GB/s", "TP group bandwidth (NVLink inside a node, else the NIC)", "17.6.4"),
    Q("st_tp_alpha_s", "s", "TP collective latency", "17.6.2"),
    Q("st_act_GB", "GB", "One micro-batch activation on one TP group, B·(S/CP)·d·bytes", "17.6.4"),
    Q("st_tp_collectives", "count", "TP all-reduces per layer per micro-batch (4, full recompute 6, op_selective 5)",
      "Korthikanti 2022 §4.2"),
    Q("st_tp_comm_mb_s", "s", "TP communication per micro-batch on the busiest stage", "17.6.4"),
    Q("st_tp_exposed_mb_s", "s", "TP communication not hidden (1 - TP overlap)", "17.6.8"),
    Q("st_cp_bw_GBps", "GB/s", "CP ring bandwidth (NVLink while TP·CP fits a node, else the NIC)", "17.6.7"),
    Q("st_cp_alpha_s", "s", "CP ring step latency", "17.6.2"),
    Q("st_cp_chunk_GB", "GB", "K,V chunk a CP rank passes: B·(S/CP)·kv width / KV split·bytes", "17.6.7"),
    Q("st_cp_comm_mb_s", "s", "CP ring communication per micro-batch on the busiest stage", "17.6.7"),
    Q("st_cp_exposed_mb_s", "s", "CP communication not hidden under the attention core", "17.6.7"),
    Q("st_cp_hidden_mb_s", "s", "CP communication hidden under the attention core: compute it keeps busy, no "
      "window for the ZeRO-3 or DP traffic", "docs/step_time.md (Overlap windows)"),
    Q("st_ep_bw_GBps", "GB/s", "EP all-to-all bandwidth (NVLink while TP·EP fits a node, else the NIC)", "17.6.6"),
    Q("st_ep_alpha_s", "s", "EP all-to-all latency", "17.6.2"),
    Q("st_ep_a2a_GB", "GB", "One EP all-to-all per GPU: tokens x top-k x d x bytes", "17.6.6"),
    Q("st_ep_comm_mb_s", "s", "EP all-to-alls per micro-batch on the busiest stage (MoE layers)", "17.6.6"),
    Q("st_ep_exposed_mb_s", "s", "EP communication not hidden (1 - EP overlap)", "17.6.6"),
    Q("st_stage_mid_mb_s", "s", "Busiest middle stage per micro-batch: compute + exposed TP, CP, EP", _S),
    Q("st_stage_last_mb_s", "s", "Last stage per micro-batch: its layers and the LM head", _S),
    Q("st_head_mb_s", "s", "LM head on the critical stage (0 when a middle stage is slower)", _S),
    Q("st_stage_mb_s", "s", "Slowest stage per micro-batch", _S),
    Q("st_pp_bw_GBps", "GB/s", "PP send bandwidth (NVLink if the job fits a node, else the NIC)", "17.6.5"),
    Q("st_pp_alpha_s", "s", "PP send latency", "17.6.2"),
    Q("st_pp_comm_mb_s", "s", "PP sends per micro-batch: 2·v sends of the activation / TP (scatter/gather)",
      "Narayanan 2021 §4.1"),
    Q("st_dense_params_gpu", "count", "Dense weights held by one GPU", _S),
    Q("st_expert_params_gpu", "count", "Routed-expert weights held by one GPU", _S),
    Q("st_params_per_gpu", "count", "Weights held by one GPU (its stage, TP shard and EP shard of the experts)", _S),
    Q("st_ranks_per_node", "ranks", "DP·CP ranks inside one node (hierarchical collectives)", "17.6.10"),
    Q("st_dp_nodes", "nodes", "Nodes of the DP·CP group", "17.6.10"),
    Q("st_dp_alpha_s", "s", "Latency of one hierarchical all-reduce over DP·CP", "17.6.10"),
    Q("st_dp_s_per_GB", "s/GB", "Hierarchical all-reduce time per GB over DP·CP (NVLink + NIC rings)", "17.6.10"),
    Q("st_zero3_ag_mb_s", "s", "ZeRO-3 / FSDP: one all-gather of the stage's weights (0 below ZeRO-3)", "17.4.8"),
    Q("st_zero3_rs_mb_s", "s", "ZeRO-3 / FSDP: one reduce-scatter of the stage's gradients (every micro-batch)",
      "17.4.8"),
    Q("st_zero3_reshard_flag", "0/1", "Weights resharded after the forward (1): gathered again for the backward",
      "docs/step_time.md (ZeRO-3)"),
    Q("st_zero3_comm_mb_s", "s", "ZeRO-3 communication per micro-batch: all-gathers (forward, backward if "
      "resharded) + reduce-scatter", "17.4.8"),
    Q("st_window_compute_mb_s", "s", "Compute per micro-batch on the stage free to hide the ZeRO-3 and DP traffic "
      "(less what hides the CP ring)", "docs/step_time.md (Overlap windows)"),
    Q("st_fwd_window_mb_s", "s", "Forward compute of one micro-batch on the stage, less its share hiding the CP "
      "ring (hides the forward gathers)", "docs/step_time.md (Overlap windows)"),
    Q("st_zero3_exposed_mb_s", "s", "ZeRO-3 communication not hidden: the first layer's gather, the last layer's "
      "reduce-scatter, and what the forward / backward compute does not cover", "docs/step_time.md (ZeRO-3)"),
    Q("st_microbatch_s", "s", "One micro-batch: slowest stage + PP sends + exposed ZeRO-3", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q, m = ctx.s.training, ctx.q, ctx.model
    kw = step_kwargs(ctx)
    r = stm.step_time(**kw)
    gpn = int(ctx.gpu.gpus_per_node)
    nvl, nic = (q["st_nvlink_bw_GBps"], q["st_nvlink_alpha_s"]), (q["st_nic_bw_GBps"], q["st_nic_alpha_s"])
    tokens, shard, act_b, s = q["st_tokens_mb"], q["st_shard"], q["st_act_bytes"], t.seq_len
    h_split = shard if q["st_sp_flag"] else t.cp
    tp_bw, tp_a = nvl if t.tp <= gpn else nic
    cp_bw, cp_a = nvl if t.tp * t.cp <= gpn else nic
    ep_bw, ep_a = nvl if t.tp * t.ep <= gpn else nic
    pp_bw, pp_a = nvl if t.num_gpus <= gpn else nic
    elem_d = tokens * m.d_model * (stm.ELEM_PASSES_PER_D_MODEL
                                   + stm.ELEM_PASSES_PER_D_MODEL_DROPOUT * q["st_dropout_flag"]) / h_split
    scores = 0.0
    if not q["st_flash_flag"]:
        scores = tokens * s * m.n_heads * (stm.ELEM_PASSES_PER_SCORE_SOFTMAX
                                           + stm.ELEM_PASSES_PER_SCORE_DROPOUT * q["st_dropout_flag"]) / shard
    elem_ff = tokens * q["st_ffn_width"] * stm.ELEM_PASSES_PER_D_FF[int(q["ffn_matrices"])] / shard
    mid = r["stage_compute_mb_s"] + r["tp_exposed_mb_s"] + r["cp_exposed_mb_s"] + r["ep_exposed_mb_s"]
    lps, last = q["st_layers_per_stage"], q["st_last_stage_layers"]
    head = 2 * tokens * q["st_head_params"] / shard * (stm.FWD_UNITS + stm.BWD_UNITS) / q["st_gemm_FLOPS"]
    stage_last = mid / lps * last + head
    ranks = max(1, min(q["st_dp_group"], gpn // min(gpn, t.tp)))
    k = q["st_dp_group"] / ranks
    s_per_GB = 2 * (ranks - 1) / ranks / nvl[0] + 2 * (k - 1) / k / ranks / nic[0]
    dp_alpha = (nvl[1] if ranks > 1 else 0.0) + (nic[1] if k > 1 else 0.0)
    expert_gpu = lps * q["st_expert_layer_params"] / (t.tp * t.ep)
    out = {
        "st_gemm_fwd_FLOP": 2 * tokens * q["st_gemm_params"],
        "st_attn_fwd_FLOP": tokens * stm.attention_core_FLOPs_per_token(
            seq_len=s, n_heads=m.n_heads, qk_head_dim=q["st_qk_head_dim"], v_head_dim=q["st_v_head_dim"],
            mask_frac=q["st_attn_mask_frac"]),
        "st_head_fwd_FLOP": 2 * tokens * q["st_head_params"],
        "st_elem_d_elems": elem_d,
        "st_elem_ff_elems": elem_ff,
        "st_elem_scores_elems": scores,
        "st_elem_fwd_B": act_b * (elem_d + elem_ff + scores) * q["st_fw_elem_factor"],
        "st_gemm_ridge_p": kw["gemm_ridge_p"],
        "st_gemm_compute_mb_s": r["gemm_compute_mb_s"],
        "st_gemm_operand_bytes": 1.0 if q["st_fp8_flag"] else act_b,
        "st_gemm_memory_mb_s": r["gemm_memory_mb_s"],
        "st_gemm_mb_s": r["gemm_mb_s"],
        "st_attention_mb_s": r["attention_mb_s"],
        "st_elementwise_mb_s": r["elementwise_mb_s"],
        "st_fp8_cast_mb_s": r["fp8_cast_mb_s"],
        "st_stage_compute_mb_s": r["stage_compute_mb_s"],
        "st_head_s": head,
        "st_tp_bw_GBps": tp_bw,
        "st_tp_alpha_s": tp_a,
        "st_act_GB": tokens / t.cp * m.d_model * act_b / GB,
        "st_tp_collectives": TP_COLLECTIVES + q["st_recompute_tp_extra"],
        "st_tp_comm_mb_s": r["tp_comm_mb_s"],
        "st_tp_exposed_mb_s": r["tp_exposed_mb_s"],
        "st_cp_bw_GBps": cp_bw,
        "st_cp_alpha_s": cp_a,
        "st_cp_chunk_GB": t.micro_batch * (s / t.cp) * q["st_kv_width"] / q["st_kv_heads_split"] * act_b / GB,
        "st_cp_comm_mb_s": r["cp_comm_mb_s"],
        "st_cp_exposed_mb_s": r["cp_exposed_mb_s"],
        "st_cp_hidden_mb_s": r["cp_hidden_mb_s"],
        "st_ep_bw_GBps": ep_bw,
        "st_ep_alpha_s": ep_a,
        "st_ep_a2a_GB": tokens / t.cp / (t.tp if q["st_sp_flag"] else 1) * float(m.top_k or 0) * m.d_model * act_b / GB,
        "st_ep_comm_mb_s": r["ep_comm_mb_s"],
        "st_ep_exposed_mb_s": r["ep_exposed_mb_s"],
        "st_stage_mid_mb_s": mid,
        "st_stage_last_mb_s": stage_last,
        "st_head_mb_s": r["head_mb_s"],
        "st_stage_mb_s": max(mid, stage_last),
        "st_pp_bw_GBps": pp_bw,
        "st_pp_alpha_s": pp_a,
        "st_pp_comm_mb_s": r["pp_comm_mb_s"],
        "st_params_per_gpu": r["params_per_gpu"],
        "st_dense_params_gpu": r["params_per_gpu"] - expert_gpu,
        "st_expert_params_gpu": expert_gpu,
        "st_ranks_per_node": ranks,
        "st_dp_nodes": k,
        "st_dp_alpha_s": dp_alpha,
        "st_dp_s_per_GB": s_per_GB,
        "st_zero3_ag_mb_s": r["zero3_all_gather_mb_s"],
        "st_zero3_rs_mb_s": r["zero3_reduce_scatter_mb_s"],
        "st_zero3_reshard_flag": t.reshard_after_forward == "on",
        "st_zero3_comm_mb_s": r["zero3_all_gather_mb_s"] * (1 + (t.reshard_after_forward == "on"))
        + r["zero3_reduce_scatter_mb_s"],
        "st_window_compute_mb_s": r["window_compute_mb_s"],
        "st_fwd_window_mb_s": r["forward_window_mb_s"],
        "st_zero3_exposed_mb_s": r["zero3_exposed_mb_s"],
        "st_microbatch_s": r["microbatch_s"],
    }
    return out
