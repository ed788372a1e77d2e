"""Continuous batching under load, closed form (docs/serving.md "Serving under load").

A request mix (mean prompt S_in, mean output O tokens) arrives at rate lambda (requests/s) at one
serving group (TP·EP GPUs). In steady state:

    B      = lambda·(TTFT + (O − 1)·TPOT)                            Little's law: requests in decode
    TPOT   = t_d(B) / (1 − rho)                                      decode shares the GPU with prefill
    S_ctx  = S_in + O·(1 + cv²)/2                                    mean context of the running requests

``separate`` prefill (vLLM 0.6 multi-step, SGLang 0.3): the engine schedules every w = n_steps·t_d
(n_steps = scheduler_steps) and prefills, in one step, the k = max(1, lambda·w) prompts that
arrived meanwhile; rho = lambda·t_pf(k)/k; TTFT = w/2 + t_pf(k) (+ the queue below).

``chunked_mixed`` prefill (vLLM V1, TensorRT-LLM): prompt tokens ride in decode steps at their
marginal cost t_m per token (linear FLOPs, attention, all-reduce bytes; the weights are read anyway);
rho = lambda·S_in·t_m; TTFT = t_d/2 + ceil(S_in/(C − B))·(t_d + min(S_in, C − B)·t_m).

t_d(B) is decode_time.decode_step at S_ctx. Little's law reads B = L(B), L(b) = lambda·t_fixed + c·t_d(b),

    c = lambda·(n_w + (O − 1)/(1 − rho))

(t_fixed = t_pf or the chunked TTFT part, n_w the steps waited, all taken at b). It is solved a fixed
number of times (``refinements``, 6 by default: no convergence loop) by a secant through the last two
iterates, g = (L(b_prev) − L(b0))/(b_prev − b0), started from the tangent g = c·t_d'(b0) at b = 1 (also
used when the two iterates are within SECANT_STEP):

    B_line = (L(b0) − g·b0)/(1 − g),   B = max(B_line, L(b0)) if L(b0) >= B_prev else min(B_line, L(b0))

A line that does not cross B = L at a batch in (0, cap] (1 − g <= 0) gives way to the fixed-point step
L(b0), and the bracket keeps every refinement at least one fixed-point step towards the stable fixed
point (the iteration B <- L(B) from an empty queue; issue 8: the former chord t_d(b0) -> t_d(2·b0)
swung around a rising slope, and its 1 − c·s <= 0 at b = 1-2 reported MoE loads saturated). The load
is stable while rho < 1 and the last refinement's line crosses within the KV pool and max_num_seqs;
above that the queue grows (``saturated``) and the group runs at its offline throughput.
Throughput = lambda·O tokens/s.

TTFT (issue 22): the scheduler wait, then the larger of the prefill above and the prefill on an idle
engine, the M/D/1 wait for the prompts ahead on the prefill resource and the engine's fixed time per
request (workbook.reference.serving_queue, which also gives the p90/p99 tails of TTFT and TPOT).

With EP > 1 every EP rank is an attention-DP rank (workbook.reference.attention_dp): the equations
above hold per rank, at lambda/DP, with B the rank's batch (decode_step's ``batch``); the group's
requests are DP·B and its throughput DP times one rank's.
"""

from __future__ import annotations

import math
from typing import Any

from workbook.reference.attention_dp import attention_dp_degree, group_requests, rank_rate
from workbook.reference.decode_time import decode_step
from workbook.reference.engine_memory import concurrent_requests
from workbook.reference import serving_queue as sq
from workbook.reference.prefill_time import marginal_prefill_s_per_token, prefill_time, request_overhead_s
from workbook.reference.serving_shape import ModelShape

DEFAULT_REFINEMENTS = 6
#: relative width of the tangent chord t_d(b0) -> t_d(b0 (1 + step)), and the least relative gap between
#: two iterates for their secant
SECANT_STEP = 1e-3
#: floor of 1 - g in the line's quotient (a line with 1 - g <= 0 is not used)
DENOM_MIN = 1e-12
#: bisection steps of the largest-load search (relative width 2^-40)
BISECTION_STEPS = 40


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a finite positive number, got {v!r}")


def mean_context_tokens(*, prompt_tokens: float, output_tokens: float) -> float:
    """Mean context of one request over its own decode: S_in + O/2 (a static batch, which runs every
    request to its length together)."""
    _pos(prompt_tokens=prompt_tokens, output_tokens=output_tokens)
    return prompt_tokens + output_tokens / 2.0


#: squared coefficient of variation of the output length, per scenario choice inference.output_lengths:
#: exponential outputs (a chat mix; docs/serving.md "A finite offline run") 1, fixed lengths 0
OUTPUT_LENGTH_CV2 = {"exponential": 1.0, "fixed": 0.0}


def output_length_cv2(output_lengths: str) -> float:
    """cv² of the output length for ``output_lengths`` (ValueError names the choices)."""
    if output_lengths not in OUTPUT_LENGTH_CV2:
        raise ValueError(f"output_lengths must be one of {tuple(OUTPUT_LENGTH_CV2)}, got {output_lengths!r}")
    return OUTPUT_LENGTH_CV2[output_lengths]


def running_context_tokens(*, prompt_tokens: float, output_tokens: float, output_lengths: str = "exponential") -> float:
    """Mean context of the requests running at a decode step: S_in + O·(1 + cv²)/2.

    A step meets a running request at age a (tokens generated so far) with probability proportional to
    P(L > a), the share of requests that are still running at that age: a request that runs longer is met
    by more steps. The mean age is E[L²]/(2·E[L]) = O·(1 + cv²)/2 (renewal theory, the mean age of a
    renewal process; the inspection paradox): O/2 for fixed lengths, as mean_context_tokens, and O for
    exponential outputs. This is the footprint the KV pool admits requests by and the context each step
    reads; it holds for an open arrival rate, closed-loop clients and an endless offline queue alike."""
    _pos(prompt_tokens=prompt_tokens, output_tokens=output_tokens)
    return prompt_tokens + output_tokens * (1.0 + output_length_cv2(output_lengths)) / 2.0


def batch_capacity(*, engine: Any, kv_tokens: float | None, prompt_tokens: float, output_tokens: float,
                   max_num_seqs: float | None = None, output_lengths: str = "exponential") -> float:
    """Largest running batch: max_num_seqs, and the KV pool over the running requests' mean footprint
    (running_context_tokens; engines allocate blocks as requests grow)."""
    seqs = float(engine.max_num_seqs if max_num_seqs is None else max_num_seqs)
    if kv_tokens is None:
        return seqs
    ctx = running_context_tokens(prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                                 output_lengths=output_lengths)
    return float(concurrent_requests(kv_tokens_total=kv_tokens, tokens_per_request=ctx,
                                     block_tokens=engine.block_size_tokens, max_num_seqs=seqs))


def _decode(shape: ModelShape, batch: float, ctx: float, kw: dict) -> float:
    return decode_step(shape, batch=max(batch, 1.0), context_tokens=ctx, **kw)["step_s"]


def _prefill_terms(shape: ModelShape, *, lam: float, t_d: float, batch: float, prompt: float, engine: Any,
                   pf_kw: dict) -> tuple[float, float, float]:
    """(rho, fixed part of TTFT, steps waited) for one arrival rate at a decode step t_d."""
    if engine.prefill_mode == "separate":
        window = engine.scheduler_steps * t_d
        k = max(1.0, lam * window)
        t_pf = prefill_time(shape, prompt_tokens=prompt, batch=k, engine=engine, **pf_kw)["prefill_s"]
        return lam * t_pf / k, t_pf, engine.scheduler_steps / 2.0
    t_m = marginal_prefill_s_per_token(shape, prompt_tokens=prompt, engine=engine, **{
        k_: v for k_, v in pf_kw.items() if k_ in ("hw", "tp", "ep", "weight_precision", "ep_nodes", "ep_overlap_frac")})
    room = max(1.0, engine.prefill_chunk_tokens - batch)
    steps = math.ceil(prompt / room - 1e-9)
    fixed = steps * min(prompt, room) * t_m
    return lam * prompt * t_m, fixed, 0.5 + steps


def steady_state(shape: ModelShape, *, hw: dict, engine: Any, prompt_tokens: float, output_tokens: float,
                 arrival_rate_per_s: float, tp: int = 1, ep: int = 1, kv_tokens: float | None = None,
                 max_num_seqs: float | None = None, weight_precision: str = "bf16", kv_precision: str = "bf16",
                 redundant_experts: int = 0, query_tokens_per_seq: float = 1.0, tokens_per_step: float = 1.0,
                 ep_overlap_frac: float = 0.0, ep_nodes: int = 1, refinements: int = DEFAULT_REFINEMENTS,
                 idle_prefill_s: float | None = None, output_lengths: str = "exponential") -> dict[str, float]:
    """Steady state of one serving group at ``arrival_rate_per_s`` (module docstring).

    TTFT includes the wait for the prefill resource and is never below the idle TTFT (serving_queue);
    ``idle_prefill_s`` is the prefill of one prompt on an idle engine (None: prefill_time of it).

    Returns batch (requests decoding on one attention-DP rank), batch_group (DP x batch), decode_step_s,
    tpot_s, ttft_s, e2e_s, prefill_busy_frac, throughput_tok_per_s (output tokens of the group),
    per_gpu_tok_per_s, batch_cap (per rank) and saturated (0/1). ``kv_tokens`` is one rank's pool.
    """
    _pos(arrival_rate_per_s=arrival_rate_per_s, tp=tp, ep=ep)
    if refinements < 1:
        raise ValueError("refinements must be >= 1")
    lam, p, O = rank_rate(group_rate_per_s=arrival_rate_per_s, ep=ep), prompt_tokens, output_tokens
    ctx = running_context_tokens(prompt_tokens=p, output_tokens=O, output_lengths=output_lengths)
    dkw = dict(hw=hw, engine=engine, tp=tp, ep=ep, redundant_experts=redundant_experts,
               weight_precision=weight_precision, kv_precision=kv_precision,
               query_tokens_per_seq=query_tokens_per_seq, tokens_per_step=1.0,
               ep_overlap_frac=ep_overlap_frac, ep_nodes=ep_nodes)
    pf_kw = dict(hw=hw, tp=tp, ep=ep, redundant_experts=redundant_experts, weight_precision=weight_precision,
                 ep_nodes=ep_nodes, ep_overlap_frac=ep_overlap_frac)
    cap = batch_capacity(engine=engine, kv_tokens=kv_tokens, prompt_tokens=p, output_tokens=O, max_num_seqs=max_num_seqs,
                         output_lengths=output_lengths)
    out_per_req = max(O / tokens_per_step - 1.0, 0.0)  # decode steps after the first token
    B, b_prev, g_prev = 1.0, 1.0, 0.0
    saturated = False
    for r in range(refinements):
        b0 = max(B, 1.0)
        t_b = _decode(shape, b0, ctx, dkw)
        s = (_decode(shape, b0 * (1.0 + SECANT_STEP), ctx, dkw) - t_b) / (b0 * SECANT_STEP)
        rho, fixed, waits = _prefill_terms(shape, lam=lam, t_d=t_b, batch=b0, prompt=p, engine=engine, pf_kw=pf_kw)
        if rho >= 1.0:
            saturated = True
            break
        c = lam * (waits + out_per_req / (1.0 - rho))
        g_b = lam * fixed + c * t_b  # Little's law's right-hand side at b0 (one fixed-point step)
        g = (g_prev - g_b) / (b_prev - b0) if r > 0 and abs(b_prev - b0) > SECANT_STEP * b0 else c * s
        denom = 1.0 - g
        line = (g_b - g * b0) / max(denom, DENOM_MIN)
        valid = denom > 0 and 0 < line <= cap
        pick = line if valid else min(g_b, cap)
        B_new = max(pick, g_b) if g_b >= B else min(pick, g_b)
        if r == refinements - 1:
            saturated = not valid or B_new > cap
        b_prev, g_prev, B = b0, g_b, B_new
    if saturated:
        B = cap
    t_d = _decode(shape, B, ctx, dkw)
    rho, fixed, waits = _prefill_terms(shape, lam=lam, t_d=t_d, batch=B, prompt=p, engine=engine, pf_kw=pf_kw)
    r_req = rho / lam  # prefill busy time per request
    rho = min(rho, sq.RHO_MAX)
    tpot = t_d / (1.0 - rho) / tokens_per_step
    if idle_prefill_s is None:
        idle_prefill_s = prefill_time(shape, prompt_tokens=p, batch=1.0, engine=engine, **pf_kw)["prefill_s"]
    w0 = sched_wait_steps(engine, waits)
    tq = dict(sched_wait_s=w0 * t_d, service_load_s=fixed + (waits - w0) * t_d, service_idle_s=idle_prefill_s,
              rho=rho, prefill_per_request_s=r_req, overhead_s=request_overhead_s(engine))
    ttft = math.inf if saturated else sq.ttft_under_load_s(**tq)
    tails = {}
    for name, qv in sq.QUANTILES.items():
        tails[f"ttft_{name}_s"] = math.inf if saturated else sq.ttft_under_load_s(**tq, q=qv)
        tails[f"tpot_{name}_s"] = sq.tpot_quantile_s(tpot_s=tpot, rho=rho, prefill_per_request_s=r_req,
                                                     output_tokens=O, z=sq.NORMAL_Z[name])
    if saturated:
        thr = offline_throughput(shape, hw=hw, engine=engine, prompt_tokens=p, output_tokens=O, tp=tp, ep=ep,
                                 kv_tokens=kv_tokens, max_num_seqs=max_num_seqs, weight_precision=weight_precision,
                                 kv_precision=kv_precision, redundant_experts=redundant_experts,
                                 query_tokens_per_seq=query_tokens_per_seq, tokens_per_step=tokens_per_step,
                                 ep_overlap_frac=ep_overlap_frac, ep_nodes=ep_nodes,
                                 output_lengths=output_lengths)["throughput_tok_per_s"]
    else:
        thr = group_requests(rank_requests=lam, ep=ep) * O
    return {
        "batch": B,
        "batch_group": group_requests(rank_requests=B, ep=ep),
        "batch_cap": cap,
        "decode_step_s": t_d,
        "tpot_s": tpot,
        "ttft_s": ttft,
        "e2e_s": ttft + (O - 1) * tpot,
        "prefill_busy_frac": rho,
        "throughput_tok_per_s": thr,
        "per_gpu_tok_per_s": thr / (tp * ep),
        "context_tokens": ctx,
        "saturated": float(saturated),
        "prefill_per_request_s": r_req,
        "queue_wait_s": sq.queue_wait_s(rho=rho, cycle_s=2.0 * w0 * t_d, service_s=r_req),
        **tails,
    }


def sched_wait_steps(engine: Any, waits: float) -> float:
    """Mean decode steps a new request waits for the scheduler to take it: the whole wait of a separate-prefill
    engine (half its multi-step window), half a step for mixed chunks (the rest of ``waits`` is its prefill)."""
    return waits if engine.prefill_mode == "separate" else 0.5


def offline_throughput(shape: ModelShape, *, hw: dict, engine: Any, prompt_tokens: float, output_tokens: float,
                       tp: int = 1, ep: int = 1, kv_tokens: float | None = None, max_num_seqs: float | None = None,
                       weight_precision: str = "bf16", kv_precision: str = "bf16", redundant_experts: int = 0,
                       query_tokens_per_seq: float = 1.0, tokens_per_step: float = 1.0, ep_overlap_frac: float = 0.0,
                       ep_nodes: int = 1, output_lengths: str = "exponential") -> dict[str, float]:
    """Output tokens/s of a group with every request queued (rate = inf): the batch runs at its cap and
    the prompts are prefilled at the engine's token budget (separate) or at the marginal cost (mixed).

        time per request = S_in·t_pf_token + O·t_d(B_cap)/B_cap,   throughput = DP·O / time per request

    (one attention-DP rank's figure times the DP ranks, attention_dp; ``batch`` is a rank's).
    """
    p, O = prompt_tokens, output_tokens
    ctx = running_context_tokens(prompt_tokens=p, output_tokens=O, output_lengths=output_lengths)
    B = batch_capacity(engine=engine, kv_tokens=kv_tokens, prompt_tokens=p, output_tokens=O, max_num_seqs=max_num_seqs,
                       output_lengths=output_lengths)
    if B < 1:
        raise ValueError("the KV pool holds no request of this size")
    d = decode_step(shape, batch=B, context_tokens=ctx, hw=hw, engine=engine, tp=tp, ep=ep,
                    redundant_experts=redundant_experts, weight_precision=weight_precision,
                    kv_precision=kv_precision, query_tokens_per_seq=query_tokens_per_seq,
                    tokens_per_step=tokens_per_step, ep_overlap_frac=ep_overlap_frac, ep_nodes=ep_nodes)
    if engine.prefill_mode == "separate":
        per_step = max(1.0, math.floor(engine.max_num_batched_tokens / p))
        pf = prefill_time(shape, prompt_tokens=p, batch=per_step, hw=hw, engine=engine, tp=tp, ep=ep,
                          redundant_experts=redundant_experts, weight_precision=weight_precision,
                          chunk_tokens=max(engine.max_num_batched_tokens, p), ep_nodes=ep_nodes,
                          ep_overlap_frac=ep_overlap_frac)
        t_pf_tok = pf["prefill_s"] / (per_step * p)
    else:
        t_pf_tok = marginal_prefill_s_per_token(shape, prompt_tokens=p, hw=hw, engine=engine, tp=tp, ep=ep,
                                                weight_precision=weight_precision, ep_nodes=ep_nodes,
                                                ep_overlap_frac=ep_overlap_frac)
    per_req = p * t_pf_tok + O * d["step_s"] / (B * tokens_per_step)
    thr = attention_dp_degree(ep=ep) * O / per_req
    return {
        "batch": B,
        "decode_step_s": d["step_s"],
        "prefill_s_per_token": t_pf_tok,
        "prefill_time_frac": p * t_pf_tok / per_req,
        "throughput_tok_per_s": thr,
        "per_gpu_tok_per_s": thr / (tp * ep),
        "request_rate_per_s": thr / O,
    }


def max_load(shape: ModelShape, *, hw: dict, engine: Any, prompt_tokens: float, output_tokens: float,
             ttft_target_s: float = math.inf, tpot_target_s: float = math.inf, tp: int = 1, ep: int = 1,
             kv_tokens: float | None = None, refinements: int = DEFAULT_REFINEMENTS, **kw: Any) -> dict[str, float]:
    """The largest arrival rate whose steady state is stable and meets both targets (TTFT and TPOT
    grow with the rate, so a bisection between 0 and the offline rate finds it). Returns the rate,
    its steady state, and 0 for everything when even a trickle misses a target. ``refinements`` goes
    to steady_state."""
    for name, v in (("ttft_target_s", ttft_target_s), ("tpot_target_s", tpot_target_s)):
        if not isinstance(v, (int, float)) or math.isnan(v) or v <= 0:
            raise ValueError(f"{name} must be a positive number (inf: no target), got {v!r}")
    off = offline_throughput(shape, hw=hw, engine=engine, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                             tp=tp, ep=ep, kv_tokens=kv_tokens, **kw)

    def ok(lam: float) -> dict | None:
        st = steady_state(shape, hw=hw, engine=engine, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                          arrival_rate_per_s=lam, tp=tp, ep=ep, kv_tokens=kv_tokens, refinements=refinements, **kw)
        good = not st["saturated"] and st["ttft_s"] <= ttft_target_s and st["tpot_s"] <= tpot_target_s
        return st if good else None

    lo, hi = 0.0, off["request_rate_per_s"]
    best = None
    tiny = hi * 1e-6
    if ok(tiny) is None:
        return {"request_rate_per_s": 0.0, "batch": 0.0, "tpot_s": math.inf, "ttft_s": math.inf,
                "throughput_tok_per_s": 0.0, "per_gpu_tok_per_s": 0.0}
    lo = tiny
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        st = ok(mid)
        if st is None:
            hi = mid
        else:
            lo, best = mid, st
    best = best or ok(lo)
    return {"request_rate_per_s": lo, "batch": best["batch"], "tpot_s": best["tpot_s"], "ttft_s": best["ttft_s"],
            "throughput_tok_per_s": best["throughput_tok_per_s"], "per_gpu_tok_per_s": best["per_gpu_tok_per_s"]}


def max_decode_batch(shape: ModelShape, *, hw: dict, engine: Any, context_tokens: float, tpot_target_s: float,
                     batch_cap: float, **kw: Any) -> dict[str, float]:
    """Largest decode batch per GPU whose TPOT meets the target (a decode-only node of a disaggregated
    system: no prefill interference). TPOT grows with the batch, so bisect on [1, batch_cap]."""
    _pos(tpot_target_s=tpot_target_s, batch_cap=batch_cap)

    def tpot(b: float) -> dict:
        return decode_step(shape, batch=b, context_tokens=context_tokens, hw=hw, engine=engine, **kw)

    if tpot(1.0)["tpot_s"] > tpot_target_s:
        return {"batch": 0.0, "tpot_s": tpot(1.0)["tpot_s"], "tokens_per_s_per_gpu": 0.0, "kv_bound": 0.0}
    if tpot(batch_cap)["tpot_s"] <= tpot_target_s:
        d = tpot(batch_cap)
        return {"batch": batch_cap, "tpot_s": d["tpot_s"], "tokens_per_s_per_gpu": d["tokens_per_s"], "kv_bound": 1.0}
    lo, hi = 1.0, float(batch_cap)
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if tpot(mid)["tpot_s"] <= tpot_target_s:
            lo = mid
        else:
            hi = mid
    d = tpot(lo)
    return {"batch": lo, "tpot_s": d["tpot_s"], "tokens_per_s_per_gpu": d["tokens_per_s"], "kv_bound": 0.0}
