"""Line items of the Inference sheet's disaggregated block: the decode batch at the TPOT target in
closed form (one row block per refinement), the decode and prefill pools sized from the load
(docs/serving.md "Disaggregated serving"; workbook/calc/serving_disagg.py)."""

from __future__ import annotations

from workbook.calc.serving_disagg import REFINEMENTS
from workbook.sheets.serving_prefill import alltoall_items, moe_layout_formula, prefill_items
from workbook.sheets.serving_step import decode_items

_CTX = "srv_running_context_tokens"  # the running requests' mean context (serving_step)
_CAP = "{srv_load_batch_cap_used}"
_T = "{srv_dis_tpot_target_s}"
_EPP = "{srv_dis_pf_ep}"
_TP = "{inference.tp}"
_LAM = "{srv_dis_rate_rps}"
_L, _K, _X, _BL = "{srv_dis_pf_load_instances}", "{srv_dis_pf_queue_prompts}", "{srv_dis_pf_ttft_slack}", \
    "{srv_dis_pf_busy_limit}"
#: the prefill pool's rows that depend on EP (the decode block's at the serving EP -> the pool's)
_PF_ROWS = {"srv_w_routed_B": "srv_dis_pf_routed_B", "srv_expert_tokens_factor": "srv_dis_pf_ep",
            "srv_prefill_FLOP_per_token": "srv_dis_pf_FLOP_per_token", "srv_act_B_per_token": "srv_dis_pf_act_B_per_token",
            "srv_ep_fixed_s": "srv_dis_pf_ep_fixed_s", "srv_pf_ep_s_per_token": "srv_dis_pf_ep_s_per_token",
            "srv_pf_moe_layout_B_per_token": "srv_dis_pf_moe_layout_B_per_token"}


def _refinement(r: int) -> dict[str, str]:
    p = f"srv_disr{r}"
    prev = _CAP if r == 1 else f"{{srv_disr{r - 1}_batch}}"
    return {
        f"{p}_b0": f"=MAX({prev}/c_two,1)",
        f"{p}_b2": f"=c_two*{{{p}_b0}}",
        **decode_items(f"{p}_lo", f"{p}_b0", _CTX),
        **decode_items(f"{p}_hi", f"{p}_b2", _CTX),
        f"{p}_slope": f"=({{{p}_hi_step_s}}-{{{p}_lo_step_s}})/{{{p}_b0}}",
        f"{p}_intercept": f"={{{p}_lo_step_s}}-{{{p}_slope}}*{{{p}_b0}}",
        f"{p}_batch": f"=IF({{{p}_slope}}>0,MIN({_CAP},MAX(1,({_T}-{{{p}_intercept}})/MAX({{{p}_slope}},c_srv_tiny))),"
        f"{_CAP})",
    }


_LAST = f"srv_disr{REFINEMENTS}_batch"
_FFN_P = ("IF({model_moe}=1,{model_top_k}*{model_expert_d_ff},{srv_dense_ffn_width})"
          f"/IF({_EPP}>1,1,{_TP})")

ITEMS = {
    "srv_dis_flag": '=IF({inference.disaggregated}="on",1,0)',
    "srv_dis_target_given_flag": "=IF(ISBLANK({inference.tpot_target_ms}),0,1)",
    "srv_dis_tpot_target_s": "=IF(ISBLANK({inference.tpot_target_ms}),0,{inference.tpot_target_ms}/c_ms_per_s)",
    "srv_dis_one": "=1",
    **decode_items("srv_dis1", "srv_dis_one", _CTX),
    **{k: v for r in range(1, REFINEMENTS + 1) for k, v in _refinement(r).items()},
    "srv_dis_kv_bound_flag": f"=IF(OR({{srv_dis_target_given_flag}}=0,{{srv_off_step_s}}<={_T}),1,0)",
    "srv_dis_miss_flag": f"=IF(AND({{srv_dis_target_given_flag}}=1,{{srv_dis1_step_s}}>{_T}),1,0)",
    "srv_dis_batch_line": f"=IF({{srv_dis_kv_bound_flag}}=1,{_CAP},{{{_LAST}}})",
    "srv_dis_batch_whole": "=MAX(1,INT({srv_dis_batch_line}+c_srv_floor_eps))",
    **decode_items("srv_disc", "srv_dis_batch_whole", _CTX),
    "srv_dis_over_flag": f"=IF(AND({{srv_dis_target_given_flag}}=1,{{srv_disc_step_s}}>{_T}),1,0)",
    "srv_dis_batch": "=(1-{srv_dis_miss_flag})*({srv_dis_batch_whole}-{srv_dis_over_flag})",
    "srv_dis_b": "=MAX({srv_dis_batch},1)",
    **decode_items("srv_disd", "srv_dis_b", _CTX),
    "srv_dis_tpot_ms": "={srv_disd_step_s}*c_ms_per_s",
    "srv_dis_dec_tokens_per_s_per_gpu": f"={{srv_dis_batch}}/{{srv_disd_step_s}}/{_TP}",
    "srv_dis_dec_tokens_per_s_per_node": "={srv_dis_dec_tokens_per_s_per_gpu}*{gpu_gpus_per_node}",
    "srv_dis_dec_gpus_per_instance": f"={_TP}*{{inference.ep}}",
    "srv_dis_dec_requests_per_instance": "={srv_dis_batch}*{srv_attention_dp}",
    "srv_dis_rate_rps": "=IF(ISBLANK({inference.arrival_rate_rps}),{srv_dis_dec_requests_per_instance}"
    "/(MAX({srv_load_decode_steps_per_req},1)*{srv_disd_step_s}),{inference.arrival_rate_rps})",
    "srv_dis_pf_ep": "=IF(ISBLANK({inference.prefill_ep}),{inference.ep},{inference.prefill_ep})",
    "srv_dis_pf_routed_slots": f"=IF({_EPP}>1,({{model_n_routed_experts}}+{{inference.redundant_experts}})/{_EPP},"
    "{model_n_routed_experts})",
    "srv_dis_pf_routed_B": "={moe_layers}*{srv_dis_pf_routed_slots}*{moe_expert_params}"
    f"/IF({_EPP}>1,1,{_TP})*{{srv_linear_bytes_per_param}}",
    "srv_dis_pf_FLOP_per_token": f"={{srv_prefill_FLOP_per_token}}+c_two*{{moe_layers}}*{{model_top_k}}"
    f"*{{moe_expert_params}}*(1/IF({_EPP}>1,1,{_TP})-1/{{srv_routed_shard}})",
    "srv_dis_pf_act_B_per_token": f"={{model_layers}}*(c_srv_act_passes_d*{{model_d_model}}+c_srv_act_passes_ffn*{_FFN_P})"
    "*c_srv_act_bytes",
    "srv_dis_pf_ep_flag": f"={{model_moe}}*IF({_EPP}>1,1,0)",
    "srv_dis_pf_nodes": f"=ROUNDUP({_TP}*{_EPP}/{{gpu_gpus_per_node}},0)",
    "srv_dis_pf_alpha_s": "=IF({srv_dis_pf_nodes}>1,{eff_network_latency_us},{srv_eng_allreduce_alpha_us})/c_us_per_s",
    "srv_dis_pf_ep_fixed_s": "={srv_dis_pf_ep_flag}*{moe_layers}*c_two*{srv_dis_pf_alpha_s}",
    **alltoall_items("srv_dis_pf_remote_nodes", "srv_dis_pf_other_gpus", "srv_dis_pf_ep_s_per_token",
                     flag="{srv_dis_pf_ep_flag}", nodes="{srv_dis_pf_nodes}", ep=_EPP),
    "srv_dis_pf_moe_layout_B_per_token": moe_layout_formula("{srv_dis_pf_ep_flag}", _EPP),
    "srv_dis_new_tokens": "={inference.prompt_tokens}*(1-{inference.cache_hit_frac})",
    "srv_dis_cached_tokens": "={inference.prompt_tokens}*{inference.cache_hit_frac}",
    **prefill_items("srv_dispf", "=MAX(1,INT({srv_eng_prefill_chunk_tokens}/{srv_dis_new_tokens}))",
                    "srv_eng_prefill_chunk_tokens", prompt="{srv_dis_new_tokens}", cached="{srv_dis_cached_tokens}",
                    rows=_PF_ROWS, call_cpu=False),
    # the prompts' new tokens (batch x new, as the load counts them), not the whole tokens its chunks are cut from
    "srv_dis_pf_tokens_per_s_per_gpu": f"={{srv_dispf_batch}}*{{srv_dis_new_tokens}}/{{srv_dispf_prefill_s}}/{_TP}",
    "srv_dis_pf_input_tokens_per_s_per_node": "={srv_dis_pf_tokens_per_s_per_gpu}/(1-{inference.cache_hit_frac})"
    "*{gpu_gpus_per_node}",
    "srv_dis_pf_gpus_per_instance": f"={_TP}*{_EPP}",
    "srv_dis_pf_load_instances": f"={_LAM}*{{srv_dis_new_tokens}}/({{srv_dis_pf_tokens_per_s_per_gpu}}"
    "*{srv_dis_pf_gpus_per_instance})",
    "srv_dis_pf_queue_prompts": f"={{srv_dispf_batch}}*{_EPP}",
    "srv_dis_ttft_target_s": "=IF(ISBLANK({inference.ttft_target_ms}),0,{inference.ttft_target_ms}/c_ms_per_s)",
    "srv_dis_pf_ttft_slack": "=IF(ISBLANK({inference.ttft_target_ms}),0,MAX(0,{srv_dis_ttft_target_s}/{srv_dispf_prefill_s}"
    "-1))",
    "srv_dis_pf_busy_limit": f"=IF({_X}>0,c_two*{_K}*{_X}/(1+c_two*{_K}*{_X}),1)",
    "srv_dis_pf_instances": f"=MAX(1,INT({_L}+c_srv_floor_eps)+1,IF({_BL}<1,ROUNDUP({_L}/{_BL}-c_srv_floor_eps,0),0))",
    "srv_dis_pf_gpus": "={srv_dis_pf_instances}*{srv_dis_pf_gpus_per_instance}",
    "srv_dis_pf_busy_frac": f"={_L}/{{srv_dis_pf_instances}}",
    "srv_dis_pf_wait_s": "={srv_dis_pf_busy_frac}*{srv_dispf_prefill_s}"
    f"/(c_two*{_K}*(1-{{srv_dis_pf_busy_frac}}))",
    "srv_dis_ttft_ms": "=({srv_dispf_prefill_s}+{srv_dis_pf_wait_s})*c_ms_per_s",
    "srv_dis_concurrency": f"={_LAM}*{{srv_load_decode_steps_per_req}}*{{srv_disd_step_s}}",
    "srv_dis_dec_instances": "=IF({srv_dis_dec_requests_per_instance}>0,MAX(1,ROUNDUP({srv_dis_concurrency}"
    "/MAX({srv_dis_dec_requests_per_instance},c_srv_tiny)-c_srv_floor_eps,0)),0)",
    "srv_dis_dec_gpus": "={srv_dis_dec_instances}*{srv_dis_dec_gpus_per_instance}",
    "srv_dis_gpus": "={srv_dis_pf_gpus}+{srv_dis_dec_gpus}",
    "srv_dis_nodes": "={srv_dis_gpus}/{gpu_gpus_per_node}",
    "srv_dis_tokens_per_s": f"={_LAM}*{{inference.output_tokens}}",
    "srv_dis_tokens_per_s_per_gpu": "={srv_dis_tokens_per_s}/{srv_dis_gpus}",
    "srv_dis_pf_input_tokens_per_s_per_node_in_service": f"={_LAM}*{{inference.prompt_tokens}}"
    "/({srv_dis_pf_gpus}/{gpu_gpus_per_node})",
    "srv_dis_dec_tokens_per_s_per_node_in_service": "=IF({srv_dis_dec_gpus}>0,{srv_dis_tokens_per_s}"
    "/({srv_dis_dec_gpus}/{gpu_gpus_per_node}),0)",
}
