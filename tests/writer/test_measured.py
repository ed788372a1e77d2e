"""Behaviour test of the measured time model and the MFU peak basis (issue 7 item 5): in the built default
workbook, switch a scenario to ``time_model: measured`` with a typed TFLOP/s per GPU, recalculate with
LibreOffice, and check that the days in use (and the cost) follow the rate inversely; a blank rate under
``measured`` is an INPUT ERROR naming its cell. An FP8 run at the MFU given refers to the BF16 peak until
``mfu_peak: precision`` asks for the FP8 one. Expectations are equalities and ratios between recalculated
cells, never cached values.

Scenario 0 of the default workbook is llama-7b on 256 H800 (BF16, MFU given, the book's 17.9.1 case).
"""

from __future__ import annotations

import math

import pytest

from tests.writer.edits import EditBook, Layout, Recalc, recalc_edited
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

REL = 1e-9
TM, RATE, PEAK, PREC = ("training.time_model", "training.measured_TFLOPS_per_gpu", "training.mfu_peak",
                        "training.precision")
EDITS = {
    "roundtrip": [],
    "measured_300": [(TM, "measured"), (RATE, 300)],
    "measured_450": [(TM, "measured"), (RATE, 450)],
    "measured_blank": [(TM, "measured"), (RATE, None)],
    "rate_typed_step": [(TM, "step"), (RATE, 300)],
    "fp8": [(PREC, "fp8")],
    "fp8_precision_peak": [(PREC, "fp8"), (PEAK, "precision")],
}


def close(a, b, rel=REL) -> bool:
    return isinstance(a, float) and math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


@pytest.fixture(scope="module")
def layout(built) -> Layout:
    return Layout(built[0])


@pytest.fixture(scope="module")
def rc(built, layout, tmp_path_factory) -> dict[str, Recalc]:
    steps = {name: [lambda b, k=k, v=v: b.plan(k, 0, v) for k, v in edits] for name, edits in EDITS.items()}
    return recalc_edited(built[0], tmp_path_factory.mktemp("measured"), steps, layout)


def test_measured_rate_drives_the_days_in_use_and_the_cost(rc, built):
    r = rc["measured_300"]
    n = EditBook(built[0]).plan_cell("training.num_gpus", 0).value  # an input: not in the recalculated values
    hw = r.get("Step Time", "st_hardware_FLOPs_per_step", 0)
    assert close(r.get("Step Time", "meas_step_s", 0), hw / (n * 300e12))
    assert r.get("Step Time", "train_time_model_position", 0) == 3.0
    days = r.get("Step Time", "meas_train_days_with_overhead", 0)
    assert r.get("Step Time", "train_days", 0) == days and r.get("Cost", "train_days_actual", 0) == days
    assert close(r.get("Step Time", "train_job_gpu_hours", 0), n * 24 * days)
    assert close(r.get("Step Time", "meas_hfu", 0), 300 / r.get("Plan", "mfu_peak_TFLOPS", 0))
    assert r.get("Step Time", "train_mfu", 0) == r.get("Step Time", "meas_mfu", 0) < r.get("Step Time", "meas_hfu", 0)
    assert r.get("Summary", "train_days", 0) == days
    assert r.get("Plan", "input_errors_count", 0) == 0.0


def test_days_and_cost_follow_the_rate_inversely(rc, layout):
    a, b = rc["measured_300"], rc["measured_450"]
    for sheet, key in (("Step Time", "train_days"), ("Cost", "train_cost_usd"), ("Step Time", "train_step_time_s"),
                       ("Storage", "ckpt_interval_min"), ("Comm", "comm_compute_step_s")):
        assert close(b.get(sheet, key, 0), a.get(sheet, key, 0) * 300 / 450), key
    assert close(b.get("Step Time", "train_tokens_per_s", 0), a.get("Step Time", "train_tokens_per_s", 0) * 1.5)
    for j in range(1, len(layout.names)):  # the other scenarios do not move
        assert b.get("Cost", "train_cost_usd", j) == a.get("Cost", "train_cost_usd", j)


def test_blank_rate_under_measured_is_an_input_error_naming_its_cell(rc, layout):
    r = rc["measured_blank"]
    status = f"INPUT ERROR: Plan!{layout.cell('Plan', RATE, 0)} Measured TFLOP/s per GPU"
    assert r.get("Plan", "input_error_training_measured_TFLOPS_per_gpu", 0) == 1.0
    assert r.get("Checks", "scenario_status", 0) == status
    assert r.master == f"CHECKS FAIL: {layout.names[0]}: {status}"
    assert r.errors("Cover", "Summary", "Checks") == {}


def test_a_typed_rate_is_harmless_under_another_time_model(rc):
    r, base = rc["rate_typed_step"], rc["roundtrip"]
    assert r.get("Plan", "input_errors_count", 0) == 0.0
    assert r.get("Step Time", "train_days", 0) == r.get("Step Time", "st_train_days_with_overhead", 0)
    assert close(r.get("Step Time", "meas_step_s", 0), rc["measured_300"].get("Step Time", "meas_step_s", 0))
    # blank under the MFU given: the measured block shows the step model's own rate
    assert close(base.get("Step Time", "meas_step_s", 0), base.get("Step Time", "st_step_s", 0))


def test_fp8_mfu_refers_to_bf16_unless_precision_is_asked_for(rc, catalog):
    h800 = catalog.gpus["h800"]
    base, fp8, asked = rc["roundtrip"], rc["fp8"], rc["fp8_precision_peak"]
    assert close(fp8.get("Plan", "mfu_peak_TFLOPS", 0), h800.bf16_dense_TFLOPS)
    assert close(fp8.get("Plan", "train_peak_TFLOPS", 0), h800.fp8_dense_TFLOPS)
    assert close(asked.get("Plan", "mfu_peak_TFLOPS", 0), h800.fp8_dense_TFLOPS)
    days = ("Plan", "plan_train_days_with_overhead", 0)
    assert fp8.get(*days) == base.get(*days)  # the MFU given is of the BF16 peak: an FP8 run is not faster
    assert close(asked.get(*days), base.get(*days) * h800.bf16_dense_TFLOPS / h800.fp8_dense_TFLOPS)
    assert close(asked.get("Cost", "train_cost_usd", 0),
                 base.get("Cost", "train_cost_usd", 0) * h800.bf16_dense_TFLOPS / h800.fp8_dense_TFLOPS)
