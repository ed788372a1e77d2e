"""calc.hardware on LLaMA-7B / H800 (spec 17.1)."""

import pytest

from tests.calc.part_a_context import make_context, run
from workbook.calc import hardware


def test_values():
    q = run(make_context(), "hardware")
    assert q["ridge_FLOP_per_byte"] == pytest.approx(989.5e12 / 3350e9)
    assert q["bw_flops_ratio_B_per_kFLOP"] == pytest.approx(3.3855482567)
    assert q["node_network_GBps"] == 400
    assert q["node_network_Tbps"] == pytest.approx(3.2)
    assert q["nvlink_to_nic_port_ratio"] == 8
    assert q["nvlink_effective_GBps"] == pytest.approx(320)
    assert q["node_nvlink_bisection_GBps"] == 1600
    assert q["hbm_vs_pcie_slowdown_x"] == pytest.approx(3350 / 64)
    assert q["gpu_native_fp8_flag"] == 1


def test_fp8_training_peak():
    q = run(make_context(training={"precision": "fp8"}), "hardware")
    assert q["train_peak_TFLOPS"] == 1979


def test_mfu_peak_is_bf16_unless_the_precision_basis_is_asked_for():
    fp8 = run(make_context(training={"precision": "fp8"}), "hardware")
    assert fp8["mfu_peak_TFLOPS"] == 989.5  # an FP8 run's MFU still refers to the BF16 dense peak
    asked = run(make_context(training={"precision": "fp8", "mfu_peak": "precision"}), "hardware")
    assert asked["mfu_peak_TFLOPS"] == asked["train_peak_TFLOPS"] == 1979
    bf16 = run(make_context(training={"mfu_peak": "precision"}), "hardware")
    assert bf16["mfu_peak_TFLOPS"] == 989.5  # the BF16 run's precision peak is the BF16 one


def test_labels_unique():
    labels = [x.label for x in hardware.QUANTITIES]
    assert len(labels) == len(set(labels))
