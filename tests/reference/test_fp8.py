"""FP8 training recipes in the step-time model (workbook/reference/fp8.py, docs/step_time.md "FP8 training")."""

from __future__ import annotations

from typing import get_args

import pytest

from workbook.catalog import load_catalog
from workbook.reference import fp8
from workbook.reference import step_time as stm
from workbook.scenario.model import Fp8Recipe


def _kw(gpu_id: str = "h100", **over) -> dict:
    cat = load_catalog()
    gpu = cat.gpu(gpu_id)
    kw = dict(stm.arch_from_model(cat.model("llama-3-70b")), tp=8, pp=4, micro_batch=1, seq_len=8192,
              recompute="selective", **stm.hardware_from_catalog(gpu=gpu, efficiency=cat.efficiency_of(gpu_id)))
    kw["fp8_peak_TFLOPS"] = gpu.fp8_dense_TFLOPS
    kw.update(over)
    return kw


def test_every_recipe_has_a_source_and_sane_factors():
    assert set(fp8.RECIPES) == set(fp8.FP8_RECIPES) and fp8.FP8_RECIPES[0] == fp8.DEFAULT_RECIPE
    assert fp8.FP8_RECIPES == get_args(Fp8Recipe)  # the scenario input's choices are the table's rows, in order
    for name, r in fp8.RECIPES.items():
        assert 0 < r.gemm_rate_frac <= 1 and r.cast_bytes_per_elem >= 3 and r.weight_bytes in (1.0, 2.0), name
        assert r.source
    with pytest.raises(ValueError, match="fp8_recipe"):
        fp8.recipe("mxfp4")


def test_fp8_speeds_up_the_layer_gemms_only():
    bf16 = stm.step_time(dp=4, micro_batches=8, **_kw())
    f8 = stm.step_time(dp=4, micro_batches=8, **_kw(fp8_recipe="delayed"))
    assert f8["gemm_mb_s"] == pytest.approx(bf16["gemm_mb_s"] * 989.5 / 1979.0, rel=1e-3)  # H100 FP8 = 2 x BF16
    assert f8["attention_mb_s"] == bf16["attention_mb_s"]  # attention stays BF16
    assert f8["head_mb_s"] == bf16["head_mb_s"]  # LM head stays BF16
    assert f8["fp8_cast_mb_s"] > 0 == bf16["fp8_cast_mb_s"]
    assert f8["step_s"] < bf16["step_s"]
    assert f8["model_FLOPs_per_step"] == bf16["model_FLOPs_per_step"]  # the work is the same


def test_current_scaling_costs_more_than_delayed_and_rowwise_more_than_per_tensor():
    steps = {r: stm.step_time(dp=4, micro_batches=8, **_kw(fp8_recipe=r))["step_s"] for r in fp8.FP8_RECIPES}
    assert steps["current"] > steps["delayed"]
    assert steps["rowwise"] > steps["current"]
    assert steps["blockwise"] > steps["delayed"]


def test_without_fp8_units_fp8_only_adds_the_casts():
    bf16 = stm.step_time(dp=4, micro_batches=8, **_kw("a100-80gb"))
    f8 = stm.step_time(dp=4, micro_batches=8, **_kw("a100-80gb", fp8_recipe="delayed"))
    assert f8["gemm_mb_s"] == bf16["gemm_mb_s"]
    assert f8["step_s"] > bf16["step_s"]


def test_cast_elements_per_token():
    assert fp8.cast_elems_per_token(d_model=8192, n_heads=64, v_head_dim=128, ffn_width=28672) == 2 * 8192 + 8192 + 28672
