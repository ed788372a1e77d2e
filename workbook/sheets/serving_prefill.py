"""Line items of the Inference sheet's engine prefill block (docs/serving.md "Prefill";
workbook/calc/serving_prefill.py). :func:`prefill_items` writes the rows of one prefill of
``{batch}`` prompts at a chunk size ``{chunk}`` (row names); the load block reuses it."""

from __future__ import annotations

from workbook.reference import prefill_time as pt
from workbook.sheets.excel_math import power_nonneg
from workbook.sheets.serving_step import decode_items, distinct_share, ridge

_TP = "{inference.tp}"
_S = "{inference.prompt_tokens}"

CONSTANTS = [
    ("srv_moe_row_B_per_d", pt.MOE_ROW_B_PER_D, "B", "MoE dispatch layout: bytes per routed row per d_model element "
     "(scatter write, GEMM 1 read in FP8; GEMM 2 write, gather read in BF16)", "SGLang DeepEPMoE.forward_deepgemm_contiguous"),
    ("srv_moe_row_B_per_ffn", pt.MOE_ROW_B_PER_FFN, "B", "MoE dispatch layout: bytes per routed row per expert-width "
     "element beyond the FFN passes counted", "SGLang DeepEPMoE.forward_deepgemm_contiguous"),
    ("srv_moe_recv_B_per_d", pt.MOE_RECV_B_PER_D, "B", "MoE dispatch layout: bytes per received token per d_model "
     "element (scatter read in FP8, gather write in BF16)", "SGLang DeepEPMoE.forward_deepgemm_contiguous"),
]


def moe_layout_formula(flag: str, ep: str) -> str:
    """Bytes per prompt token, all MoE layers, of the EP prefill's dispatch layout
    (prefill_time.moe_layout_bytes_per_token) at the EP flag and EP given as row references."""
    return (f"={flag}*{{moe_layers}}*({{model_top_k}}*(c_srv_moe_row_B_per_d*{{model_d_model}}"
            f"+c_srv_moe_row_B_per_ffn*{{model_expert_d_ff}})+c_srv_moe_recv_B_per_d*{{model_d_model}}*{ep}"
            f"*(1-{power_nonneg(f'1-1/{ep}', '{model_top_k}')}))")


def _chunk_items(p: str, part: str, tc: str) -> dict[str, str]:
    """The lin, ar, GPU and time rows of one chunk of ``tc`` tokens (an expression of cell references);
    the time adds the EP all-to-all that the overlap does not hide, or the SMs it holds while hidden:
    max(C − o·G, f·C) (prefill_time.exposed_alltoall_s)."""
    msg = f"{tc}*{{srv_ar_B_per_token}}"
    a2a = f"({{srv_ep_fixed_s}}+{tc}*{{srv_pf_ep_s_per_token}})"
    nccl = f"{{srv_nccl_alpha_s}}+{msg}*{{srv_nccl_s_per_B}}"
    return {
        f"{p}_{part}_lin_s": "=" + ridge(
            f"({{srv_dense_read_B}}+{{srv_w_routed_B}}*{distinct_share(tc)})/{{srv_decode_Bps}}",
            f"({{srv_prefill_FLOP_per_token}}*{tc}+{{srv_head_FLOP_per_prompt}}*{{{p}_batch}}/{{{p}_chunks}}"
            f"+{{{p}_up_FLOP}}*{tc}/{{{p}_tokens}})/{{srv_linear_FLOPS}}"),
        f"{p}_{part}_ar_s": f"={{srv_ar_count}}*IF({msg}>{{srv_custom_max_B}},{nccl},"
        f"MIN({{srv_custom_alpha_s}}+{msg}*{{srv_custom_s_per_B}},{nccl}))",
        f"{p}_{part}_gpu_s": f"={{{p}_{part}_lin_s}}+{{{p}_attn_s}}*{tc}/{{{p}_tokens}}+{{{p}_{part}_ar_s}}"
        f"+MAX({{srv_prefill_small_floor_s}},{tc}*{{srv_act_B_per_token}}/{{st_hbm_Bps}})"
        f"+{tc}*{{srv_pf_moe_layout_B_per_token}}/{{st_hbm_Bps}}+{{srv_prefill_launch_s}}",
        f"{p}_{part}_s": f"=MAX({{{p}_{part}_gpu_s}},{{srv_prefill_cpu_s}})+MAX({a2a}-{{srv_ep_overlap_frac}}"
        f"*{{{p}_{part}_gpu_s}},{{srv_pf_comm_sm_frac}}*{a2a})",
    }


def alltoall_items(remote: str, other: str, per_token: str, *, flag: str, nodes: str, ep: str) -> dict[str, str]:
    """The rows ``remote`` (remote nodes a token reaches), ``other`` (other GPUs) and ``per_token`` (time per
    token, all MoE layers) of a prefill all-to-all (prefill_time.prefill_alltoall), at the EP flag, nodes
    and EP given as row references."""
    return {
        remote: f"={flag}*({nodes}-1)*(1-{power_nonneg(f'1-1/{nodes}', '{model_top_k}')})",
        other: f"={flag}*({ep}-1)*(1-{power_nonneg(f'1-1/{ep}', '{model_top_k}')})",
        per_token: f"={flag}*{{moe_layers}}*{{model_d_model}}*c_srv_ep_bytes*MAX({{{remote}}}"
        f"/({{eff_nic_GBps_per_gpu}}*c_GB*{{eff_network_efficiency}}),{{{other}}}/({{st_link_GBps}}*c_GB"
        "*{eff_nvlink_efficiency}))",
    }


def prefill_items(prefix: str, batch: str, chunk: str, *, prompt: str = _S, cached: str | None = None,
                  rows: dict[str, str] | None = None, call_cpu: bool = True) -> dict[str, str]:
    """Formulas of one prefill of ``batch`` prompts (a formula) at chunk size ``{chunk}`` (a row name).
    ``prompt`` / ``cached`` (row references) give new and cached tokens per prompt (default: the
    scenario's prompt, none cached); ``rows`` renames the EP-dependent rows read (old -> new row name)
    for a prefill pool at another EP."""
    p, c, S = prefix, "{" + chunk + "}", prompt
    ctx = f"{S}/c_two" if cached is None else f"({S}/c_two+{cached})"
    s0 = "0" if cached is None else cached
    out = {
        f"{p}_batch": batch,
        f"{p}_tokens": f"=MAX(1,ROUNDUP({{{p}_batch}}*{S}-c_srv_floor_eps,0))",  # whole tokens: exact chunks
        f"{p}_chunks": f"=MAX(1,ROUNDUP({{{p}_tokens}}/{c}-c_srv_floor_eps,0))",
        f"{p}_last_tokens": f"=MIN({c},{{{p}_tokens}}-({{{p}_chunks}}-1)*{c})",
        f"{p}_prompt_chunks": f"=MAX(1,ROUNDUP({S}/{c}-c_srv_floor_eps,0))",
        f"{p}_up_FLOP": f"={{{p}_batch}}*{{srv_kv_up_FLOP_per_token}}*({{{p}_prompt_chunks}}*{s0}"
        f"+{c}*{{{p}_prompt_chunks}}*({{{p}_prompt_chunks}}-1)/c_two)",
        f"{p}_attn_s": f"={{{p}_batch}}*{{srv_prefill_attn_FLOP_per_ctx_token}}*{S}*{ctx}/{{srv_attn_FLOPS}}",
        **_chunk_items(p, "full", c),
        **_chunk_items(p, "last", f"{{{p}_last_tokens}}"),
        f"{p}_prefill_s": f"=({{{p}_chunks}}-1)*{{{p}_full_s}}+{{{p}_last_s}}",
    }
    if call_cpu:  # every chunk is a scheduler call (separate prefill); a prefill pool's calls are not modelled
        out[f"{p}_prefill_s"] += f"+{{{p}_chunks}}*{{srv_prefill_call_cpu_s}}"
    for old, new in (rows or {}).items():
        out = {k: v.replace("{" + old + "}", "{" + new + "}") for k, v in out.items()}
    return out


ITEMS = {
    "srv_prefill_attn_FLOP_per_ctx_token": f"=c_two*{{model_n_heads}}/{_TP}*({{srv_qk_head_dim}}+{{srv_v_head_dim}})"
    "*{model_layers}",
    "srv_kv_up_FLOP_per_token": f"=IF({{model_is_mla_flag}}=1,c_two*{{model_layers}}*{{model_n_heads}}/{_TP}"
    "*{model_kv_lora_rank}*({model_qk_nope_head_dim}+{model_v_head_dim}),0)",
    "srv_prefill_kernels": "={srv_kernels_per_step}-c_srv_sampler_kernels",
    "srv_prefill_launch_s": "={srv_prefill_kernels}*{srv_eng_graph_launch_us}/c_us_per_s",
    "srv_prefill_cpu_s": "=(1-{srv_eng_prefill_cuda_graphs})*{srv_prefill_kernels}*{srv_eng_eager_launch_us}/c_us_per_s",
    "srv_prefill_small_floor_s": "={srv_small_kernels_s}",
    "srv_head_FLOP_per_prompt": f"=c_two*{{model_d_model}}*{{model_vocab}}/{_TP}",
    **alltoall_items("srv_pf_ep_remote_nodes", "srv_pf_ep_other_gpus", "srv_pf_ep_s_per_token", flag="{srv_ep_flag}",
                     nodes="{srv_ep_nodes}", ep="{inference.ep}"),
    "srv_pf_comm_sm_frac": "=MIN(1,{srv_eng_prefill_comm_sms}/{gpu_sm_count})",
    "srv_pf_moe_layout_B_per_token": moe_layout_formula("{srv_ep_flag}", "{inference.ep}"),
    "srv_marginal_prefill_s_per_token": "={srv_prefill_FLOP_per_token}/{srv_linear_FLOPS}"
    f"+{{srv_prefill_attn_FLOP_per_ctx_token}}*{_S}/c_two/{{srv_attn_FLOPS}}"
    "+{srv_ar_count}*{srv_ar_B_per_token}*{srv_nccl_s_per_B}+MAX(1-{srv_ep_overlap_frac},{srv_pf_comm_sm_frac})*{srv_pf_ep_s_per_token}",
    "srv_call_batch": "=1",
    "srv_call_context_tokens": "=1",
    **decode_items("srv_call", "srv_call_batch", "srv_call_context_tokens"),
    "srv_prefill_call_cpu_s": "=IF({srv_prefill_separate_flag}=1,{srv_eng_cpu_overhead_frac}*{srv_eng_scheduler_steps}"
    "*{srv_call_gpu_s},0)",
    **prefill_items("srv_pf1", "=1", "srv_eng_prefill_chunk_tokens"),
    "srv_prefill_ms": "={srv_pf1_prefill_s}*c_ms_per_s",
    "srv_ttft_idle_ms": "={srv_prefill_ms}+{srv_eng_request_overhead_ms}",
}
