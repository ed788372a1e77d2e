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


# ---------------------------------------------------------------- ZeRO-3 working set and the device's bytes
def _tensor(**training):
    return run(make_context(training={"num_gpus": 8, "zero_stage": 3, "memory_model": "tensors", **training}), "zero")


def test_zero3_adds_the_gathered_layer_to_the_model_states():
    from workbook.reference import sharded_state as ss
    from tests.calc.part_a_context import LLAMA7B

    q = _tensor()
    block = ss.block_params_per_gpu(ss.sharding_param_counts(LLAMA7B), moe_layer=False)
    assert q["state_zero3_layer_params"] == pytest.approx(block) and block > 32000 * 4096  # a block beats the embedding
    assert q["state_zero3_gather_bytes_per_param"] == 4  # BF16 weights + their gradients
    assert q["state_zero3_working_set_GB"] == pytest.approx(4 * block / 1e9)
    assert q["state_model_states_per_gpu_GB"] == pytest.approx(q["state_per_gpu_GB"] + 4 * block / 1e9)
    assert q["zero_gathered_layer_GB"] == q["state_zero3_working_set_GB"]
    assert q["zero_total_per_gpu_GB"] == pytest.approx(q["state_model_states_per_gpu_GB"] + q["state_act_per_gpu_GB"]
                                                       + q["train_overhead_GB"])


def test_no_working_set_below_zero3_nor_in_the_book_model():
    assert _tensor(zero_stage=2)["state_zero3_working_set_GB"] == 0
    book = _tensor(memory_model="book")
    assert book["zero_gathered_layer_GB"] == 0
    assert book["zero_hbm_capacity_GB"] == 80 and book["zero_total_per_gpu_GB"] == book["zero_book_total_per_gpu_GB"]


def test_tensor_model_fits_against_device_bytes_times_the_allocatable_share():
    """ZeRO-3 state 13.5 + 0.8 GB, 60 GB of activations, 2 GB overhead = 76.3 GB: inside all of the
    H800's 81,559 MiB (85.5 GB), outside 0.885 of it (75.7 GB)."""
    device = 81559 * 2**20 / 1e9
    flags = []
    for frac in (1.0, 0.95, 0.885, 0.7, 0.5):
        q = _tensor(act_GB=60.0, hbm_allocatable_frac=frac)
        assert q["zero_hbm_device_GB"] == pytest.approx(device)
        assert q["zero_hbm_capacity_GB"] == pytest.approx(device * frac)
        assert q["zero_hbm_headroom_GB"] == pytest.approx(device * frac - q["zero_total_per_gpu_GB"])
        flags.append(q["zero_fits_hbm_flag"])
    assert flags == [1, 1, 0, 0, 0]  # a smaller share never turns a FAIL into a PASS
