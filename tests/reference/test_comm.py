"""Unit and property tests of workbook.reference.comm (spec 17.6)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from workbook.reference import comm


def test_ring_allreduce_7b():
    assert comm.ring_allreduce_time_s(size_GB=14, n=8, bw_GBps=150) == pytest.approx(0.163333, rel=1e-5)
    # alpha term adds 2(N-1) latencies
    t = comm.ring_allreduce_time_s(size_GB=14, n=8, bw_GBps=150, alpha_s=1e-6)
    assert t - 0.1633333333 == pytest.approx(14e-6, rel=1e-3)


def test_tree_models():
    assert comm.tree_allreduce_time_s(size_GB=14, n=4, bw_GBps=150, model="book") == pytest.approx(0.373333, rel=1e-5)
    assert comm.tree_allreduce_time_s(size_GB=14, n=4, bw_GBps=150) == pytest.approx(2 * 14 / 150)


def test_collective_relations():
    g, n = 1.0, 8
    rs = comm.collective_send_GB(primitive="reduce_scatter", size_GB=g, n=n)
    ag = comm.collective_send_GB(primitive="all_gather", size_GB=g / n, n=n)
    assert comm.collective_send_GB(primitive="all_reduce", size_GB=g, n=n) == pytest.approx(rs + ag)
    assert comm.collective_total_GB(primitive="all_to_all", size_GB=g, n=n) == pytest.approx(7)
    with pytest.raises(ValueError):
        comm.collective_send_GB(primitive="gossip", size_GB=1, n=2)


def test_strategy_volumes():
    assert comm.tp_layer_GB(micro_batch=1, seq_len=4096, d_model=4096, tp=4) == pytest.approx(0.201326592)
    assert comm.tp_layer_GB(micro_batch=1, seq_len=4096, d_model=4096, tp=1) == 0
    assert comm.pp_boundary_GB(micro_batch=1, seq_len=4096, d_model=4096) == pytest.approx(0.067108864)
    a1 = comm.ep_a2a_GB(micro_batch=1, seq_len=4096, d_model=4096, ep=8)
    assert comm.ep_a2a_GB(micro_batch=1, seq_len=4096, d_model=4096, ep=8, top_k=2, capacity_factor=1.25) == pytest.approx(2.5 * a1)
    assert comm.dp_grad_shard_GB(params=70e9, tp=8, pp=2) == pytest.approx(8.75)


def test_hybrid_step_and_sizing():
    assert comm.step_time_hybrid_s(t_compute_s=0.96, t_tp_s=0.43, t_dp_s=0.26, tp_overlap_frac=0.6) == 0.96
    assert comm.step_time_hybrid_s(t_compute_s=0.1, t_tp_s=0.2, t_dp_s=0.3, model="max") == 0.3
    assert comm.dp_bw_per_gpu_GBps(params=70e9, dp=64, t_step_s=1) == pytest.approx(275.625)
    assert comm.rails_needed(bw_GBps=275.625) == 6
    assert comm.dp_bw_per_gpu_hier_GBps(grad_GB=140, dp=64, ranks_per_node=8, t_step_s=1) == pytest.approx(30.625)
    assert comm.dp_bw_per_gpu_hier_GBps(grad_GB=140, dp=8, ranks_per_node=8, t_step_s=1) == 0
    assert comm.topology_for_cluster(100)["topology"] == "NVSwitch + 8-rail"


@given(n=st.integers(2, 100_000), g=st.floats(min_value=0, max_value=1e4), bw=st.floats(min_value=0.1, max_value=1e4))
def test_ring_bounded_by_weak_limit(n, g, bw):
    t = comm.ring_allreduce_time_s(size_GB=g, n=n, bw_GBps=bw)
    assert 0 <= t <= comm.dp_weak_limit_s(grad_GB=g, bw_GBps=bw) * (1 + 1e-12)
    assert 0.5 < comm.algbw_frac(n) <= 1


@given(tc=st.floats(min_value=0, max_value=1e4), tm=st.floats(min_value=1e-6, max_value=1e4))
def test_share_and_ratio_consistent(tc, tm):
    share = comm.comm_share_frac(t_comm=tm, t_compute=tc)
    r = comm.compute_comm_ratio(t_compute=tc, t_comm=tm)
    assert 0 <= share <= 1 and math.isfinite(r)
    assert share == pytest.approx(1 - comm.scaling_efficiency_frac(r), abs=1e-9)


def test_tp_book_form_17_9_3() -> None:
    """Spec T6 book form B*S*d*3 bytes per layer: 17.9.3 (B*S = 4096, d = 16384) gives 201 MB, not the
    book's 100 MB (ERRATUM 25); the standard form is 16*B*S*d*(t-1)/t over fwd + bwd."""
    from workbook.reference import comm as cm

    assert cm.tp_layer_book_GB(micro_batch=1, seq_len=4096, d_model=16384) == pytest.approx(0.201326592, rel=1e-12)
    book = cm.tp_layer_book_GB(micro_batch=2, seq_len=2048, d_model=8192)
    std = cm.tp_layer_GB(micro_batch=2, seq_len=2048, d_model=8192, tp=8)
    assert std / book == pytest.approx(16 * 7 / 8 / 3)
