"""Unit and property tests of workbook.reference.layout (spec 17.5.8, 17.5.10)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from workbook.reference import layout


def test_world_size_conventions():
    assert layout.world_size(tp=8, pp=4, dp=2, ep=4) == 64
    assert layout.world_size(tp=8, pp=4, dp=2, ep=4, ep_convention="book") == 256
    with pytest.raises(ValueError):
        layout.world_size(tp=1, pp=1, dp=1, ep_convention="x")


def test_layout_checks():
    ok = layout.layout_checks(num_gpus=64, tp=8, pp=4, layers=80)
    assert all(ok.values())
    bad = layout.layout_checks(num_gpus=672, tp=8, pp=8, layers=80)
    assert not bad["product_ok"]  # DP = 10.5
    assert not layout.layout_checks(num_gpus=64, tp=16, pp=1, layers=80)["tp_ok"]
    assert not layout.layout_checks(num_gpus=96, tp=8, pp=3, layers=80)["pp_divides_layers"]


def test_procedure_70b():
    n_mem = layout.gpus_for_memory(params=70e9)
    assert n_mem == 19
    p = layout.plan_gpus(total_FLOP=8.4e23, target_days=30, peak_TFLOPS=989.5, mfu=0.38, tp=8, pp=4, gpus_memory=n_mem)
    assert (p["gpus"], p["dp"]) == (864, 27)
    # memory floor dominates a tiny run
    p2 = layout.plan_gpus(total_FLOP=1e18, target_days=30, peak_TFLOPS=989.5, mfu=0.38, tp=8, pp=1, gpus_memory=19)
    assert p2["gpus"] == 24


def test_strategy_and_nodes():
    assert layout.strategy(model_fits_one_gpu=True, layer_fits_one_gpu=True) == "DP"
    assert layout.strategy(model_fits_one_gpu=False, layer_fits_one_gpu=True) == "PP+DP"
    assert layout.strategy(model_fits_one_gpu=False, layer_fits_one_gpu=False) == "TP+PP+DP"
    assert layout.nodes(num_gpus=864) == 108 and layout.nodes(num_gpus=4) == 1
    assert layout.ep_recommended(2) == 4


@given(pp=st.integers(1, 512), m=st.integers(1, 100_000))
def test_bubble_share_in_unit_interval(pp, m):
    f = layout.bubble_share_frac(pp=pp, micro_batches=m)
    assert 0 <= f < 1
    assert layout.bubble_frac(pp=pp, micro_batches=m) >= f


def test_bubble_zero_microbatches_rejected():
    with pytest.raises(ValueError):
        layout.bubble_frac(pp=4, micro_batches=0)
