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


def test_layout_gpu_step_is_the_lcm_for_powers_of_two_else_a_common_multiple():
    assert layout.layout_gpu_step(gpus_per_node=8, tp=8, cp=1, pp=4, etp=8, ep=1) == 32
    assert layout.layout_gpu_step(gpus_per_node=8, tp=1, cp=1, pp=1, etp=1, ep=1) == 8  # whole nodes
    assert layout.layout_gpu_step(gpus_per_node=8, tp=1, cp=1, pp=16, etp=1, ep=64) == 1024  # the EP group
    assert layout.layout_gpu_step(gpus_per_node=8, tp=8, cp=1, pp=3, etp=8, ep=1) == 24  # max is a multiple
    assert layout.layout_gpu_step(gpus_per_node=8, tp=2, cp=1, pp=3, etp=2, ep=1) == 8 * 6 * 6  # not: the product
    with pytest.raises(ValueError):
        layout.layout_gpu_step(gpus_per_node=8, tp=0, cp=1, pp=1, etp=1, ep=1)


@given(e=st.lists(st.integers(0, 6), min_size=6, max_size=6), f=st.lists(st.sampled_from([1, 3, 5]), min_size=6,
                                                                          max_size=6))
def test_layout_gpu_step_divides_by_nodes_replicas_and_expert_groups(e, f):
    gpn, tp, cp, pp, etp, ep = (2 ** a * b for a, b in zip(e, f))
    step = layout.layout_gpu_step(gpus_per_node=gpn, tp=tp, cp=cp, pp=pp, etp=etp, ep=ep)
    assert step % gpn == 0 and step % (tp * cp * pp) == 0 and step % (etp * ep * pp) == 0
    if f == [1] * 6:  # powers of two: the least common multiple, the largest of the three
        assert step == max(gpn, tp * cp * pp, etp * ep * pp)


def test_gpus_for_target_at_layout():
    r = layout.gpus_for_target_at_layout(num_gpus=256, days=12, target_days=10, gpu_step=8)
    assert r["gpus_time"] == pytest.approx(307.2) and r["gpus"] == 312
    assert r["days"] == pytest.approx(12 * 256 / 312) and r["days"] <= 10
    # the memory floor wins on a short run, in whole steps
    assert layout.gpus_for_target_at_layout(num_gpus=8, days=1, target_days=10, gpu_step=16, gpus_memory=19)["gpus"] == 32
    with pytest.raises(ValueError):
        layout.gpus_for_target_at_layout(num_gpus=8, days=1, target_days=0, gpu_step=8)


@given(n=st.integers(1, 4096), days=st.floats(0.01, 1000), target=st.floats(0.1, 3650), step=st.sampled_from(
    [1, 8, 16, 24, 64, 512]))
def test_gpus_for_target_at_layout_meets_the_target_in_whole_steps(n, days, target, step):
    r = layout.gpus_for_target_at_layout(num_gpus=n, days=days, target_days=target, gpu_step=step)
    assert r["gpus"] % step == 0 and r["gpus"] >= r["gpus_time"] * (1 - 1e-12)
    assert r["days"] <= target * (1 + 1e-9)
    assert r["gpus"] == step or r["gpus"] - step < r["gpus_time"] * (1 + 1e-9)  # the least such count
