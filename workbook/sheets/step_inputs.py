"""Line items of the Step Time sheet, first block: the efficiency factors of the selected GPU
(INDEX/MATCH on the Efficiency sheet), link and memory rates, the step model's layout, the choices
as numbers, and the per-layer averages of the model (docs/step_time.md "Inputs" and "Equations")."""

from __future__ import annotations

from typing import get_args

from workbook.catalog.frameworks import shipped_frameworks
from workbook.calc.step_inputs import _EFF, ACT_BYTES, ADAM_STATE_RW_BYTES, CAUSAL_MASK_FRAC
from workbook.reference import fp8
from workbook.reference import step_time as stm
from workbook.scenario.model import Precision, Recompute

CONSTANTS = [
    ("st_causal_mask_frac", CAUSAL_MASK_FRAC, "fraction", "Share of the s x s scores a causal Flash kernel computes",
     "docs/step_time.md (FlashAttention)"),
    ("st_adam_rw_bytes", ADAM_STATE_RW_BYTES, "B/param",
     "Optimizer step: read + write FP32 master, m and v (2 x 12 B per parameter)", "docs/step_time.md (t_opt)"),
]


def _recompute_rows() -> list[tuple[str, dict[str, float]]]:
    rows = []
    for mode in get_args(Recompute):
        # op_selective: gemm 0 here plus op_sac x the model's recomputed matmul share (Models block)
        rc = stm.recompute_fwd_frac(mode, 0.0)
        rows.append((mode, {"gemm": rc["gemm"], "attn": rc["attn"], "elem": rc["elem"], "scores": rc["elem_scores"],
                            "full": 1.0 if mode == "full" else 0.0, "tp_extra": rc["tp"],
                            "op_sac": 1.0 if mode == "op_selective" else 0.0}))
    return rows


TABLES = {
    "st_recompute": ("mode", _recompute_rows(), "Korthikanti et al. 2022 §4-5 (extra forward passes per layer); torchtitan op-level SAC (op_selective)"),
    "st_fp8_recipe": ("name", [(n, {"gemm_rate_frac": r.gemm_rate_frac, "cast_bytes": r.cast_bytes_per_elem,
                                     "weight_bytes": r.weight_bytes}) for n, r in fp8.RECIPES.items()],
                      "TE, torchao, DeepSeek-V3 FP8 recipes; rowwise, blockwise rates estimated"),
    "st_framework": ("id", [(f.id, {"gemm_factor": f.gemm_efficiency_factor, "attn_factor":
                                    f.attention_efficiency_factor, "elem_factor": f.elementwise_bytes_factor,
                                    "reserve_frac": f.allocator_reserve_frac})
                             for f in shipped_frameworks().values()],
                     "catalog/frameworks.yaml (docs/frameworks.md): each profile's factors vs Megatron-LM; its caching "
                     "allocator's reserve (GMLake, ASPLOS 2024)"),
    "st_precision": ("name", [(p, {"act_bytes": ACT_BYTES[p]}) for p in get_args(Precision)],
                     "docs/step_time.md (BF16 activations; FP32 4 B)"),
}

_RC = "INDEX(t_st_recompute_{col},MATCH({{training.recompute}},t_st_recompute_mode,0))"
_MLA = "{model_is_mla_flag}=1"
_DENSE_LAYERS = "({model_layers}-{moe_layers})"
_TOPK = "({model_top_k}+{model_n_shared_experts})"


def _eff(field: str) -> str:
    return f"=INDEX(cat_eff_{field},MATCH({{gpu}},cat_eff_gpu,0))"


def _flag(key: str) -> str:
    return f'=IF({{training.{key}}}="on",1,0)'


ITEMS = {
    **{f"eff_{f}": _eff(f) for f, _, _ in _EFF},
    **{f"st_fw_{c}_factor": f"=INDEX(t_st_framework_{c}_factor,MATCH({{training.framework}},t_st_framework_id,0))"
       for c in ("gemm", "attn", "elem")},
    "st_gemm_efficiency": "={eff_gemm_efficiency}*{st_fw_gemm_factor}",
    "st_fp8_gemm_efficiency": "={eff_fp8_gemm_efficiency}*{st_fw_gemm_factor}",
    "st_attention_efficiency": "={eff_attention_efficiency}*{st_fw_attn_factor}",
    "st_peak_TFLOPS": "={gpu_bf16_dense_TFLOPS}",
    "st_gemm_FLOPS": "={st_peak_TFLOPS}*c_tera*{st_gemm_efficiency}",
    "st_fp8_flag": "=IF({training.precision}=\"fp8\",1,0)",
    "st_fp8_recipe_index": "=IF(ISBLANK({training.fp8_recipe}),1,MATCH({training.fp8_recipe},t_st_fp8_recipe_name,0))",
    "st_fp8_gemm_rate_frac": "=INDEX(t_st_fp8_recipe_gemm_rate_frac,{st_fp8_recipe_index})",
    "st_fp8_cast_bytes": "=INDEX(t_st_fp8_recipe_cast_bytes,{st_fp8_recipe_index})",
    # FP8 layer GEMMs at the FP8 peak x the recipe's rate; a GPU without FP8 units stays at BF16
    "st_fp8_gemm_peak_TFLOPS": "=IF({gpu_fp8_dense_TFLOPS}>0,{gpu_fp8_dense_TFLOPS}*{st_fp8_gemm_rate_frac},"
    "{st_peak_TFLOPS})",
    "st_layer_gemm_peak_TFLOPS": "={st_peak_TFLOPS}+{st_fp8_flag}*({st_fp8_gemm_peak_TFLOPS}-{st_peak_TFLOPS})",
    "st_layer_gemm_FLOPS": "={st_layer_gemm_peak_TFLOPS}*c_tera*IF(AND({st_fp8_flag}=1,"
    "{gpu_fp8_dense_TFLOPS}>0),{st_fp8_gemm_efficiency},{st_gemm_efficiency})",
    "st_attn_FLOPS": "={st_peak_TFLOPS}*c_tera*IF({training.flash_attention}=\"on\",{st_attention_efficiency},"
    "{st_gemm_efficiency})",
    "st_hbm_Bps": "={gpu_hbm_bw_GBps}*c_GB*{eff_hbm_efficiency}",
    "st_link_GBps": "=IF({gpu_nvlink_bw_GBps}>0,{gpu_nvlink_bw_GBps}/c_two,{gpu_pcie_bw_GBps})",
    "st_nvlink_bw_GBps": "={st_link_GBps}*{eff_nvlink_efficiency}",
    # the network inputs' NIC when the scenario gives one of them, else the efficiency record's
    "st_nic_GBps": "=IF(AND(ISBLANK({network.nic_Gbps}),ISBLANK({network.nics_per_node})),{eff_nic_GBps_per_gpu},"
    "{node_network_GBps}/{gpu_gpus_per_node})",
    "st_nic_bw_GBps": "={st_nic_GBps}*{eff_network_efficiency}",
    "st_nvlink_alpha_s": "={eff_nvlink_latency_us}/c_us_per_s",
    "st_nic_alpha_s": "={eff_network_latency_us}/c_us_per_s",
    "st_dp": "={training.num_gpus}/({training.tp}*{training.cp}*{training.pp})",
    "st_dp_group": "={st_dp}*{training.cp}",
    "st_shard": "={training.tp}*{training.cp}",
    "st_tokens_mb": "={training.micro_batch}*{training.seq_len}",
    "st_virtual_stages": "=IF({training.pipeline_schedule}=\"interleaved\",{training.virtual_stages},1)",
    "st_layers_per_stage": "=ROUNDUP({model_layers}/{training.pp},0)",
    "st_last_stage_layers": "=IF(ISBLANK({training.last_stage_layers}),{st_layers_per_stage},"
    "{training.last_stage_layers})",
    "st_flash_flag": _flag("flash_attention"),
    "st_sp_flag": _flag("sequence_parallel"),
    "st_dropout_flag": _flag("dropout"),
    "st_recompute_gemm_frac": "=" + _RC.format(col="gemm") + "+" + _RC.format(col="op_sac")
    + "*{op_sac_gemm_recompute_frac}",
    "st_recompute_attn_frac": "=" + _RC.format(col="attn"),
    "st_recompute_elem_frac": "=" + _RC.format(col="elem"),
    "st_recompute_scores_frac": "=" + _RC.format(col="scores"),
    "st_recompute_full_flag": "=" + _RC.format(col="full"),
    "st_recompute_tp_extra": "=" + _RC.format(col="tp_extra"),
    "st_act_bytes": "=INDEX(t_st_precision_act_bytes,MATCH({training.precision},t_st_precision_name,0))",
    # FP8: the recipe's all-gather bytes (1 where FP8 weights are gathered, else BF16 2)
    "st_weight_bytes": "=IF({st_fp8_flag}=1,INDEX(t_st_fp8_recipe_weight_bytes,{st_fp8_recipe_index}),"
    "INDEX(t_prec_bytes,MATCH({training.precision},t_prec_name,0)))",
    "st_grad_bytes": "=INDEX(t_prec_bytes,MATCH({training.grad_precision},t_prec_name,0))",
    "st_opt_bytes_per_param": "=c_st_adam_rw_bytes+{st_grad_bytes}+{st_weight_bytes}",
    # MHA/GQA/MQA: Q and O d·a·d_h, K and V d·g·d_h each; MLA: its low-rank projections (Plan)
    "st_attn_matmul_params": f"=IF({_MLA},{{attn_params_per_layer}},"
    "c_two*{model_d_model}*{model_head_dim}*({model_n_heads}+{model_n_kv_heads}))",
    # dense layers carry the dense FFN; MoE layers top-k + shared experts and the router
    "st_ffn_active_params": f"=({_DENSE_LAYERS}*{{ffn_dense_layer_params}}+{{moe_layers}}*({_TOPK}"
    "*{moe_expert_params}+{moe_router_params_per_layer}))/{model_layers}",
    "st_ffn_stored_params": f"=({_DENSE_LAYERS}*{{ffn_dense_layer_params}}+{{moe_layers}}*(({{model_n_routed_experts}}"
    "+{model_n_shared_experts})*{moe_expert_params}+{moe_router_params_per_layer}))/{model_layers}",
    "st_gemm_params": "={st_attn_matmul_params}+{st_ffn_active_params}",
    "st_layer_params": "={st_attn_matmul_params}+{st_ffn_stored_params}",
    "st_expert_layer_params": "={moe_layers}*{model_n_routed_experts}*{moe_expert_params}/{model_layers}",
    "st_moe_layer_frac": "={moe_layers}/{model_layers}",
    "st_ffn_width": f"=({_DENSE_LAYERS}*IF({{model_dense_d_ff}}>0,{{model_dense_d_ff}},{{model_d_ff}})"
    f"+{{moe_layers}}*{_TOPK}*{{model_expert_d_ff}})/{{model_layers}}",
    "st_qk_head_dim": f"=IF({_MLA},{{mla_qk_head_dim}},{{model_head_dim}})",
    "st_v_head_dim": f"=IF({_MLA},{{model_v_head_dim}},{{model_head_dim}})",
    "st_kv_width": f"=IF({_MLA},{{model_n_heads}}*({{st_qk_head_dim}}+{{st_v_head_dim}}),"
    "c_two*{model_n_kv_heads}*{model_head_dim})",
    "st_kv_heads_split": f"=MIN({{training.tp}},MAX(1,IF({_MLA},{{model_n_heads}},{{model_n_kv_heads}})))",
    "st_head_params": "={model_d_model}*{model_vocab}",
    "st_fp8_cast_elems": "=c_two*{model_d_model}+{model_n_heads}*{st_v_head_dim}+{st_ffn_width}",
    "st_attn_mask_frac": "=IF({st_flash_flag}=1,c_st_causal_mask_frac,1)",
}
