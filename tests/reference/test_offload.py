"""Unit tests for workbook.reference.offload (spec 17.4.12)."""

import pytest

from workbook.reference import offload as off


def test_offload_llama7b():
    t = off.offload_traffic_GB(params=6.74e9)
    assert t == pytest.approx(26.96)
    assert off.offload_time_s(traffic_GB=t, pcie_quoted_GBps=128) == pytest.approx(0.210625)
    assert off.offload_time_s(traffic_GB=t, pcie_quoted_GBps=128, direction_factor=0.5) == pytest.approx(0.42125)
    assert off.step_overhead_frac(extra_s=0.210625, step_s=0.5) == pytest.approx(0.42125)


def test_tiers_and_kv_read():
    assert off.times_slower(bw_GBps=50, hbm_bw_GBps=3350) == 67
    assert off.kv_read_time_s(kv_GB_per_seq=42.94967296, batch=1, pcie_quoted_GBps=128,
                              direction_factor=0.5) == pytest.approx(0.67108864)
    with pytest.raises(ValueError):
        off.pcie_effective_GBps(pcie_quoted_GBps=128, direction_factor=0)
