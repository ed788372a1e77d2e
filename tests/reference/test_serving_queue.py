"""workbook.reference.serving_queue: the closed forms of the prefill queue and the tails against a
discrete-event simulation of a chunked-prefill scheduler (bounded: four loads, 8,000 requests each)."""

from __future__ import annotations

import math
import statistics

import pytest

from workbook.reference import serving_queue as sq

#: rate, decode step, prefill s per prompt token, prompt, chunk budget, output, idle prefill (s)
LOADS = [
    (2.0, 0.02, 2e-5, 2000, 8192, 200, 0.06),   # rho 0.08
    (5.0, 0.02, 2e-5, 2000, 8192, 200, 0.06),   # rho 0.20
    (8.0, 0.02, 4e-5, 2000, 8192, 100, 0.10),   # rho 0.64
    (3.0, 0.03, 5e-5, 5000, 8192, 300, 0.30),   # rho 0.75, the idle prefill is the floor
]


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[int(q * (len(xs) - 1))]


def _closed(lam, td, tm, S, C, O, idle):
    r = S * tm
    rho = lam * r
    steps = math.ceil(S / C)
    kw = dict(sched_wait_s=0.5 * td, service_load_s=steps * td + S * tm, service_idle_s=idle, rho=rho,
              prefill_per_request_s=r)
    tpot = td / (1 - rho)
    out = {"ttft": sq.ttft_under_load_s(**kw), "tpot": tpot}
    for name, q in sq.QUANTILES.items():
        out[f"ttft_{name}"] = sq.ttft_under_load_s(**kw, q=q)
        out[f"tpot_{name}"] = sq.tpot_quantile_s(tpot_s=tpot, rho=rho, prefill_per_request_s=r, output_tokens=O,
                                                 z=sq.NORMAL_Z[name])
    return out


@pytest.mark.parametrize("load", LOADS, ids=[f"rate{x[0]}" for x in LOADS])
def test_closed_forms_match_a_simulated_scheduler(load):
    lam, td, tm, S, C, O, idle = load
    sim = sq.simulate_mixed_scheduler(rate_per_s=lam, decode_step_s=td, prefill_s_per_token=tm, prompt_tokens=S,
                                      chunk_tokens=C, output_tokens=O, idle_prefill_s=idle, requests=8000)
    cf = _closed(*load)
    assert cf["ttft"] == pytest.approx(statistics.mean(sim["ttft_s"]), rel=0.08)
    assert cf["tpot"] == pytest.approx(statistics.mean(sim["tpot_s"]), rel=0.08)
    for name, q in sq.QUANTILES.items():
        assert cf[f"ttft_{name}"] == pytest.approx(_quantile(sim["ttft_s"], q), rel=0.20), name
        assert cf[f"tpot_{name}"] == pytest.approx(_quantile(sim["tpot_s"], q), rel=0.20), name


def test_no_queue_on_an_idle_engine_and_the_wait_grows_with_the_load():
    assert sq.queue_wait_s(rho=0.0, cycle_s=0.02, service_s=0.05) == 0.0
    waits = [sq.queue_wait_s(rho=x, cycle_s=0.02, service_s=0.05) for x in (0.1, 0.3, 0.6, 0.9, 0.99)]
    assert waits == sorted(waits) and waits[0] > 0


def test_the_tails_are_above_the_mean_and_p99_above_p90():
    kw = dict(sched_wait_s=0.01, service_load_s=0.1, service_idle_s=0.12, rho=0.5, prefill_per_request_s=0.08,
              overhead_s=0.003)
    mean, p90, p99 = (sq.ttft_under_load_s(**kw, q=q) for q in (None, 0.9, 0.99))
    assert 0.12 + 0.003 < mean < p90 < p99
