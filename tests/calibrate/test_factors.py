"""The factor registry: kinds of points, the factors each depends on, values put into a catalogue."""

from __future__ import annotations

import pytest

from workbook.calibrate.factors import (KIND_FACTORS, KIND_OPTIONAL, KINDS, SPECS, Factor, catalog_with, factors_of,
                                        kind_of, parse_factor)
from workbook.catalog import load_catalog


@pytest.mark.parametrize("key, kind", [
    ("params_total", "counts"), ("train_total_FLOPs", "counts"), ("act_per_gpu_GB", "memory"),
    ("state_model_states_per_gpu_GB", "memory"), ("st_step_s", "step_time"),
    ("st_hardware_TFLOPS_per_gpu", "step_time"), ("train_tokens_per_s_per_gpu", "step_time"),
    ("train_job_gpu_hours", "gpu_hours"), ("plan_train_days_with_overhead", "gpu_hours"),
    ("srv_ttft_idle_ms", "ttft"), ("srv_load_tpot_ms", "tpot"), ("srv_decode_step_ms", "tpot"),
    ("srv_offline_run_tokens_per_s", "serving_throughput"), ("srv_kv_tokens", "kv_capacity"),
    ("srv_kv_budget_GiB", "kv_capacity"), ("no_such_thing", None),
])
def test_kind_of_keys(key, kind):
    assert kind_of(key) == kind


def test_every_kind_lists_registered_factors_with_sane_bounds():
    for kind in KINDS:
        for name in KIND_FACTORS[kind] + KIND_OPTIONAL[kind]:
            spec = SPECS[name]
            assert 0 < spec.lower < spec.upper and spec.prior_sigma_frac > 0


def test_factors_of_a_gpu_and_engine_exist_in_the_catalogue_and_priors_are_catalogue_values():
    cat = load_catalog()
    fs = factors_of("tpot", "a100-80gb", "vllm-0.6.0", cat)
    labels = [f.label for f in fs]
    assert "efficiency[a100-80gb].hbm_efficiency" in labels
    assert not any(lbl.startswith("device[a100-80gb]") for lbl in labels)  # no device record for the A100
    assert Factor("efficiency.gemm_efficiency", "h100").value(cat) == cat.efficiency["h100"].gemm_efficiency


def test_catalog_with_puts_values_in_and_leaves_the_original():
    cat = load_catalog()
    f, g = Factor("efficiency.gemm_efficiency", "h100"), Factor("engine.cpu_overhead_frac", "vllm-0.6.0")
    new = catalog_with(cat, {f: 0.5, g: 0.3})
    assert f.value(new) == 0.5 and g.value(new) == 0.3
    assert f.value(cat) != 0.5


def test_parse_factor():
    assert parse_factor("efficiency.gemm_efficiency") == ("efficiency.gemm_efficiency", None)
    assert parse_factor("engine[vllm-0.6.0].cpu_overhead_frac") == ("engine.cpu_overhead_frac", "vllm-0.6.0")
    with pytest.raises(ValueError):
        parse_factor("efficiency.no_such_field")


def test_a_compute_die_factor_is_one_factor_for_every_gpu_on_the_die():
    """efficiency.yaml compute_as: the H800's and H200's matmul and attention efficiency are the H100's factors;
    their memory fields stay their own."""
    from workbook.calibrate.factors import catalog_with, factors_of, records_with

    cat = load_catalog()
    labels = {f.label for f in factors_of("step_time", "h800", None, cat)}
    assert labels == {"efficiency[h100].gemm_efficiency", "efficiency[h100].attention_efficiency",
                      "efficiency[h100].fp8_gemm_efficiency"}
    # a GPU without FP8 units has no FP8 GEMM factor (the field is left out of its record)
    assert {f.label for f in factors_of("step_time", "a800", None, cat)} == {
        "efficiency[a100-80gb].gemm_efficiency", "efficiency[a100-80gb].attention_efficiency"}
    attn = Factor("efficiency.attention_efficiency", "h100")
    eff, _ = records_with(cat, "h200", {attn: 0.3})
    assert eff.attention_efficiency == 0.3
    moved = catalog_with(cat, {attn: 0.3, Factor("efficiency.hbm_efficiency", "h100"): 0.5})
    assert [moved.efficiency[g].attention_efficiency for g in ("h100", "h800", "h200")] == [0.3] * 3
    assert moved.efficiency["h200"].hbm_efficiency == cat.efficiency["h200"].hbm_efficiency
