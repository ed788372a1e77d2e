"""Line items of the Inference sheet's engine load block: offline throughput and the steady state
under load, one row block per refinement of Little's law (docs/serving.md "Serving under load";
workbook/calc/serving_load.py)."""

from __future__ import annotations

from workbook.calc.serving_load import REFINEMENTS, RHO_MAX
from workbook.reference.serving_load import DENOM_MIN, SECANT_STEP
from workbook.reference.serving_queue import NORMAL_Z, QUANTILES
from workbook.sheets.serving_prefill import prefill_items
from workbook.sheets.serving_step import decode_items

CONSTANTS = [
    *[c for name, qv in QUANTILES.items() for c in (
        (f"srv_q_{name}", qv, "fraction", f"Quantile of the {name} TTFT and TPOT", "workbook/reference/serving_queue.py"),
        (f"srv_z_{name}", NORMAL_Z[name], "x", f"Standard normal quantile at {name}",
         "workbook/reference/serving_queue.py NORMAL_Z"))],
    ("srv_rho_max", RHO_MAX, "fraction", "Cap on the prefill busy share in the steady state",
     "workbook/reference/serving_load.py steady_state"),
    ("srv_secant_step", SECANT_STEP, "fraction", "Tangent step of the decode step, and least gap between two "
     "refinements for their secant", "workbook/reference/serving_load.py SECANT_STEP"),
    ("srv_denom_min", DENOM_MIN, "x", "Floor of 1 − slope in the steady state's line",
     "workbook/reference/serving_load.py DENOM_MIN"),
]

_P = "{inference.prompt_tokens}"
_O = "{inference.output_tokens}"
_LAM = "{srv_load_rate_rps}"
_SEP = "{srv_prefill_separate_flag}=1"
_CTX = "srv_running_context_tokens"  # the running requests' mean context (serving_step)


def _terms(p: str, batch: str) -> dict[str, str]:
    """Prefill terms (both modes; the engine's selected) with ``{p}pf`` the window's prefill rows and
    ``{batch}`` the decoding requests."""
    pf = f"{p}_pf" if p != "srv_ssf" else "srv_ssfpf"
    return {
        f"{p}_rho_sep": f"={_LAM}*{{{pf}_prefill_s}}/{{{pf}_batch}}",
        f"{p}_room": f"=MAX(1,{{srv_eng_prefill_chunk_tokens}}-{{{batch}}})",
        f"{p}_steps_mixed": f"=ROUNDUP({_P}/{{{p}_room}}-c_srv_floor_eps,0)",
        f"{p}_rho": f"=IF({_SEP},{{{p}_rho_sep}},{_LAM}*{_P}*{{srv_marginal_prefill_s_per_token}})",
        f"{p}_fixed": f"=IF({_SEP},{{{pf}_prefill_s}},{{{p}_steps_mixed}}*MIN({_P},{{{p}_room}})"
        "*{srv_marginal_prefill_s_per_token})",
        f"{p}_waits": f"=IF({_SEP},{{srv_eng_scheduler_steps}}/c_two,1/c_two+{{{p}_steps_mixed}})",
    }


def _refinement(r: int) -> dict[str, str]:
    p = f"srv_ss{r}"
    q = f"srv_ss{r - 1}"
    prev_b = "1" if r == 1 else f"{{{q}_batch}}"
    prev_sat = "0" if r == 1 else f"{{{q}_sat}}"
    b0 = "1" if r == 1 else f"MAX({prev_b},1)"
    tangent = f"{{{p}_c}}*{{{p}_slope}}"
    secant = f"({{{q}_little}}-{{{p}_little}})/({{{q}_b0}}-{{{p}_b0}})"
    gap = f"ABS({{{q}_b0}}-{{{p}_b0}})>c_srv_secant_step*{{{p}_b0}}"
    last = f",{{{p}_valid}}=0,{{{p}_batch}}>{{srv_load_batch_cap_used}}" if r == REFINEMENTS else ""
    return {
        f"{p}_b0": f"={b0}",
        f"{p}_bt": f"={{{p}_b0}}*(1+c_srv_secant_step)",
        **decode_items(f"{p}_lo", f"{p}_b0", _CTX),
        **decode_items(f"{p}_hi", f"{p}_bt", _CTX),
        f"{p}_slope": f"=({{{p}_hi_step_s}}-{{{p}_lo_step_s}})/({{{p}_bt}}-{{{p}_b0}})",
        **prefill_items(f"{p}_pf", f"=MAX(1,{_LAM}*{{srv_eng_scheduler_steps}}*{{{p}_lo_step_s}})",
                        "srv_eng_prefill_chunk_tokens"),
        **_terms(p, f"{p}_b0"),
        f"{p}_c": f"=IF({{{p}_rho}}<1,{_LAM}*({{{p}_waits}}+{{srv_load_decode_steps_per_req}}/(1-{{{p}_rho}})),0)",
        f"{p}_little": f"={_LAM}*{{{p}_fixed}}+{{{p}_c}}*{{{p}_lo_step_s}}",
        f"{p}_g": f"={tangent}" if r == 1 else f"=IF({gap},{secant},{tangent})",
        f"{p}_denom": f"=1-{{{p}_g}}",
        f"{p}_line": f"=({{{p}_little}}-{{{p}_g}}*{{{p}_b0}})/MAX({{{p}_denom}},c_srv_denom_min)",
        f"{p}_valid": f"=IF(AND({{{p}_denom}}>0,{{{p}_line}}>0,{{{p}_line}}<={{srv_load_batch_cap_used}}),1,0)",
        f"{p}_pick": f"=IF({{{p}_valid}}=1,{{{p}_line}},MIN({{{p}_little}},{{srv_load_batch_cap_used}}))",
        f"{p}_stop": f"=IF(OR({prev_sat}=1,{{{p}_rho}}>=1),1,0)",
        f"{p}_next": f"=IF({{{p}_little}}>={prev_b},MAX({{{p}_pick}},{{{p}_little}}),"
        f"MIN({{{p}_pick}},{{{p}_little}}))",
        f"{p}_batch": f"=IF({{{p}_stop}}=1,{prev_b},{{{p}_next}})",
        f"{p}_sat": f"=IF(OR({{{p}_stop}}=1{last}),1,0)",
    }


_LAST = f"srv_ss{REFINEMENTS}"


def _tail_items(name: str) -> dict[str, str]:
    """TTFT and TPOT at a quantile (serving_queue): the scheduler wait's quantile, the prefill, the M/D/1 wait's
    exponential-tail quantile and the fixed time; TPOT plus z times the spread of the prompts arriving meanwhile."""
    q, z, rho, r = f"c_srv_q_{name}", f"c_srv_z_{name}", "{srv_load_prefill_busy_frac}", "{srv_load_pf_per_request_s}"
    return {
        f"srv_load_ttft_{name}_ms": f"=IF({{srv_load_saturated_flag}}=1,0,({{srv_load_service_s}}"
        "+{srv_eng_request_overhead_ms}/c_ms_per_s+({srv_load_sched_wait_steps}*{srv_ssf_step_s}"
        f"+{{srv_load_queue_wait_s}})*LN(1/(1-{q})))*c_ms_per_s)",
        f"srv_load_tpot_{name}_ms": f"={{srv_load_tpot_ms}}+{z}*SQRT({r}*{rho}*{{srv_load_tpot_ms}}/c_ms_per_s"
        f"/MAX({{srv_load_decode_steps_per_req}},1))/(1-{rho})*c_ms_per_s",
    }


def gated_wait(rho: str, half_cycle: str, r: str) -> str:
    """The queue's wait beyond an idle engine's half cycle (serving_queue.queue_wait_s) at the busy share
    ``rho``, half a cycle ``half_cycle`` and prefill time per request ``r`` (expressions; rho < 1)."""
    return (f"=(1/c_two+{rho})*(c_two*{half_cycle}/(1-{rho})+{r}*{rho}/(1-{rho}*{rho}))-{half_cycle}")


ITEMS = {
    "srv_attention_dp": "={inference.ep}",
    "srv_load_request_block_tokens": "=ROUNDUP({srv_running_context_tokens}/{srv_eng_block_size_tokens}-c_srv_floor_eps,0)"
    "*{srv_eng_block_size_tokens}",
    "srv_load_batch_cap": "=MIN(INT({srv_kv_tokens}/{srv_load_request_block_tokens}+c_srv_floor_eps),"
    "{srv_eng_max_num_seqs})",
    "srv_load_batch_cap_used": "=MAX(1,{srv_load_batch_cap})",
    **decode_items("srv_off", "srv_load_batch_cap_used", _CTX),
    "srv_offpf_chunk": f"=MAX({{srv_eng_max_num_batched_tokens}},{_P})",
    **prefill_items("srv_offpf", f"=MAX(1,INT({{srv_eng_max_num_batched_tokens}}/{_P}))", "srv_offpf_chunk"),
    "srv_off_pf_s_per_token": f"=IF({_SEP},{{srv_offpf_prefill_s}}/({{srv_offpf_batch}}*{_P}),"
    "{srv_marginal_prefill_s_per_token})",
    "srv_off_s_per_request": f"={_P}*{{srv_off_pf_s_per_token}}+{_O}*{{srv_off_step_s}}/{{srv_load_batch_cap_used}}",
    "srv_offline_tokens_per_s": f"={{srv_attention_dp}}*{_O}/{{srv_off_s_per_request}}",
    "srv_offline_rate_rps": f"={{srv_offline_tokens_per_s}}/{_O}",
    "srv_load_rate_rps": "=IF(ISBLANK({inference.arrival_rate_rps}),{srv_offline_rate_rps},"
    "{inference.arrival_rate_rps}/{inference.replicas})/{srv_attention_dp}",
    "srv_load_decode_steps_per_req": f"=MAX({_O}-1,0)",
    **{k: v for r in range(1, REFINEMENTS + 1) for k, v in _refinement(r).items()},
    "srv_load_saturated_flag": f"={{{_LAST}_sat}}",
    "srv_load_batch": f"=IF({{srv_load_saturated_flag}}=1,{{srv_load_batch_cap_used}},{{{_LAST}_batch}})",
    "srv_ssf_b": "=MAX({srv_load_batch},1)",
    **decode_items("srv_ssf", "srv_ssf_b", _CTX),
    **prefill_items("srv_ssfpf", f"=MAX(1,{_LAM}*{{srv_eng_scheduler_steps}}*{{srv_ssf_step_s}})",
                    "srv_eng_prefill_chunk_tokens"),
    **_terms("srv_ssf", "srv_load_batch"),
    "srv_load_prefill_busy_frac": "=MIN({srv_ssf_rho},c_srv_rho_max)",
    "srv_load_tpot_ms": "={srv_ssf_step_s}/(1-{srv_load_prefill_busy_frac})*c_ms_per_s",
    "srv_load_pf_per_request_s": f"={{srv_ssf_rho}}/{_LAM}",
    "srv_load_sched_wait_steps": f"=IF({_SEP},{{srv_ssf_waits}},1/c_two)",
    "srv_load_service_s": "=MAX(({srv_ssf_waits}-{srv_load_sched_wait_steps})*{srv_ssf_step_s}+{srv_ssf_fixed},"
    "{srv_pf1_prefill_s})",
    "srv_load_queue_wait_s": gated_wait("{srv_load_prefill_busy_frac}", "{srv_load_sched_wait_steps}*{srv_ssf_step_s}",
                                         "{srv_load_pf_per_request_s}"),
    "srv_load_ttft_ms": "=IF({srv_load_saturated_flag}=1,0,({srv_load_sched_wait_steps}*{srv_ssf_step_s}"
    "+{srv_load_service_s}+{srv_load_queue_wait_s}+{srv_eng_request_overhead_ms}/c_ms_per_s)*c_ms_per_s)",
    **{k: v for name in QUANTILES for k, v in _tail_items(name).items()},
    "srv_load_tokens_per_s": f"=IF({{srv_load_saturated_flag}}=1,{{srv_offline_tokens_per_s}},"
    f"{_LAM}*{_O}*{{srv_attention_dp}})",
    "srv_load_tokens_per_s_per_gpu": "={srv_load_tokens_per_s}/({inference.tp}*{inference.ep})",
}


def wait_slope(rho: str, half_cycle: str, r: str) -> str:
    """dW/drho of the queue's wait (serving_queue.queue_wait_slope_s), an expression: E_b + (1/2 + rho)·dE_b/drho."""
    e_b = f"(c_two*{half_cycle}/(1-{rho})+{r}*{rho}/(1-{rho}*{rho}))"
    de_b = f"(c_two*{half_cycle}/((1-{rho})*(1-{rho}))+{r}*(1+{rho}*{rho})/((1-{rho}*{rho})*(1-{rho}*{rho})))"
    return f"({e_b}+(1/c_two+{rho})*{de_b})"
