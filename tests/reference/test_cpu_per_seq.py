"""engines.yaml sglang-0.3.0 ``cpu_per_seq_us``: derived again from the published median ITLs of
sgl-project/sglang benchmark/benchmark_vllm_060/README.md (the derivation the field's source states),
and the step it adds: linear in the batch, zero on the profiles that set none."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.reference import serving_validation as sv
from workbook.reference import decode_time as dt
from workbook.reference import serving_load as sl
from workbook.reference.serving_shape import model_shape

SG3 = sv.ENGINES.profile("sglang-0.3.0")
#: SGLang 0.3.0 runs of the README: rate (req/s), median TTFT, TPOT and ITL (ms)
RUNS = {
    "70b-h100-tp4": [(4, 53.94, 25.03, 21.67), (8, 58.11, 33.07, 24.45)],
    "8b-a100": [(4, 31.98, 13.17, 11.93), (8, 35.68, 17.85, 14.41)],
}


def _setups():
    eff = sv.CATALOG.efficiency["a100-80gb"]
    a100 = dt.serving_hardware(gpu=sv.CATALOG.gpu("a100-80gb"), efficiency=eff,
                               device=SimpleNamespace(cuda_total_GiB=80e9 / 2**30,
                                                      decode_hbm_efficiency=eff.hbm_efficiency))
    return {"70b-h100-tp4": (sv.LLAMA70, sv.H100, 4),
            "8b-a100": (model_shape(sv.CATALOG.model("llama-3-8b")), a100, 1)}


def derived_cpu_per_seq_us() -> float:
    """ITL − the GPU step at the run's Little's-law batch and the running requests' mean context (ShareGPT: exponential
    outputs), fitted through the origin against the batch."""
    engine = SG3.model_copy(update={"cpu_per_seq_us": 0.0})
    num = den = 0.0
    for name, (shape, hw, tp) in _setups().items():
        for rate, ttft, tpot, itl in RUNS[name]:
            batch = rate * (ttft + (sv.SHAREGPT_OUTPUT - 1) * tpot) / 1e3
            step = dt.decode_step(shape, batch=batch, context_tokens=sl.running_context_tokens(prompt_tokens=sv.SHAREGPT_PROMPT, output_tokens=sv.SHAREGPT_OUTPUT),
                                  hw=hw, engine=engine, tp=tp)["step_s"] * 1e3
            num += (itl - step) * batch
            den += batch * batch
    return num / den * 1e3


def test_the_catalogue_value_is_the_published_derivation():
    assert SG3.cpu_per_seq_us == pytest.approx(derived_cpu_per_seq_us(), abs=0.5)


def test_the_cpu_per_sequence_adds_linearly_to_the_step():
    kw = dict(context_tokens=300, hw=sv.H100, tp=4)
    none = SG3.model_copy(update={"cpu_per_seq_us": 0.0})
    for batch in (1, 16, 35, 1432):
        a = dt.decode_step(sv.LLAMA70, batch=batch, engine=SG3, **kw)
        b = dt.decode_step(sv.LLAMA70, batch=batch, engine=none, **kw)
        assert a["cpu_sequences_s"] == pytest.approx(batch * SG3.cpu_per_seq_us * 1e-6, rel=1e-12)
        assert a["step_s"] - b["step_s"] == pytest.approx(a["cpu_sequences_s"], rel=1e-9)


@pytest.mark.parametrize("profile", [p.id for p in sv.ENGINES.profiles if p.id != "sglang-0.3.0"])
def test_profiles_that_overlap_or_amortise_their_cpu_work_add_none(profile):
    eng = sv.ENGINES.profile(profile)
    assert eng.cpu_per_seq_us == 0
    assert dt.decode_step(sv.LLAMA70, batch=64, context_tokens=300, hw=sv.H100, engine=eng, tp=4)["cpu_sequences_s"] == 0


# ---------------------------------------------------------------- the CPU time of a separate prefill call
from workbook.reference import prefill_time as pt  # noqa: E402

V06 = sv.ENGINES.profile("vllm-0.6.0")


def test_a_separate_prefill_call_costs_the_engines_per_call_cpu():
    one = dt.decode_step(sv.LLAMA70, batch=1, context_tokens=1, hw=sv.H100, engine=V06, tp=4)["gpu_s"]
    call = pt.prefill_call_cpu_s(sv.LLAMA70, hw=sv.H100, engine=V06, tp=4)
    assert call == pytest.approx(V06.cpu_overhead_frac * V06.scheduler_steps * one, rel=1e-12)
    # every chunk is a call: a 3-chunk prefill pays three, and passing 0 takes them out
    kw = dict(prompt_tokens=3000, batch=3, hw=sv.H100, engine=V06, tp=4, chunk_tokens=4096)
    with_calls, without = pt.prefill_time(sv.LLAMA70, **kw), pt.prefill_time(sv.LLAMA70, call_cpu_s=0.0, **kw)
    assert with_calls["chunks"] == 3
    assert with_calls["prefill_s"] - without["prefill_s"] == pytest.approx(3 * call, rel=1e-9)
    assert with_calls["call_cpu_s"] == pytest.approx(3 * call, rel=1e-12)


def test_lambdalabs_ten_prompts_ttft_is_their_prefill_and_one_call():
    """Out of sample: LambdaLabs' 10 prompts at once (median TTFT 140.6 ms), one prefill call."""
    pf = pt.prefill_time(sv.LLAMA70, prompt_tokens=sum(sv.LAMBDA10_INPUT) / 10, batch=10, hw=sv.H100, engine=V06, tp=4)
    assert pf["call_cpu_s"] > 0.02
    assert pf["prefill_s"] * 1e3 == pytest.approx(sv.LAMBDA10_TTFT_S * 1e3, rel=0.20)


@pytest.mark.parametrize("profile", ["vllm-0.10", "tensorrt-llm", "sglang-0.4", "deepseek-v3-infer"])
def test_mixed_prefill_or_no_cpu_overhead_means_no_call_cost(profile):
    eng = sv.ENGINES.profile(profile)
    assert eng.prefill_mode != "separate" or eng.cpu_overhead_frac == 0
    assert pt.prefill_call_cpu_s(sv.LLAMA70, hw=sv.H100, engine=eng, tp=4) == 0
