"""engines.yaml sglang-0.3.0 ``cpu_per_seq_us``: derived again from the published median ITLs of
sgl-project/sglang benchmark/benchmark_vllm_060/README.md (the derivation the field's source states),
and the step it adds: linear in the batch, zero on the profiles that set none."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.reference import serving_validation as sv
from workbook.reference import decode_time as dt
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
    """ITL − the GPU step at the run's Little's-law batch, fitted through the origin against the batch."""
    engine = SG3.model_copy(update={"cpu_per_seq_us": 0.0})
    num = den = 0.0
    for name, (shape, hw, tp) in _setups().items():
        for rate, ttft, tpot, itl in RUNS[name]:
            batch = rate * (ttft + (sv.SHAREGPT_OUTPUT - 1) * tpot) / 1e3
            step = dt.decode_step(shape, batch=batch, context_tokens=sv.SHAREGPT_PROMPT + sv.SHAREGPT_OUTPUT / 2,
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
