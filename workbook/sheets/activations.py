"""Line items of the Activations sheet, first part: the bytes one transformer layer keeps for
backward per GPU and micro-batch, by tensor group (Korthikanti et al. 2022 §4.1-4.3, Table 2,
generalised to GQA/MQA, MLA, SwiGLU, MoE top-k, FlashAttention, SP and CP; Megatron-LM).

Tokens: S·B/CP per micro-batch on a CP rank; tensors in the residual stream (norms, dropout masks,
QKV and MLP inputs) are divided by TP only with sequence parallelism; head- and d_ff-split tensors
always are. Element sizes: the compute precision (Training Memory), 1-byte dropout masks, fp32
statistics, router scores and logits.
"""

from __future__ import annotations

from workbook.reference import activations as ra

CONSTANTS = [
    ("act_fp32_bytes", ra.FP32_BYTES, "B",
     "Bytes of an fp32 element (softmax and norm statistics, router scores, logits)", "Korthikanti 2022 §4.1"),
    ("act_mask_bytes", ra.MASK_BYTES, "B", "Bytes per dropout-mask element", "Korthikanti 2022 §4.1"),
    ("act_token_id_bytes", ra.TOKEN_ID_BYTES, "B", "Bytes per int64 token id kept by the first stage",
     "Megatron theoretical_memory_usage.py"),
]

_E = "{train_act_bytes_per_elem}"
_NORM = "INDEX(cat_model_norm,MATCH({model},cat_model_id,0))"
_MLA = "{model_is_mla_flag}=1"

ITEMS = {
    "act_sp_flag": '=IF({training.sequence_parallel}="on",1,0)',
    "act_flash_flag": '=IF({training.flash_attention}="on",1,0)',
    "act_dropout_flag": '=IF({training.dropout}="on",1,0)',
    "act_tokens": "={training.seq_len}*{training.micro_batch}/{training.cp}",
    "act_hidden_tokens": "=IF({act_sp_flag}=1,{act_tokens}/{training.tp},{act_tokens})",
    "act_heads_per_gpu": "=ROUNDUP({model_n_heads}/{training.tp},0)",
    "act_kv_heads_per_gpu": "=ROUNDUP({model_n_kv_heads}/{training.tp},0)",
    "act_norm_stats_width": f'=IF({_NORM}="layernorm",c_two,1)',
    "act_dense_d_ff": "=IF(AND({model_moe}=1,{model_dense_d_ff}>0),{model_dense_d_ff},{model_d_ff})",
    "act_expert_d_ff": "=IF({model_expert_d_ff}>0,{model_expert_d_ff},{model_d_ff})",
    # two norms: input (compute precision) + fp32 statistics, and the output that feeds QKV / the MLP
    "act_norms_GB": f"=c_two*{{act_hidden_tokens}}*(c_two*{{model_d_model}}*{_E}"
    "+{act_norm_stats_width}*c_act_fp32_bytes)/c_GB",
    # q_down output and q_up input (r_q each), kv_down output (r_kv + rope) and kv_up input (r_kv)
    "act_mla_latents_GB": f"={{model_is_mla_flag}}*{{act_hidden_tokens}}*{_E}*(c_two*{{model_q_lora_rank}}"
    "+c_two*{model_kv_lora_rank}+{model_qk_rope_head_dim})/c_GB",
    "act_qkv_GB": f"={{act_tokens}}*{_E}*IF({_MLA},{{act_heads_per_gpu}}*(c_two*{{mla_qk_head_dim}}"
    "+{model_v_head_dim}),{model_head_dim}*({act_heads_per_gpu}+c_two*{act_kv_heads_per_gpu}))/c_GB",
    "act_out_proj_GB": f"={{act_tokens}}*{_E}*{{act_heads_per_gpu}}*IF({_MLA},{{model_v_head_dim}},"
    "{model_head_dim})/c_GB",
    # a·S per token: softmax output, with dropout its mask and output (5as²b at 2 B); FlashAttention: fp32 LSE
    "act_scores_GB": "={act_tokens}*{act_heads_per_gpu}*IF({act_flash_flag}=1,c_act_fp32_bytes,"
    f"{{training.seq_len}}*({_E}+{{act_dropout_flag}}*(c_act_mask_bytes+{_E})))/c_GB",
    "act_dropout_masks_GB": "={act_dropout_flag}*c_two*{act_hidden_tokens}*{model_d_model}*c_act_mask_bytes/c_GB",
    # GELU: fc1 output + fc2 input; SwiGLU/GeGLU: gate + up + fc2 input = FFN matrices x d_ff/TP
    "act_mlp_GB": f"={{act_tokens}}*{{act_dense_d_ff}}/{{training.tp}}*{{ffn_matrices}}*{_E}/c_GB",
    "act_router_GB": "={model_moe}*{act_hidden_tokens}*{model_n_routed_experts}*c_act_fp32_bytes/c_GB",
    "act_routed_tokens": "={model_moe}*{act_tokens}/{training.tp}*{model_top_k}*{plan_etp}",
    # per token copy: fc1 input (d), activation input (2 or 1 x d_ff_e/ETP), fc2 input (d_ff_e/ETP)
    "act_routed_GB": f"={{act_routed_tokens}}*{_E}*({{model_d_model}}+{{ffn_matrices}}*{{act_expert_d_ff}}"
    "/{plan_etp})/c_GB",
    "act_shared_GB": "={model_moe}*{act_tokens}*{model_n_shared_experts}*{act_expert_d_ff}/{training.tp}"
    f"*{{ffn_matrices}}*{_E}/c_GB",
    "act_dense_layer_none_GB": "={act_norms_GB}+{act_mla_latents_GB}+{act_qkv_GB}+{act_out_proj_GB}"
    "+{act_scores_GB}+{act_dropout_masks_GB}+{act_mlp_GB}",
    "act_moe_layer_none_GB": "={model_moe}*({act_dense_layer_none_GB}-{act_mlp_GB}+{act_router_GB}"
    "+{act_routed_GB}+{act_shared_GB})",
    "act_layer_input_GB": f"={{act_hidden_tokens}}*{{model_d_model}}*{_E}/c_GB",
    # op-level selective AC (torchtitan): the saved matmuls' outputs Q, V, gate (or fc1) and, gated, the down
    # projection's output (tokens x d per TP rank: ffn matrices - 2 = 1 gated, 0 GELU); with TP and SP the two
    # reduce-scatter outputs
    "act_op_sac_mm_GB": f"=IF(OR({{model_moe}}=1,{_MLA}),0,{{act_tokens}}*{_E}*({{model_head_dim}}*({{act_heads_per_gpu}}"
    "+{act_kv_heads_per_gpu})+{act_dense_d_ff}/{training.tp}+({ffn_matrices}-c_two)*{model_d_model})/c_GB)",
    "act_op_sac_rs_GB": f"=IF(OR({{model_moe}}=1,{_MLA},{{training.tp}}=1,{{act_sp_flag}}=0),0,"
    f"c_two*{{act_hidden_tokens}}*{{model_d_model}}*{_E}/c_GB)",
    "act_op_sac_layer_GB": f"=IF(OR({{model_moe}}=1,{_MLA}),0,{{act_layer_input_GB}}+{{act_op_sac_mm_GB}}"
    "+{act_out_proj_GB}+{act_scores_GB}+{act_op_sac_rs_GB})",
    "act_recompute_option": "=INDEX(t_tm_recompute_option,MATCH({training.recompute},t_tm_recompute_mode,0))",
    # none keeps everything; selective recomputes the core attention; full keeps the layer input
    # op_selective: the layer above (refused for MoE models: their MoE layer shows no saving)
    "act_dense_layer_GB": "=CHOOSE({act_recompute_option},{act_dense_layer_none_GB},"
    "{act_dense_layer_none_GB}-{act_scores_GB},{act_layer_input_GB},{act_op_sac_layer_GB})",
    "act_moe_layer_GB": "=CHOOSE({act_recompute_option},{act_moe_layer_none_GB},"
    "{act_moe_layer_none_GB}-{model_moe}*{act_scores_GB},{model_moe}*{act_layer_input_GB},{act_moe_layer_none_GB})",
    # at least 0: op-level SAC under TP can keep more than no recompute (the down projection's partial sums)
    "act_dense_work_GB": "=MAX(0,{act_dense_layer_none_GB}-{act_dense_layer_GB})",
    "act_moe_work_GB": "=MAX(0,{act_moe_layer_none_GB}-{act_moe_layer_GB})",
    "act_embedding_GB": "=({act_tokens}*c_act_token_id_bytes+{act_dropout_flag}*{act_hidden_tokens}"
    "*{model_d_model}*c_act_mask_bytes)/c_GB",
    "act_output_layer_GB": f"=({{act_hidden_tokens}}*(c_two*{{model_d_model}}*{_E}+{{act_norm_stats_width}}"
    "*c_act_fp32_bytes)+{act_tokens}*{model_vocab}/{training.tp}*c_act_fp32_bytes)/c_GB",
}
