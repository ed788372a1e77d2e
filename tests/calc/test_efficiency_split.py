"""The two GEMM efficiencies of a GPU (catalog/efficiency.yaml): ``gemm_efficiency`` is the training step model's
end-to-end value (calibrated on training runs), ``serving_gemm_efficiency`` the serving models' GEMM compute ceiling
(never fitted). Each moves its own model's numbers and not the other's (docs/validation.md "The shipped factors")."""

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
