"""Behaviour tests of the TCO sheet for a serving scenario: edit the default workbook as a person would (the server
price, the replicas, the Plan's purpose, the arrival rate of disaggregated pools), recalculate with LibreOffice, and
check that the TCO owns the serving GPUs in use of a serving scenario and the training GPUs billed of a training one.
Expectations are ratios, equalities and reference functions of recalculated cells, never the cached values.
Scenarios (test_behaviour.py checks the list): 0 llama-7b training on 256 H800, 3 the 17.9.4 70B plan (purpose both,
640 H800 billed against 4 serving GPUs), 5 the 17.9.6 70B serving on H800 (purpose serving, TP 4 x 1 replica).
"""

from __future__ import annotations


import pytest

from tests.writer.edits import Layout, Recalc, close, recalc_edited
from workbook.calc.tco import QUANTITIES as TCO_Q
from workbook.calc.tco_years import QUANTITIES as YEAR_Q
from workbook.catalog import load_catalog
from workbook.engines.libreoffice import find_soffice
from workbook.reference import tco

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

D = load_catalog().defaults.as_dict()
N = 6  # scenarios of the default workbook
TRAIN, BOTH, SERVE = 0, 3, 5
KEYS = [q.name for q in TCO_Q + YEAR_Q]
RATE = 4.0  # requests/s of the disaggregated pools (test_behaviour_disagg.py's rate)


def _disagg(b, rate: float) -> None:
    b.plan("inference.serving_model", SERVE, "engine")
    b.plan("inference.disaggregated", SERVE, "on")
    b.plan("inference.arrival_rate_rps", SERVE, rate)


EDITS = {
    "roundtrip": lambda b: None,
    "server_price_x2": lambda b: b.plan("cost.server_capex_usd", SERVE, 2 * D["server_capex_usd"]),
    "replicas_3": lambda b: [b.plan("inference.replicas", i, 3) for i in (TRAIN, BOTH, SERVE)],
    "purpose_swapped": lambda b: (b.plan("purpose", BOTH, "serving"), b.plan("purpose", SERVE, "training")),
    "disagg_rate": lambda b: _disagg(b, RATE),
    "disagg_rate_x2": lambda b: _disagg(b, 2 * RATE),
}


@pytest.fixture(scope="module")
def rc(built, tmp_path_factory) -> dict[str, Recalc]:
    steps = {name: [fn] for name, fn in EDITS.items()}
    return recalc_edited(built[0], tmp_path_factory.mktemp("behaviour_tco_serving"), steps, Layout(built[0]))



def _tco(r: Recalc, i: int) -> dict:
    return {k: r.get("TCO", k, i) for k in KEYS}


def test_roundtrip_a_serving_scenario_owns_its_serving_gpus_and_a_training_one_its_gpus_billed(rc):
    base = rc["roundtrip"]
    assert base.errors("TCO") == {}
    for i in range(N):
        gpn = base.get("Plan", "gpu_gpus_per_node", i)
        owned, srv, billed = (base.get("TCO", "tco_gpus_owned", i), base.get("Inference", "srv_gpus_in_use", i),
                              base.get("Cost", "train_gpus_billed", i))
        assert owned == (srv if i >= 4 else billed), i  # 4 and 5 serve; 0 trains; 1-3 both, training the larger
        assert base.get("TCO", "tco_nodes", i) == tco.server_count(gpus=owned, gpus_per_server=gpn)
        assert close(base.get("TCO", "tco_rent_per_year_usd", i),
                      tco.rent_per_year_usd(num_gpus=owned, gpu_hour_usd=base.get("Plan", "gpu_hour_usd", i)))
    assert base.get("TCO", "tco_gpus_owned", SERVE) == 4 and base.get("TCO", "tco_nodes", SERVE) == 1
    for i in range(4):  # a training plan's TCO is the training cluster's, as before
        assert base.get("TCO", "tco_nodes", i) == base.get("Plan", "plan_nodes_to_buy", i)
        assert base.get("TCO", "tco_server_capex_usd", i) == base.get("Cost", "train_capex_usd", i)
        # the GPUs' share of the power line is the Sensitivity sheet's own power (the line adds hosts and switches)
        gpu_share = base.get("TCO", "tco_gpu_power_kW", i) / base.get("TCO", "tco_it_power_kW", i)
        assert close(base.get("TCO", "tco_power_per_year_usd", i) * gpu_share,
                     base.get("Sensitivity", "own_power_per_year_usd", i))


def test_server_price_x2_doubles_the_serving_server_capex_and_moves_its_tco_by_it(rc):
    base, r = rc["roundtrip"], rc["server_price_x2"]
    capex0 = base.get("TCO", "tco_server_capex_usd", SERVE)
    assert capex0 > 0 and r.get("TCO", "tco_server_capex_usd", SERVE) == 2 * capex0
    moved = capex0 * (1 + base.get("TCO", "tco_support_frac", SERVE) * base.get("TCO", "tco_years", SERVE))
    assert close(r.get("TCO", "tco_total_usd", SERVE) - base.get("TCO", "tco_total_usd", SERVE), moved)  # + support
    assert r.get("TCO", "tco_all_in_usd_per_gpu_hour", SERVE) > base.get("TCO", "tco_all_in_usd_per_gpu_hour", SERVE)
    for i in range(N - 1):
        assert _tco(r, i) == _tco(base, i), i


def test_three_replicas_own_three_times_the_serving_gpus_and_leave_a_training_tco_unchanged(rc):
    base, r = rc["roundtrip"], rc["replicas_3"]
    assert r.get("TCO", "tco_gpus_owned", SERVE) == 12 == r.get("Inference", "srv_gpus_in_use", SERVE)
    assert r.get("TCO", "tco_nodes", SERVE) == 2  # 12 GPUs in servers of 8
    assert r.get("TCO", "tco_server_capex_usd", SERVE) == 2 * base.get("TCO", "tco_server_capex_usd", SERVE)
    for line in ("tco_gpu_power_kW", "tco_rent_per_year_usd"):
        assert close(r.get("TCO", line, SERVE), 3 * base.get("TCO", line, SERVE)), line
    assert r.get("TCO", "tco_host_power_kW", SERVE) == 2 * base.get("TCO", "tco_host_power_kW", SERVE)
    assert r.get("TCO", "tco_total_usd", SERVE) > base.get("TCO", "tco_total_usd", SERVE)
    for i in (TRAIN, BOTH):  # training: the GPUs billed; both: 640 billed stay above 12 serving GPUs
        assert r.get("Inference", "srv_gpus_in_use", i) == 3 * base.get("Inference", "srv_gpus_in_use", i)
        assert _tco(r, i) == _tco(base, i), i


def test_the_plans_purpose_picks_the_gpus_owned_live(rc):
    base, r = rc["roundtrip"], rc["purpose_swapped"]
    assert r.get("TCO", "tco_gpus_owned", BOTH) == base.get("Inference", "srv_gpus_in_use", BOTH) == 4
    assert r.get("TCO", "tco_nodes", BOTH) == 1
    assert r.get("TCO", "tco_server_capex_usd", BOTH) == base.get("Cost", "cost_server_capex_usd", BOTH)  # one server
    assert close(r.get("TCO", "tco_rent_per_year_usd", BOTH), base.get("TCO", "tco_rent_per_year_usd", BOTH) * 4 / 640)
    assert r.get("TCO", "tco_gpus_owned", SERVE) == base.get("Cost", "train_gpus_billed", SERVE) == 64
    assert r.get("TCO", "tco_server_capex_usd", SERVE) == base.get("Cost", "train_capex_usd", SERVE)


def test_disaggregated_pools_sized_by_the_arrival_rate_move_the_tco(rc):
    one, two = rc["disagg_rate"], rc["disagg_rate_x2"]
    for r in (one, two):
        assert r.errors("TCO") == {}
        assert r.get("TCO", "tco_gpus_owned", SERVE) == r.get("Inference", "srv_gpus_in_use", SERVE) \
            == r.get("Inference", "srv_dis_gpus", SERVE)
        assert close(r.get("TCO", "tco_server_capex_usd", SERVE),
                      r.get("TCO", "tco_nodes", SERVE) * r.get("Cost", "cost_server_capex_usd", SERVE))
    g1, g2 = one.get("TCO", "tco_gpus_owned", SERVE), two.get("TCO", "tco_gpus_owned", SERVE)
    assert g2 > g1 > 4
    assert two.get("TCO", "tco_nodes", SERVE) > one.get("TCO", "tco_nodes", SERVE)
    assert two.get("TCO", "tco_total_usd", SERVE) > one.get("TCO", "tco_total_usd", SERVE)
    assert close(two.get("TCO", "tco_gpu_power_kW", SERVE) / one.get("TCO", "tco_gpu_power_kW", SERVE), g2 / g1)
