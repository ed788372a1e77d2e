"""workbook.reference.serving_offline_run: the harmonic number, the drain against a step-by-step
simulation of continuous batching with geometric outputs, and the run against the endless queue."""

from __future__ import annotations

import heapq
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import serving_validation as sv
from workbook.reference import serving_load as sl
from workbook.reference import serving_offline_run as so

V06 = sv.ENGINES.profile("vllm-0.6.0")
KV06 = sv.em.kv_capacity(sv.LLAMA70, engine=V06, device_total_GiB=sv.H100["device_total_GiB"], tp=4)["kv_tokens"]
MIX = dict(prompt_tokens=sv.SHAREGPT_PROMPT, output_tokens=sv.SHAREGPT_OUTPUT)


def simulated_run_s(*, requests: int, batch_cap: int, mean_output: float, step_s, seed: int) -> float:
    """Continuous batching step by step: every step each running request emits one token and costs
    step_s(running); a request that ends frees its slot for the next queued one. Output lengths are
    geometric with the given mean (at least one token)."""
    rnd = random.Random(seed)
    q = 1.0 / mean_output
    lengths = [1 + int(math.log(1.0 - rnd.random()) / math.log(1.0 - q)) for _ in range(requests)]
    ends: list[int] = []  # the step at which each running request emits its last token
    nxt, step, total = 0, 0, 0.0
    while nxt < requests or ends:
        while nxt < requests and len(ends) < batch_cap:
            heapq.heappush(ends, step + lengths[nxt])
            nxt += 1
        total += step_s(len(ends))
        step += 1
        while ends and ends[0] <= step:
            heapq.heappop(ends)
    return total


def model_run_s(*, requests: int, batch_cap: int, mean_output: float, step_s) -> float:
    """offline_run's decode part: the full-batch account less the drain's tokens, plus the drain."""
    n0 = min(batch_cap, requests)
    full = step_s(batch_cap) / batch_cap
    return (requests - n0) * mean_output * full + so.drain_s(n0, output_steps=mean_output, step_s=step_s)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 10, 256, 1432])
def test_harmonic_number_expansion(n):
    exact = sum(1.0 / k for k in range(1, n + 1))
    assert so.harmonic_number(n) == pytest.approx(exact, rel=7e-3 if n == 1 else 4e-4 if n < 4 else 2e-5)


STEPS = {
    "constant": lambda b: 0.020,
    "linear": lambda b: 0.019 + 4e-5 * b,
    # memory-bound below the ridge (about 475 requests), compute-bound above: the 70B TP4 step's shape
    "ridge": lambda b: max(0.019 + 1e-5 * b, 5e-5 * b),
}


@pytest.mark.parametrize("shape", sorted(STEPS))
@pytest.mark.parametrize("cap,requests", [(256, 5000), (1432, 5000), (64, 40)])
def test_drain_matches_a_step_by_step_simulation(shape, cap, requests):
    # the last request's end varies by about 1.3 mean outputs from run to run: a small run needs more runs
    step_s, runs = STEPS[shape], 8 if requests > cap else 400
    sim = sum(simulated_run_s(requests=requests, batch_cap=cap, mean_output=194.4, step_s=step_s, seed=s)
              for s in range(runs)) / runs
    assert model_run_s(requests=requests, batch_cap=cap, mean_output=194.4, step_s=step_s) == pytest.approx(sim, rel=0.03)


def test_without_the_drain_the_run_would_be_far_shorter_than_simulated():
    # the drain is what the endless queue leaves out: at B = 1432 and 5,000 requests it is a quarter of the run
    step_s = STEPS["ridge"]
    sim = sum(simulated_run_s(requests=5000, batch_cap=1432, mean_output=194.4, step_s=step_s, seed=s)
              for s in range(4)) / 4
    endless = 5000 * 194.4 * step_s(1432) / 1432
    assert endless < 0.8 * sim


def _run(requests: float, **kw) -> dict:
    return so.offline_run(sv.LLAMA70, hw=sv.H100, engine=V06, tp=4, kv_tokens=KV06, requests=requests, **MIX, **kw)


def test_run_of_many_requests_tends_to_the_endless_queue():
    endless = sl.offline_throughput(sv.LLAMA70, hw=sv.H100, engine=V06, tp=4, kv_tokens=KV06, **MIX)
    assert _run(1e9)["throughput_tok_per_s"] == pytest.approx(endless["throughput_tok_per_s"], rel=1e-4)
    assert _run(5000)["throughput_tok_per_s"] < 0.95 * endless["throughput_tok_per_s"]


def test_one_request_is_its_prefill_and_its_decode_alone():
    r = _run(1)
    off = sl.offline_throughput(sv.LLAMA70, hw=sv.H100, engine=V06, tp=4, kv_tokens=KV06, **MIX)
    prefill = sv.SHAREGPT_PROMPT * off["prefill_s_per_token"]
    alone = sv.SHAREGPT_OUTPUT * so.harmonic_number(1) * r["drain_step_1_s"]
    assert r["drain_requests"] == 1 and r["drain_batch_1"] == r["drain_batch_3"] == 1
    assert r["run_s"] == pytest.approx(prefill + alone, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=100_000), st.integers(min_value=1, max_value=100_000))
def test_more_requests_never_lower_the_run_throughput(a, b):
    lo, hi = sorted((a, b))
    assert _run(lo)["throughput_tok_per_s"] <= _run(hi)["throughput_tok_per_s"] * (1 + 1e-12)
    assert _run(hi)["throughput_tok_per_s"] <= _run(hi)["endless_tok_per_s"] * (1 + 1e-12)


@pytest.mark.parametrize("bad", [0, 0.5, -3, math.inf, math.nan])
def test_a_run_needs_at_least_one_request(bad):
    with pytest.raises(ValueError, match="requests"):
        _run(bad)


# ---- fixed output lengths: the run goes in waves of the batch cap


@pytest.mark.parametrize("requests, batch, last", [(3000, 867, 399), (1734, 867, 867), (5, 867, 5), (1, 1, 1),
                                                   (2.5, 2, 1)])
def test_last_wave_is_what_the_full_waves_leave(requests, batch, last):
    assert so.last_wave_requests(requests, batch) == pytest.approx(last)


def simulated_fixed_run_s(*, requests: int, batch_cap: int, output: int, step_s) -> float:
    """Continuous batching with every output ``output`` tokens: the slots fill together, end together."""
    t, left = 0.0, requests
    while left > 0:
        b = min(batch_cap, left)
        t += output * step_s(b)
        left -= b
    return t


@pytest.mark.parametrize("requests, cap", [(3000, 867), (867, 867), (100, 867), (10_001, 256)])
@pytest.mark.parametrize("shape", sorted(STEPS))
def test_fixed_drain_matches_waves_step_by_step(requests, cap, shape):
    step_s, out = STEPS[shape], 500
    n0 = so.last_wave_requests(requests, cap)
    full = (requests - n0) * out * step_s(cap) / cap
    drain = so.drain_s(n0, output_steps=out, step_s=step_s, fixed_lengths=True)
    assert full + drain == pytest.approx(simulated_fixed_run_s(requests=requests, batch_cap=cap, output=out,
                                                               step_s=step_s), rel=1e-12)


def test_fixed_run_of_whole_waves_is_the_endless_queue():
    b = _run(1)["batch"]
    r = _run(3 * b, output_lengths="fixed")
    assert r["drain_requests"] == b and r["drain_length"] == 1
    assert r["throughput_tok_per_s"] == pytest.approx(r["endless_tok_per_s"], rel=1e-12)


def test_fixed_lengths_never_drain_slower_than_the_exponential_mix():
    # from 2 requests (at 1 the expansion's H(1) = 0.994 is 0.6 % short of the exact 1)
    b = _run(1)["batch"]
    for n in (2, 7, b, b + 1, 5000):
        assert _run(n, output_lengths="fixed")["throughput_tok_per_s"] >= _run(n)["throughput_tok_per_s"] * (1 - 1e-12)
