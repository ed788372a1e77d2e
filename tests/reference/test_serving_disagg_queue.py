"""workbook.reference.serving_disagg's prefill queue: the Pollaczek–Khinchine wait in prompt units
(exact for one prompt per step), an upper estimate of a discrete-event simulation of the batched queue,
the busy-share limit that meets a TTFT target, and the pool sized with it."""

from __future__ import annotations

import collections
import math
import random

import pytest

from tests.reference import serving_validation as sv
from workbook.reference import serving_disagg as sd

DS = sv.ENGINES.profile("deepseek-v3-infer")


def simulated_ttft_s(*, prompts_per_step: int, busy_frac: float, step_s: float = 1.0, prompts: int = 200_000,
                     seed: int = 7) -> float:
    """Mean time from arrival to the end of a prompt's step: Poisson arrivals, one server whose step takes
    up to K waiting prompts and lasts step_s·j/K for j of them (prefill time grows with its tokens)."""
    K = prompts_per_step
    rnd = random.Random(seed)
    lam = busy_frac * K / step_s
    t, arrivals = 0.0, []
    for _ in range(prompts):
        t += rnd.expovariate(lam)
        arrivals.append(t)
    free, i, total, queue = 0.0, 0, 0.0, collections.deque()
    while i < prompts or queue:
        now = free if queue else max(free, arrivals[i])
        while i < prompts and arrivals[i] <= now:
            queue.append(arrivals[i])
            i += 1
        j = min(K, len(queue))
        end = now + step_s * j / K
        for _ in range(j):
            total += end - queue.popleft()
        free = end
    return total / prompts


def model_ttft_s(*, prompts_per_step: float, busy_frac: float, step_s: float = 1.0) -> float:
    return step_s + sd.prefill_wait_s(step_s=step_s, busy_frac=busy_frac, prompts_per_step=prompts_per_step)


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.8, 0.9])
def test_one_prompt_per_step_is_the_md1_queue(rho):
    # Pollaczek–Khinchine: W = rho T / (2 (1 - rho)); the simulation agrees within its noise
    assert sd.prefill_wait_s(step_s=2.0, busy_frac=rho, prompts_per_step=1) == pytest.approx(rho * 2 / (2 * (1 - rho)))
    assert simulated_ttft_s(prompts_per_step=1, busy_frac=rho) == pytest.approx(
        model_ttft_s(prompts_per_step=1, busy_frac=rho), rel=0.05)


@pytest.mark.parametrize("K", [3, 16, 48])
@pytest.mark.parametrize("rho", [0.5, 0.8, 0.9])
def test_batched_queue_stays_below_the_estimate(K, rho):
    assert simulated_ttft_s(prompts_per_step=K, busy_frac=rho) <= model_ttft_s(prompts_per_step=K, busy_frac=rho)


@pytest.mark.parametrize("K", [2, 3, 16, 48])
def test_estimate_near_saturation_is_within_ten_percent_below_or_above(K):
    # heavy traffic (98 % busy): the estimate tends to the queue's T/(2K(1 - rho)) growth; it may fall a few
    # per cent under the simulated mean for small K, never 10 %
    assert model_ttft_s(prompts_per_step=K, busy_frac=0.98) >= 0.9 * simulated_ttft_s(prompts_per_step=K, busy_frac=0.98)


def test_wait_grows_with_the_busy_share_and_falls_with_the_batch():
    waits = [sd.prefill_wait_s(step_s=1.0, busy_frac=r, prompts_per_step=8) for r in (0.0, 0.5, 0.9, 0.99)]
    assert waits[0] == 0 and waits == sorted(waits)
    assert sd.prefill_wait_s(step_s=1.0, busy_frac=1.0, prompts_per_step=8) == math.inf
    assert (sd.prefill_wait_s(step_s=1.0, busy_frac=0.9, prompts_per_step=48)
            < sd.prefill_wait_s(step_s=1.0, busy_frac=0.9, prompts_per_step=3))


@pytest.mark.parametrize("K,target", [(1, 1.5), (3, 1.2), (48, 1.05), (48, 3.0)])
def test_busy_limit_meets_the_target_exactly(K, target):
    limit = sd.busy_limit(step_s=1.0, prompts_per_step=K, ttft_target_s=target)
    assert 0 < limit < 1
    assert model_ttft_s(prompts_per_step=K, busy_frac=limit) == pytest.approx(target, rel=1e-12)


def test_ttft_slack_is_the_wait_the_target_leaves_per_step():
    assert sd.ttft_slack(step_s=2.0, ttft_target_s=3.0) == 0.5
    assert sd.ttft_slack(step_s=2.0, ttft_target_s=1.0) == 0 == sd.ttft_slack(step_s=2.0, ttft_target_s=None)


def test_busy_limit_without_a_reachable_target_is_stability():
    assert sd.busy_limit(step_s=1.0, prompts_per_step=8, ttft_target_s=None) == 1.0
    assert sd.busy_limit(step_s=1.0, prompts_per_step=8, ttft_target_s=0.9) == 1.0  # the step alone misses


@pytest.mark.parametrize("load,limit,want", [(38.2, 1.0, 39), (39.0, 1.0, 40), (0.01, 1.0, 1), (38.2, 0.8, 48),
                                             (38.2, 0.99, 39)])
def test_prefill_instances(load, limit, want):
    n = sd.prefill_instances(load_instances=load, busy_limit_frac=limit)
    assert n == want and load / n < 1 and load / n <= limit + 1e-12


def _pools(**kw):
    base = dict(hw=sv.H800, engine=DS, arrival_rate_per_s=sv.DS_RATE_RPS, prompt_tokens=sv.DS_PROMPT,
                output_tokens=sv.DS_OUTPUT, decode_batch_cap=146, tpot_target_s=0.05, tp=1, ep=144, prefill_ep=32,
                redundant_experts=32, weight_precision="fp8", ep_overlap_frac=1.0)
    return sd.size_pools(sv.DSV3, **{**base, **kw})


def test_pools_meet_the_ttft_target_and_one_instance_fewer_would_not():
    free = _pools()
    step = free["prefill_s"]
    target = step * 1.02  # tight: forces a lower busy share than stability alone
    p = _pools(ttft_target_s=target)
    assert p["ttft_s"] <= target * (1 + 1e-12) < free["ttft_s"]
    assert p["prefill_instances"] > free["prefill_instances"]
    fewer = p["prefill_load_instances"] / (p["prefill_instances"] - 1)
    K = p["prefill_queue_prompts_per_step"]
    assert K == p["prefill_prompts_per_step"] * 32
    assert fewer >= 1 or model_ttft_s(prompts_per_step=K, busy_frac=fewer, step_s=step) > target
    assert p["decode_gpus"] == free["decode_gpus"]  # the decode pool does not see the TTFT target


def test_pools_ttft_is_step_plus_wait():
    p = _pools()
    assert p["ttft_s"] == pytest.approx(p["prefill_s"] + p["prefill_wait_s"], rel=1e-12)
    assert p["prefill_busy_frac"] == pytest.approx(p["prefill_load_instances"] / p["prefill_instances"], rel=1e-12)
    assert p["prefill_busy_limit"] == 1.0
