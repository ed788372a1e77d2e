"""Line items of the Inference sheet's largest-load block: the largest arrival rate meeting the TTFT
and TPOT targets, one quadratic per bound, one row block per refinement (docs/serving.md "Largest
load"; workbook/calc/serving_max_load.py)."""

from __future__ import annotations

from workbook.calc.serving_max_load import REFINEMENTS
from workbook.reference.serving_max_load import ROOT_DENOM_MIN
from workbook.sheets.serving_load import gated_wait, wait_slope
from workbook.sheets.serving_prefill import prefill_items
from workbook.sheets.serving_step import decode_items

_SRC = "workbook/reference/serving_max_load.py BINDS"
CONSTANTS = [
    ("srv_ml_root_denom_min", ROOT_DENOM_MIN, "x", "Floor of a bound's root denominator (no positive root: never binds)",
     "workbook/reference/serving_max_load.py smaller_root"),
    ("srv_ml_binds_ttft", 2.0, "code", "Largest load set by the TTFT target", _SRC),
    ("srv_ml_binds_cap", 3.0, "code", "Largest load set by the batch cap (KV pool / max_num_seqs)", _SRC),
    ("srv_ml_binds_offline", 4.0, "code", "Largest load set by the offline throughput", _SRC),
]

_S = "{inference.prompt_tokens}"
_SEP = "{srv_prefill_separate_flag}=1"
_CTX = "srv_running_context_tokens"  # the running requests' mean context (serving_step)
_M = "{srv_load_decode_steps_per_req}"
_TM = "{srv_marginal_prefill_s_per_token}"
_TF = "{srv_ml_ttft_target_s}"
_TP = "{srv_ml_tpot_target_s}"
_N = "{srv_eng_scheduler_steps}"
_CAP = "{srv_load_batch_cap_used}"


def _root(p: str, key: str, A: str, b: str, C: str) -> dict[str, str]:
    """Smaller root 2C/(b + sqrt(b² − 4AC)) of A·x² − b·x + C (0 when C <= 0; serving_max_load.smaller_root)."""
    k = f"{p}_{key}"
    return {
        f"{k}_qa": "=" + A, f"{k}_qb": "=" + b, f"{k}_qc": "=" + C,
        f"{k}_root": f"=IF({{{k}_qc}}<=0,0,c_two*{{{k}_qc}}/MAX({{{k}_qb}}+SQRT(MAX({{{k}_qb}}*{{{k}_qb}}"
        f"-c_two*c_two*{{{k}_qa}}*{{{k}_qc}},0)),c_srv_ml_root_denom_min))",
    }


def _refinement(r: int) -> dict[str, str]:
    p = f"srv_ml{r}"
    f = {k: "{" + f"{p}_{k}" + "}" for k in (
        "lam0", "b0", "slope", "intercept", "room", "steps_mixed", "r", "fixed", "waits", "flat", "g", "tf_u",
        "tl_u", "tl_v", "cap_t", "cap_G", "rps", "c", "tpot_rps", "ttft_rps", "wq", "tf_target", "w0", "ti_u", "wq_g", "wq0", "tf_v", "ti_v")}
    tf = f["tf_target"]
    lo_s, a, s, rr = f"{{{p}_lo_step_s}}", f["intercept"], f["slope"], f["r"]
    return {
        f"{p}_lam0": "=0" if r == 1 else f"={{srv_ml{r - 1}_rps}}",
        f"{p}_b0": "=1" if r == 1 else f"=MAX({{srv_ml{r - 1}_batch}},1)",
        f"{p}_b2": f"=c_two*{f['b0']}",
        **decode_items(f"{p}_lo", f"{p}_b0", _CTX),
        **decode_items(f"{p}_hi", f"{p}_b2", _CTX),
        f"{p}_slope": f"=({{{p}_hi_step_s}}-{lo_s})/{f['b0']}",
        f"{p}_intercept": f"=MAX(0,{lo_s}-{s}*{f['b0']})",
        **prefill_items(f"{p}_pf", f"=MAX(1,{f['lam0']}*{_N}*{lo_s})", "srv_eng_prefill_chunk_tokens"),
        **prefill_items(f"{p}_pf2", f"=c_two*{{{p}_pf_batch}}", "srv_eng_prefill_chunk_tokens"),
        f"{p}_room": f"=MAX(1,{{srv_eng_prefill_chunk_tokens}}-{f['b0']})",
        f"{p}_steps_mixed": f"=ROUNDUP({_S}/{f['room']}-c_srv_floor_eps,0)",
        f"{p}_r": f"=IF({_SEP},{{{p}_pf_prefill_s}}/{{{p}_pf_batch}},{_S}*{_TM})",
        f"{p}_fixed": f"=IF({_SEP},{{{p}_pf_prefill_s}},{f['steps_mixed']}*MIN({_S},{f['room']})*{_TM})",
        f"{p}_waits": f"=IF({_SEP},{_N}/c_two,1/c_two+{f['steps_mixed']})",
        f"{p}_flat": f"=IF({_SEP},{{srv_pf1_prefill_s}},{f['fixed']})",
        f"{p}_g": f"=IF({_SEP},({{{p}_pf2_prefill_s}}-{{{p}_pf_prefill_s}})/{{{p}_pf_batch}}*{_N}*{lo_s},0)",
        f"{p}_wrho": f"=MIN({f['lam0']}*{rr},c_srv_rho_max)",
        f"{p}_half": f"={f['w0']}*{lo_s}",
        f"{p}_wq": gated_wait(f"{{{p}_wrho}}", f"{{{p}_half}}", rr),
        f"{p}_wq_g": "=" + rr + "*" + wait_slope(f"{{{p}_wrho}}", f"{{{p}_half}}", rr),
        f"{p}_wq0": f"={f['wq']}-{f['wq_g']}*{f['lam0']}",
        f"{p}_tf_target": f"=MAX(0,{_TF}-{{srv_eng_request_overhead_ms}}/c_ms_per_s)",
        f"{p}_w0": f"=IF({_SEP},{f['waits']},1/c_two)",
        f"{p}_tf_u": f"=({tf}-{f['flat']}-{f['wq0']})/{f['waits']}",
        f"{p}_tf_v": f"={f['wq_g']}/{f['waits']}",
        f"{p}_tl_u": f"=({tf}-{f['fixed']}+{f['g']}*{f['lam0']}-{f['wq0']})/{f['waits']}",
        f"{p}_ti_u": f"=({tf}-{{srv_pf1_prefill_s}}-{f['wq0']})/{f['w0']}",
        f"{p}_ti_v": f"={f['wq_g']}/{f['w0']}",
        f"{p}_tl_v": f"=({f['g']}+{f['wq_g']})/{f['waits']}",
        f"{p}_cap_t": "={srv_off_step_s}",
        f"{p}_cap_G": f"={f['waits']}*{f['cap_t']}+{f['fixed']}",
        **_root(p, "tp", f"{s}*{f['waits']}*{_TP}*{rr}", f"{s}*({f['waits']}*{_TP}+{f['fixed']}+{_M}*{_TP})+{_TP}*{rr}",
                f"{_TP}-{a}"),
        **_root(p, "tf", f"{rr}*({f['tf_v']}+{s}*{tf})+{s}*{_M}*{f['tf_v']}",
                f"({f['tf_u']}-{a})*{rr}+{f['tf_v']}+{s}*({tf}+{_M}*{f['tf_u']})", f"{f['tf_u']}-{a}"),
        **_root(p, "tl", f"{rr}*({f['tl_v']}+{s}*{tf})+{s}*{_M}*{f['tl_v']}",
                f"({f['tl_u']}-{a})*{rr}+{f['tl_v']}+{s}*({tf}+{_M}*{f['tl_u']})", f"{f['tl_u']}-{a}"),
        **_root(p, "ti", f"{rr}*({f['ti_v']}+{s}*{tf})+{s}*{_M}*{f['ti_v']}",
                f"({f['ti_u']}-{a})*{rr}+{f['ti_v']}+{s}*({tf}+{_M}*{f['ti_u']})", f"{f['ti_u']}-{a}"),
        **_root(p, "cap", f"{f['cap_G']}*{rr}", f"{f['cap_G']}+{_M}*{f['cap_t']}+{_CAP}*{rr}", _CAP),
        f"{p}_tpot_rps": f"=IF({{srv_tpot_target_given_flag}}=1,{{{p}_tp_root}},{{srv_ml_no_bound_rps}})",
        f"{p}_ttft_rps": f"=IF({{srv_ttft_target_given_flag}}=1,MIN({{{p}_tf_root}},{{{p}_tl_root}},{{{p}_ti_root}}),"
        "{srv_ml_no_bound_rps})",
        f"{p}_rps": f"=MIN({f['tpot_rps']},{f['ttft_rps']},{{{p}_cap_root}},{{srv_offline_rate_rps}})",
        f"{p}_c": f"={f['rps']}*({f['waits']}+{_M}/(1-MIN({f['rps']}*{rr},c_srv_rho_max)))",
        f"{p}_batch": f"=IF({f['rps']}>0,({f['rps']}*{f['fixed']}+{f['c']}*{a})/MAX(1-{f['c']}*{s},1-c_srv_rho_max),0)",
    }


_L = f"srv_ml{REFINEMENTS}"
_R = "{srv_max_load_rps}"
_TD = f"({{{_L}_intercept}}+{{{_L}_slope}}*MAX({{srv_max_load_batch}},1))"
_RHO = f"MIN({_R}*{{{_L}_r}},c_srv_rho_max)"


ITEMS = {
    "srv_ml_ttft_target_s": "=IF(ISBLANK({inference.ttft_target_ms}),0,{inference.ttft_target_ms}/c_ms_per_s)",
    "srv_ml_tpot_target_s": "=IF(ISBLANK({inference.tpot_target_ms}),0,{inference.tpot_target_ms}/c_ms_per_s)",
    "srv_ml_no_bound_rps": "=c_two*{srv_offline_rate_rps}",
    **{k: v for r in range(1, REFINEMENTS + 1) for k, v in _refinement(r).items()},
    "srv_max_load_targets_given": "={srv_ttft_target_given_flag}+{srv_tpot_target_given_flag}",
    "srv_max_load_rps": f"={{{_L}_rps}}",
    "srv_max_load_rps_all": f"={_R}*{{inference.replicas}}",
    "srv_max_load_batch": f"={{{_L}_batch}}",
    "srv_max_load_binds": f"=IF({_R}<=0,0,({_R}={{{_L}_tpot_rps}})+({_R}<>{{{_L}_tpot_rps}})*(({_R}={{{_L}_ttft_rps}})"
    f"*c_srv_ml_binds_ttft+({_R}<>{{{_L}_ttft_rps}})*(({_R}={{{_L}_cap_root}})*c_srv_ml_binds_cap"
    f"+({_R}<>{{{_L}_cap_root}})*c_srv_ml_binds_offline)))",
    "srv_max_load_tpot_ms": f"=IF({_R}>0,{_TD}/(1-{_R}*{{{_L}_r}})*c_ms_per_s,0)",
    "srv_max_load_rho": f"={_RHO}",
    "srv_max_load_queue_wait_s": gated_wait("{srv_max_load_rho}", f"{{{_L}_w0}}*{_TD}", f"{{{_L}_r}}"),
    "srv_max_load_ttft_ms": f"=IF({_R}>0,({{{_L}_w0}}*{_TD}+MAX(({{{_L}_waits}}-{{{_L}_w0}})*{_TD}+{{{_L}_fixed}},"
    "{srv_pf1_prefill_s})+{srv_max_load_queue_wait_s}+{srv_eng_request_overhead_ms}/c_ms_per_s)*c_ms_per_s,0)",
    "srv_max_load_concurrency": f"={{srv_max_load_rps_all}}*({{srv_max_load_ttft_ms}}+{{inference.output_tokens}}"
    "*{srv_max_load_tpot_ms})/c_ms_per_s",
    "srv_max_load_tokens_per_s": f"={_R}*{{inference.output_tokens}}",
    "srv_max_load_tokens_per_s_per_gpu": "={srv_max_load_tokens_per_s}/({inference.tp}*{inference.ep})",
}
