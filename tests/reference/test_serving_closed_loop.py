"""workbook.reference.serving_closed_loop and the load invariants of issue 22 (hypothesis, bounded):
TTFT under load is never below the idle TTFT, TPOT never falls as the load grows, no load beats the
saturated (offline) throughput, and a looser target never gives a smaller largest load. Llama-3-70B on
4 x H100 (the validation shape), every engine profile that prefills on the serving group."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import serving_validation as sv
from workbook.reference import decode_time as dt
from workbook.reference import engine_memory as em
from workbook.reference import prefill_time as pt
from workbook.reference import serving_closed_loop as cl
from workbook.reference import serving_load as sl
from workbook.reference import serving_max_load as ml

PROFILES = ("vllm-0.6.0", "vllm-0.10", "sglang-0.3.0", "sglang-0.4", "tensorrt-llm", "tensorrt-llm-0.5")
MIXES = ((sv.SHAREGPT_PROMPT, sv.SHAREGPT_OUTPUT), (2000.0, 300.0), (128.0, 128.0))
SHAPE, HW, TP = sv.LLAMA70, sv.H100, 4
#: agreement of the largest-load closed form with its bisection (tests/reference/test_serving_max_load.py)
CLOSED_FORM_REL = 0.01


def _group(profile: str, mix: tuple[float, float]) -> dict:
    eng = sv.ENGINES.profile(profile)
    kv = em.kv_capacity(SHAPE, engine=eng, device_total_GiB=HW["device_total_GiB"], tp=TP)["kv_tokens"]
    p, O = mix
    cap = sl.batch_capacity(engine=eng, kv_tokens=kv, prompt_tokens=p, output_tokens=O)
    idle = pt.prefill_time(SHAPE, prompt_tokens=p, hw=HW, engine=eng, tp=TP)["prefill_s"]
    off = sl.offline_throughput(SHAPE, hw=HW, engine=eng, prompt_tokens=p, output_tokens=O, tp=TP, kv_tokens=kv)
    return dict(eng=eng, kv=kv, p=p, O=O, cap=cap, idle=idle, off=off,
                idle_ttft=pt.ttft_s(wait_s=0.0, prefill_s=idle, overhead_s=pt.request_overhead_s(eng)))


def _steady(g: dict, rate: float) -> dict:
    return sl.steady_state(SHAPE, hw=HW, engine=g["eng"], prompt_tokens=g["p"], output_tokens=g["O"],
                           arrival_rate_per_s=rate, tp=TP, kv_tokens=g["kv"], idle_prefill_s=g["idle"])


def _closed(g: dict, n: float) -> dict:
    eng, ctx = g["eng"], sl.running_context_tokens(prompt_tokens=g["p"], output_tokens=g["O"])
    step = dt.decode_step(SHAPE, batch=max(min(n, g["cap"]), 1.0), context_tokens=ctx, hw=HW, engine=eng,
                          tp=TP)["step_s"]
    return cl.closed_loop(concurrency=n, cap=g["cap"], decode_step_s=step,
                          prefill_per_request_s=g["p"] * g["off"]["prefill_s_per_token"], idle_prefill_s=g["idle"],
                          sched_wait_steps=sl.sched_wait_steps(eng, eng.scheduler_steps / 2.0),
                          overhead_s=pt.request_overhead_s(eng), output_tokens=g["O"], tp=TP)


def _static(g: dict, b: float) -> dict:
    eng, ctx = g["eng"], sl.running_context_tokens(prompt_tokens=g["p"], output_tokens=g["O"])
    step = dt.decode_step(SHAPE, batch=b, context_tokens=ctx, hw=HW, engine=eng, tp=TP)["step_s"]
    pf = pt.prefill_time(SHAPE, prompt_tokens=g["p"], batch=b, hw=HW, engine=eng, tp=TP)["prefill_s"]
    return cl.static_batch(batch=b, prefill_s=pf, decode_step_s=step, overhead_s=pt.request_overhead_s(eng),
                           output_tokens=g["O"], tp=TP)


GROUPS = {(prof, i): _group(prof, mix) for prof in PROFILES for i, mix in enumerate(MIXES)}
KEYS = sorted(GROUPS)
_key = st.sampled_from(KEYS)


@settings(max_examples=25, deadline=None)
@given(key=_key, lo=st.floats(0.02, 0.95), hi=st.floats(0.02, 0.95))
def test_rate_model_ttft_never_below_idle_tpot_never_falls_throughput_capped(key, lo, hi):
    g = GROUPS[key]
    lo, hi = sorted((lo, hi))
    rate = g["off"]["request_rate_per_s"]
    a, b = _steady(g, lo * rate), _steady(g, hi * rate)
    for s in (a, b):
        if not s["saturated"]:
            assert s["ttft_s"] >= g["idle_ttft"] * (1 - 1e-12)
            assert s["ttft_p90_s"] >= s["ttft_s"] and s["tpot_p99_s"] >= s["tpot_p90_s"] >= s["tpot_s"]
        assert s["throughput_tok_per_s"] <= g["off"]["throughput_tok_per_s"] * (1 + 1e-9)
    assert b["tpot_s"] >= a["tpot_s"] * (1 - 1e-6)


@settings(max_examples=25, deadline=None)
@given(key=_key, n=st.floats(1, 3000), k=st.floats(1.01, 4))
def test_closed_loop_ttft_never_below_idle_tpot_never_falls_throughput_capped(key, n, k):
    g = GROUPS[key]
    a, b = _closed(g, n), _closed(g, n * k)
    for s in (a, b):
        assert s["ttft_s"] >= g["idle_ttft"] * (1 - 1e-12)
        assert s["throughput_tok_per_s"] <= g["off"]["throughput_tok_per_s"] * (1 + 1e-9)
    assert b["tpot_s"] >= a["tpot_s"] * (1 - 1e-9)
    assert b["ttft_s"] >= a["ttft_s"] * (1 - 1e-9)


@settings(max_examples=20, deadline=None)
@given(key=_key, b=st.integers(1, 200), k=st.integers(1, 64))
def test_static_batch_ttft_never_below_idle_and_tpot_never_falls(key, b, k):
    g = GROUPS[key]
    a, c = _static(g, b), _static(g, b + k)
    assert a["ttft_s"] >= g["idle_ttft"] * (1 - 1e-12)
    assert c["tpot_s"] >= a["tpot_s"] and c["ttft_s"] >= a["ttft_s"]


@pytest.mark.parametrize("key", KEYS[:6], ids=str)
def test_a_static_batch_of_one_is_an_idle_request(key):
    g = GROUPS[key]
    s = _static(g, 1)
    ctx = sl.running_context_tokens(prompt_tokens=g["p"], output_tokens=g["O"])
    assert s["ttft_s"] == pytest.approx(g["idle_ttft"], rel=1e-12)
    assert s["tpot_s"] == pytest.approx(dt.decode_step(SHAPE, batch=1, context_tokens=ctx, hw=HW, engine=g["eng"],
                                                       tp=TP)["step_s"], rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(key=_key, t1=st.floats(0.1, 5.0), t2=st.floats(0.1, 5.0), p1=st.floats(0.015, 0.2),
       p2=st.floats(0.015, 0.2))
def test_a_looser_target_never_gives_a_smaller_largest_load(key, t1, t2, p1, p2):
    g = GROUPS[key]
    (t1, t2), (p1, p2) = sorted((t1, t2)), sorted((p1, p2))
    kw = dict(hw=HW, engine=g["eng"], prompt_tokens=g["p"], output_tokens=g["O"], tp=TP, kv_tokens=g["kv"])
    tight = ml.max_load_closed_form(SHAPE, ttft_target_s=t1, tpot_target_s=p1, **kw)
    loose = ml.max_load_closed_form(SHAPE, ttft_target_s=t2, tpot_target_s=p2, **kw)
    # the closed form is within 1 % of the bisection (test_serving_max_load); where the cap or the offline rate
    # binds, two targets reach it along different refinement paths, so the comparison allows that 1 %
    assert loose["request_rate_per_s"] >= tight["request_rate_per_s"] * (1 - CLOSED_FORM_REL)
    conc = [cl.largest_concurrency(max_rate_rps=x["request_rate_per_s"], ttft_s=x["ttft_s"], tpot_s=x["tpot_s"],
                                   output_tokens=g["O"]) for x in (tight, loose)]
    assert conc[1] >= conc[0] * (1 - CLOSED_FORM_REL)
    ctx = sl.running_context_tokens(prompt_tokens=g["p"], output_tokens=g["O"])
    ends = dict(cap=g["cap"], step_one_s=dt.decode_step(SHAPE, batch=1, context_tokens=ctx, hw=HW, engine=g["eng"],
                                                        tp=TP)["step_s"],
                step_cap_s=dt.decode_step(SHAPE, batch=g["cap"], context_tokens=ctx, hw=HW, engine=g["eng"],
                                          tp=TP)["step_s"],
                prefill_one_s=g["idle"], overhead_s=pt.request_overhead_s(g["eng"]),
                prefill_cap_s=pt.prefill_time(SHAPE, prompt_tokens=g["p"], batch=g["cap"], hw=HW, engine=g["eng"],
                                              tp=TP)["prefill_s"])
    assert (cl.largest_static_batch(ttft_target_s=t2, tpot_target_s=p2, **ends)
            >= cl.largest_static_batch(ttft_target_s=t1, tpot_target_s=p1, **ends))


def test_concurrency_doubled_raises_ttft_and_tpot():
    g = GROUPS[("vllm-0.10", 1)]
    a, b = _closed(g, 25), _closed(g, 50)
    assert b["ttft_s"] > a["ttft_s"] and b["tpot_s"] > a["tpot_s"]
    assert b["throughput_tok_per_s"] > a["throughput_tok_per_s"]
    assert math.isfinite(b["ttft_s"])
