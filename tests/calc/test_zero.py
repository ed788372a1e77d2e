"""calc.zero on LLaMA-7B / H800 (spec 17.4.8)."""

import pytest

from tests.calc.part_a_context import make_context, run

P = 6_738_415_616


def test_stages_on_8_gpus():
    q = run(make_context(), "zero")
    assert q["dp_degree"] == 8
    assert q["zero0_static_per_gpu_GB"] == pytest.approx(16 * P / 1e9)
    assert q["zero1_static_per_gpu_GB"] == pytest.approx((4 + 12 / 8) * P / 1e9)
    assert q["zero2_static_per_gpu_GB"] == pytest.approx((2 + 14 / 8) * P / 1e9)
    assert q["zero3_static_per_gpu_GB"] == pytest.approx(2 * P / 1e9)
    assert q["zero_static_per_gpu_GB"] == q["zero1_static_per_gpu_GB"]  # default stage 1
    assert q["zero_fits_hbm_flag"] == 1
    assert q["zero0_fits_flag"] == 0
    assert q["zero3_traffic_GB"] == pytest.approx(6 * P / 1e9 * 7 / 8)
    assert q["offload_pcie_traffic_GB"] == pytest.approx(4 * P / 8 / 1e9)


def test_model_parallel_divides_params():
    q = run(make_context(training={"num_gpus": 16, "tp": 2, "pp": 2, "zero_stage": 3}), "zero")
    assert q["dp_degree"] == 4
    assert q["zero_static_per_gpu_GB"] == pytest.approx(16 * P / 4 / 4 / 1e9)
