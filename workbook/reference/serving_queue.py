"""Queueing for the prefill and the tails of TTFT and TPOT, closed forms (docs/serving.md "Queueing
and tails"; issue 22 item 3).

Under load a new prompt waits for the scheduler and for the prompts ahead of it. The engine runs in
cycles: a fixed part c0 (a decode step t_d for chunks mixed into decode steps; the multi-step window
n·t_d for separate prefill steps) plus r for every prompt gathered since the last cycle (r = the prefill
busy time per request, rho = lambda·r; serving_load). A prompt that arrives during a cycle is served in
the next one (gated batch service): the cycles T_{k+1} = c0 + r·Poisson(lambda·T_k) have the mean
mu = c0/(1 − rho), the variance V = r·rho·mu/(1 − rho²) and the lag-1 correlation rho. An arrival lands
in a length-biased cycle, E_b = E[T²]/mu = c0/(1 − rho) + r·rho/(1 − rho²); it waits for its residual,
E_b/2, and then shares its own cycle with the rho·E_b of work that arrived in the same one. Over the
half cycle an idle engine waits (c0/2), the wait for the queue is

    W = (1/2 + rho)·E_b − c0/2                                          (0 at rho = 0)

and the time to first token under load

    TTFT   = c0/2 + max(prefill under load, prefill on an idle engine) + W + t_req
    TTFT_p = TTFT_0 + (TTFT − TTFT_0)·ln(1/(1 − p))                      exponential excess over the floor

with TTFT_0 = max(...) + t_req (no wait) and t_req the engine's fixed time per request
(prefill_time.request_overhead_s). So TTFT under load is never below the idle TTFT. With separate
prefill steps the loaded prefill t_pf(k) already holds the k prompts of a window; W counts them again
(conservative by at most rho·c0).

A request's TPOT is the mean of its n = O − 1 steps. The steps' mean is TPOT = t_d/(1 − rho) and, as an
AR(1) sequence of correlation rho, the mean of n steps has the standard deviation
sqrt(r·rho·TPOT/n)/(1 − rho); with the normal approximation

    TPOT_p = TPOT + z_p·sqrt(r·rho·TPOT/n)/(1 − rho)

tests/reference/test_serving_queue.py checks the closed forms against a discrete-event simulation of
the scheduler (simulate_mixed_scheduler): mean TTFT within a few per cent, the tails within 15 %.
"""

from __future__ import annotations

import math
import random

from workbook.reference.args import nonnegative as _nonneg

#: the tail quantiles service targets are written in, and the standard normal's quantiles at them
QUANTILES = {"p90": 0.90, "p99": 0.99}
NORMAL_Z = {"p90": 1.2815515655446004, "p99": 2.3263478740408408}
#: cap on the prefill busy share (serving_load.steady_state, serving_max_load and the closed loop use this one)
RHO_MAX = 0.999999


def _rho(rho: float) -> float:
    if not 0 <= rho:
        raise ValueError(f"rho must be >= 0, got {rho!r}")
    return min(rho, RHO_MAX)


def queue_wait_s(*, rho: float, cycle_s: float, service_s: float) -> float:
    """Wait for the queue beyond an idle engine's half cycle (module docstring): (1/2 + rho)·E_b − c0/2,
    E_b = c0/(1 − rho) + r·rho/(1 − rho²)."""
    _nonneg(cycle_s=cycle_s, service_s=service_s)
    p = _rho(rho)
    e_b = cycle_s / (1.0 - p) + service_s * p / (1.0 - p * p)
    return (0.5 + p) * e_b - cycle_s / 2.0


def queue_wait_slope_s(*, rho: float, cycle_s: float, service_s: float) -> float:
    """dW/drho of queue_wait_s at a fixed cycle: E_b + (1/2 + rho)·dE_b/drho, dE_b/drho = c0/(1 − rho)² +
    r·(1 + rho²)/(1 − rho²)² (the largest-load closed form takes W along this tangent)."""
    _nonneg(cycle_s=cycle_s, service_s=service_s)
    p = _rho(rho)
    e_b = cycle_s / (1.0 - p) + service_s * p / (1.0 - p * p)
    de_b = cycle_s / (1.0 - p) ** 2 + service_s * (1.0 + p * p) / (1.0 - p * p) ** 2
    return e_b + (0.5 + p) * de_b


def ttft_under_load_s(*, sched_wait_s: float, service_load_s: float, service_idle_s: float, rho: float,
                      prefill_per_request_s: float, overhead_s: float = 0.0, q: float | None = None) -> float:
    """TTFT under load, mean (q None) or its q-quantile (module docstring); ``sched_wait_s`` is half a cycle."""
    _nonneg(sched_wait_s=sched_wait_s, service_load_s=service_load_s, service_idle_s=service_idle_s,
            overhead_s=overhead_s)
    floor = max(service_load_s, service_idle_s) + overhead_s
    wait = sched_wait_s + queue_wait_s(rho=rho, cycle_s=2.0 * sched_wait_s, service_s=prefill_per_request_s)
    if q is None:
        return floor + wait
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q!r}")
    return floor + wait * math.log(1.0 / (1.0 - q))


def tpot_quantile_s(*, tpot_s: float, rho: float, prefill_per_request_s: float, output_tokens: float,
                    z: float) -> float:
    """TPOT at the quantile of the normal's ``z`` (module docstring): TPOT + z·sqrt(r·rho·TPOT/n)/(1 − rho)."""
    _nonneg(tpot_s=tpot_s, prefill_per_request_s=prefill_per_request_s)
    p = _rho(rho)
    n = max(output_tokens - 1.0, 1.0)
    return tpot_s + z * math.sqrt(prefill_per_request_s * p * tpot_s / n) / (1.0 - p)


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
