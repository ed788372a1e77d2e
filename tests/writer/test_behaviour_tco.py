"""Behaviour tests of the TCO sheet (issue 9): edit the default workbook as a person would (a storage price
typed or changed on Defaults, staff and support typed, a part-year horizon, switch ports and price), recalculate
with LibreOffice, check what moves and by how much. Expectations are ratios and differences against the
recalculated unedited copy, never the cached values. Scenarios: test_behaviour.py checks the list (0 llama-7b
on 256 H800, 1 deepseek-v2 on 1,024, 2 the 17.9.3 MoE on 16,384, 3 the 17.9.4 70B plan on 640).
"""

from __future__ import annotations


import pytest

from tests.writer.edits import Layout, Recalc, close, recalc_edited
from workbook.calc.tco_years import YEARS, key
from workbook.catalog import load_catalog
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

D = load_catalog().defaults.as_dict()
N = 6  # scenarios of the default workbook
TRAINING = range(4)

EDITS = {
    "roundtrip": lambda b: None,
    # scenario 1 types the old default; the Defaults sheet doubles it for every scenario that leaves it blank
    "storage_price_x2": lambda b: (b.plan("cost.storage_usd_per_TB_month", 1, D["storage_usd_per_TB_month"]),
                                   b.default("storage_usd_per_TB_month", 2 * D["storage_usd_per_TB_month"])),
    "storage_price_typed_x2": lambda b: b.plan("cost.storage_usd_per_TB_month", 3, 2 * D["storage_usd_per_TB_month"]),
    "staff_support": lambda b: (b.plan("cost.staff_usd_per_year", 0, 1e6),
                                b.plan("cost.support_frac_of_capex_per_year", 0, 0.1)),
    "years_2.5": lambda b: b.plan("cost.depreciation_years", 2, 2.5),
    "switches": lambda b: (b.plan("network.switch_ports", 2, 32), b.plan("cost.ib_switch_usd", 0,
                                                                          2 * D["ib_switch_usd"])),
}


@pytest.fixture(scope="module")
def rc(built, tmp_path_factory) -> dict[str, Recalc]:
    steps = {name: [fn] for name, fn in EDITS.items()}
    return recalc_edited(built[0], tmp_path_factory.mktemp("behaviour_tco"), steps, Layout(built[0]))



def test_roundtrip_has_no_error_values_and_the_book_figures(rc):
    base = rc["roundtrip"]
    assert base.errors("TCO") == {}
    assert base.get("TCO", "tco_server_capex_usd", 2) == 614.4e6
    # the book's 256 switches are one tier; the sheet prices 512 leaves + 256 spines (3 ports per NIC, issue 23)
    assert base.get("TCO", "tco_switches", 2) == 768 and base.get("TCO", "tco_switch_capex_usd", 2) == 38.4e6
    for i in TRAINING:
        assert close(base.get("TCO", key(YEARS[-1], "cumulative"), i), base.get("TCO", "tco_total_usd", i))


@pytest.mark.parametrize("name, moved", [("storage_price_x2", [0, 2, 3, 4, 5]), ("storage_price_typed_x2", [3])])
def test_storage_price_x2_doubles_the_storage_line_and_moves_the_tco_by_exactly_that(rc, name, moved):
    base, r = rc["roundtrip"], rc[name]
    for i in range(N):
        line, line0 = r.get("TCO", "tco_storage_per_year_usd", i), base.get("TCO", "tco_storage_per_year_usd", i)
        total, total0 = r.get("TCO", "tco_total_usd", i), base.get("TCO", "tco_total_usd", i)
        if i in moved:
            assert line0 > 0 and close(line, 2 * line0), (i, line, line0)
            storage_years = sum(r.get("TCO", key(k, "storage"), i) - base.get("TCO", key(k, "storage"), i)
                                for k in YEARS)
            assert close(storage_years, line0 * base.get("TCO", "tco_years", i))
            assert close(total - total0, storage_years), (i, total - total0, storage_years)
        else:
            assert line == line0 and total == total0
        assert r.get("TCO", "tco_capex_usd", i) == base.get("TCO", "tco_capex_usd", i)
        assert r.get("Cost", "train_cost_usd", i) == base.get("Cost", "train_cost_usd", i)


def test_staff_and_support_typed_are_opex_every_year_of_the_horizon(rc):
    base, r = rc["roundtrip"], rc["staff_support"]
    capex = base.get("TCO", "tco_capex_usd", 0)
    assert r.get("TCO", "tco_staff_per_year_usd", 0) == 1e6
    assert close(r.get("TCO", "tco_support_per_year_usd", 0), 0.1 * capex)
    added = (1e6 - base.get("TCO", "tco_staff_per_year_usd", 0)
             + 0.1 * capex - base.get("TCO", "tco_support_per_year_usd", 0))
    assert close(r.get("TCO", "tco_opex_per_year_usd", 0), base.get("TCO", "tco_opex_per_year_usd", 0) + added)
    assert close(r.get("TCO", "tco_total_usd", 0) - base.get("TCO", "tco_total_usd", 0), 3 * added)
    assert r.get("TCO", key(3, "staff"), 0) == 1e6 and r.get("TCO", key(4, "staff"), 0) == 0
    # the other scenarios leave them blank: people x cost per person, the default support share
    assert r.get("TCO", "tco_staff_per_year_usd", 1) == base.get("TCO", "tco_staff_per_year_usd", 1) > 0
    assert r.get("TCO", "tco_support_per_year_usd", 1) == base.get("TCO", "tco_support_per_year_usd", 1) > 0


def test_a_part_year_horizon_counts_half_of_year_3_and_nothing_after(rc):
    base, r = rc["roundtrip"], rc["years_2.5"]
    assert [r.get("TCO", key(k, "frac"), 2) for k in (1, 2, 3, 4, 10)] == [1, 1, 0.5, 0, 0]
    power = base.get("TCO", "tco_power_per_year_usd", 2)
    assert close(r.get("TCO", key(3, "power"), 2), power / 2) and r.get("TCO", key(4, "power"), 2) == 0
    assert close(sum(r.get("TCO", key(k, "depreciation"), 2) for k in YEARS), r.get("TCO", "tco_capex_usd", 2))
    assert close(r.get("TCO", key(10, "cumulative"), 2), r.get("TCO", "tco_total_usd", 2))
    assert close(r.get("TCO", "tco_total_usd", 2), base.get("TCO", "tco_capex_usd", 2)
                  + 2.5 * base.get("TCO", "tco_opex_per_year_usd", 2))


def test_switch_ports_and_price_move_the_network_capex(rc):
    base, r = rc["roundtrip"], rc["switches"]
    # 32-port switches: 16,384 ports / 16 down per leaf = 1,024 leaves + 512 spines
    assert r.get("TCO", "tco_switches", 2) == 1536 and r.get("TCO", "tco_switch_capex_usd", 2) == 76.8e6
    assert close(r.get("TCO", "tco_switch_capex_usd", 0), 2 * base.get("TCO", "tco_switch_capex_usd", 0))
    assert r.get("TCO", "tco_optics_capex_usd", 0) == base.get("TCO", "tco_optics_capex_usd", 0)
    assert r.get("TCO", "tco_server_capex_usd", 0) == base.get("TCO", "tco_server_capex_usd", 0)
    # the capex once, and the support on it every year
    moved = base.get("TCO", "tco_switch_capex_usd", 0) * (1 + base.get("TCO", "tco_support_frac", 0)
                                                           * base.get("TCO", "tco_years", 0))
    assert close(r.get("TCO", "tco_total_usd", 0) - base.get("TCO", "tco_total_usd", 0), moved)
