"""Closed-loop concurrency and static batches (docs/serving.md "Three load models"; issue 22 item 2).

Published serving tables are run three ways; serving_load covers the open-loop arrival rate. The other two:

**Concurrency N** (closed loop, think time 0: every client sends its next request when the last ends).
Per attention-DP rank n = N / replicas / DP clients; the engine holds b = min(n, cap) of them (the rest
wait to be admitted). With the decode step t_d = t_d(max(b, 1)) at the running requests' mean context
(serving_load.running_context_tokens), the prefill busy
time per request r (the offline prefill cost per prompt token times S_in: batched separate steps, or the
marginal cost of mixed chunks), the fixed part of TTFT T0 = w0·t_d + t_idle + t_req (scheduler wait,
the prompt's prefill on an idle engine, the engine's fixed time) and m = O − 1 decode steps, Little's law
with think time 0 closes the loop (m = O: E2E = TTFT + O·TPOT, the first token's step counted, so the
loop never beats the offline throughput, which charges O steps a request):

    lambda·(T0 + W + m·t_d/(1 − lambda·r)) = b         (TPOT = t_d/(1 − rho))

a quadratic in lambda for a given queue wait W; its smaller root is

    lambda = 2b / (q + sqrt(q² − 4·T·r·b)),   q = T + m·t_d + b·r,   T = T0 + W

(q² − 4Trb >= (T − b·r)² >= 0, and the root is below 1/r, so rho < 1: a closed loop never saturates).
It is solved twice, W = 0 and then W = the queue's wait at the first rate (serving_queue, cycle 2·w0·t_d): a fixed number
of fixed-point steps, as the workbook holds them. TTFT = T0 + W(lambda) + (n − b)/lambda (the admission
wait of the clients beyond the cap), TPOT = t_d/(1 − lambda·r), output tokens/s = DP·lambda·O.

**Static batch B** (B requests prefilled together, then decoded to the output length at the fixed batch,
as TensorRT-LLM's and vLLM's static benchmarks run them): per rank b = B/DP prompts,

    TTFT = t_pf(b prompts) + t_req,   TPOT = t_d(b),   wall = TTFT + (O − 1)·t_d(b),
    output tokens/s = B·O / wall

A static batch of 1 is an idle request: TTFT = the idle TTFT, TPOT = the batch-1 step.

**Largest loads.** The largest static batch meeting the targets takes t_d and t_pf linear between
batch 1 and the cap (chords through the two ends):
b_TPOT = 1 + (T_p − t_d(1))·(cap − 1)/(t_d(cap) − t_d(1)), b_TTFT the same with T_f − t_req and t_pf;
the batch is the least of them and the cap, whole requests, 0 when batch 1 already misses. The largest
concurrency is the rate model's largest load times its E2E (Little's law: the clients that rate keeps
busy), N_max = lambda_max·(TTFT + m·TPOT) at that load.
"""

from __future__ import annotations

import math
from typing import Any

from workbook.reference import serving_queue as sq
from workbook.reference.args import nonnegative as _nonneg
from workbook.reference.args import positive as _pos
from workbook.reference.serving import FLOOR_EPS
from workbook.reference.serving_max_load import smaller_root

#: floor of a chord's rise (a flat decode step or prefill never binds)
RISE_MIN = 1e-12


def closed_loop_rate(*, clients: float, fixed_s: float, decode_step_s: float, prefill_per_request_s: float,
                     decode_steps: float) -> float:
    """Requests/s that ``clients`` in the engine complete (module docstring's smaller root)."""
    _nonneg(clients=clients, fixed_s=fixed_s, decode_step_s=decode_step_s,
            prefill_per_request_s=prefill_per_request_s, decode_steps=decode_steps)
    b, T, r = clients, fixed_s, prefill_per_request_s
    # T·r·lambda² − q·lambda + b = 0: the batch-cap bound's quadratic (serving_max_load.cap_bound)
    return smaller_root(A=T * r, b=T + decode_steps * decode_step_s + b * r, C=b)


def closed_loop(*, concurrency: float, cap: float, decode_step_s: float, prefill_per_request_s: float,
                idle_prefill_s: float, sched_wait_steps: float, overhead_s: float, output_tokens: float,
                dp: int = 1, tp: int = 1, ep: int = 1) -> dict[str, float]:
    """Steady state of ``concurrency`` clients per attention-DP rank (module docstring).

    ``decode_step_s`` is the step at max(min(concurrency, cap), 1); returns the clients in the engine, the
    rate per rank, rho, TTFT, TPOT, the admission wait, the queue wait, tokens/s of the group and per GPU."""
    _pos(concurrency=concurrency, cap=cap, output_tokens=output_tokens)
    b = min(concurrency, cap)
    m = output_tokens  # E2E = TTFT + O·TPOT (the closed loop; the first token's step counted)
    r = prefill_per_request_s
    t0 = sched_wait_steps * decode_step_s + idle_prefill_s + overhead_s
    lam1 = closed_loop_rate(clients=b, fixed_s=t0, decode_step_s=decode_step_s, prefill_per_request_s=r,
                            decode_steps=m)
    cycle = 2.0 * sched_wait_steps * decode_step_s
    w1 = sq.queue_wait_s(rho=lam1 * r, cycle_s=cycle, service_s=r)
    lam = closed_loop_rate(clients=b, fixed_s=t0 + w1, decode_step_s=decode_step_s, prefill_per_request_s=r,
                           decode_steps=m)
    rho = min(lam * r, sq.RHO_MAX)
    w = sq.queue_wait_s(rho=rho, cycle_s=cycle, service_s=r)
    admit = (concurrency - b) / lam
    thr = dp * lam * output_tokens
    return {"engine_clients": b, "rate_per_s": lam, "first_rate_per_s": lam1, "first_wait_s": w1, "rho": rho,
            "queue_wait_s": w, "admission_wait_s": admit, "ttft_s": t0 + w + admit,
            "tpot_s": decode_step_s / (1.0 - rho), "fixed_s": t0,
            "throughput_tok_per_s": thr, "per_gpu_tok_per_s": thr / (tp * ep)}


def static_batch(*, batch: float, prefill_s: float, decode_step_s: float, overhead_s: float, output_tokens: float,
                 tp: int = 1, ep: int = 1) -> dict[str, float]:
    """A static batch of ``batch`` requests (the group's; module docstring): ``prefill_s`` prefills a rank's
    share of the prompts, ``decode_step_s`` is a rank's step at its share."""
    _pos(batch=batch, output_tokens=output_tokens)
    _nonneg(prefill_s=prefill_s, decode_step_s=decode_step_s, overhead_s=overhead_s)
    ttft = prefill_s + overhead_s
    wall = ttft + max(output_tokens - 1.0, 0.0) * decode_step_s
    thr = batch * output_tokens / wall
    return {"ttft_s": ttft, "tpot_s": decode_step_s, "wall_s": wall, "throughput_tok_per_s": thr,
            "per_gpu_tok_per_s": thr / (tp * ep)}


def chord_batch(*, target: float, at_one: float, at_cap: float, cap: float) -> float:
    """Batch where the chord from (1, at_one) to (cap, at_cap) reaches ``target`` (inf target: the cap);
    0 when batch 1 already misses. Not rounded."""
    if math.isinf(target):
        return cap
    if target < at_one:
        return 0.0
    return 1.0 + (target - at_one) * (cap - 1.0) / max(at_cap - at_one, RISE_MIN)


def largest_static_batch(*, cap: float, step_one_s: float, step_cap_s: float, prefill_one_s: float,
                         prefill_cap_s: float, overhead_s: float, ttft_target_s: float = math.inf,
                         tpot_target_s: float = math.inf) -> float:
    """Largest static batch per rank meeting both targets (inf: no target), whole requests, at most the cap."""
    _pos(cap=cap)
    b_tpot = chord_batch(target=tpot_target_s, at_one=step_one_s, at_cap=step_cap_s, cap=cap)
    b_ttft = chord_batch(target=ttft_target_s - overhead_s, at_one=prefill_one_s, at_cap=prefill_cap_s, cap=cap)
    return float(max(0, math.floor(min(cap, b_tpot, b_ttft) + FLOOR_EPS)))


def largest_concurrency(*, max_rate_rps: float, ttft_s: float, tpot_s: float, output_tokens: float) -> float:
    """Clients the largest rate keeps busy: lambda_max·(TTFT + O·TPOT), the closed loop's own Little's law
    (closed_loop counts O decode steps a request), so that loop at this many clients runs at this rate; 0 when no
    load meets the targets."""
    if max_rate_rps <= 0:
        return 0.0
    return max_rate_rps * (ttft_s + output_tokens * tpot_s)


def engine_clients(*, concurrency: Any, batch: int, replicas: int, dp: int) -> float:
    """Clients per attention-DP rank: the scenario's concurrency (blank: the decode batch) over the replicas
    and the DP ranks."""
    n = batch if concurrency is None else concurrency
    return float(n) / replicas / dp
