"""Behaviour tests of the serving-engine rows (issue 8): edit the default workbook as a person would
(pick another engine, switch the serving model, type a measured throughput, edit an engine profile,
blank a required serving input), recalculate with LibreOffice, check what moves.

Expectations come from the catalogue (engines.yaml through the serving reference), from ratios
against the recalculated unedited copy, or from equalities between cells; never from cached values.
Scenario 5 of the default workbook is llama-3-70b-serve-h800-tp4 (LLaMA-3-70B, H800, TP 4, $2.50/GPU-h,
serving model book); test_behaviour.py checks the scenario list.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.writer.edits import Layout, Recalc, make_edited, recalculate_copies
from workbook.catalog import load_catalog
from workbook.engines.libreoffice import find_soffice
from workbook.reference import engine_memory as em
from workbook.reference.serving_shape import model_shape

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

SC = 5  # llama-3-70b-serve-h800-tp4
CAT = load_catalog()
SCENARIO_5 = Path(__file__).resolve().parents[2] / "catalog" / "scenarios" / "17.9.6-70b-inference-h800.yaml"

EDITS = {
    "roundtrip": lambda b: None,
    "engine_model": lambda b: b.plan("inference.serving_model", SC, "engine"),
    "engine_sglang": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                                b.plan("inference.engine", SC, "sglang-0.4")),
    "measured_500": lambda b: b.plan("inference.measured_tokens_per_s_per_gpu", SC, 500.0),
    "measured_1000": lambda b: b.plan("inference.measured_tokens_per_s_per_gpu", SC, 1000.0),
    "engine_fraction_low": lambda b: b.engine("vllm-0.10", "memory_fraction", 0.8),
    "two_passes": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                             b.engine("vllm-0.10", "decode_micro_batches", 2)),
    "serving_model_blank": lambda b: b.plan("inference.serving_model", SC, None),
    "engine_blank": lambda b: b.plan("inference.engine", SC, None),
    "ep_blank": lambda b: b.plan("inference.ep", SC, None),
    "tpot_target_missed": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                                     b.plan("inference.tpot_target_ms", SC, 1.0)),
    "tpot_target_30": lambda b: b.plan("inference.tpot_target_ms", SC, 30.0),
    "tpot_target_60": lambda b: b.plan("inference.tpot_target_ms", SC, 60.0),
    "ttft_target_tiny": lambda b: b.plan("inference.ttft_target_ms", SC, 1.0),
    "offline_run_5000": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                                   b.plan("inference.offline_requests", SC, 5000)),
    "offline_run_20": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                                 b.plan("inference.offline_requests", SC, 20)),
    "offline_run_zero": lambda b: b.plan("inference.offline_requests", SC, 0),
    # issue 22: the other two load models, picked on the Plan sheet
    "concurrency_25": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                                 b.plan("inference.load", SC, "concurrency"), b.plan("inference.concurrency", SC, 25)),
    "concurrency_50": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                                 b.plan("inference.load", SC, "concurrency"), b.plan("inference.concurrency", SC, 50)),
    "static_1": lambda b: (b.plan("inference.serving_model", SC, "engine"), b.plan("inference.load", SC, "static"),
                           b.plan("inference.batch", SC, 1)),
    # the running requests' mean context follows the output lengths picked on the Plan sheet
    "fixed_lengths": lambda b: (b.plan("inference.serving_model", SC, "engine"),
                                b.plan("inference.output_lengths", SC, "fixed")),
}


@pytest.fixture(scope="module")
def layout(built):
    return Layout(built[0])


@pytest.fixture(scope="module")
def rc(built, layout, tmp_path_factory) -> dict[str, Recalc]:
    paths = make_edited(built[0], tmp_path_factory.mktemp("behaviour_serving"), {n: [fn] for n, fn in EDITS.items()})
    out = {name: Recalc(v, layout) for name, v in recalculate_copies(paths).items()}
    out["_paths"] = paths
    return out


def _kv_tokens(engine: str, fraction: float | None = None) -> float:
    """KV capacity of scenario 5's setup under an engine profile (reference, catalogue values)."""
    dev_total = CAT.engines.device("h800").cuda_total_GiB
    return em.kv_capacity(model_shape(CAT.model("llama-3-70b")), engine=CAT.engines.profile(engine),
                          device_total_GiB=dev_total, tp=4, memory_fraction=fraction)["kv_tokens"]


def test_another_engine_in_the_dropdown_moves_the_kv_capacity(rc):
    base, r = rc["engine_model"], rc["engine_sglang"]
    assert base.get("KV Cache", "srv_kv_tokens", SC) == _kv_tokens("vllm-0.10")
    assert r.get("KV Cache", "srv_kv_tokens", SC) == _kv_tokens("sglang-0.4")
    assert r.get("KV Cache", "srv_eng_memory_fraction", SC) == CAT.engines.profile("sglang-0.4").memory_fraction
    assert r.get("KV Cache", "srv_kv_tokens", SC) != base.get("KV Cache", "srv_kv_tokens", SC)
    assert r.master == "ALL CHECKS PASS"


def test_engine_model_drives_the_cost_and_the_summary(rc):
    book, eng = rc["roundtrip"], rc["engine_model"]
    assert book.get("Inference", "srv_tpot_ms_in_use", SC) == book.get("Inference", "tpot_ms", SC)
    tpot = eng.get("Inference", "srv_tpot_ms_in_use", SC)
    assert tpot == eng.get("Inference", "srv_load_tpot_ms", SC) != book.get("Inference", "tpot_ms", SC)
    assert eng.get("Summary", "srv_tpot_ms_in_use", SC) == tpot
    thr = eng.get("Inference", "srv_tokens_per_s_total_in_use", SC)
    usd = eng.get("Cost", "infer_hourly_cost_usd", SC) / (thr * 3600 / 1e6)  # utilisation 1
    assert math.isclose(eng.get("Cost", "infer_usd_per_1M_tokens", SC), usd, rel_tol=1e-9)
    assert eng.get("Cost", "infer_usd_per_1M_tokens", SC) != book.get("Cost", "infer_usd_per_1M_tokens", SC)


def test_measured_throughput_sets_the_cost_inversely(rc):
    base, a, b = rc["roundtrip"], rc["measured_500"], rc["measured_1000"]
    ca, cb = a.get("Cost", "infer_usd_per_1M_tokens", SC), b.get("Cost", "infer_usd_per_1M_tokens", SC)
    assert math.isclose(ca, 2 * cb, rel_tol=1e-12)
    gpus = a.get("Inference", "srv_gpus_in_use", SC)
    assert math.isclose(a.get("Cost", "infer_tokens_per_s_used", SC), 500.0 * gpus, rel_tol=1e-12)
    # the model's figure stays beside it
    assert a.get("Inference", "srv_tokens_per_s_per_gpu_model", SC) == base.get(
        "Inference", "srv_tokens_per_s_per_gpu_model", SC)
    assert a.get("Summary", "srv_tokens_per_s_per_gpu_in_use", SC) == 500.0


def test_engine_profile_edit_on_the_engines_sheet_moves_kv_and_verifies(rc):
    """vllm-0.10's gpu_memory_utilization 0.9 -> 0.8 on the Engines sheet: every scenario on that profile
    (the default engine) holds fewer KV tokens, as the reference gives; verify reads the edit back."""
    from workbook.readback import read_workbook
    from workbook.verify import verify

    r, base = rc["engine_fraction_low"], rc["roundtrip"]
    assert r.get("KV Cache", "srv_kv_tokens", SC) == _kv_tokens("vllm-0.10", 0.8)
    assert r.get("KV Cache", "srv_kv_tokens", SC) < base.get("KV Cache", "srv_kv_tokens", SC)
    path = rc["_paths"]["engine_fraction_low"]
    assert read_workbook(path).catalog.engines.profile("vllm-0.10").memory_fraction == 0.8
    report = verify(path, ["libreoffice"])
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:10])


def test_two_decode_passes_on_the_engines_sheet_read_the_weights_twice(rc):
    """vllm-0.10's decode_micro_batches 1 -> 2 on the Engines sheet (two-batch overlap): the step at the
    scenario's batch reads the dense weights once more, is longer, and the file still verifies."""
    from workbook.verify import verify

    one, two = rc["engine_model"], rc["two_passes"]
    assert one.get("Inference", "srv_dec_passes", SC) == 1 and two.get("Inference", "srv_dec_passes", SC) == 2
    extra = two.get("Inference", "srv_dec_weight_read_B", SC) - one.get("Inference", "srv_dec_weight_read_B", SC)
    assert math.isclose(extra, one.get("Inference", "srv_dense_read_B", SC), rel_tol=1e-9)  # LLaMA: dense only
    assert two.get("Inference", "srv_decode_step_ms", SC) > one.get("Inference", "srv_decode_step_ms", SC)
    assert two.get("Inference", "srv_tpot_ms_in_use", SC) > one.get("Inference", "srv_tpot_ms_in_use", SC)
    report = verify(rc["_paths"]["two_passes"], ["libreoffice"])
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:10])


def _offline_run_reference(requests: float) -> dict:
    """serving_offline_run.offline_run for scenario 5 on the engine model, from the catalogue."""
    from workbook.reference import decode_time as dt
    from workbook.reference import serving_offline_run as so
    from workbook.scenario import load_scenario

    s = load_scenario(SCENARIO_5)
    gpu, eng = CAT.gpu("h800"), CAT.engines.profile("vllm-0.10")
    hw = dt.serving_hardware(gpu=gpu, efficiency=CAT.efficiency["h800"], device=CAT.engines.device("h800"))
    return so.offline_run(model_shape(CAT.model("llama-3-70b")), hw=hw, engine=eng, tp=4, requests=requests,
                          prompt_tokens=s.inference.prompt_tokens, output_tokens=s.inference.output_tokens,
                          kv_tokens=_kv_tokens("vllm-0.10"))


def test_offline_run_size_adds_the_drain_as_the_reference_gives(rc):
    """Typing a run size on Plan: the run's tokens/s falls below the endless queue's by its drain, as
    serving_offline_run gives; a blank size leaves the endless queue's figure; a smaller run drains longer."""
    endless, big, small = rc["engine_model"], rc["offline_run_5000"], rc["offline_run_20"]
    off = endless.get("Inference", "srv_offline_tokens_per_s", SC)
    assert endless.get("Inference", "srv_offline_run_tokens_per_s", SC) == off
    assert endless.get("Inference", "srv_run_drain_frac", SC) == 0
    for r, n in ((big, 5000), (small, 20)):
        ref = _offline_run_reference(n)
        assert r.get("Inference", "srv_offline_run_tokens_per_s", SC) == pytest.approx(ref["throughput_tok_per_s"],
                                                                                        rel=1e-9)
        assert r.get("Inference", "srv_run_drain_s", SC) == pytest.approx(ref["drain_s"], rel=1e-9)
        assert r.get("Inference", "srv_offline_tokens_per_s", SC) == off  # the endless queue stays beside it
    assert (small.get("Inference", "srv_offline_run_tokens_per_s", SC)
            < big.get("Inference", "srv_offline_run_tokens_per_s", SC) < off)
    assert small.get("Inference", "srv_run_drain_frac", SC) > big.get("Inference", "srv_run_drain_frac", SC) > 0
    assert big.master == "ALL CHECKS PASS"


def test_offline_run_of_zero_requests_is_an_input_error(rc, layout):
    r = rc["offline_run_zero"]
    cell = layout.cell("Plan", "inference.offline_requests", SC)
    assert r.get("Checks", "scenario_status", SC) == f"INPUT ERROR: Plan!{cell} Offline run size"
    assert r.errors("Cover", "Summary", "Checks") == {}


@pytest.mark.parametrize("name,key,title", [
    ("serving_model_blank", "inference.serving_model", "Serving model"),
    ("engine_blank", "inference.engine", "Serving engine"),
    ("ep_blank", "inference.ep", "Serving EP"),
])
def test_blank_required_serving_input_is_an_input_error(rc, layout, name, key, title):
    r = rc[name]
    cell = layout.cell("Plan", key, SC)
    assert r.get("Checks", "scenario_status", SC) == f"INPUT ERROR: Plan!{cell} {title}"
    assert r.errors("Cover", "Summary", "Checks") == {}


def test_missed_tpot_target_fails_the_check_and_the_summary(rc):
    r = rc["tpot_target_missed"]
    assert r.get("Checks", "check_tpot_target", SC) == 1.0
    assert r.get("Summary", "summary_serving_targets", SC) == "FAIL"
    assert r.master != "ALL CHECKS PASS"


def test_loosening_the_tpot_target_raises_the_largest_load(rc):
    """The largest-load block (docs/serving.md "Largest load"): a looser TPOT target admits more
    load; where the TPOT target binds, the TPOT at the largest load is the target."""
    tight, loose = rc["tpot_target_30"], rc["tpot_target_60"]
    r30 = tight.get("Inference", "srv_max_load_rps", SC)
    r60 = loose.get("Inference", "srv_max_load_rps", SC)
    assert 0 < r30 < r60
    assert loose.get("Inference", "srv_max_load_batch", SC) > tight.get("Inference", "srv_max_load_batch", SC)
    for r, target in ((tight, 30.0), (loose, 60.0)):
        assert r.get("Inference", "srv_max_load_binds", SC) == 1
        assert r.get("Inference", "srv_max_load_tpot_ms", SC) == pytest.approx(target, rel=1e-9)
        assert r.get("Inference", "srv_max_load_targets_given", SC) == 1
    out = [r.get("Inference", "srv_max_load_tokens_per_s", SC) / r.get("Inference", "srv_max_load_rps", SC)
           for r in (tight, loose)]
    assert out[0] == pytest.approx(out[1])  # output tokens per request: the load moves, the mix does not


def test_blank_targets_give_the_largest_stable_load_and_an_impossible_one_gives_zero(rc):
    base, tiny = rc["roundtrip"], rc["ttft_target_tiny"]
    assert base.get("Inference", "srv_max_load_targets_given", SC) == 0
    assert base.get("Inference", "srv_max_load_binds", SC) in (3, 4)  # batch cap or offline throughput
    assert 0 < base.get("Inference", "srv_max_load_rps", SC) <= base.get("Inference", "srv_offline_rate_rps", SC)
    assert base.get("Inference", "srv_max_load_rps", SC) > rc["tpot_target_60"].get("Inference", "srv_max_load_rps", SC)
    # a 1 ms TTFT is shorter than the prompt's prefill: no load meets it, a plain 0, no error value
    assert tiny.get("Inference", "srv_max_load_rps", SC) == 0
    assert tiny.get("Inference", "srv_max_load_binds", SC) == 0
    assert tiny.get("Inference", "srv_max_load_tpot_ms", SC) == 0


def test_load_models_concurrency_doubled_and_a_static_batch_of_one(rc):
    """Issue 22: twice the closed-loop clients wait longer for the first token and decode slower (and carry more
    tokens/s); a static batch of one request is an idle request (TTFT the idle TTFT, TPOT the batch-1 step), and
    the in-use rows, so the cost, follow the load model picked."""
    a, b, one = rc["concurrency_25"], rc["concurrency_50"], rc["static_1"]
    for key in ("srv_ttft_ms_in_use", "srv_tpot_ms_in_use", "srv_tokens_per_s_per_gpu_in_use"):
        assert b.get("Inference", key, SC) > a.get("Inference", key, SC), key
    assert a.get("Inference", "srv_ttft_ms_in_use", SC) == a.get("Inference", "srv_conc_ttft_ms", SC)
    assert a.get("Inference", "srv_conc_ttft_ms", SC) >= a.get("Inference", "srv_ttft_idle_ms", SC)
    assert math.isclose(one.get("Inference", "srv_ttft_ms_in_use", SC), one.get("Inference", "srv_ttft_idle_ms", SC),
                        rel_tol=1e-12)
    assert math.isclose(one.get("Inference", "srv_tpot_ms_in_use", SC),
                        one.get("Inference", "srv_ss1_lo_step_s", SC) * 1e3, rel_tol=1e-12)
    assert b.master == one.master == "ALL CHECKS PASS"


def test_fixed_output_lengths_shorten_the_running_context_and_admit_more_requests(rc):
    """Exponential outputs (the default): a step meets long requests more often, so the running requests' mean
    context is prompt + output; fixed lengths: prompt + output/2, the book's decode context. Fewer tokens a request
    admit more requests to the same KV pool, and the step at the scenario's batch reads less KV."""
    expo, fixed = rc["engine_model"], rc["fixed_lengths"]
    g = lambda r, k: r.get("Inference", k, SC)  # noqa: E731
    from workbook.scenario import load_scenarios

    inf = load_scenarios([SCENARIO_5])[0].inference  # scenario 5's file: its prompt and output tokens
    p, o = float(inf.prompt_tokens), float(inf.output_tokens)
    assert g(expo, "decode_context_tokens") == g(fixed, "decode_context_tokens") == pytest.approx(p + o / 2, rel=1e-12)
    assert (g(expo, "srv_output_length_cv2"), g(fixed, "srv_output_length_cv2")) == (1, 0)
    assert g(expo, "srv_running_context_tokens") == pytest.approx(p + o, rel=1e-12)
    assert g(fixed, "srv_running_context_tokens") == pytest.approx(p + o / 2, rel=1e-12)
    assert g(fixed, "srv_load_batch_cap") > g(expo, "srv_load_batch_cap")
    assert g(fixed, "srv_dec_step_s") < g(expo, "srv_dec_step_s")
    assert g(fixed, "srv_offline_tokens_per_s") > g(expo, "srv_offline_tokens_per_s")
