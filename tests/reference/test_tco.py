"""workbook.reference.tco: the book's 17.9.3 owned-hardware figures and the year-by-year table."""

from __future__ import annotations

import pytest

from workbook.reference import tco

#: 17.9.3: 16,384 H800 in 2,048 servers of 8 GPUs, 8 NDR ports per server, 3 years
NODES, NICS, YEARS, GPUS = 2048, 8, 3, 16384


def test_switches_of_17_9_3_are_256_at_50k_is_12_8M():
    n = tco.switch_count(nodes=NODES, nics_per_node=NICS, switch_ports=64)
    assert n == 256
    assert tco.network_capex_usd(switches=n, switch_usd=50_000) == 12.8e6


def test_switch_count_rounds_up_and_counts_tiers():
    assert tco.switch_count(nodes=66, nics_per_node=8, switch_ports=64) == 9  # 528 ports
    assert tco.switch_count(nodes=8, nics_per_node=8, switch_ports=64) == 1
    assert tco.switch_count(nodes=2048, nics_per_node=8, switch_ports=64, switch_ports_per_nic=3) == 768
    with pytest.raises(ValueError):
        tco.switch_count(nodes=1, nics_per_node=8, switch_ports=0)


def test_three_year_tco_of_17_9_3_is_1_63_to_1_80_per_gpu_hour():
    # servers $614.4M (2,048 x $300K), switches $12.8M, Lustre $1-3M; power and cooling $2-4M a month
    servers = NODES * 300_000
    assert servers == 614.4e6
    low = tco.tco_usd(capex_usd=servers + 12.8e6 + 1e6, opex_per_year_usd=2e6 * 12, years=YEARS)
    high = tco.tco_usd(capex_usd=servers + 12.8e6 + 3e6, opex_per_year_usd=4e6 * 12, years=YEARS)
    assert tco.tco_usd_per_gpu_hour(tco_usd=low, num_gpus=GPUS, years=YEARS) == pytest.approx(1.63, abs=0.005)
    assert tco.tco_usd_per_gpu_hour(tco_usd=high, num_gpus=GPUS, years=YEARS) == pytest.approx(1.80, abs=0.005)


def test_storage_staff_support_and_rent_lines():
    assert tco.storage_per_year_usd(storage_TB=100, usd_per_TB_month=30) == 36_000
    assert tco.support_per_year_usd(capex_usd=1e6, support_frac_per_year=0.08) == 80_000
    assert tco.rent_per_year_usd(num_gpus=8, gpu_hour_usd=2.0) == 8 * 2.0 * 8760
    with pytest.raises(ValueError):
        tco.storage_per_year_usd(storage_TB=-1, usd_per_TB_month=30)


def test_year_fractions_end_inside_a_year_and_stay_zero_after():
    assert tco.year_fractions(years=3, max_years=5) == [1, 1, 1, 0, 0]
    assert tco.year_fractions(years=2.5, max_years=4) == [1, 1, 0.5, 0]
    assert tco.year_fractions(years=0.5, max_years=3) == [0.5, 0, 0]
    for bad in (0, 6):
        with pytest.raises(ValueError):
            tco.year_fractions(years=bad, max_years=5)


@pytest.mark.parametrize("years", [3, 2.5, 10])
def test_by_year_adds_up_to_the_totals(years):
    opex = {"power": 1.4e7, "storage": 1.6e5, "staff": 1e6, "support": 5e6}
    rows = tco.by_year(capex_usd=6.272e8, opex_per_year_usd=opex, rent_per_year_usd=2.87e8, years=years, max_years=10)
    assert len(rows) == 10
    assert rows[0]["capex_usd"] == 6.272e8 and all(r["capex_usd"] == 0 for r in rows[1:])
    total = tco.tco_usd(capex_usd=6.272e8, opex_per_year_usd=sum(opex.values()), years=years)
    assert rows[-1]["cumulative_usd"] == pytest.approx(total, rel=1e-12)
    assert sum(r["depreciation_usd"] for r in rows) == pytest.approx(6.272e8, rel=1e-12)
    assert rows[-1]["rent_cumulative_usd"] == pytest.approx(2.87e8 * years, rel=1e-12)
    for r in rows:
        assert r["opex_usd"] == pytest.approx(sum(r[f"{s}_usd"] for s in opex), rel=1e-12)
        assert r["cash_usd"] == r["capex_usd"] + r["opex_usd"]
    past = [r for r in rows if r["frac"] == 0]
    assert len(past) == 10 - int(-(-years // 1))
    assert all(r["opex_usd"] == r["rent_usd"] == r["depreciation_usd"] == 0 for r in past)


def test_gpus_owned_follow_the_purpose():
    """Training owns the GPUs billed, serving the serving GPUs in use, both the larger (one cluster)."""
    assert tco.gpus_owned(purpose="training", train_gpus_billed=640, serving_gpus=28) == 640
    assert tco.gpus_owned(purpose="serving", train_gpus_billed=640, serving_gpus=28) == 28
    assert tco.gpus_owned(purpose="both", train_gpus_billed=640, serving_gpus=28) == 640
    assert tco.gpus_owned(purpose="both", train_gpus_billed=64, serving_gpus=96) == 96
    with pytest.raises(ValueError):
        tco.gpus_owned(purpose="rent", train_gpus_billed=8, serving_gpus=8)
    with pytest.raises(ValueError):
        tco.gpus_owned(purpose="serving", train_gpus_billed=8, serving_gpus=-1)


def test_servers_are_whole_and_priced_each():
    assert tco.server_count(gpus=GPUS, gpus_per_server=8) == NODES  # 17.9.3: 16,384 / 8 = 2,048
    assert tco.server_count(gpus=28, gpus_per_server=8) == 4  # 7 serving groups of 4 GPUs
    assert tco.server_count(gpus=4, gpus_per_server=8) == 1
    assert tco.server_count(gpus=0, gpus_per_server=8) == 0
    assert tco.server_capex_usd(servers=NODES, server_usd=300_000) == 614.4e6
    with pytest.raises(ValueError):
        tco.server_count(gpus=8, gpus_per_server=0)


def test_serving_storage_is_the_weights_served_once():
    assert tco.serving_storage_TB(weights_GB=141.1) == pytest.approx(0.1411, rel=1e-12)  # LLaMA-3-70B at BF16


@pytest.mark.parametrize("purpose, kept", [("training", 26.0), ("both", 26.0), ("serving", 0.1411)])
def test_storage_kept_follows_the_purpose(purpose, kept):
    """Training (or both: its checkpoints hold the weights served) keeps the training storage; serving the weights."""
    assert tco.storage_kept_TB(purpose=purpose, training_TB=26.0, serving_weights_GB=141.1) == pytest.approx(kept)


def test_storage_kept_rejects_an_unknown_purpose():
    with pytest.raises(ValueError, match="purpose"):
        tco.storage_kept_TB(purpose="inference", training_TB=1.0, serving_weights_GB=1.0)
