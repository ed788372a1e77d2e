"""Line items of the Step Time sheet, second block: one micro-batch through the busiest stage, per
GPU (docs/step_time.md "Equations"). Compute time = FLOPs / (peak x efficiency) and bytes / (HBM x
efficiency); a collective = latency + k x bytes / bandwidth (spec 17.6.2): k = 2(n-1)/n for an
all-reduce, (n-1)/n for an all-to-all, 1 for a send."""

from __future__ import annotations

from workbook.calc.step_time import TP_COLLECTIVES
from workbook.sheets.serving_step import ridge
from workbook.sheets.step_inputs import _flag
from workbook.reference import step_time as stm

CONSTANTS = [
    ("st_bwd_units", stm.BWD_UNITS, "forward-equivalents", "Backward pass in forward-equivalents (2)",
     "Narayanan et al. 2021 §5.1"),
    ("st_elem_bwd_over_fwd", stm.ELEMENTWISE_BWD_OVER_FWD, "x", "Element-wise bytes of the backward / forward",
     "docs/step_time.md (Q_fwd)"),
    ("st_elem_passes_d", stm.ELEM_PASSES_PER_D_MODEL, "passes",
     "Element-wise passes of width d per layer forward: 2 norms (4) + 2 residual adds (6)", "docs/step_time.md"),
    ("st_elem_passes_dropout", stm.ELEM_PASSES_PER_D_MODEL_DROPOUT, "passes",
     "Dropout mask passes of width d per layer forward (residual branches)", "docs/step_time.md"),
    ("st_score_passes_softmax", stm.ELEM_PASSES_PER_SCORE_SOFTMAX, "passes",
     "Unfused scale-mask-softmax passes over the a x s scores (read + write)", "docs/step_time.md"),
    ("st_score_passes_dropout", stm.ELEM_PASSES_PER_SCORE_DROPOUT, "passes",
     "Unfused attention dropout passes over the scores (read, write, 1-byte mask)", "docs/step_time.md"),
    ("st_zero3_stage", 3, "stage", "ZeRO stage that shards the weights (all-gathered every micro-batch)",
     "spec 17.4.8"),
    ("st_tp_collectives", TP_COLLECTIVES, "count", "TP all-reduces per layer per micro-batch (2 fwd + 2 bwd)",
     "Narayanan et al. 2021 §3.2"),
]

_LPS = "{st_layers_per_stage}"

_GPN = "{gpu_gpus_per_node}"


def _link(span: str, what: str) -> str:
    """NVLink collective bandwidth (or latency) while *span* GPUs fit one node, else the NIC's."""
    return f"=IF({span}<={_GPN},{{st_nvlink_{what}}},{{st_nic_{what}}})"


ITEMS = {
    "st_gemm_fwd_FLOP": "=c_two*{st_tokens_mb}*{st_gemm_params}",
    # 2 s a (d_qk + d_v) per token and layer, times the share of the s x s scores computed
    "st_attn_fwd_FLOP": "={st_tokens_mb}*c_two*{training.seq_len}*{model_n_heads}*({st_qk_head_dim}"
    "+{st_v_head_dim})*{st_attn_mask_frac}",
    "st_head_fwd_FLOP": "=c_two*{st_tokens_mb}*{st_head_params}",
    # norms and residuals split over TP only with sequence parallelism
    "st_elem_d_elems": "={st_tokens_mb}*{model_d_model}*(c_st_elem_passes_d+c_st_elem_passes_dropout*{st_dropout_flag})"
    "/IF({st_sp_flag}=1,{st_shard},{training.cp})",
    # the activation reads and writes d_ff (GeLU: 2 passes; gated units 3: the FFN's matrices)
    "st_elem_ff_elems": "={st_tokens_mb}*{st_ffn_width}*{ffn_matrices}/{st_shard}",
    "st_elem_scores_elems": "=(1-{st_flash_flag})*{st_tokens_mb}*{training.seq_len}*{model_n_heads}"
    "*(c_st_score_passes_softmax+c_st_score_passes_dropout*{st_dropout_flag})/{st_shard}",
    "st_elem_fwd_B": "={st_act_bytes}*({st_elem_d_elems}+{st_elem_ff_elems}+{st_elem_scores_elems})"
    "*{st_fw_elem_factor}",
    "st_gemm_ridge_p": "=IF({st_fp8_flag}=1,{eff_gemm_ridge_p_fp8},{eff_gemm_ridge_p_bf16})",
    "st_gemm_compute_mb_s": f"={_LPS}*{{st_gemm_fwd_FLOP}}/{{st_shard}}*(c_train_fwd_units+{{st_recompute_gemm_frac}})"
    "/{st_layer_gemm_FLOPS}",
    "st_gemm_operand_bytes": "=IF({st_fp8_flag}=1,1,{st_act_bytes})",
    # per pass: the layer's weights on this GPU + GEMM activations in and out (2 x operand elements / TP)
    "st_gemm_memory_mb_s": f"={_LPS}*({{st_gemm_params}}/{{training.tp}}*{{st_gemm_operand_bytes}}+c_two"
    "*{st_tokens_mb}/{training.cp}*{st_fp8_cast_elems}/{training.tp}*{st_act_bytes})"
    "*(c_train_fwd_units+{st_recompute_gemm_frac})/{st_hbm_Bps}",
    # smooth roofline (t_mem^p + t_comp^p)^(1/p), as the serving models' GEMMs (both bounds > 0), in the
    # Excel-safe power form (no ^ or POWER: workbook/sheets/excel_math.py)
    "st_gemm_mb_s": "=" + ridge("{st_gemm_memory_mb_s}", "{st_gemm_compute_mb_s}", "{st_gemm_ridge_p}"),
    "st_attention_mb_s": f"={_LPS}*{{st_attn_fwd_FLOP}}/{{st_shard}}*(c_train_fwd_units+{{st_recompute_attn_frac}})"
    "/{st_attn_FLOPS}",
    # forward 1 + backward 2 passes (+1 full recompute); selective recomputes the score bytes only
    "st_elementwise_mb_s": f"={_LPS}*({{st_elem_fwd_B}}*(1+c_st_elem_bwd_over_fwd+{{st_recompute_elem_frac}})"
    "+{st_act_bytes}*{st_elem_scores_elems}*{st_fw_elem_factor}*{st_recompute_scores_frac})/{st_hbm_Bps}",
    # FP8: GEMM operands quantised forward, their gradients backward (2 passes, +1 with full recompute)
    "st_fp8_cast_mb_s": f"={{st_fp8_flag}}*{_LPS}*{{st_tokens_mb}}*{{st_fp8_cast_elems}}/{{st_shard}}"
    "*(c_two+{st_recompute_gemm_frac})*{st_fp8_cast_bytes}/{st_hbm_Bps}",
    "st_stage_compute_mb_s": "={st_gemm_mb_s}+{st_attention_mb_s}+{st_elementwise_mb_s}+{st_fp8_cast_mb_s}",
    "st_head_s": "={st_head_fwd_FLOP}/{st_shard}*c_train_fwd_units/{st_gemm_FLOPS}",
    # ---- TP: all-reduces of B(S/CP)d per layer (with SP: all-gather + reduce-scatter, same bytes)
    "st_tp_bw_GBps": _link("{training.tp}", "bw_GBps"),
    "st_tp_alpha_s": _link("{training.tp}", "alpha_s"),
    "st_act_GB": "={st_tokens_mb}/{training.cp}*{model_d_model}*{st_act_bytes}/c_GB",
    "st_tp_collectives": "=c_st_tp_collectives+{st_recompute_tp_extra}",
    "st_tp_comm_mb_s": f"=IF({{training.tp}}>1,{_LPS}*{{st_tp_collectives}}*({{st_tp_alpha_s}}"
    "+c_two*({training.tp}-1)/{training.tp}*{st_act_GB}/{st_tp_bw_GBps}),0)",
    "st_tp_exposed_mb_s": "=(1-{training.tp_overlap_frac})*{st_tp_comm_mb_s}",
    # ---- CP: CP-1 ring steps of the local K,V chunk, forward 1 + backward 2 (+1 full recompute)
    "st_cp_bw_GBps": _link("{training.tp}*{training.cp}", "bw_GBps"),
    "st_cp_alpha_s": _link("{training.tp}*{training.cp}", "alpha_s"),
    "st_cp_chunk_GB": "={training.micro_batch}*{training.seq_len}/{training.cp}*{st_kv_width}/{st_kv_heads_split}"
    "*{st_act_bytes}/c_GB",
    "st_cp_comm_mb_s": f"=IF({{training.cp}}>1,{_LPS}*(c_train_fwd_units+{{st_recompute_full_flag}})"
    "*({training.cp}-1)*({st_cp_alpha_s}+{st_cp_chunk_GB}/{st_cp_bw_GBps}),0)",
    # the c-1 ring transfers hide under c-1 of the c chunk pairs' attention (the local one hides nothing)
    "st_cp_exposed_mb_s": "=MAX(0,{st_cp_comm_mb_s}-{training.cp_overlap_frac}*{st_attention_mb_s}*({training.cp}-1)"
    "/{training.cp})",
    # the attention compute that hides the ring is busy: no window for the ZeRO-3 or DP traffic (Overlap windows)
    "st_cp_hidden_mb_s": "={st_cp_comm_mb_s}-{st_cp_exposed_mb_s}",
    # ---- EP: dispatch + combine all-to-alls per MoE layer, as many as the TP all-reduces
    "st_ep_bw_GBps": _link("{training.tp}*{training.ep}", "bw_GBps"),
    "st_ep_alpha_s": _link("{training.tp}*{training.ep}", "alpha_s"),
    "st_ep_a2a_GB": "={st_tokens_mb}/{training.cp}/IF({st_sp_flag}=1,{training.tp},1)*{model_top_k}"
    "*{model_d_model}*{st_act_bytes}/c_GB",
    "st_ep_comm_mb_s": f"=IF(AND({{model_moe}}=1,{{training.ep}}>1),{_LPS}*{{st_moe_layer_frac}}*{{st_tp_collectives}}"
    "*({st_ep_alpha_s}+({training.ep}-1)/{training.ep}*{st_ep_a2a_GB}/{st_ep_bw_GBps}),0)",
    "st_ep_exposed_mb_s": "=(1-{training.ep_overlap_frac})*{st_ep_comm_mb_s}",
    # ---- stages: the middle stages carry L/PP layers, the last one its layers and the LM head
    "st_stage_mid_mb_s": "={st_stage_compute_mb_s}+{st_tp_exposed_mb_s}+{st_cp_exposed_mb_s}+{st_ep_exposed_mb_s}",
    "st_stage_last_mb_s": f"={{st_stage_mid_mb_s}}/{_LPS}*{{st_last_stage_layers}}+{{st_head_s}}",
    "st_head_mb_s": "=IF({st_stage_last_mb_s}>={st_stage_mid_mb_s},{st_head_s},0)",
    "st_stage_mb_s": "=MAX({st_stage_mid_mb_s},{st_stage_last_mb_s})",
    # ---- PP: activation forward + gradient backward per virtual stage, 1/TP of it per GPU
    "st_pp_bw_GBps": _link("{training.num_gpus}", "bw_GBps"),
    "st_pp_alpha_s": _link("{training.num_gpus}", "alpha_s"),
    "st_pp_comm_mb_s": "=IF({training.pp}>1,c_two*{st_virtual_stages}*({st_pp_alpha_s}+{st_act_GB}/{training.tp}"
    "/{st_pp_bw_GBps}),0)",
    # ---- weights on one GPU: its stage (the LM head too when PP = 1), TP shard, EP shard of the experts
    "st_params_per_gpu": "={st_dense_params_gpu}+{st_expert_params_gpu}",
    "st_dense_params_gpu": f"=({_LPS}*({{st_layer_params}}-{{st_expert_layer_params}})+IF({{training.pp}}=1,"
    "{st_head_params},0))/{training.tp}",
    "st_expert_params_gpu": f"={_LPS}*{{st_expert_layer_params}}/({{training.tp}}*{{training.ep}})",
    # ---- hierarchical collectives over DP·CP: r ranks per node on NVLink, a ring over k nodes on the NIC
    "st_ranks_per_node": f"=MAX(1,MIN({{st_dp_group}},INT({_GPN}/MIN({_GPN},{{training.tp}}))))",
    "st_dp_nodes": "={st_dp_group}/{st_ranks_per_node}",
    "st_dp_alpha_s": "=IF({st_ranks_per_node}>1,{st_nvlink_alpha_s},0)+IF({st_dp_nodes}>1,{st_nic_alpha_s},0)",
    "st_dp_s_per_GB": "=c_two*({st_ranks_per_node}-1)/{st_ranks_per_node}/{st_nvlink_bw_GBps}"
    "+c_two*({st_dp_nodes}-1)/{st_dp_nodes}/{st_ranks_per_node}/{st_nic_bw_GBps}",
    # ZeRO-3: an all-gather (a reduce-scatter) is half a hierarchical all-reduce of the weights (gradients)
    "st_zero3_ag_mb_s": "=IF(AND({training.zero_stage}=c_st_zero3_stage,{st_dp_group}>1),({st_dp_alpha_s}"
    "+{st_params_per_gpu}*{st_weight_bytes}/c_GB*{st_dp_s_per_GB})/c_two,0)",
    "st_zero3_rs_mb_s": "=IF(AND({training.zero_stage}=c_st_zero3_stage,{st_dp_group}>1),({st_dp_alpha_s}"
    "+{st_params_per_gpu}*{st_grad_bytes}/c_GB*{st_dp_s_per_GB})/c_two,0)",
    "st_zero3_reshard_flag": _flag("reshard_after_forward"),
    "st_zero3_comm_mb_s": "=(1+{st_zero3_reshard_flag})*{st_zero3_ag_mb_s}+{st_zero3_rs_mb_s}",
    "st_window_compute_mb_s": "={st_stage_compute_mb_s}-{st_cp_hidden_mb_s}",
    # the forward pass alone: each part's one forward-equivalent (a recompute runs in the backward), less the
    # forward's share of the compute hiding the CP ring (spread as the attention core is)
    "st_fwd_window_mb_s": f"={{st_gemm_mb_s}}/(c_train_fwd_units+{{st_recompute_gemm_frac}})+{{st_attention_mb_s}}"
    f"/(c_train_fwd_units+{{st_recompute_attn_frac}})+{_LPS}*{{st_elem_fwd_B}}/{{st_hbm_Bps}}+{{st_fp8_cast_mb_s}}"
    "/(c_two+{st_recompute_gemm_frac})-{st_cp_hidden_mb_s}/(c_train_fwd_units+{st_recompute_attn_frac})",
    # per layer with prefetch: the first gather and the last reduce-scatter exposed, the rest under compute
    "st_zero3_exposed_mb_s": f"=({{st_zero3_ag_mb_s}}+{{st_zero3_rs_mb_s}})/{_LPS}"
    f"+MAX(0,{{st_zero3_ag_mb_s}}*(1-1/{_LPS})-{{training.zero3_overlap_frac}}*{{st_fwd_window_mb_s}})"
    f"+MAX(0,{{st_zero3_reshard_flag}}*{{st_zero3_ag_mb_s}}+{{st_zero3_rs_mb_s}}*(1-1/{_LPS})"
    "-{training.zero3_overlap_frac}*({st_window_compute_mb_s}-{st_fwd_window_mb_s}))",
    "st_microbatch_s": "={st_stage_mb_s}+{st_pp_comm_mb_s}+{st_zero3_exposed_mb_s}",
}
