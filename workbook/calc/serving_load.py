"""Inference sheet, engine load block: offline throughput and the steady state of continuous
batching under the scenario's arrival rate (docs/serving.md "Serving under load";
workbook.reference.serving_load.offline_throughput and steady_state).

The reference solves Little's law B = L(B) a fixed number of times (serving_load.DEFAULT_REFINEMENTS,
no convergence loop), so the sheet holds one row block per refinement: the decode step at the
batch b0 and at b0·(1 + SECANT_STEP) (the tangent), the prefill terms (separate prefill of the prompts
that arrived during the scheduling window, or chunks mixed into decode at their marginal cost),
L(b0), the secant of L through the previous refinement's point (the first: c times the tangent),
where that line crosses B = L, the new batch bracketed by the fixed-point step L(b0), and whether
the load saturates (prefill takes the GPU; at the last refinement also no crossing below the cap).
The rows of a refinement after saturation carry the batch on and are not used. A blank arrival rate means offline: the group is loaded at
its offline request rate. The rows' rate is per attention-DP rank (the scenario's rate / replicas /
DP, workbook.reference.attention_dp: with EP > 1 each EP rank decodes its own requests), the batch
a rank's; the group's throughput is DP times a rank's.
"""

from __future__ import annotations

import math

from workbook.calc.base import Context, Q
from workbook.calc.serving_memory import engine_of, ep_overlap_frac
from workbook.calc.serving_prefill import prefill_quantities, prefill_values
from workbook.calc.serving_step import decode, decode_kwargs, decode_quantities, decode_values
from workbook.reference import serving_load as sl
from workbook.reference import serving_queue as sq
from workbook.reference.attention_dp import attention_dp_degree
from workbook.reference.serving_shape import model_shape
from workbook.units import MS_PER_S

_S = "docs/serving.md"
REFINEMENTS = sl.DEFAULT_REFINEMENTS
#: the steady state's cap on the prefill busy share (serving_load.steady_state)
RHO_MAX = sq.RHO_MAX


def _refinement_quantities(r: int) -> list[Q]:
    p = f"srv_ss{r}"
    w = f"refinement {r}"
    return [
        Q(f"{p}_b0", "sequences", f"Load, {w}: batch Little's law is evaluated at (at least 1)", _S),
        Q(f"{p}_bt", "sequences", f"Load, {w}: that batch plus the tangent step (slope point)", _S),
        *decode_quantities(f"{p}_lo", f"(load, {w}) at the batch"),
        *decode_quantities(f"{p}_hi", f"(load, {w}) at the slope point"),
        Q(f"{p}_slope", "s", f"Load, {w}: decode step per extra request (tangent)", _S),
        *prefill_quantities(f"{p}_pf", f"(load, {w}) of the prompts arriving in one scheduling window"),
        *_terms_quantities(p, w),
        Q(f"{p}_c", "s", f"Load, {w}: requests in decode per second of decode step (Little's law)", _S),
        Q(f"{p}_little", "sequences", f"Load, {w}: Little's law's batch at the decode step of this batch", _S),
        Q(f"{p}_g", "x", f"Load, {w}: slope of that batch in the batch (secant to the previous refinement, "
          "or c times the tangent)", _S),
        Q(f"{p}_denom", "x", f"Load, {w}: 1 − slope (the line crosses B = its batch while positive)", _S),
        Q(f"{p}_line", "sequences", f"Load, {w}: batch where the line crosses Little's law", _S),
        Q(f"{p}_valid", "0/1", f"Load, {w}: the line crosses at a batch in (0, cap]", _S),
        Q(f"{p}_pick", "sequences", f"Load, {w}: the line's batch, or the fixed-point step (at most the cap)", _S),
        Q(f"{p}_next", "sequences", f"Load, {w}: that batch, at least the fixed-point step towards the "
          "fixed point", _S),
        Q(f"{p}_stop", "0/1", f"Load, {w}: saturated before this refinement's batch (prefill takes the GPU)", _S),
        Q(f"{p}_batch", "sequences", f"Load, {w}: batch in decode (Little's law)", _S),
        Q(f"{p}_sat", "0/1", f"Load, {w}: saturated (prefill takes the GPU; last refinement: no crossing below "
          "the cap)", _S),
    ]


def _terms_quantities(p: str, w: str) -> list[Q]:
    return [
        Q(f"{p}_rho_sep", "fraction", f"Load, {w}: prefill busy share, separate prefill steps", _S),
        Q(f"{p}_room", "tokens", f"Load, {w}: prompt tokens a mixed step has room for", _S),
        Q(f"{p}_steps_mixed", "steps", f"Load, {w}: mixed steps a prompt needs", _S),
        Q(f"{p}_rho", "fraction", f"Load, {w}: prefill busy share (engine's prefill mode)", _S),
        Q(f"{p}_fixed", "s", f"Load, {w}: prefill part of TTFT", _S),
        Q(f"{p}_waits", "steps", f"Load, {w}: decode steps a new request waits", _S),
    ]


QUANTITIES = [
    Q("srv_attention_dp", "ranks", "Attention-DP ranks of a serving group (EP: each EP rank attends its own requests)", _S),
    Q("srv_load_request_block_tokens", "tokens", "Tokens a running request occupies on average (the running requests' mean context, whole blocks)", _S),
    Q("srv_load_batch_cap", "sequences", "Largest running batch: KV pool over the mean footprint, max_num_seqs", _S),
    Q("srv_load_batch_cap_used", "sequences", "Batch cap the load rows use (at least 1; the fit check fails below)", _S),
    *decode_quantities("srv_off", "offline, at the batch cap"),
    Q("srv_offpf_chunk", "tokens", "Offline prefill chunk: the token budget, at least one prompt", _S),
    *prefill_quantities("srv_offpf", "offline, at the engine's token budget"),
    Q("srv_off_pf_s_per_token", "s", "Offline prefill time per prompt token (separate steps, or marginal)", _S),
    Q("srv_off_s_per_request", "s", "Offline GPU time per request (prefill + its share of decode steps)", _S),
    Q("srv_offline_tokens_per_s", "tokens/s", "Offline output tokens/s of one serving group", _S),
    Q("srv_offline_rate_rps", "requests/s", "Offline request rate of one serving group", _S),
    Q("srv_load_rate_rps", "requests/s", "Arrival rate per attention-DP rank (rate / replicas / DP; blank = offline rate)", _S),
    Q("srv_load_decode_steps_per_req", "steps", "Decode steps of a request after its first token (O − 1)", _S),
    *[q for r in range(1, REFINEMENTS + 1) for q in _refinement_quantities(r)],
    Q("srv_load_saturated_flag", "0/1", "Load saturates the group (queue grows; it runs at offline throughput)", _S),
    Q("srv_load_batch", "sequences", "Requests in decode on one attention-DP rank in steady state (the cap when saturated)", _S),
    Q("srv_ssf_b", "sequences", "Steady-state batch the final decode step runs at (at least 1)", _S),
    *decode_quantities("srv_ssf", "in steady state"),
    *prefill_quantities("srv_ssfpf", "in steady state, of the prompts arriving in one window"),
    *_terms_quantities("srv_ssf", "steady state"),
    Q("srv_load_prefill_busy_frac", "fraction", "Share of GPU time prefill takes from decode in steady state", _S),
    Q("srv_load_tpot_ms", "ms", "Time per output token under the load (decode step stretched by prefill)", _S),
    Q("srv_load_pf_per_request_s", "s", "Prefill busy time per request (the prefill busy share over the rate)", _S),
    Q("srv_load_sched_wait_steps", "steps", "Decode steps a new request waits for the scheduler (half a step, or "
      "half the multi-step window)", _S),
    Q("srv_load_service_s", "s", "Prefill part of TTFT under the load, at least the prefill on an idle engine", _S),
    Q("srv_load_queue_wait_s", "s", "Wait for the queue beyond an idle engine's half cycle (gated cycles: the "
      "cycle the request lands in, then the prompts that share its own)", _S),
    Q("srv_load_ttft_ms", "ms", "Time to first token under the load: scheduler wait, prefill, prefill queue, the "
      "engine's fixed time per request (undefined when saturated: reads 0 with srv_ttft_defined_flag 0)", _S),
    *[q for name in sq.QUANTILES for q in (
        Q(f"srv_load_ttft_{name}_ms", "ms", f"TTFT under the load, {name} (exponential wait over the no-wait floor; "
          "0 = saturated)", _S),
        Q(f"srv_load_tpot_{name}_ms", "ms", f"TPOT under the load, {name} (mean of its steps, correlated by "
          "the prompts they gather; normal approximation)", _S))],
    Q("srv_load_tokens_per_s", "tokens/s", "Output tokens/s of one serving group under the load", _S),
    Q("srv_load_tokens_per_s_per_gpu", "tokens/s", "Output tokens/s per GPU under the load", _S),
]


def _terms(ctx: Context, p: str, *, lam: float, batch: float, k: float, t_pf: float) -> dict[str, float]:
    """serving_load._prefill_terms as rows (both prefill modes; the engine's one is selected): ``k``
    prompts prefilled together in ``t_pf`` (separate mode), ``batch`` requests decoding."""
    inf, eng = ctx.s.inference, engine_of(ctx)
    prompt = float(inf.prompt_tokens)
    t_m = ctx.q["srv_marginal_prefill_s_per_token"]
    room = max(1.0, eng.prefill_chunk_tokens - batch)
    steps = math.ceil(prompt / room - 1e-9)
    sep = eng.prefill_mode == "separate"
    return {
        f"{p}_rho_sep": lam * t_pf / k, f"{p}_room": room, f"{p}_steps_mixed": float(steps),
        f"{p}_rho": lam * t_pf / k if sep else lam * prompt * t_m,
        f"{p}_fixed": t_pf if sep else steps * min(prompt, room) * t_m,
        f"{p}_waits": eng.scheduler_steps / 2.0 if sep else 0.5 + steps,
    }


def _window_batch(ctx: Context, lam: float, t_d: float) -> float:
    return max(1.0, lam * engine_of(ctx).scheduler_steps * t_d)


def compute(ctx: Context) -> dict[str, float]:
    inf, q = ctx.s.inference, ctx.q
    eng = engine_of(ctx)
    shape = model_shape(ctx.model)
    p, O = float(inf.prompt_tokens), float(inf.output_tokens)
    ctx_tok = float(q["srv_running_context_tokens"])
    per = math.ceil(ctx_tok / eng.block_size_tokens - 1e-9) \
        * eng.block_size_tokens
    cap = sl.batch_capacity(engine=eng, kv_tokens=q["srv_kv_tokens"], prompt_tokens=p, output_tokens=O,
                            output_lengths=inf.output_lengths)
    cap_used = max(cap, 1.0)
    kw = decode_kwargs(ctx)
    skw = dict(kv_tokens=None, max_num_seqs=cap_used, weight_precision=inf.weight_precision,
               kv_precision=inf.kv_precision, ep_nodes=kw["ep_nodes"], redundant_experts=inf.redundant_experts,
               ep_overlap_frac=ep_overlap_frac(ctx), output_lengths=inf.output_lengths)
    off = sl.offline_throughput(shape, hw=kw["hw"], engine=eng, prompt_tokens=p, output_tokens=O, tp=inf.tp, ep=inf.ep,
                                **skw)
    per_step = max(1.0, math.floor(eng.max_num_batched_tokens / p))
    offpf = prefill_values(ctx, "srv_offpf", per_step, float(max(eng.max_num_batched_tokens, p)))
    dp = attention_dp_degree(ep=inf.ep)
    lam_group = off["request_rate_per_s"] if inf.arrival_rate_rps is None else inf.arrival_rate_rps / inf.replicas
    lam = lam_group / dp
    out = {
        "srv_attention_dp": float(dp),
        "srv_load_request_block_tokens": float(per),
        "srv_load_batch_cap": cap,
        "srv_load_batch_cap_used": cap_used,
        **decode_values("srv_off", decode(ctx, cap_used, ctx_tok)),
        **offpf,
        "srv_offpf_chunk": float(max(eng.max_num_batched_tokens, p)),
        "srv_off_pf_s_per_token": off["prefill_s_per_token"],
        "srv_off_s_per_request": dp * O / off["throughput_tok_per_s"],
        "srv_offline_tokens_per_s": off["throughput_tok_per_s"],
        "srv_offline_rate_rps": off["request_rate_per_s"],
        "srv_load_rate_rps": lam,
        "srv_load_decode_steps_per_req": max(O - 1.0, 0.0),
    }
    B, b_prev, g_prev, sat = 1.0, 1.0, 0.0, 0.0
    for r in range(1, REFINEMENTS + 1):
        pre = f"srv_ss{r}"
        b0 = max(B, 1.0)
        bt = b0 * (1 + sl.SECANT_STEP)
        lo, hi = decode(ctx, b0, ctx_tok), decode(ctx, bt, ctx_tok)
        s = (hi["step_s"] - lo["step_s"]) / (bt - b0)
        pf = prefill_values(ctx, f"{pre}_pf", _window_batch(ctx, lam, lo["step_s"]), float(eng.prefill_chunk_tokens))
        terms = _terms(ctx, pre, lam=lam, batch=b0, k=pf[f"{pre}_pf_batch"], t_pf=pf[f"{pre}_pf_prefill_s"])
        rho = terms[f"{pre}_rho"]
        c = lam * (terms[f"{pre}_waits"] + out["srv_load_decode_steps_per_req"] / (1 - rho)) if rho < 1 else 0.0
        little = lam * terms[f"{pre}_fixed"] + c * lo["step_s"]
        g = (g_prev - little) / (b_prev - b0) if r > 1 and abs(b_prev - b0) > sl.SECANT_STEP * b0 else c * s
        denom = 1 - g
        line = (little - g * b0) / max(denom, sl.DENOM_MIN)
        valid = float(denom > 0 and 0 < line <= cap_used)
        pick = line if valid else min(little, cap_used)
        stop = float(sat == 1 or rho >= 1)
        new = max(pick, little) if little >= B else min(pick, little)
        B_new = B if stop else new
        sat = float(stop == 1 or (r == REFINEMENTS and (valid == 0 or B_new > cap_used)))
        out.update({f"{pre}_b0": b0, f"{pre}_bt": bt, **decode_values(f"{pre}_lo", lo),
                    **decode_values(f"{pre}_hi", hi), f"{pre}_slope": s, **pf, **terms,
                    f"{pre}_c": c, f"{pre}_little": little, f"{pre}_g": g, f"{pre}_denom": denom,
                    f"{pre}_line": line, f"{pre}_valid": valid, f"{pre}_pick": pick, f"{pre}_next": new,
                    f"{pre}_stop": stop,
                    f"{pre}_batch": B_new, f"{pre}_sat": sat})
        b_prev, g_prev, B = b0, little, B_new
    st = sl.steady_state(shape, hw=kw["hw"], engine=eng, prompt_tokens=p, output_tokens=O, arrival_rate_per_s=lam_group,
                         tp=inf.tp, ep=inf.ep, idle_prefill_s=q["srv_pf1_prefill_s"], **skw)
    fin = decode(ctx, max(st["batch"], 1.0), ctx_tok)
    pf = prefill_values(ctx, "srv_ssfpf", _window_batch(ctx, lam, fin["step_s"]), float(eng.prefill_chunk_tokens))
    terms = _terms(ctx, "srv_ssf", lam=lam, batch=st["batch"], k=pf["srv_ssfpf_batch"], t_pf=pf["srv_ssfpf_prefill_s"])
    saturated = st["saturated"]
    out.update({
        "srv_load_saturated_flag": saturated,
        "srv_load_batch": st["batch"],
        "srv_ssf_b": max(st["batch"], 1.0),
        **decode_values("srv_ssf", fin),
        **pf,
        **terms,
        "srv_load_prefill_busy_frac": st["prefill_busy_frac"],
        "srv_load_tpot_ms": st["tpot_s"] * MS_PER_S,
        **_ttft_rows(ctx, st, terms, fin["step_s"]),
        "srv_load_tokens_per_s": st["throughput_tok_per_s"],
        "srv_load_tokens_per_s_per_gpu": st["per_gpu_tok_per_s"],
    })
    return out


def _ttft_rows(ctx: Context, st: dict, terms: dict, t_d: float) -> dict[str, float]:
    """TTFT under the load and the tails as rows: the steady state's (serving_queue) figures, and the scheduler wait
    and the prefill part the sheet builds them from (the final terms')."""
    w0 = sl.sched_wait_steps(engine_of(ctx), terms["srv_ssf_waits"])
    sat = st["saturated"] == 1
    out = {"srv_load_pf_per_request_s": st["prefill_per_request_s"], "srv_load_sched_wait_steps": w0,
           "srv_load_service_s": max((terms["srv_ssf_waits"] - w0) * t_d + terms["srv_ssf_fixed"],
                                     ctx.q["srv_pf1_prefill_s"]),
           "srv_load_queue_wait_s": st["queue_wait_s"], "srv_load_ttft_ms": 0.0 if sat else st["ttft_s"] * MS_PER_S}
    for name in sq.QUANTILES:
        out[f"srv_load_ttft_{name}_ms"] = 0.0 if sat else st[f"ttft_{name}_s"] * MS_PER_S
        out[f"srv_load_tpot_{name}_ms"] = st[f"tpot_{name}_s"] * MS_PER_S
    return out
