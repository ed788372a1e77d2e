"""The largest load that meets TTFT and TPOT targets, closed form (docs/serving.md "Largest load").

Same model as serving_load.steady_state: a decode step t_d(B) ~ a + s·B (linear fit at B and 2B),
TPOT = t_d/(1 − rho), TTFT = n_w·t_d + F, Little's law B = lambda·(TTFT + m·TPOT) with m = O − 1
decode steps per request. The prefill busy share is rho = lambda·r with r the prefill time per
request (separate prefill: t_pf(k)/k; mixed chunks: S_in·t_m), and F (prefill part of TTFT), n_w
(steps waited) and r are taken at the previous estimate. Separate prefill batches the k = max(1, lambda·n·t_d)
prompts that arrived in a window, so in the TTFT bound F = max(t_pf(1), F0 + g·lambda) with F0 + g·lambda
the secant of t_pf between k and 2k; TTFT <= T' holds when it holds for both pieces, so that bound is
the lesser of the two roots (mixed chunks: g = 0, one piece). Each bound is then a quadratic in lambda
whose smaller root is the largest load meeting it:

    TPOT = T:   s·n_w·T·r·l² − (s·(n_w·T + F + m·T) + T·r)·l + (T − a) = 0
    TTFT = T':  u = (T' − F0)/n_w, v = g/n_w, D = u − a:
                (r·(v + s·T') + s·m·v)·l² − (D·r + v + s·(T' + m·u))·l + D = 0
    B = cap:    t_c = a + s·cap, G = n_w·t_c + F:  G·r·l² − (G + m·t_c + cap·r)·l + cap = 0

(smaller root 2C/(b + sqrt(b² − 4AC)) of A·l² − b·l + C, stable at A = 0). The load is the least of
the three and the group's offline request rate (the bisection's upper end); a missing target drops
its bound. The batch follows from the steady state's closed form at that load. The fit and the terms
are re-taken at the new batch and load a fixed number of times (``refinements``): no search loop, so
the workbook holds it as formulas.

TTFT under load (issue 22, serving_queue) is w0·t_d + max(n_w·t_d + F − w0·t_d, t_idle) + W + t_req: the
target T' becomes T' − t_req, the queue's wait W enters F along its tangent at the previous estimate
(W0 + W'·(lambda − lambda_prev): W is convex in lambda, so the refinements approach the largest load as
Newton's steps do), and the idle floor adds a third TTFT piece, the TTFT bound with F = t_idle and n_w = w0. serving_load.max_load (bisection over steady_state) is the check.
"""

from __future__ import annotations

import math
from typing import Any

from workbook.reference import serving_load as sl
from workbook.reference import serving_queue as sq
from workbook.reference.prefill_time import prefill_time, request_overhead_s
from workbook.reference.serving_shape import ModelShape

#: refinements of the closed form (tests/reference/test_serving_max_load.py: within 1% of the bisection)
MAX_LOAD_REFINEMENTS = 9
#: floor of the smaller root's denominator (a bound without a positive root never binds)
ROOT_DENOM_MIN = 1e-12
#: cap on the prefill busy share (serving_load.steady_state; defined in serving_queue)
RHO_MAX = sq.RHO_MAX
#: which bound sets the largest load
BINDS = {0: "nothing meets the targets (load 0)", 1: "TPOT target", 2: "TTFT target",
         3: "batch cap (KV pool / max_num_seqs)", 4: "offline throughput"}


def smaller_root(*, A: float, b: float, C: float) -> float:
    """Smaller non-negative root of A·x² − b·x + C = 0 (A >= 0), as 2C/(b + sqrt(b² − 4AC)); 0 when
    C <= 0 (the bound is missed at any load). The denominator is floored at ROOT_DENOM_MIN: with b <= 0
    there is no positive root (the bound never binds) and the quotient is a rate far above any other."""
    if C <= 0:
        return 0.0
    return 2.0 * C / max(b + math.sqrt(max(b * b - 4.0 * A * C, 0.0)), ROOT_DENOM_MIN)


def tpot_bound(*, a: float, s: float, r: float, fixed: float, waits: float, steps: float, target_s: float) -> float:
    """Largest rate with t_d/(1 − lambda·r) = target under Little's law (module docstring)."""
    T = target_s
    return smaller_root(A=s * waits * T * r, b=s * (waits * T + fixed + steps * T) + T * r, C=T - a)


def ttft_bound(*, a: float, s: float, r: float, fixed: float, waits: float, steps: float, target_s: float,
               fixed_per_rps: float = 0.0) -> float:
    """Largest rate with n_w·t_d + F0 + g·lambda = target under Little's law (module docstring;
    g = ``fixed_per_rps``, 0 when the prefill part of TTFT does not grow with the rate)."""
    T = target_s
    u = (T - fixed) / waits  # decode step that leaves the target at lambda = 0
    v = fixed_per_rps / waits
    D = u - a
    return smaller_root(A=r * (v + s * T) + s * steps * v, b=D * r + v + s * (T + steps * u), C=D)


def cap_bound(*, a: float, s: float, r: float, fixed: float, waits: float, steps: float, cap: float,
              cap_step_s: float | None = None) -> float:
    """Largest rate whose Little's-law batch stays within ``cap`` (module docstring); ``cap_step_s`` is the
    decode step at the cap (None: the linear fit's a + s·cap)."""
    t_c = a + s * cap if cap_step_s is None else cap_step_s
    G = waits * t_c + fixed
    return smaller_root(A=G * r, b=G + steps * t_c + cap * r, C=cap)


def little_batch(*, lam: float, a: float, s: float, r: float, fixed: float, waits: float, steps: float) -> float:
    """Steady-state batch at rate ``lam`` (serving_load.steady_state's closed form): (lam·F + c·a)/(1 − c·s),
    c = lam·(n_w + m/(1 − lam·r))."""
    c = lam * (waits + steps / (1.0 - min(lam * r, RHO_MAX)))
    return (lam * fixed + c * a) / max(1.0 - c * s, 1.0 - RHO_MAX)


def max_load_closed_form(shape: ModelShape, *, hw: dict, engine: Any, prompt_tokens: float, output_tokens: float,
                         ttft_target_s: float = math.inf, tpot_target_s: float = math.inf, tp: int = 1, ep: int = 1,
                         kv_tokens: float | None = None, max_num_seqs: float | None = None,
                         weight_precision: str = "bf16", kv_precision: str = "bf16", redundant_experts: int = 0,
                         query_tokens_per_seq: float = 1.0, tokens_per_step: float = 1.0, ep_overlap_frac: float = 0.0,
                         ep_nodes: int = 1, refinements: int = MAX_LOAD_REFINEMENTS,
                         output_lengths: str = "exponential") -> dict[str, float]:
    """Largest arrival rate (requests/s per serving group) whose steady state meets both targets
    (inf = no target), closed form (module docstring). Returns request_rate_per_s, batch, tpot_s,
    ttft_s (of the last linear fit), throughput_tok_per_s, per_gpu_tok_per_s, binds (BINDS key) and the
    three bounds."""
    for name, v in (("ttft_target_s", ttft_target_s), ("tpot_target_s", tpot_target_s)):
        if not isinstance(v, (int, float)) or math.isnan(v) or v <= 0:
            raise ValueError(f"{name} must be a positive number (inf: no target), got {v!r}")
    if refinements < 1:
        raise ValueError("refinements must be >= 1")
    p, O = prompt_tokens, output_tokens
    ctx = sl.running_context_tokens(prompt_tokens=p, output_tokens=O, output_lengths=output_lengths)
    dkw = dict(hw=hw, engine=engine, tp=tp, ep=ep, redundant_experts=redundant_experts,
               weight_precision=weight_precision, kv_precision=kv_precision,
               query_tokens_per_seq=query_tokens_per_seq, tokens_per_step=1.0,
               ep_overlap_frac=ep_overlap_frac, ep_nodes=ep_nodes)
    pf_kw = dict(hw=hw, tp=tp, ep=ep, redundant_experts=redundant_experts, weight_precision=weight_precision,
                 ep_nodes=ep_nodes, ep_overlap_frac=ep_overlap_frac)
    cap = sl.batch_capacity(engine=engine, kv_tokens=kv_tokens, prompt_tokens=p, output_tokens=O,
                            max_num_seqs=max_num_seqs, output_lengths=output_lengths)
    off = sl.offline_throughput(shape, hw=hw, engine=engine, prompt_tokens=p, output_tokens=O, tp=tp, ep=ep,
                                kv_tokens=kv_tokens, max_num_seqs=max_num_seqs, weight_precision=weight_precision,
                                kv_precision=kv_precision, redundant_experts=redundant_experts,
                                query_tokens_per_seq=query_tokens_per_seq, tokens_per_step=tokens_per_step,
                                ep_overlap_frac=ep_overlap_frac, ep_nodes=ep_nodes,
                                output_lengths=output_lengths)["request_rate_per_s"]
    steps = max(O / tokens_per_step - 1.0, 0.0)
    T_p = tpot_target_s * tokens_per_step  # per decode step
    lam, B = 0.0, 1.0
    idle = prefill_time(shape, prompt_tokens=p, batch=1.0, engine=engine, **pf_kw)["prefill_s"]
    t_cap = sl._decode(shape, cap, ctx, dkw)  # the decode step at the cap (the batch bound asks where B reaches it)
    overhead = request_overhead_s(engine)
    for _ in range(refinements):
        b0 = max(B, 1.0)
        t_b = sl._decode(shape, b0, ctx, dkw)
        s = (sl._decode(shape, 2.0 * b0, ctx, dkw) - t_b) / b0
        a = max(0.0, t_b - s * b0)  # a step takes no negative time at batch 0 (a step that grows faster than
        # linearly between b0 and 2 b0, past the CUDA-graph range, would extrapolate below 0)
        probe = max(lam, 1e-9)
        rho, fixed, waits = sl._prefill_terms(shape, lam=probe, t_d=t_b, batch=b0, prompt=p, engine=engine, pf_kw=pf_kw)
        r = rho / probe
        flat, g = fixed, 0.0
        if engine.prefill_mode == "separate":  # F = t_pf(max(1, k)): flat at k = 1, then the secant k0 -> 2 k0
            k0 = max(1.0, lam * engine.scheduler_steps * t_b)  # the prompts _prefill_terms prefilled together
            flat = prefill_time(shape, prompt_tokens=p, batch=1.0, engine=engine, **pf_kw)["prefill_s"]
            t_2k = prefill_time(shape, prompt_tokens=p, batch=2.0 * k0, engine=engine, **pf_kw)["prefill_s"]
            g = (t_2k - fixed) / k0 * engine.scheduler_steps * t_b
        kw = dict(a=a, s=s, r=r, fixed=fixed, waits=waits, steps=steps)
        # TTFT target less the fixed time per request and the prefill queue's wait at the previous estimate
        w0 = sl.sched_wait_steps(engine, waits)
        wq_kw = dict(rho=min(lam * r, RHO_MAX), cycle_s=2.0 * w0 * t_b, service_s=r)
        wq, wq_g = sq.queue_wait_s(**wq_kw), r * sq.queue_wait_slope_s(**wq_kw)  # W(lambda_prev), dW/dlambda
        T_f = ttft_target_s - overhead
        wq0 = wq - wq_g * lam  # the queue's wait along its tangent at the previous estimate: wq0 + wq_g·lambda
        bounds = {
            1: tpot_bound(**kw, target_s=T_p) if math.isfinite(T_p) else math.inf,
            2: min(ttft_bound(**{**kw, "fixed": flat + wq0}, target_s=T_f, fixed_per_rps=wq_g),
                   ttft_bound(**{**kw, "fixed": fixed - g * lam + wq0}, target_s=T_f, fixed_per_rps=g + wq_g),
                   ttft_bound(**{**kw, "fixed": idle + wq0, "waits": w0}, target_s=T_f, fixed_per_rps=wq_g))
            if math.isfinite(ttft_target_s) else math.inf,
            3: cap_bound(**kw, cap=cap, cap_step_s=t_cap),
            4: off,
        }
        binds = min(bounds, key=lambda k_: bounds[k_])
        lam = bounds[binds]
        B = little_batch(lam=lam, **kw) if lam > 0 else 0.0
    if lam <= 0:
        binds = 0
    t_d = a + s * max(B, 1.0)
    tpot = t_d / (1.0 - lam * r) / tokens_per_step
    return {
        "request_rate_per_s": lam,
        "batch": B,
        "tpot_s": tpot if lam > 0 else math.inf,
        "ttft_s": sq.ttft_under_load_s(sched_wait_s=w0 * t_d, service_load_s=fixed + (waits - w0) * t_d,
                                       service_idle_s=idle, rho=min(lam * r, RHO_MAX), prefill_per_request_s=r,
                                       overhead_s=overhead) if lam > 0 else math.inf,
        "throughput_tok_per_s": lam * O,
        "per_gpu_tok_per_s": lam * O / (tp * ep),
        "binds": float(binds),
        "tpot_bound_rps": bounds[1],
        "ttft_bound_rps": bounds[2],
        "cap_bound_rps": bounds[3],
        "offline_rate_rps": off,
        "batch_cap": cap,
    }
