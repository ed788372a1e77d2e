"""Behaviour test of the SMs that a hidden all-to-all holds (issue 8; prefill_time.exposed_alltoall_s, and the
decode step's decode_comm_sm_frac): switch scenario 5 of the default workbook to DeepSeek-V3 FP8 at EP 32
under the deepseek-v3-infer profile (all-to-all overlapped), then edit the profile's prefill_comm_sms and
decode_comm_sm_frac on the Engines sheet and the H800's sm_count on the Catalog sheet as a person would;
recalculate with LibreOffice; check what moves.

Expectations come from workbook.reference.prefill_time with catalogue values, or from equalities between
recalculated cells; never from cached values."""

from __future__ import annotations

import math

import pytest

from tests.writer.edits import Layout, Recalc, recalc_edited
from workbook.catalog import load_catalog
from workbook.engines.libreoffice import find_soffice
from workbook.reference import decode_time as dt
from workbook.reference import prefill_time as pt
from workbook.reference.serving_shape import model_shape

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

SC = 5  # llama-3-70b-serve-h800-tp4, switched below to DeepSeek-V3 (4,096-token prompts: one chunk)
CAT = load_catalog()
PROFILE = "deepseek-v3-infer"


def _deepseek(b):
    for key, value in (("model", "deepseek-v3"), ("inference.serving_model", "engine"), ("inference.engine", PROFILE),
                       ("inference.tp", 1), ("inference.ep", 32), ("inference.weight_precision", "fp8"),
                       ("inference.ep_overlap_frac", None)):
        b.plan(key, SC, value)


EDITS = {
    "held": [_deepseek],
    "free": [_deepseek, lambda b: b.engine(PROFILE, "prefill_comm_sms", 0)],
    "more_sms": [_deepseek, lambda b: b.gpu("h800", "sm_count", 264)],
    "no_overlap": [_deepseek, lambda b: b.plan("inference.ep_overlap_frac", SC, 0.0)],
    "no_overlap_free": [_deepseek, lambda b: b.plan("inference.ep_overlap_frac", SC, 0.0),
                        lambda b: b.engine(PROFILE, "prefill_comm_sms", 0)],
    "decode_free": [_deepseek, lambda b: b.engine(PROFILE, "decode_comm_sm_frac", 0)],
    "decode_half": [_deepseek, lambda b: b.engine(PROFILE, "decode_comm_sm_frac", 0.5)],
}


@pytest.fixture(scope="module")
def rc(built, tmp_path_factory) -> dict[str, Recalc]:
    folder = tmp_path_factory.mktemp("behaviour_prefill_sms")
    return recalc_edited(built[0], folder, EDITS, Layout(built[0]))


def _g(r: Recalc, key: str) -> float:
    return r.get("Inference", key, SC)


def _alltoall_s(r: Recalc) -> float:
    return _g(r, "srv_ep_fixed_s") + _g(r, "srv_pf1_last_tokens") * _g(r, "srv_pf_ep_s_per_token")


def test_the_sm_share_reads_the_engine_and_the_gpu(rc):
    assert _g(rc["held"], "srv_pf_comm_sm_frac") == pytest.approx(20 / 132, rel=1e-12)
    assert _g(rc["free"], "srv_pf_comm_sm_frac") == 0
    assert _g(rc["more_sms"], "srv_pf_comm_sm_frac") == pytest.approx(20 / 264, rel=1e-12)


def test_a_hidden_alltoall_lengthens_prefill_by_the_sms_it_holds(rc):
    held, free, more = (_g(rc[k], "srv_pf1_prefill_s") for k in ("held", "free", "more_sms"))
    assert held > more > free
    assert _g(rc["held"], "srv_pf1_chunks") == 1
    for name in ("held", "free", "more_sms"):
        r = rc[name]
        c, g, f = _alltoall_s(r), _g(r, "srv_pf1_last_gpu_s"), _g(r, "srv_pf_comm_sm_frac")
        assert _g(r, "srv_pf1_prefill_s") == pytest.approx(max(g, _g(r, "srv_prefill_cpu_s")) + max(c - g, f * c),
                                                            rel=1e-9)
    # and the reference, from the catalogue, gives the same prefill
    shape, gpu = model_shape(CAT.model("deepseek-v3")), CAT.gpu("h800")
    hw = dt.serving_hardware(gpu=gpu, efficiency=CAT.efficiency["h800"], device=CAT.engines.device("h800"))
    ref = pt.prefill_time(shape, prompt_tokens=4096, hw=hw, engine=CAT.engines.profile(PROFILE), tp=1, ep=32,
                          weight_precision="fp8", ep_nodes=4, ep_overlap_frac=1.0)
    assert held == pytest.approx(ref["prefill_s"], rel=1e-6)
    assert math.isfinite(_g(rc["held"], "srv_marginal_prefill_s_per_token"))
    assert _g(rc["held"], "srv_marginal_prefill_s_per_token") > _g(rc["free"], "srv_marginal_prefill_s_per_token")


def test_without_overlap_the_sms_do_not_count(rc):
    a, b = rc["no_overlap"], rc["no_overlap_free"]
    assert _g(a, "srv_pf1_prefill_s") == pytest.approx(_g(b, "srv_pf1_prefill_s"), rel=1e-12)
    assert _g(a, "srv_pf1_prefill_s") == pytest.approx(
        max(_g(a, "srv_pf1_last_gpu_s"), _g(a, "srv_prefill_cpu_s")) + _alltoall_s(a), rel=1e-9)
    assert _g(a, "srv_pf1_prefill_s") > _g(rc["held"], "srv_pf1_prefill_s")


def test_a_hidden_decode_exchange_holds_the_sms_for_its_share(rc, built):
    held, free, half = (rc[k] for k in ("held", "decode_free", "decode_half"))
    steps = [_g(r, "srv_dec_step_s") for r in (free, held, half)]
    assert steps == sorted(steps) and steps[0] < steps[1] < steps[2]
    assert (held.get("KV Cache", "srv_eng_decode_comm_sm_frac", SC), free.get("KV Cache", "srv_eng_decode_comm_sm_frac", SC)) \
        == (0.244, 0)
    # the exposed part is the share of the whole exchange (the overlap hides the rest): f x C, C the same in all three
    c = _g(half, "srv_dec_ep_exposed_s") / 0.5
    assert _g(held, "srv_dec_ep_exposed_s") == pytest.approx(0.244 * c, rel=1e-9)
    assert _g(free, "srv_dec_ep_exposed_s") == pytest.approx(max(0.0, c - _g(free, "srv_dec_gpu_s")), abs=1e-12)
    # and the reference, from the catalogue, gives the same step at the scenario's batch and context
    shape, gpu = model_shape(CAT.model("deepseek-v3")), CAT.gpu("h800")
    hw = dt.serving_hardware(gpu=gpu, efficiency=CAT.efficiency["h800"], device=CAT.engines.device("h800"))
    import openpyxl

    batch = openpyxl.load_workbook(built[0])["Plan"][Layout(built[0]).cell("Plan", "inference.batch", SC)].value
    ref = dt.decode_step(shape, batch=float(batch),
                         context_tokens=_g(held, "srv_running_context_tokens"), hw=hw, engine=CAT.engines.profile(PROFILE),
                         tp=1, ep=32, weight_precision="fp8", ep_nodes=4, ep_overlap_frac=1.0)
    assert _g(held, "srv_dec_step_s") == pytest.approx(ref["step_s"], rel=1e-6)
