"""Line items of the Step Time sheet, third block: bubble, pipeline, exposed DP reduction,
optimizer step, step time and its rates (docs/step_time.md "Step"; Narayanan et al. 2021 eq. 1)."""

from __future__ import annotations

_GA = "{training.grad_accum}"
_N = "{training.num_gpus}"

ITEMS = {
    # 1F1B (PP-1)/GA; interleaved (PP-1)/(GA·v) (v = 1 outside it); zero bubble 0
    "st_bubble_frac": "=IF({training.pipeline_schedule}=\"zero_bubble\",0,({training.pp}-1)"
    f"/({_GA}*{{st_virtual_stages}}))",
    "st_pipeline_step_s": f"={_GA}*{{st_microbatch_s}}*(1+{{st_bubble_frac}})",
    "st_bubble_step_s": f"={_GA}*{{st_microbatch_s}}*{{st_bubble_frac}}",
    "st_grad_dense_GB": "={st_dense_params_gpu}*{st_grad_bytes}/c_GB",
    "st_grad_expert_GB": "={st_expert_params_gpu}*{st_grad_bytes}/c_GB",
    "st_expert_dp": "={st_dp_group}/{training.ep}",
    "st_expert_ranks_per_node": "=MIN(MAX(1,INT({st_ranks_per_node}/{training.ep})),{st_expert_dp})",
    "st_expert_nodes": "={st_expert_dp}/{st_expert_ranks_per_node}",
    "st_expert_alpha_s": "=IF({st_expert_ranks_per_node}>1,{st_nvlink_alpha_s},0)"
    "+IF({st_expert_nodes}>1,{st_nic_alpha_s},0)",
    "st_expert_s_per_GB": "=c_two*({st_expert_ranks_per_node}-1)/{st_expert_ranks_per_node}/{st_nvlink_bw_GBps}"
    "+c_two*({st_expert_nodes}-1)/{st_expert_nodes}/{st_expert_ranks_per_node}/{st_nic_bw_GBps}",
    # ZeRO 0-2: one all-reduce of the dense gradients over DP·CP, one of the expert gradients over DP·CP/EP
    "st_dp_allreduce_step_s": "=IF({st_dp_group}>1,{st_dp_alpha_s}+{st_grad_dense_GB}*{st_dp_s_per_GB},0)"
    "+IF(AND({st_grad_expert_GB}>0,{st_expert_dp}>1),{st_expert_alpha_s}+{st_grad_expert_GB}*{st_expert_s_per_GB},0)",
    # ZeRO-3: a reduce-scatter (half an all-reduce) of all local gradients after every micro-batch
    "st_dp_reduce_scatter_step_s": "=IF({st_dp_group}>1,{st_dp_alpha_s}+({st_grad_dense_GB}+{st_grad_expert_GB})"
    f"*{{st_dp_s_per_GB}},0)/c_two*{_GA}",
    "st_dp_comm_step_s": "=IF({training.zero_stage}=c_st_zero3_stage,{st_dp_reduce_scatter_step_s},{st_dp_allreduce_step_s})",
    # net of the compute hiding the CP ring (docs/step_time.md "Overlap windows")
    "st_bwd_window_s": "={st_window_compute_mb_s}*c_st_bwd_units/(c_train_fwd_units+{st_recompute_gemm_frac})",
    # ZeRO-3 reduce-scatters every micro-batch: its exposed part is in st_zero3_exposed_mb_s
    "st_dp_exposed_step_s": "=IF({training.zero_stage}=c_st_zero3_stage,0,MAX(0,{st_dp_comm_step_s}"
    "-{training.dp_overlap_frac}*{st_bwd_window_s}))",
    "st_optimizer_step_s": "={st_params_per_gpu}/IF({training.zero_stage}>=1,{st_dp_group},1)"
    "*{st_opt_bytes_per_param}/{st_hbm_Bps}",
    "st_step_s": "={st_pipeline_step_s}+{st_dp_exposed_step_s}+{st_optimizer_step_s}",
    "st_tokens_per_step": f"={{training.micro_batch}}*{_GA}*{{st_dp}}*{{training.seq_len}}",
    "st_tokens_per_s": "={st_tokens_per_step}/{st_step_s}",
    "st_attn_model_FLOP_per_token": "=c_two*{training.seq_len}*{model_n_heads}*({st_qk_head_dim}+{st_v_head_dim})"
    "*{st_attn_mask_frac}",
    "st_model_FLOPs_per_step": "=c_train_fwd_units*({model_layers}*(c_two*{st_gemm_params}"
    "+{st_attn_model_FLOP_per_token})+c_two*{st_head_params})*{st_tokens_per_step}",
    "st_hardware_FLOPs_per_step": "={st_model_FLOPs_per_step}+{st_tokens_per_step}*{model_layers}"
    "*(c_two*{st_gemm_params}*{st_recompute_gemm_frac}+{st_attn_model_FLOP_per_token}*{st_recompute_attn_frac})",
    "st_model_TFLOPS_per_gpu": f"={{st_model_FLOPs_per_step}}/({{st_step_s}}*{_N})/c_tera",
    "st_hardware_TFLOPS_per_gpu": f"={{st_hardware_FLOPs_per_step}}/({{st_step_s}}*{_N})/c_tera",
    "st_mfu": "={st_model_TFLOPS_per_gpu}/{mfu_peak_TFLOPS}",
    "st_hfu": "={st_hardware_TFLOPS_per_gpu}/{mfu_peak_TFLOPS}",
    "st_train_days": "={training.tokens}/{st_tokens_per_s}/c_s_per_day",
    "st_train_days_with_overhead": "={st_train_days}*{training.overhead_factor}",
}
