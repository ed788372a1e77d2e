"""Inference sheet, largest-load block: the largest arrival rate per serving group whose steady
state meets the scenario's TTFT and TPOT targets, in closed form (docs/serving.md "Largest load";
workbook.reference.serving_max_load.max_load_closed_form).

One row block per refinement (serving_max_load.MAX_LOAD_REFINEMENTS): the decode step at b0 and
2·b0 (slope and intercept), the prefill of the prompts of one scheduling window (k0) and of 2·k0
(separate prefill: how the prefill part of TTFT grows with the rate), the prefill terms, then one
quadratic per bound (TPOT target, TTFT target in two pieces, the batch cap) and the least of them and
the offline rate. A blank target has no bound: its row holds twice the offline rate, which never
binds. Binds: 0 nothing meets the targets, 1 TPOT, 2 TTFT, 3 batch cap, 4 offline throughput.
"""

from __future__ import annotations

import math

from workbook.calc.base import Context, Q
from workbook.calc.serving_memory import engine_of, ep_overlap_frac
from workbook.calc.serving_prefill import prefill_quantities, prefill_values
from workbook.calc.serving_step import decode, decode_kwargs, decode_quantities, decode_values
from workbook.reference import serving_closed_loop as cl
from workbook.reference import serving_load as sl
from workbook.reference import serving_max_load as ml
from workbook.reference import serving_queue as sq
from workbook.reference.prefill_time import request_overhead_s
from workbook.reference.serving_shape import model_shape
from workbook.units import MS_PER_S

_S = "docs/serving.md"
REFINEMENTS = ml.MAX_LOAD_REFINEMENTS
#: the three quadratics of one bound: name, what
_ROOTS = [("tp", "TPOT target"), ("tf", "TTFT target, flat prefill piece"), ("tl", "TTFT target, rising prefill piece"),
          ("ti", "TTFT target, idle-prefill floor"), ("cap", "batch cap")]


def _refinement_quantities(r: int) -> list[Q]:
    p, w = f"srv_ml{r}", f"largest load, refinement {r}"
    roots = [q for key, what in _ROOTS for q in (
        Q(f"{p}_{key}_qa", "x", f"{w.capitalize()}: {what}, square coefficient", _S),
        Q(f"{p}_{key}_qb", "x", f"{w.capitalize()}: {what}, linear coefficient", _S),
        Q(f"{p}_{key}_qc", "x", f"{w.capitalize()}: {what}, constant (<= 0: missed at any load)", _S),
        Q(f"{p}_{key}_root", "requests/s", f"{w.capitalize()}: {what}, smaller root", _S))]
    return [
        Q(f"{p}_lam0", "requests/s", f"{w.capitalize()}: rate the terms are taken at", _S),
        Q(f"{p}_b0", "sequences", f"{w.capitalize()}: batch linearised at (at least 1)", _S),
        Q(f"{p}_b2", "sequences", f"{w.capitalize()}: twice that batch", _S),
        *decode_quantities(f"{p}_lo", f"({w}) at the batch"),
        *decode_quantities(f"{p}_hi", f"({w}) at twice the batch"),
        Q(f"{p}_slope", "s", f"{w.capitalize()}: decode step per extra request", _S),
        Q(f"{p}_intercept", "s", f"{w.capitalize()}: decode step at batch 0 (linear fit, at least 0)", _S),
        *prefill_quantities(f"{p}_pf", f"({w}) of the prompts arriving in one window"),
        *prefill_quantities(f"{p}_pf2", f"({w}) of twice those prompts"),
        Q(f"{p}_room", "tokens", f"{w.capitalize()}: prompt tokens a mixed step has room for", _S),
        Q(f"{p}_steps_mixed", "steps", f"{w.capitalize()}: mixed steps a prompt needs", _S),
        Q(f"{p}_r", "s", f"{w.capitalize()}: prefill busy time per request (rho = rate x this)", _S),
        Q(f"{p}_fixed", "s", f"{w.capitalize()}: prefill part of TTFT", _S),
        Q(f"{p}_waits", "steps", f"{w.capitalize()}: decode steps a new request waits", _S),
        Q(f"{p}_flat", "s", f"{w.capitalize()}: prefill part of TTFT at one prompt per window", _S),
        Q(f"{p}_g", "s/(requests/s)", f"{w.capitalize()}: growth of the prefill part of TTFT with the rate", _S),
        Q(f"{p}_w0", "steps", f"{w.capitalize()}: decode steps a new request waits for the scheduler", _S),
        Q(f"{p}_wrho", "fraction", f"{w.capitalize()}: prefill busy share at the rate the terms are taken at", _S),
        Q(f"{p}_half", "s", f"{w.capitalize()}: half a scheduling cycle (the scheduler wait of an idle engine)", _S),
        Q(f"{p}_wq", "s", f"{w.capitalize()}: the queue's wait (gated cycles) at the rate the terms are taken at", _S),
        Q(f"{p}_wq_g", "s/(requests/s)", f"{w.capitalize()}: growth of that wait per request/s (tangent)", _S),
        Q(f"{p}_wq0", "s", f"{w.capitalize()}: the tangent's wait at rate 0", _S),
        Q(f"{p}_tf_target", "s", f"{w.capitalize()}: TTFT target less the fixed time per request (at least 0)", _S),
        Q(f"{p}_ti_u", "s", f"{w.capitalize()}: decode step that leaves the TTFT target at rate 0 (idle-prefill floor)", _S),
        Q(f"{p}_ti_v", "s/(requests/s)", f"{w.capitalize()}: fall of that step per request/s (idle-prefill floor)", _S),
        Q(f"{p}_tf_u", "s", f"{w.capitalize()}: decode step that leaves the TTFT target at rate 0 (flat piece)", _S),
        Q(f"{p}_tf_v", "s/(requests/s)", f"{w.capitalize()}: fall of that step per request/s (flat piece)", _S),
        Q(f"{p}_tl_u", "s", f"{w.capitalize()}: decode step that leaves the TTFT target at rate 0 (rising piece)", _S),
        Q(f"{p}_tl_v", "s/(requests/s)", f"{w.capitalize()}: fall of that step per request/s", _S),
        Q(f"{p}_cap_t", "s", f"{w.capitalize()}: decode step at the batch cap (offline rows)", _S),
        Q(f"{p}_cap_G", "s", f"{w.capitalize()}: TTFT at the batch cap", _S),
        *roots,
        Q(f"{p}_tpot_rps", "requests/s", f"{w.capitalize()}: TPOT bound (no target: twice the offline rate)", _S),
        Q(f"{p}_ttft_rps", "requests/s", f"{w.capitalize()}: TTFT bound (no target: twice the offline rate)", _S),
        Q(f"{p}_rps", "requests/s", f"{w.capitalize()}: largest rate (least bound)", _S),
        Q(f"{p}_c", "s", f"{w.capitalize()}: requests in decode per second of decode step at that rate", _S),
        Q(f"{p}_batch", "sequences", f"{w.capitalize()}: batch at that rate (Little's law)", _S),
    ]


_LAST = f"srv_ml{REFINEMENTS}"

QUANTITIES = [
    Q("srv_ml_ttft_target_s", "s", "Largest load: TTFT target (0 = none)", _S),
    Q("srv_ml_tpot_target_s", "s", "Largest load: TPOT target (0 = none)", _S),
    Q("srv_ml_no_bound_rps", "requests/s", "Largest load: bound of a missing target (twice the offline rate: never binds)", _S),
    *[q for r in range(1, REFINEMENTS + 1) for q in _refinement_quantities(r)],
    Q("srv_max_load_targets_given", "count", "Largest load: targets given (0 = no target: the largest stable load)", _S),
    Q("srv_max_load_rps", "requests/s", "Largest arrival rate per serving group that meets the TTFT and TPOT targets", _S),
    Q("srv_max_load_rps_all", "requests/s", "Largest arrival rate that meets the targets, all replicas", _S),
    Q("srv_max_load_batch", "sequences", "Requests in decode at the largest load", _S),
    Q("srv_max_load_binds", "code", "What sets the largest load: 0 nothing meets the targets, 1 TPOT, 2 TTFT, 3 batch cap, "
      "4 offline throughput", _S),
    Q("srv_max_load_tpot_ms", "ms", "TPOT at the largest load (linear fit; 0 = no load)", _S),
    Q("srv_max_load_rho", "fraction", "Prefill busy share at the largest load", _S),
    Q("srv_max_load_queue_wait_s", "s", "The queue's wait at the largest load (gated cycles)", _S),
    Q("srv_max_load_ttft_ms", "ms", "TTFT at the largest load (linear fit; 0 = no load)", _S),
    Q("srv_max_load_concurrency", "requests", "Largest concurrency meeting the targets, all replicas: clients the "
      "largest rate keeps busy (rate x (TTFT + O x TPOT), the closed loop's Little's law; 0 = none)", _S),
    Q("srv_max_load_tokens_per_s", "tokens/s", "Output tokens/s of one serving group at the largest load", _S),
    Q("srv_max_load_tokens_per_s_per_gpu", "tokens/s", "Output tokens/s per GPU at the largest load", _S),
]


def _roots(p: str, key: str, A: float, b: float, C: float) -> dict[str, float]:
    return {f"{p}_{key}_qa": A, f"{p}_{key}_qb": b, f"{p}_{key}_qc": C,
            f"{p}_{key}_root": ml.smaller_root(A=A, b=b, C=C)}


def compute(ctx: Context) -> dict[str, float]:
    inf, q = ctx.s.inference, ctx.q
    eng = engine_of(ctx)
    sep = eng.prefill_mode == "separate"
    S, O = float(inf.prompt_tokens), float(inf.output_tokens)
    ctx_tok = float(q["srv_running_context_tokens"])
    cap, off = q["srv_load_batch_cap_used"], q["srv_offline_rate_rps"]
    m, t_m, n = q["srv_load_decode_steps_per_req"], q["srv_marginal_prefill_s_per_token"], float(eng.scheduler_steps)
    Tf = 0.0 if inf.ttft_target_ms is None else inf.ttft_target_ms / MS_PER_S
    Tp = 0.0 if inf.tpot_target_ms is None else inf.tpot_target_ms / MS_PER_S
    none = 2.0 * off
    out = {"srv_ml_ttft_target_s": Tf, "srv_ml_tpot_target_s": Tp, "srv_ml_no_bound_rps": none}
    lam, B = 0.0, 1.0
    for r in range(1, REFINEMENTS + 1):
        p = f"srv_ml{r}"
        b0 = max(B, 1.0)
        lo, hi = decode(ctx, b0, ctx_tok), decode(ctx, 2 * b0, ctx_tok)
        s = (hi["step_s"] - lo["step_s"]) / b0
        a = max(0.0, lo["step_s"] - s * b0)  # no negative step at batch 0 (reference.serving_max_load)
        pf = prefill_values(ctx, f"{p}_pf", max(1.0, lam * n * lo["step_s"]), float(eng.prefill_chunk_tokens))
        k0, t_k = pf[f"{p}_pf_batch"], pf[f"{p}_pf_prefill_s"]
        pf2 = prefill_values(ctx, f"{p}_pf2", 2 * k0, float(eng.prefill_chunk_tokens))
        room = max(1.0, eng.prefill_chunk_tokens - b0)
        steps = float(math.ceil(S / room - 1e-9))
        rr = t_k / k0 if sep else S * t_m
        fixed = t_k if sep else steps * min(S, room) * t_m
        waits = n / 2.0 if sep else 0.5 + steps
        flat = q["srv_pf1_prefill_s"] if sep else fixed
        g = (pf2[f"{p}_pf2_prefill_s"] - t_k) / k0 * n * lo["step_s"] if sep else 0.0
        w0 = sl.sched_wait_steps(eng, waits)
        wkw = dict(rho=min(lam * rr, ml.RHO_MAX), cycle_s=2 * w0 * lo["step_s"], service_s=rr)
        wq, wq_g = sq.queue_wait_s(**wkw), rr * sq.queue_wait_slope_s(**wkw)
        wq0 = wq - wq_g * lam
        Tt = max(0.0, Tf - request_overhead_s(eng))
        u1, u2, v = (Tt - flat - wq0) / waits, (Tt - fixed + g * lam - wq0) / waits, (g + wq_g) / waits
        u3, v1, v3 = (Tt - q["srv_pf1_prefill_s"] - wq0) / w0, wq_g / waits, wq_g / w0
        t_c = q["srv_off_step_s"]
        G = waits * t_c + fixed
        out.update({f"{p}_lam0": lam, f"{p}_b0": b0, f"{p}_b2": 2 * b0, **decode_values(f"{p}_lo", lo),
                    **decode_values(f"{p}_hi", hi), f"{p}_slope": s, f"{p}_intercept": a, **pf, **pf2,
                    f"{p}_room": room, f"{p}_steps_mixed": steps, f"{p}_r": rr, f"{p}_fixed": fixed,
                    f"{p}_waits": waits, f"{p}_flat": flat, f"{p}_g": g, f"{p}_tf_u": u1, f"{p}_tl_u": u2,
                    f"{p}_tl_v": v, f"{p}_cap_t": t_c, f"{p}_cap_G": G, f"{p}_wq": wq, f"{p}_tf_target": Tt, f"{p}_wrho": wkw["rho"],
                    f"{p}_half": w0 * lo["step_s"],
                    f"{p}_w0": w0, f"{p}_ti_u": u3, f"{p}_wq_g": wq_g, f"{p}_wq0": wq0, f"{p}_tf_v": v1,
                    f"{p}_ti_v": v3,
                    **_roots(p, "tp", s * waits * Tp * rr, s * (waits * Tp + fixed + m * Tp) + Tp * rr, Tp - a),
                    **_roots(p, "tf", rr * (v1 + s * Tt) + s * m * v1, (u1 - a) * rr + v1 + s * (Tt + m * u1), u1 - a),
                    **_roots(p, "tl", rr * (v + s * Tt) + s * m * v, (u2 - a) * rr + v + s * (Tt + m * u2), u2 - a),
                    **_roots(p, "ti", rr * (v3 + s * Tt) + s * m * v3, (u3 - a) * rr + v3 + s * (Tt + m * u3), u3 - a),
                    **_roots(p, "cap", G * rr, G + m * t_c + cap * rr, cap)})
        tpot_rps = out[f"{p}_tp_root"] if inf.tpot_target_ms is not None else none
        ttft_rps = min(out[f"{p}_tf_root"], out[f"{p}_tl_root"], out[f"{p}_ti_root"]) \
            if inf.ttft_target_ms is not None else none
        lam = min(tpot_rps, ttft_rps, out[f"{p}_cap_root"], off)
        c = lam * (waits + m / (1 - min(lam * rr, ml.RHO_MAX)))
        B = (lam * fixed + c * a) / max(1 - c * s, 1 - ml.RHO_MAX) if lam > 0 else 0.0
        out.update({f"{p}_tpot_rps": tpot_rps, f"{p}_ttft_rps": ttft_rps, f"{p}_rps": lam, f"{p}_c": c,
                    f"{p}_batch": B})
    kw = decode_kwargs(ctx)
    ref = ml.max_load_closed_form(
        model_shape(ctx.model), hw=kw["hw"], engine=eng, prompt_tokens=S, output_tokens=O,
        ttft_target_s=math.inf if inf.ttft_target_ms is None else Tf,
        tpot_target_s=math.inf if inf.tpot_target_ms is None else Tp, tp=inf.tp, ep=inf.ep, kv_tokens=None,
        max_num_seqs=cap, weight_precision=inf.weight_precision, kv_precision=inf.kv_precision,
        redundant_experts=inf.redundant_experts, ep_overlap_frac=ep_overlap_frac(ctx), ep_nodes=kw["ep_nodes"],
        output_lengths=inf.output_lengths)
    lam = ref["request_rate_per_s"]
    given = lam > 0
    rho_ml = min(lam * out[f"{_LAST}_r"], ml.RHO_MAX)
    half_ml = out[f"{_LAST}_w0"] * (out[f"{_LAST}_intercept"] + out[f"{_LAST}_slope"] * max(ref["batch"], 1.0))
    out.update({
        "srv_max_load_targets_given": float((inf.ttft_target_ms is not None) + (inf.tpot_target_ms is not None)),
        "srv_max_load_rps": lam,
        "srv_max_load_rps_all": lam * inf.replicas,
        "srv_max_load_batch": ref["batch"],
        "srv_max_load_binds": ref["binds"],
        "srv_max_load_tpot_ms": ref["tpot_s"] * MS_PER_S if given else 0.0,
        "srv_max_load_rho": rho_ml,
        "srv_max_load_queue_wait_s": sq.queue_wait_s(rho=rho_ml, cycle_s=2 * half_ml, service_s=out[f"{_LAST}_r"]),
        "srv_max_load_ttft_ms": ref["ttft_s"] * MS_PER_S if given else 0.0,
        "srv_max_load_concurrency": cl.largest_concurrency(max_rate_rps=lam * inf.replicas, ttft_s=ref["ttft_s"],
                                                           tpot_s=ref["tpot_s"], output_tokens=O) if given else 0.0,
        "srv_max_load_tokens_per_s": ref["throughput_tok_per_s"],
        "srv_max_load_tokens_per_s_per_gpu": ref["per_gpu_tok_per_s"],
    })
    return out
