"""workbook.reference.tco_bill: the fat tree, optics, power for the whole IT load, space and staff (issue 23)."""

from __future__ import annotations

import pytest

from workbook.reference import tco, tco_bill


def test_one_leaf_up_to_its_ports_then_leaves_and_spines():
    assert tco_bill.leaf_switches(nic_ports=8, switch_ports=64, downlink_frac=0.5) == 1
    assert tco_bill.spine_switches(nic_ports=64, switch_ports=64, downlink_frac=0.5) == 0
    # 528 NDR ports (66 servers of 8): 17 leaves of 32 down, 17 x 32 uplinks on 64-port spines = 9
    assert tco_bill.leaf_switches(nic_ports=528, switch_ports=64, downlink_frac=0.5) == 17
    assert tco_bill.spine_switches(nic_ports=528, switch_ports=64, downlink_frac=0.5) == 9
    assert tco_bill.links(nic_ports=528, switch_ports=64, downlink_frac=0.5) == 1056
    assert tco_bill.links(nic_ports=8, switch_ports=64, downlink_frac=0.5) == 8


def test_a_non_blocking_tree_uses_3_switch_ports_per_nic_as_the_book_says():
    """17.9.3's note: one tier counts 1 switch port per NIC (256 switches), a two-tier tree 3 (768)."""
    leaves = tco_bill.leaf_switches(nic_ports=16384, switch_ports=64, downlink_frac=0.5)
    spines = tco_bill.spine_switches(nic_ports=16384, switch_ports=64, downlink_frac=0.5)
    assert leaves + spines == tco.switch_count(nodes=2048, nics_per_node=8, switch_ports=64, switch_ports_per_nic=3)


def test_optics_power_space_staff():
    assert tco_bill.optics_capex_usd(links=1056, usd_per_link=2500) == 2_640_000
    kw = tco_bill.it_power_kW(gpus=8, gpu_tdp_W=700, servers=1, host_W_per_server=4600, switches=1, switch_W=1720)
    assert kw == {"gpu": 5.6, "host": 4.6, "network": 1.72, "it": pytest.approx(11.92, rel=1e-15)}
    # DGX H100: 10.2 kW a server; at PUE 1.4 and $0.10/kWh a year is 10.2 x 1.4 x 0.1 x 8760
    assert tco_bill.power_per_year_usd(it_kW=10.2, pue=1.4, usd_per_kWh=0.1) == pytest.approx(12_509.28, rel=1e-12)
    assert tco_bill.space_per_year_usd(it_kW=100, usd_per_kW_month=184.06) == pytest.approx(220_872, rel=1e-12)
    assert tco_bill.staff_fte(gpus=640, gpus_per_fte=1000) == 1 and tco_bill.staff_fte(gpus=1001, gpus_per_fte=1000) == 2
    assert tco_bill.staff_per_year_usd(fte=2, usd_per_fte_year=180_000) == 360_000
    assert tco_bill.staff_per_year_usd(fte=2, usd_per_fte_year=180_000, override_usd=0.0) == 0.0


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError):
        tco_bill.leaf_switches(nic_ports=8, switch_ports=0, downlink_frac=0.5)
    with pytest.raises(ValueError):
        tco_bill.leaf_switches(nic_ports=8, switch_ports=64, downlink_frac=0)
    with pytest.raises(ValueError):
        tco_bill.staff_fte(gpus=8, gpus_per_fte=0)
