"""Line items of the Inference sheet's static-batch and closed-loop blocks (docs/serving.md "Three load
models"; workbook/calc/serving_load_models.py)."""

from __future__ import annotations

from workbook.calc.serving_load_models import LOADS
from workbook.sheets.serving_load import gated_wait
from workbook.sheets.serving_prefill import prefill_items
from workbook.sheets.serving_step import decode_items

TABLES = {
    "srv_load_model": ("name", [(name, {"position": float(i + 1)}) for i, name in enumerate(LOADS)],
                       "docs/serving.md (three load models)"),
}

_CTX = "decode_context_tokens"  # a static batch runs every request to O together: S_in + O/2
_RUN = "srv_running_context_tokens"  # closed-loop clients: the running requests' mean (serving_step)
_O = "{inference.output_tokens}"
_M = "{srv_load_decode_steps_per_req}"
_CAP = "{srv_load_batch_cap_used}"
_OV = "{srv_request_overhead_s}"
_GPUS = "({inference.tp}*{inference.ep})"


def _chord(target: str, given: str, one: str, at_cap: str) -> str:
    """Batch where the chord from (1, one) to (cap, at_cap) reaches ``target`` (serving_closed_loop.chord_batch);
    the cap when ``given`` (an input) is blank, 0 when batch 1 already misses."""
    return (f"=IF(ISBLANK({given}),{_CAP},({target}>={one})*(1+({target}-{one})*({_CAP}-1)"
            f"/MAX({at_cap}-{one},c_srv_denom_min)))")


def _root(q: str, fixed: str) -> str:
    """Smaller root 2b/(q + sqrt(q² − 4·T·r·b)) of the closed loop's quadratic (serving_closed_loop)."""
    return (f"=c_two*{{srv_cl_engine_clients}}/({q}+SQRT(MAX({q}*{q}-c_two*c_two*{fixed}*{{srv_cl_r}}"
            "*{srv_cl_engine_clients},0)))")


def _wait(rate: str) -> str:
    """The queue's wait at ``rate`` (serving_queue.queue_wait_s; half a cycle = the scheduler wait)."""
    return gated_wait(f"MIN({rate}*{{srv_cl_r}},c_srv_rho_max)", "{srv_cl_sched_wait_s}", "{srv_cl_r}")


ITEMS = {
    "srv_load_model_position": "=INDEX(t_srv_load_model_position,MATCH({inference.load},t_srv_load_model_name,0))",
    "srv_request_overhead_s": "={srv_eng_request_overhead_ms}/c_ms_per_s",
    "srv_st_batch": "={inference.batch}",
    "srv_st_rank_batch": "=MAX({srv_st_batch}/{srv_attention_dp},1)",
    **decode_items("srv_st", "srv_st_rank_batch", _CTX),
    **prefill_items("srv_stpf", "={srv_st_rank_batch}", "srv_eng_prefill_chunk_tokens"),
    "srv_static_fits_flag": "=IF({srv_st_rank_batch}<={srv_load_batch_cap},1,0)",
    "srv_static_ttft_ms": f"=({{srv_stpf_prefill_s}}+{_OV})*c_ms_per_s",
    "srv_static_tpot_ms": "={srv_st_step_s}*c_ms_per_s",
    "srv_static_wall_s": f"={{srv_stpf_prefill_s}}+{_OV}+{_M}*{{srv_st_step_s}}",
    "srv_static_tokens_per_s": f"={{srv_st_batch}}*{_O}/{{srv_static_wall_s}}",
    "srv_static_tokens_per_s_per_gpu": f"={{srv_static_tokens_per_s}}/{_GPUS}",
    **prefill_items("srv_stcpf", f"={_CAP}", "srv_eng_prefill_chunk_tokens"),
    "srv_static_tpot_batch": _chord("{inference.tpot_target_ms}/c_ms_per_s", "{inference.tpot_target_ms}",
                                    "{srv_ss1_lo_step_s}", "{srv_off_step_s}"),
    "srv_static_ttft_batch": _chord(f"({{inference.ttft_target_ms}}/c_ms_per_s-{_OV})", "{inference.ttft_target_ms}",
                                    "{srv_pf1_prefill_s}", "{srv_stcpf_prefill_s}"),
    "srv_static_max_batch": f"={{srv_attention_dp}}*MAX(0,INT(MIN({_CAP},{{srv_static_tpot_batch}},"
    "{srv_static_ttft_batch})+c_srv_floor_eps))",
    "srv_cl_clients": "=IF(ISBLANK({inference.concurrency}),{inference.batch},{inference.concurrency})"
    "/{inference.replicas}/{srv_attention_dp}",
    "srv_cl_engine_clients": f"=MIN({{srv_cl_clients}},{_CAP})",
    "srv_cl_b": "=MAX({srv_cl_engine_clients},1)",
    **decode_items("srv_cl", "srv_cl_b", _RUN),
    "srv_cl_r": "={inference.prompt_tokens}*{srv_off_pf_s_per_token}",
    "srv_cl_sched_wait_s": "=IF({srv_prefill_separate_flag}=1,{srv_eng_scheduler_steps}/c_two,1/c_two)*{srv_cl_step_s}",
    "srv_cl_fixed_s": f"={{srv_cl_sched_wait_s}}+{{srv_pf1_prefill_s}}+{_OV}",
    "srv_cl_q1": f"={{srv_cl_fixed_s}}+{_O}*{{srv_cl_step_s}}+{{srv_cl_engine_clients}}*{{srv_cl_r}}",
    "srv_cl_rate1": _root("{srv_cl_q1}", "{srv_cl_fixed_s}"),
    "srv_cl_wait1": _wait("{srv_cl_rate1}"),
    "srv_cl_q2": "={srv_cl_q1}+{srv_cl_wait1}",
    "srv_cl_rate": _root("{srv_cl_q2}", "({srv_cl_fixed_s}+{srv_cl_wait1})"),
    "srv_cl_rho": "=MIN({srv_cl_rate}*{srv_cl_r},c_srv_rho_max)",
    "srv_cl_queue_wait_s": _wait("{srv_cl_rate}"),
    "srv_cl_admission_wait_s": "=({srv_cl_clients}-{srv_cl_engine_clients})/{srv_cl_rate}",
    "srv_conc_ttft_ms": "=({srv_cl_fixed_s}+{srv_cl_queue_wait_s}+{srv_cl_admission_wait_s})*c_ms_per_s",
    "srv_conc_tpot_ms": "={srv_cl_step_s}/(1-{srv_cl_rho})*c_ms_per_s",
    "srv_conc_tokens_per_s": f"={{srv_attention_dp}}*{{srv_cl_rate}}*{_O}",
    "srv_conc_tokens_per_s_per_gpu": f"={{srv_conc_tokens_per_s}}/{_GPUS}",
}
