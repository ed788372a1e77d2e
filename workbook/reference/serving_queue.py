"""Queueing for the prefill and the tails of TTFT and TPOT, closed forms (docs/serving.md "Queueing
and tails"; issue 22 item 3).

Under load a new prompt waits for the prompts ahead of it: the GPU spends a share rho of its time on
prefill (serving_load: rho = lambda·r, r the prefill time of one request), and a prompt that arrives
while another is being prefilled waits for it. The prefill resource is taken as an M/D/1 queue
(Poisson arrivals, every prompt the mean length, so a deterministic service r):

    W      = rho·r / (2·(1 − rho))                                   mean wait (Pollaczek-Khinchine, c_s = 0)
    P(W > t) ~ rho·exp(−t·rho/W)                                     exponential tail with the same mean
    W_p    = r/(2·(1 − rho))·ln(max(rho, 1 − p)/(1 − p))             its p-quantile (0 while rho <= 1 − p)

(P(W > 0) = rho for any M/G/1; the waiting time given a wait is taken exponential with mean
W/rho = r/(2(1 − rho)), the heavy-traffic form.) The time to first token under load is

    TTFT   = w0·t_d + max(prefill under load, prefill on an idle engine) + W + t_req
    TTFT_p = 2p·w0·t_d + max(...) + W_p + t_req                       (sum of quantiles: an upper bound)

with w0·t_d the mean wait for the scheduler to take the request (half a step, or half a multi-step
window, uniform so its p-quantile is 2p·w0·t_d) and t_req the engine's fixed time per request
(prefill_time.request_overhead_s). So TTFT under load is never below the idle TTFT.

A request's TPOT is its decode time over its O − 1 steps. During it, m = lambda·(O − 1)·TPOT prompts
arrive (Poisson) and each stretches the running steps by r, so TPOT = t_d + X·r/(O − 1), X ~ Poisson(m):
its mean is t_d/(1 − rho) (serving_load's TPOT) and, with the normal approximation,

    TPOT_p = TPOT + z_p·r·sqrt(m)/max(O − 1, 1)

tests/reference/test_serving_queue.py checks the closed forms against a discrete-event simulation of
the scheduler (simulate_mixed_scheduler).
"""

from __future__ import annotations

import math
import random

from workbook.reference.args import nonnegative as _nonneg

#: the tail quantiles service targets are written in, and the standard normal's quantiles at them
QUANTILES = {"p90": 0.90, "p99": 0.99}
NORMAL_Z = {"p90": 1.2815515655446004, "p99": 2.3263478740408408}
#: cap on the prefill busy share (serving_load.steady_state)
RHO_MAX = 0.999999


def _rho(rho: float) -> float:
    if not 0 <= rho:
        raise ValueError(f"rho must be >= 0, got {rho!r}")
    return min(rho, RHO_MAX)


def md1_wait_s(*, rho: float, service_s: float) -> float:
    """Mean wait of an M/D/1 queue at utilisation ``rho`` with service ``service_s``: rho·r/(2(1 − rho))."""
    _nonneg(service_s=service_s)
    r = _rho(rho)
    return r * service_s / (2.0 * (1.0 - r))


def wait_quantile_s(*, rho: float, service_s: float, q: float) -> float:
    """q-quantile of the wait (module docstring): r/(2(1 − rho))·ln(max(rho, 1 − q)/(1 − q))."""
    _nonneg(service_s=service_s)
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    r = _rho(rho)
    tail = 1.0 - q
    return service_s / (2.0 * (1.0 - r)) * math.log(max(r, tail) / tail)


def ttft_under_load_s(*, sched_wait_s: float, service_load_s: float, service_idle_s: float, rho: float,
                      prefill_per_request_s: float, overhead_s: float = 0.0, q: float | None = None) -> float:
    """TTFT under load, mean (q None) or its q-quantile (module docstring)."""
    _nonneg(sched_wait_s=sched_wait_s, service_load_s=service_load_s, service_idle_s=service_idle_s,
            overhead_s=overhead_s)
    service = max(service_load_s, service_idle_s)
    if q is None:
        return sched_wait_s + service + md1_wait_s(rho=rho, service_s=prefill_per_request_s) + overhead_s
    return (2.0 * q * sched_wait_s + service + wait_quantile_s(rho=rho, service_s=prefill_per_request_s, q=q)
            + overhead_s)


def tpot_quantile_s(*, tpot_s: float, rate_per_s: float, prefill_per_request_s: float, output_tokens: float,
                    z: float) -> float:
    """TPOT at the quantile of the normal's ``z`` (module docstring): TPOT + z·r·sqrt(m)/max(O − 1, 1)."""
    _nonneg(tpot_s=tpot_s, rate_per_s=rate_per_s, prefill_per_request_s=prefill_per_request_s)
    steps = max(output_tokens - 1.0, 0.0)
    m = rate_per_s * steps * tpot_s
    return tpot_s + z * prefill_per_request_s * math.sqrt(m) / max(steps, 1.0)


def simulate_mixed_scheduler(*, rate_per_s: float, decode_step_s: float, prefill_s_per_token: float,
                             prompt_tokens: float, chunk_tokens: float, output_tokens: int, idle_prefill_s: float,
                             requests: int = 20_000, seed: int = 1) -> dict[str, list[float]]:
    """Discrete-event simulation of a continuous-batching scheduler with chunked prefill (tests only).

    Poisson arrivals at ``rate_per_s``; every step is a decode step of ``decode_step_s`` plus the prompt
    tokens it carries (FCFS, at most ``chunk_tokens`` per step) at ``prefill_s_per_token`` each; an idle
    GPU that takes a prompt alone runs it in ``idle_prefill_s`` (the first step then ends no earlier).
    A prompt's first token comes at the end of the step that carries its last token; its decode then runs
    ``output_tokens`` − 1 steps. Returns the TTFTs and TPOTs of the requests (the first 10 % dropped as
    warm-up).
    """
    rng = random.Random(seed)
    arrivals, t = [], 0.0
    for _ in range(requests):
        t += rng.expovariate(rate_per_s)
        arrivals.append(t)
    queue: list[list[float]] = []  # [arrival, tokens left, index]
    running: dict[int, list[float]] = {}  # index -> [first token time, steps left]
    ttft, tpot = [0.0] * requests, [0.0] * requests
    now, nxt, done = 0.0, 0, 0
    steps_left_out = max(int(output_tokens) - 1, 0)
    while done < requests:
        while nxt < requests and arrivals[nxt] <= now:
            queue.append([arrivals[nxt], float(prompt_tokens), float(nxt)])
            nxt += 1
        if not queue and not running:
            now = arrivals[nxt]
            continue
        budget, carried, finished = float(chunk_tokens), 0.0, []
        for item in queue:
            if budget <= 0:
                break
            take = min(budget, item[1])
            item[1] -= take
            budget -= take
            carried += take
            if item[1] <= 0:
                finished.append(item)
        step = (decode_step_s if running else 0.0) + carried * prefill_s_per_token
        if not running and len(finished) == 1 and carried == prompt_tokens:
            step = max(step, idle_prefill_s)
        now += step
        for idx in list(running):
            running[idx][1] -= 1
            if running[idx][1] <= 0:
                first = running.pop(idx)[0]
                tpot[idx] = (now - first) / max(steps_left_out, 1)
                done += 1
        for item in finished:
            queue.remove(item)
            idx = int(item[2])
            ttft[idx] = now - item[0]
            if steps_left_out == 0:
                done += 1
            else:
                running[idx] = [now, float(steps_left_out)]
    warm = requests // 10
    return {"ttft_s": ttft[warm:], "tpot_s": tpot[warm:]}
