"""Line items of the Models block (Plan sheet): parameter counts (spec 17.2: dense, GQA/MQA, MLA,
MoE, vocabulary share, 12Ld² shortcut) and FLOPs (spec 17.3, 17.4.6) of the selected model."""

from __future__ import annotations

#: (name, value, unit, label, source)
CONSTANTS = [
    ("shortcut_12Ld2_coef", 12.0, "x", "Coefficient of the shortcut P = 12·L·d² (4d² attention + 8d² FFN)", "spec 17.2.1"),
    ("attn_fwd_FLOP_coef", 4.0, "FLOP", "Attention forward FLOPs per token per layer per position and width (4·L·S·d: QKᵀ and AV)", "spec 17.3.7"),
    ("train_fwd_units", 3.0, "forward-equivalents", "Forward-equivalents of one training step (forward 1 + backward 2)", "spec 17.1.1, 17.3.8"),
]

TABLES = {
    "ffn_kind": (
        "name",
        [
            ("swiglu", {"matrices": 3}),
            ("geglu", {"matrices": 3}),
            ("gelu", {"matrices": 2}),
            ("relu", {"matrices": 2}),
            ("plain", {"matrices": 2}),
        ],
        "spec 17.2.1 (SwiGLU/GeGLU gate, up, down = 3 matrices; plain FFN = 2)",
    ),
    "recompute_fwd": (
        "mode",
        [
            ("none", {"frac": 0.0, "op_sac": 0.0}),
            ("selective", {"frac": 0.6, "op_sac": 0.0}),
            ("full", {"frac": 1.0, "op_sac": 0.0}),
            ("op_selective", {"frac": 0.0, "op_sac": 1.0}),
        ],
        "spec 17.4.6 (share of a forward recomputed: full +33%, selective about +20%); "
        "op_selective (torchtitan): op_sac = 1",
    ),
}

_MODEL_TEXT = "INDEX(cat_model_{field},MATCH({{model}},cat_model_id,0))"
_FFN = _MODEL_TEXT.format(field="ffn")
_NORM = _MODEL_TEXT.format(field="norm")
_ATTN = _MODEL_TEXT.format(field="attention")

ITEMS = {
    # ---- attention (17.2.1 general form, 17.2.2 MLA)
    "model_is_mla_flag": f'=IF({_ATTN}="mla",1,0)',
    "attn_std_params_per_layer": "={model_head_dim}*(c_two*{model_d_model}*({model_n_heads}+{model_n_kv_heads})"
    "+{model_qkv_bias}*({model_n_heads}+c_two*{model_n_kv_heads}))",
    "mla_qk_head_dim": "={model_qk_nope_head_dim}+{model_qk_rope_head_dim}",
    "mla_q_params_per_layer": "=IF({model_q_lora_rank}>0,"
    "{model_d_model}*{model_q_lora_rank}+{model_q_lora_rank}*{model_n_heads}*{mla_qk_head_dim},"
    "{model_d_model}*{model_n_heads}*{mla_qk_head_dim})",
    "mla_kv_params_per_layer": "={model_d_model}*({model_kv_lora_rank}+{model_qk_rope_head_dim})"
    "+{model_kv_lora_rank}*{model_n_heads}*({model_qk_nope_head_dim}+{model_v_head_dim})",
    "attn_params_per_layer": "=IF({model_is_mla_flag}=1,{mla_q_params_per_layer}+{mla_kv_params_per_layer}"
    "+{model_n_heads}*{model_v_head_dim}*{model_d_model},{attn_std_params_per_layer})",
    "attn_latent_norm_per_layer": "={model_is_mla_flag}*({model_q_lora_rank}+{model_kv_lora_rank})",
    # ---- FFN: dense layers and MoE layers (17.2.1, 17.2.2)
    "ffn_matrices": f"=INDEX(t_ffn_kind_matrices,MATCH({_FFN},t_ffn_kind_name,0))",
    "ffn_dense_layers": "=IF({model_moe}=1,{model_n_dense_layers},{model_layers})",
    "ffn_dense_layer_params": "={ffn_matrices}*{model_d_model}*IF({model_dense_d_ff}>0,{model_dense_d_ff},{model_d_ff})",
    "moe_layers": "={model_moe}*({model_layers}-{model_n_dense_layers})",
    "moe_expert_params": "={model_moe}*{ffn_matrices}*{model_d_model}*{model_expert_d_ff}",
    "moe_router_params_per_layer": "={model_moe}*{model_n_routed_experts}*{model_d_model}",
    # ---- totals (17.2.1-17.2.4)
    "params_embedding": "=IF({model_tied_embeddings}=1,1,c_two)*{model_vocab}*{model_d_model}",
    "params_attention": "={model_layers}*{attn_params_per_layer}",
    "params_ffn": "={ffn_dense_layers}*{ffn_dense_layer_params}+{moe_layers}*(({model_n_routed_experts}"
    "+{model_n_shared_experts})*{moe_expert_params}+{moe_router_params_per_layer})",
    "params_ffn_active": "={ffn_dense_layers}*{ffn_dense_layer_params}+{moe_layers}*(({model_top_k}"
    "+{model_n_shared_experts})*{moe_expert_params}+{moe_router_params_per_layer})",
    "params_norm": "={model_layers}*({model_norm_params_per_layer}+{attn_latent_norm_per_layer})"
    f'+IF({_NORM}="layernorm",c_two,1)*{{model_d_model}}',
    "params_non_embedding": "={params_attention}+{params_ffn}+{params_norm}",
    "params_total": "={params_embedding}+{params_non_embedding}",
    "params_active": "={params_embedding}+{params_attention}+{params_ffn_active}+{params_norm}",
    "params_active_non_embedding": "={params_active}-{params_embedding}",
    "params_total_B": "={params_total}/c_giga",
    "params_active_B": "={params_active}/c_giga",
    "params_vs_published_frac": "={params_total}/{model_published_params_total}-1",
    "active_frac": "={params_active}/{params_total}",
    "vocab_share_frac": "={params_embedding}/{params_total}",
    "params_12Ld2": "=c_shortcut_12Ld2_coef*{model_layers}*{model_d_model}*{model_d_model}",
    "params_12Ld2_shortfall_frac": "=({params_total}-{params_12Ld2})/{params_total}",
    "dff_over_d_ratio": "=IF({model_moe}=1,{model_expert_d_ff},{model_d_ff})/{model_d_model}",
    "kv_proj_params_per_layer": "=IF({model_is_mla_flag}=1,{mla_kv_params_per_layer},"
    "c_two*{model_n_kv_heads}*{model_head_dim}*{model_d_model})",
    # ---- FLOPs (17.3.6-17.3.9, 17.4.6)
    "fwd_linear_FLOP_per_token": "=c_two*{params_active_non_embedding}",
    "fwd_attn_FLOP_per_token": "=c_attn_fwd_FLOP_coef*{model_layers}*{training.seq_len}*{model_d_model}",
    "fwd_FLOP_per_token": "={fwd_linear_FLOP_per_token}+{fwd_attn_FLOP_per_token}",
    "lm_head_FLOP_per_token": "=c_two*{model_d_model}*{model_vocab}",
    "attn_share_of_fwd_frac": "={fwd_attn_FLOP_per_token}/{fwd_FLOP_per_token}",
    "train_FLOP_per_token": "=c_two*c_train_fwd_units*{params_active}",
    "train_total_FLOPs": "={train_FLOP_per_token}*{training.tokens}",
    "train_total_ne_FLOPs": "=c_two*c_train_fwd_units*{params_active_non_embedding}*{training.tokens}",
    # torchtitan op-level SAC recomputes every second matmul of a dense block: K, O and the FFN up (GELU: fc2)
    "op_sac_gemm_recompute_frac": "=IF(OR({model_moe}=1,{model_is_mla_flag}=1),0,({model_n_kv_heads}*{model_head_dim}"
    "+{model_n_heads}*{model_head_dim}+{model_d_ff})/(c_two*({model_n_heads}+{model_n_kv_heads})*{model_head_dim}"
    "+{ffn_matrices}*{model_d_ff}))",
    "recompute_compute_factor": "=(c_train_fwd_units+INDEX(t_recompute_fwd_frac,MATCH({training.recompute},"
    "t_recompute_fwd_mode,0))+INDEX(t_recompute_fwd_op_sac,MATCH({training.recompute},t_recompute_fwd_mode,0))"
    "*{op_sac_gemm_recompute_frac})/c_train_fwd_units",
    "train_hw_FLOPs": "=({train_total_FLOPs}+c_train_fwd_units*{fwd_attn_FLOP_per_token}*{training.tokens})"
    "*{recompute_compute_factor}",
    "ideal_gpu_days": "={train_total_FLOPs}/({mfu_peak_TFLOPS}*c_tera*{training.mfu})/c_s_per_day",
    "ideal_wall_days": "={ideal_gpu_days}/{training.num_gpus}",
    "moe_dense_equiv_x": "={params_total}/{params_active}",
}
