"""Line items of the Inference sheet's engine decode block (docs/serving.md "Decode step";
workbook/calc/serving_step.py). :func:`decode_items` writes the seven rows of one decode step at a
batch and context given as row names; the load block reuses it."""

from __future__ import annotations

from workbook.reference import decode_time as dt
from workbook.sheets.excel_math import power_pos_exp, root_pos_exp

#: the distinct-expert share's guards: exp(-700) is 1e-304 (1 − it is 1 in double precision)
LOG_FLOOR = -700.0
TINY = 1e-300

CONSTANTS = [
    ("srv_allreduces_per_layer", float(dt.ALLREDUCES_PER_LAYER), "ops", "TP all-reduces per layer (attention, FFN)",
     "docs/serving.md"),
    ("srv_sampler_kernels", float(dt.SAMPLER_KERNELS), "count", "Sampler and LM-head tail kernels per step",
     "docs/serving.md"),
    ("srv_sampler_passes", dt.SAMPLER_LOGIT_PASSES, "passes", "Sampler passes over the FP32 logits", "docs/serving.md"),
    ("srv_fp32_bytes", dt.FP32_BYTES, "B", "Bytes per FP32 logit", "definition"),
    ("srv_act_passes_d", dt.ACT_PASSES_D, "passes", "Decode activation passes per token per layer per d_model",
     "docs/serving.md"),
    ("srv_act_passes_ffn", dt.ACT_PASSES_FFN, "passes", "Decode activation passes per token per layer per FFN width",
     "docs/serving.md"),
    ("srv_ep_bytes", dt.EP_DISPATCH_BYTES + dt.EP_COMBINE_BYTES, "B",
     "All-to-all bytes per token, expert and d_model (FP8 dispatch + BF16 combine)", "DeepSeek day 6"),
    ("srv_log_floor", LOG_FLOOR, "count", "Floor of the log of the miss probability (EXP underflows below it)",
     "IEEE 754 double: exp(-700) = 1e-304"),
    ("srv_tiny", TINY, "fraction", "Smallest miss probability taken (top-k = all experts)", "IEEE 754 double"),
    ("srv_MiB", float(2**20), "B/MB", "Bytes per MiB (binary; the custom all-reduce limit)", "definition"),
]

TABLES = {
    "srv_kernels": ("kind", [(k, {"gemms": float(dt.GEMMS_PER_LAYER[k]), "small": float(dt.SMALL_KERNELS_PER_LAYER[k])})
                             for k in ("dense", "moe", "mla_moe")],
                    "docs/serving.md (kernels per layer of a decode step: dense, GQA + MoE, MLA)"),
}

_TP = "{inference.tp}"


def ridge(memory: str, compute: str, p: str = "{srv_gemm_ridge_p}") -> str:
    """Smooth roofline of a GEMM, (t_mem^p + t_comp^p)^(1/p) (decode_time.gemm_time_s), of two expressions;
    ``p`` the exponent's cell (the serving models' by default)."""
    return root_pos_exp(f"{power_pos_exp(memory, p)}+{power_pos_exp(compute, p)}", p)


def distinct_share(tokens: str) -> str:
    """Share of the routed experts that ``tokens`` tokens (an expression) hit, 1 − (1 − k/E)^(N·f),
    as 1 − EXP(N·f·LN(1 − k/E)) with the exponent floored where the power underflows (share 1)."""
    return (f"(1-EXP(MAX(c_srv_log_floor,{tokens}*{{srv_expert_tokens_factor}}"
            "*LN(MAX(1-{model_top_k}/{srv_experts_safe},c_srv_tiny)))))")


def decode_items(prefix: str, batch: str, context: str) -> dict[str, str]:
    """Formulas of the seven rows of one decode step at ``{batch}`` requests and ``{context}`` tokens.

    A step is m passes of B/m requests (m = the engine's decode_micro_batches, 1 for most): every
    pass reads the weights, launches its kernels and exchanges its tokens (decode_time.decode_step).
    The GEMM row uses the smooth roofline's homogeneity, m·ridge(x, y) = ridge(m·x, m·y)."""
    b, c, p = "{" + batch + "}", "{" + context + "}", prefix
    m = f"{{{p}_passes}}"
    bp = f"{b}/{m}"
    msg = f"{bp}*{{srv_ar_B_per_token}}"
    nccl = f"{{srv_nccl_alpha_s}}+{msg}*{{srv_nccl_s_per_B}}"
    return {
        f"{p}_passes": f"=MIN({{srv_eng_decode_micro_batches}},MAX(1,{b}))",
        f"{p}_weight_read_B": f"={m}*({{srv_dense_read_B}}+{{srv_w_routed_B}}*{distinct_share(bp)}"
        f"+{{srv_emb_row_B}}*MIN({bp},{{model_vocab}}))",
        f"{p}_gemm_s": "=" + ridge(f"({{{p}_weight_read_B}}+{b}*{{srv_act_B_per_token}})/{{srv_decode_Bps}}",
                                   f"{b}*{{srv_decode_FLOP_per_token}}/{{srv_linear_FLOPS}}"),
        f"{p}_attn_s": f"=MAX({b}*{c}*{{srv_kv_bytes_per_token}}*{{srv_kv_reads_per_step}}/{{srv_decode_Bps}},"
        f"{b}*{c}*{{srv_attn_FLOP_per_ctx_token}}/{{srv_attn_FLOPS}},{m}*{{srv_attn_floor_s}})",
        f"{p}_ar_s": f"={m}*{{srv_ar_count}}*IF({msg}>{{srv_custom_max_B}},{nccl},"
        f"MIN({{srv_custom_alpha_s}}+{msg}*{{srv_custom_s_per_B}},{nccl}))",
        f"{p}_gpu_s": f"={{{p}_gemm_s}}+{{{p}_attn_s}}+{{{p}_ar_s}}+{b}*{{srv_sampler_s_per_token}}"
        f"+{m}*({{srv_small_kernels_s}}+{{srv_sampler_fixed_s}}+{{srv_launch_s}}"
        f"+{{srv_moe_layers_fixed_s}}+{{srv_moe_experts_all_s}}*{distinct_share(bp)})",
        f"{p}_ep_exposed_s": f"=MAX({{srv_eng_decode_comm_sm_frac}}*({m}*{{srv_ep_fixed_s}}+{b}*{{srv_ep_s_per_token}}),"
        f"{m}*{{srv_ep_fixed_s}}+{b}*{{srv_ep_s_per_token}}-{{srv_ep_overlap_frac}}*{{{p}_gpu_s}})",
        f"{p}_step_s": f"=MAX({{{p}_gpu_s}},IF(AND({{srv_eng_cuda_graphs}}=1,{bp}<={{srv_eng_cuda_graph_max_batch}}),0,"
        f"{m}*{{srv_eager_launch_s}}))+{{{p}_ep_exposed_s}}+{{srv_eng_cpu_overhead_frac}}*{{{p}_gpu_s}}"
        f"+{b}*{{srv_eng_cpu_per_seq_us}}/c_us_per_s",
    }


_DEV = "MATCH({gpu},cat_device_gpu,0)"
_MOE_LAYERS = "{moe_layers}"

ITEMS = {
    "srv_decode_hbm_efficiency": f"=IF({{srv_device_known_flag}}=1,INDEX(cat_device_decode_hbm_efficiency,{_DEV}),"
    "{eff_hbm_efficiency})",
    "srv_decode_Bps": "={gpu_hbm_bw_GBps}*c_GB*{srv_decode_hbm_efficiency}",
    "srv_fp8_TFLOPS": "=IF({gpu_fp8_dense_TFLOPS}>0,{gpu_fp8_dense_TFLOPS},{gpu_bf16_dense_TFLOPS})",
    "srv_linear_TFLOPS": '=IF(OR({inference.weight_precision}="fp8",{inference.weight_precision}="int8"),'
    "{srv_fp8_TFLOPS},{gpu_bf16_dense_TFLOPS})",
    "srv_linear_FLOPS": "={srv_linear_TFLOPS}*c_tera*{eff_serving_gemm_efficiency}",
    "srv_gemm_ridge_p": '=IF(OR({inference.weight_precision}="fp8",{inference.weight_precision}="int8"),'
    "{eff_gemm_ridge_p_fp8},{eff_gemm_ridge_p_bf16})",
    "srv_attn_FLOPS": "={gpu_bf16_dense_TFLOPS}*c_tera*{eff_attention_efficiency}",
    "srv_layer_kind": "=1+MAX({model_is_mla_flag},{model_moe})+{model_is_mla_flag}",
    "srv_gemms_per_layer": "=INDEX(t_srv_kernels_gemms,{srv_layer_kind})",
    "srv_small_per_layer": "=INDEX(t_srv_kernels_small,{srv_layer_kind})",
    "srv_ar_per_layer": f"=IF({_TP}>1,c_srv_allreduces_per_layer,0)",
    "srv_kernels_per_step": "={model_layers}*({srv_gemms_per_layer}+{srv_small_per_layer}+1+{srv_ar_per_layer})"
    "+c_srv_sampler_kernels",
    "srv_small_kernels_s": "={model_layers}*{srv_small_per_layer}*{srv_eng_small_kernel_us}/c_us_per_s",
    "srv_attn_floor_s": "={model_layers}*{srv_eng_small_kernel_us}/c_us_per_s",
    "srv_moe_experts_all_s": "={model_moe}*{moe_layers}*{srv_routed_slots}*{srv_eng_moe_expert_us}/c_us_per_s",
    "srv_moe_layers_fixed_s": "={model_moe}*{moe_layers}*{srv_eng_moe_layer_us}/c_us_per_s",
    "srv_kv_reads_per_step": '=IF(AND(INDEX(cat_engine_decode_attention_kernel,MATCH({inference.engine},cat_engine_id,0))'
    '="per_query_head",{model_is_mla_flag}=0),({model_n_heads}/{inference.tp})/MAX(1,{model_n_kv_heads}/{inference.tp}),1)',
    "srv_launch_s": "={srv_kernels_per_step}*{srv_eng_graph_launch_us}/c_us_per_s",
    "srv_eager_launch_s": "={srv_kernels_per_step}*{srv_eng_eager_launch_us}/c_us_per_s",
    "srv_sampler_fixed_s": "=c_srv_sampler_kernels*{srv_eng_small_kernel_us}/c_us_per_s",
    "srv_sampler_s_per_token": f"={{model_vocab}}/{_TP}*c_srv_fp32_bytes*c_srv_sampler_passes/{{srv_decode_Bps}}",
    "srv_dense_read_B": "={srv_w_attention_B}+{srv_w_dense_ffn_B}+{srv_w_shared_B}+{srv_w_router_norms_B}"
    "+{srv_w_head_B}+{model_tied_embeddings}*{srv_w_embedding_B}",
    "srv_emb_row_B": "=(1-{model_tied_embeddings})*{model_d_model}*c_srv_ckpt_bytes",
    "srv_expert_tokens_factor": "=IF({inference.ep}>1,{inference.ep},1)",
    "srv_experts_safe": "=MAX(1,{model_n_routed_experts})",
    "srv_ffn_local_width": "=IF({model_moe}=1,{model_top_k}*{model_expert_d_ff},{srv_dense_ffn_width})"
    f"/IF({{inference.ep}}>1,1,{_TP})",
    "srv_act_B_per_token": "={model_layers}*(c_srv_act_passes_d*{model_d_model}+c_srv_act_passes_ffn"
    "*{srv_ffn_local_width})*c_srv_act_bytes",
    "srv_prefill_FLOP_per_token": f"=c_two*({{model_layers}}*({{srv_attn_sharded_per_layer}}/{_TP}"
    f"+{{srv_attn_replicated_per_layer}})+{{ffn_dense_layers}}*{{ffn_dense_layer_params}}/{_TP}+{_MOE_LAYERS}"
    f"*({{model_n_shared_experts}}*{{moe_expert_params}}/{_TP}+{{moe_router_params_per_layer}}+{{model_top_k}}"
    "*{moe_expert_params}/IF({inference.ep}>1,1,{inference.tp})))",
    "srv_decode_FLOP_per_token": f"={{srv_prefill_FLOP_per_token}}+c_two*{{model_d_model}}*{{model_vocab}}/{_TP}",
    "srv_attn_FLOP_per_ctx_token": f"=c_two*{{model_n_heads}}/{_TP}*IF({{model_is_mla_flag}}=1,"
    "c_two*{model_kv_lora_rank}+{model_qk_rope_head_dim},{srv_qk_head_dim}+{srv_v_head_dim})*{model_layers}",
    "srv_ar_count": "={model_layers}*{srv_ar_per_layer}",
    "srv_ar_B_per_token": "={model_d_model}*c_srv_act_bytes",
    "srv_custom_max_B": "={srv_eng_custom_allreduce_max_MB}*c_srv_MiB",
    "srv_nccl_alpha_s": "={srv_eng_nccl_alpha_us}/c_us_per_s",
    "srv_nccl_s_per_B": f"=c_two*({_TP}-1)/{_TP}/({{st_link_GBps}}*c_GB*{{eff_nvlink_efficiency}})",
    "srv_custom_alpha_s": "={srv_eng_allreduce_alpha_us}/c_us_per_s",
    "srv_custom_s_per_B": f"=c_two*({_TP}-1)/{_TP}/({{st_link_GBps}}*c_GB*{{srv_eng_allreduce_bus_efficiency}})",
    "srv_ep_flag": "={model_moe}*IF({inference.ep}>1,1,0)",
    "srv_ep_nodes": f"=ROUNDUP({_TP}*{{inference.ep}}/{{gpu_gpus_per_node}},0)",
    "srv_ep_remote_frac": "=({srv_ep_nodes}-1)/{srv_ep_nodes}",
    "srv_ep_alpha_s": "=IF({srv_ep_nodes}>1,{eff_network_latency_us},{srv_eng_allreduce_alpha_us})/c_us_per_s",
    "srv_ep_fixed_s": f"={{srv_ep_flag}}*{_MOE_LAYERS}*c_two*{{srv_ep_alpha_s}}",
    "srv_ep_s_per_token": f"={{srv_ep_flag}}*{_MOE_LAYERS}*{{model_top_k}}*{{model_d_model}}*c_srv_ep_bytes"
    "*({srv_ep_remote_frac}/({eff_nic_GBps_per_gpu}*c_GB*{eff_network_efficiency})"
    "+(1-{srv_ep_remote_frac})/({st_link_GBps}*c_GB*{eff_nvlink_efficiency}))",
    "srv_output_length_cv2": '=IF({inference.output_lengths}="fixed",0,1)',
    "srv_running_context_tokens": "={inference.prompt_tokens}+{inference.output_tokens}*(1+{srv_output_length_cv2})/c_two",
    **decode_items("srv_dec", "inference.batch", "srv_running_context_tokens"),
    "srv_decode_weight_read_ms": "={srv_dec_weight_read_B}/{srv_decode_Bps}*c_ms_per_s",
    "srv_decode_step_ms": "={srv_dec_step_s}*c_ms_per_s",
    "srv_decode_tokens_per_s_per_gpu": f"={{inference.batch}}/{{srv_dec_step_s}}/{_TP}",
}
