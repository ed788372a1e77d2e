"""Line items of the KV Cache sheet's engine block: the engine profile (INDEX/MATCH on the Engines
sheet), the weights per GPU by group, the engine's memory reserve and its KV capacity
(docs/serving.md; workbook/calc/serving_memory.py)."""

from __future__ import annotations

from typing import get_args

from workbook.calc.serving_memory import ENGINE_FIELDS, FLOOR_EPS
from workbook.reference import engine_memory as em
from workbook.reference import serving_shape as ss
from workbook.scenario.model import WeightPrecision

CONSTANTS = [
    ("srv_floor_eps", FLOOR_EPS, "tokens", "Tolerance added before rounding a token or request count down",
     "workbook/reference/engine_memory.py _EPS"),
    ("srv_ckpt_bytes", ss.CHECKPOINT_BYTES_PER_PARAM, "B/param",
     "Bytes per weight of embeddings, head, router and norms (kept in the checkpoint's BF16)", "docs/serving.md"),
    ("srv_fwd_passes_d", em.FWD_PASSES_PER_D_MODEL, "passes",
     "Activation passes per token per d_model in the profiled forward (residual, norm, attention out, all-reduce)",
     "workbook/reference/engine_memory.py"),
    ("srv_fwd_passes_ffn", em.FWD_PASSES_PER_FFN, "passes",
     "Activation passes per token per FFN width in the profiled forward (gate/up, activation)",
     "workbook/reference/engine_memory.py"),
    ("srv_act_bytes", 2.0, "B", "Bytes per activation element in serving (BF16)", "docs/serving.md"),
    ("srv_static_rule", float(em.MEMORY_RULES.index("static_fraction") + 1), "count",
     "Position of the static-fraction rule (SGLang) in the memory-rule table", "docs/serving.md"),
]

TABLES = {
    "srv_linear": ("name", [(p, {"bytes": ss.linear_bytes_per_param(p)}) for p in get_args(WeightPrecision)],
                   "docs/serving.md (FP8/INT8 one FP32 scale per 128x128 block; INT4 0.55, spec 17.4.11)"),
    "srv_memory_rule": ("name", [(r, {"position": float(i + 1)}) for i, r in enumerate(em.MEMORY_RULES)],
                        "docs/serving.md (engine memory rules)"),
}

_ENG = "MATCH({{inference.engine}},cat_engine_id,0)"
_DEV = "MATCH({gpu},cat_device_gpu,0)"
_TP = "{inference.tp}"
_MLA = "{model_is_mla_flag}=1"


def _eng(field: str) -> str:
    return f"=INDEX(cat_engine_{field},{_ENG.format()})"


ITEMS = {
    **{f"srv_eng_{f}": _eng(f) for f in ENGINE_FIELDS},
    "srv_memory_rule_position": f"=INDEX(t_srv_memory_rule_position,MATCH(INDEX(cat_engine_memory_rule,{_ENG.format()}),"
    "t_srv_memory_rule_name,0))",
    "srv_prefill_separate_flag": f'=IF(INDEX(cat_engine_prefill_mode,{_ENG.format()})="separate",1,0)',
    "srv_device_known_flag": f"=IF(ISNUMBER({_DEV}),1,0)",
    # no device record: the datasheet HBM (decimal GB) as the total the CUDA runtime reports
    "srv_device_total_GiB": f"=IF({{srv_device_known_flag}}=1,INDEX(cat_device_cuda_total_GiB,{_DEV}),"
    "{gpu_hbm_GB}*c_GB/c_GiB)",
    "srv_ep_overlap_frac": "=IF(ISBLANK({inference.ep_overlap_frac}),{srv_eng_ep_overlap_frac},"
    "{inference.ep_overlap_frac})",
    "srv_memory_fraction": "=IF(ISBLANK({inference.memory_fraction}),{srv_eng_memory_fraction},"
    "{inference.memory_fraction})",
    "srv_attn_replicated_per_layer": "={model_is_mla_flag}*{model_d_model}*({model_kv_lora_rank}"
    "+{model_qk_rope_head_dim}+{model_q_lora_rank})",
    "srv_attn_sharded_per_layer": "={attn_params_per_layer}-{srv_attn_replicated_per_layer}",
    "srv_linear_bytes_per_param": "=INDEX(t_srv_linear_bytes,MATCH({inference.weight_precision},t_srv_linear_name,0))",
    "srv_routed_slots": "=IF({inference.ep}>1,({model_n_routed_experts}+{inference.redundant_experts})"
    "/{inference.ep},{model_n_routed_experts})",
    "srv_routed_shard": f"=IF({{inference.ep}}>1,1,{_TP})",
    "srv_w_attention_B": f"={{model_layers}}*({{srv_attn_sharded_per_layer}}/{_TP}+{{srv_attn_replicated_per_layer}})"
    "*{srv_linear_bytes_per_param}",
    "srv_w_dense_ffn_B": f"={{ffn_dense_layers}}*{{ffn_dense_layer_params}}/{_TP}*{{srv_linear_bytes_per_param}}",
    "srv_w_shared_B": f"={{moe_layers}}*{{model_n_shared_experts}}*{{moe_expert_params}}/{_TP}"
    "*{srv_linear_bytes_per_param}",
    "srv_w_routed_B": "={moe_layers}*{srv_routed_slots}*{moe_expert_params}/{srv_routed_shard}"
    "*{srv_linear_bytes_per_param}",
    "srv_w_router_norms_B": "={moe_layers}*{moe_router_params_per_layer}*c_srv_ckpt_bytes+{params_norm}*c_srv_ckpt_bytes",
    "srv_w_embedding_B": f"={{model_vocab}}*{{model_d_model}}/{_TP}*c_srv_ckpt_bytes",
    "srv_w_head_B": f"=(1-{{model_tied_embeddings}})*{{model_vocab}}*{{model_d_model}}/{_TP}*c_srv_ckpt_bytes",
    "srv_weights_per_gpu_GiB": "=({srv_w_attention_B}+{srv_w_dense_ffn_B}+{srv_w_shared_B}+{srv_w_routed_B}"
    "+{srv_w_router_norms_B}+{srv_w_embedding_B}+{srv_w_head_B})/c_GiB",
    "srv_qk_head_dim": f"=IF({_MLA},{{mla_qk_head_dim}},{{model_head_dim}})",
    "srv_v_head_dim": f"=IF({_MLA},{{model_v_head_dim}},{{model_head_dim}})",
    "srv_dense_ffn_width": "=IF({model_dense_d_ff}>0,{model_dense_d_ff},{model_d_ff})",
    "srv_fwd_ffn_width": f"=IF({{model_moe}}=1,MAX({{model_top_k}}*({{model_d_model}}+c_srv_fwd_passes_ffn"
    f"*{{model_expert_d_ff}}/{_TP}),({{ffn_dense_layers}}>0)*c_srv_fwd_passes_ffn*{{srv_dense_ffn_width}}/{_TP}),"
    f"c_srv_fwd_passes_ffn*{{srv_dense_ffn_width}}/{_TP})",
    "srv_fwd_act_B_per_token": f"=c_srv_act_bytes*(c_srv_fwd_passes_d*{{model_d_model}}+({{model_n_heads}}"
    f"*{{srv_qk_head_dim}}+c_two*{{model_n_kv_heads}}*{{model_head_dim}})/{_TP}+{{srv_fwd_ffn_width}})",
    "srv_fwd_act_GiB": "={srv_eng_max_num_batched_tokens}*{srv_fwd_act_B_per_token}/c_GiB",
    "srv_sampler_GiB": "={srv_eng_profile_sampler}*MIN({srv_eng_max_num_seqs},{srv_eng_max_num_batched_tokens})"
    "*{model_vocab}*{srv_eng_sampler_bytes_per_logit}/c_GiB",
    # the static rule (SGLang) measures free memory after the weights: no activation term
    "srv_act_peak_GiB": "=({srv_memory_rule_position}<>c_srv_static_rule)*MAX({srv_fwd_act_GiB},{srv_sampler_GiB})",
    "srv_non_torch_GiB": f"=IF({_TP}>1,{{srv_eng_non_torch_GiB_tp_multi}},{{srv_eng_non_torch_GiB_tp1}})",
    "srv_kv_budget_total_rule_GiB": "={srv_memory_fraction}*{srv_device_total_GiB}-{srv_weights_per_gpu_GiB}"
    "-{srv_act_peak_GiB}-{srv_non_torch_GiB}-{srv_eng_cuda_graph_in_budget}*{srv_eng_cuda_graph_GiB}",
    "srv_kv_budget_static_rule_GiB": "={srv_memory_fraction}*({srv_device_total_GiB}-{srv_eng_cuda_context_GiB}"
    "-{srv_non_torch_GiB})-{srv_weights_per_gpu_GiB}-{srv_eng_cuda_graph_in_budget}*{srv_eng_cuda_graph_GiB}",
    "srv_kv_budget_free_rule_GiB": "={srv_memory_fraction}*MAX(0,{srv_device_total_GiB}-{srv_eng_cuda_context_GiB}"
    "-{srv_non_torch_GiB}-{srv_weights_per_gpu_GiB}-{srv_act_peak_GiB})"
    "-{srv_eng_cuda_graph_in_budget}*{srv_eng_cuda_graph_GiB}",
    "srv_kv_budget_GiB": "=MAX(0,CHOOSE({srv_memory_rule_position},{srv_kv_budget_total_rule_GiB},"
    "{srv_kv_budget_static_rule_GiB},{srv_kv_budget_free_rule_GiB}))",
    "srv_kv_bytes_per_token": f"=IF({_MLA},{{model_layers}}*({{model_kv_lora_rank}}+{{model_qk_rope_head_dim}}),"
    f"c_two*{{model_layers}}*MAX(1,{{model_n_kv_heads}}/{_TP})*{{model_head_dim}})*{{kv_bytes_per_elem}}",
    "srv_kv_tokens": "=INT({srv_kv_budget_GiB}*c_GiB/({srv_kv_bytes_per_token}*{srv_eng_block_size_tokens})"
    "+c_srv_floor_eps)*{srv_eng_block_size_tokens}",
    "srv_request_tokens": "={inference.prompt_tokens}+{inference.output_tokens}",
    "srv_request_block_tokens": "=ROUNDUP({srv_request_tokens}/{srv_eng_block_size_tokens}-c_srv_floor_eps,0)"
    "*{srv_eng_block_size_tokens}",
    "srv_kv_requests": "=MIN(INT({srv_kv_tokens}/{srv_request_block_tokens}+c_srv_floor_eps),{srv_eng_max_num_seqs})",
    "srv_kv_fits_flag": "=IF({srv_kv_requests}>=1,1,0)",
}
