"""The GEMM efficiencies of a GPU (catalog/efficiency.yaml): ``gemm_efficiency`` is the training step model's
end-to-end BF16 value (calibrated on training runs), ``fp8_gemm_efficiency`` that of an FP8 recipe's layer GEMMs (of
the FP8 peak; left out on a GPU without FP8 units), ``serving_gemm_efficiency`` the serving models' GEMM compute
ceiling (never fitted). Each moves its own numbers and not the others' (docs/validation.md "The shipped factors")."""

from __future__ import annotations

import pytest

from workbook import calc
from workbook.calibrate.factors import Factor, catalog_with
from workbook.catalog import load_catalog
from workbook.scenario.load import load_scenario
from workbook.validation import DEFAULT_DIR
from workbook.validation.load import load_validation_file

CATALOG = load_catalog()
TRAINING = ("st_gemm_FLOPS", "st_step_s", "train_tokens_per_s_per_gpu")
SERVING = ("srv_linear_FLOPS", "srv_ttft_idle_ms", "srv_prefill_ms")


def _scenario(file: str):
    return load_validation_file(DEFAULT_DIR / file, catalog=CATALOG).cases[0].scenario


def _with(field: str, gpu: str, factor: float):
    value = getattr(CATALOG.efficiency[gpu], field) * factor
    return catalog_with(CATALOG, {Factor(f"efficiency.{field}", gpu): value})


@pytest.fixture(scope="module")
def serving():
    return _scenario("serving-ttft-llama3-70b-h100.yaml")


@pytest.fixture(scope="module")
def training():
    return _scenario("llama3-405b-h100.yaml")


def test_serving_reads_the_ceiling_not_the_training_value(serving):
    base = calc.compute(serving, CATALOG)
    assert base["srv_linear_FLOPS"] == pytest.approx(
        CATALOG.gpus[serving.gpu].fp8_dense_TFLOPS * 1e12 * CATALOG.efficiency[serving.gpu].serving_gemm_efficiency)
    halved_training = calc.compute(serving, _with("gemm_efficiency", serving.gpu, 0.5))
    for key in SERVING:
        assert halved_training[key] == base[key], key
    halved_ceiling = calc.compute(serving, _with("serving_gemm_efficiency", serving.gpu, 0.5))
    assert halved_ceiling["srv_linear_FLOPS"] == pytest.approx(base["srv_linear_FLOPS"] / 2)
    assert halved_ceiling["srv_ttft_idle_ms"] > 1.3 * base["srv_ttft_idle_ms"]  # a 5,000-token prefill is compute-bound


def test_training_reads_the_end_to_end_value_not_the_ceiling(training):
    base = calc.compute(training, CATALOG)
    halved_ceiling = calc.compute(training, _with("serving_gemm_efficiency", training.gpu, 0.5))
    for key in TRAINING:
        assert halved_ceiling[key] == base[key], key
    halved_training = calc.compute(training, _with("gemm_efficiency", training.gpu, 0.5))
    assert halved_training["st_gemm_FLOPS"] == pytest.approx(base["st_gemm_FLOPS"] / 2)
    assert halved_training["st_step_s"] > 1.5 * base["st_step_s"]


def test_a_die_shares_its_ceiling():
    """serving_gemm_efficiency belongs to the compute die (compute_as): tied GPUs hold the same value."""
    for gpu, rec in CATALOG.efficiency.items():
        if rec.compute_as:
            assert rec.serving_gemm_efficiency == CATALOG.efficiency[rec.compute_as].serving_gemm_efficiency, gpu


def test_fp8_training_reads_its_own_factor_and_bf16_does_not(training):
    """A BF16 plan does not move with fp8_gemm_efficiency; an FP8 plan's layer GEMMs run at FP8 peak x recipe rate x
    fp8_gemm_efficiency, and its LM head (BF16) still at gemm_efficiency."""
    gpu = training.gpu
    fp8 = training.model_copy(update={"training": training.training.model_copy(update={"precision": "fp8"})})
    base16, base8 = calc.compute(training, CATALOG), calc.compute(fp8, CATALOG)
    moved = _with("fp8_gemm_efficiency", gpu, 0.5)
    assert calc.compute(training, moved)["st_step_s"] == base16["st_step_s"]
    f8 = calc.compute(fp8, moved)
    assert f8["st_layer_gemm_FLOPS"] == pytest.approx(base8["st_layer_gemm_FLOPS"] / 2)
    assert f8["st_gemm_FLOPS"] == base8["st_gemm_FLOPS"]
    assert f8["st_step_s"] > base8["st_step_s"]


def test_a_gpu_without_fp8_units_leaves_the_fp8_factor_out():
    """gpus.yaml gives the A100 no FP8 peak: its record has no fp8_gemm_efficiency, and the loader refuses one (and
    refuses a GPU with an FP8 peak whose record leaves it out)."""
    from workbook.catalog.efficiency import check_fp8_fields
    from workbook.errors import InputError

    assert CATALOG.efficiency["a100-80gb"].fp8_gemm_efficiency is None
    assert all((rec.fp8_gemm_efficiency is None) == (CATALOG.gpus[g].fp8_dense_TFLOPS is None)
               for g, rec in CATALOG.efficiency.items())
    bad = {"a100-80gb": CATALOG.efficiency["a100-80gb"].model_copy(update={"fp8_gemm_efficiency": 0.7})}
    with pytest.raises(InputError, match="no FP8 peak"):
        check_fp8_fields(bad, CATALOG.gpus, "efficiency.yaml")
    missing = {"h100": CATALOG.efficiency["h100"].model_copy(update={"fp8_gemm_efficiency": None})}
    with pytest.raises(InputError, match="fp8_gemm_efficiency is missing"):
        check_fp8_fields(missing, CATALOG.gpus, "efficiency.yaml")
