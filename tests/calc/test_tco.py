"""calc.tco and calc.tco_years on the shipped scenarios: every row equals workbook.reference.tco called on the
scenario's inputs, the book's 17.9.3 servers and switches, and what each new input moves (issue 9)."""

from __future__ import annotations

import math

import pytest

from workbook.calc import compute, tco_years
from workbook.calc import tco as tco_calc
from workbook.catalog import load_catalog
from workbook.reference import ownership, tco, tco_bill
from workbook.scenario.load import load_scenario
from workbook.scenario.model import TCO_MAX_YEARS, CostInputs

CATALOG = load_catalog()
D = CATALOG.defaults.as_dict()
GPT4 = load_scenario("catalog/scenarios/17.9.3-gpt4-class-moe-h800.yaml")  # 16,384 H800, 3 years
PLAN = load_scenario("catalog/scenarios/17.9.4-70b-plan-h800.yaml")
SERVE = load_scenario("catalog/scenarios/17.9.6-70b-inference-h800.yaml")  # purpose serving, TP 4 x 1 replica
TCO_KEYS = [q.name for q in tco_calc.QUANTITIES + tco_years.QUANTITIES]


def _with(sc, section: str, **kw):
    return sc.model_copy(update={section: getattr(sc, section).model_copy(update=kw)})


def test_17_9_3_servers_614_4M_and_a_two_tier_tree_of_3_ports_per_nic():
    """The book's servers ($614.4M); its 256 switches are one port per NIC (reference.tco.switch_count); the sheet
    prices the non-blocking two-tier tree, 3 switch ports per NIC: 512 leaves + 256 spines = 768 (issue 23)."""
    q = compute(GPT4, CATALOG)
    assert q["tco_nodes"] == 2048 and q["tco_nic_ports"] == 16384
    assert q["tco_server_capex_usd"] == 614.4e6
    assert tco.switch_count(nodes=2048, nics_per_node=8, switch_ports=64) == 256  # the book's single tier
    assert (q["tco_leaf_switches"], q["tco_spine_switches"]) == (512, 256)
    assert q["tco_switches"] == tco.switch_count(nodes=2048, nics_per_node=8, switch_ports=64, switch_ports_per_nic=3)
    assert q["tco_links"] == 2 * 16384 and q["tco_optics_capex_usd"] == 2 * 16384 * D["optics_usd_per_link"]
    assert q["tco_network_capex_usd"] == 768 * 50_000 + q["tco_optics_capex_usd"]
    assert q["tco_capex_usd"] == 614.4e6 + q["tco_network_capex_usd"]


@pytest.mark.parametrize("sc", [GPT4, PLAN], ids=["17.9.3", "17.9.4"])
def test_lines_equal_the_reference(sc):
    q = compute(sc, CATALOG)
    fabric = {"nic_ports": q["plan_nodes_to_buy"] * q["net_nics_per_node"], "switch_ports": D["switch_ports"],
              "downlink_frac": D["leaf_downlink_frac"]}
    switches = tco_bill.leaf_switches(**fabric) + tco_bill.spine_switches(**fabric)
    capex = (q["train_capex_usd"] + switches * D["ib_switch_usd"]
             + tco_bill.optics_capex_usd(links=tco_bill.links(**fabric), usd_per_link=D["optics_usd_per_link"]))
    storage = tco.storage_per_year_usd(storage_TB=q["storage_total_TB"], usd_per_TB_month=D["storage_usd_per_TB_month"])
    kw = tco_bill.it_power_kW(gpus=q["train_gpus_billed"], gpu_tdp_W=q["gpu_tdp_W"], servers=q["plan_nodes_to_buy"],
                              host_W_per_server=D["host_power_W_per_server"], switches=switches,
                              switch_W=D["switch_power_W"])["it"]
    power = tco_bill.power_per_year_usd(it_kW=kw, pue=D["pue"], usd_per_kWh=D["electricity_usd_per_kWh"])
    staff = tco_bill.staff_per_year_usd(fte=tco_bill.staff_fte(gpus=q["train_gpus_billed"],
                                                               gpus_per_fte=D["staff_gpus_per_fte"]),
                                        usd_per_fte_year=D["staff_usd_per_fte_year"])
    support = tco.support_per_year_usd(capex_usd=capex, support_frac_per_year=D["support_frac_of_capex_per_year"])
    opex = power + storage + tco_bill.space_per_year_usd(it_kW=kw, usd_per_kW_month=D["space_usd_per_kW_month"]) \
        + staff + support
    years = D["depreciation_years"]
    total = tco.tco_usd(capex_usd=capex, opex_per_year_usd=opex, years=years)
    assert q["tco_switches"] == switches and q["tco_capex_usd"] == capex
    assert q["tco_storage_per_year_usd"] == storage and q["tco_opex_per_year_usd"] == pytest.approx(opex, rel=1e-15)
    assert q["tco_staff_per_year_usd"] == staff and q["tco_support_per_year_usd"] == pytest.approx(support, rel=1e-15)
    assert q["tco_power_per_year_usd"] == pytest.approx(power, rel=1e-12)
    assert q["tco_power_per_year_usd"] > q["own_power_per_year_usd"]  # hosts and switches too, not GPUs only
    assert q["tco_total_usd"] == pytest.approx(total, rel=1e-15)
    assert q["tco_all_in_usd_per_gpu_hour"] == pytest.approx(
        tco.tco_usd_per_gpu_hour(tco_usd=total, num_gpus=q["train_gpus_billed"], years=years), rel=1e-15)
    rent = tco.rent_per_year_usd(num_gpus=q["train_gpus_billed"], gpu_hour_usd=q["gpu_hour_usd"])
    assert q["tco_rent_total_usd"] == pytest.approx(rent * years, rel=1e-15)
    # the all-in TCO per GPU-hour adds network and storage to the book's servers + power figure
    assert q["tco_all_in_usd_per_gpu_hour"] > q["tco_usd_per_gpu_hour"]


@pytest.mark.parametrize("sc", [GPT4, PLAN], ids=["17.9.3", "17.9.4"])
def test_year_table_equals_the_reference_and_reconciles(sc):
    q = compute(sc, CATALOG)
    rows = tco.by_year(capex_usd=q["tco_capex_usd"], rent_per_year_usd=q["tco_rent_per_year_usd"],
                       opex_per_year_usd={s: q[n] for s, n, _ in tco_years.OPEX}, years=q["tco_years"],
                       max_years=TCO_MAX_YEARS)
    for k, row in zip(tco_years.YEARS, rows):
        for s, _, _ in tco_years.SERIES:
            assert q[tco_years.key(k, s)] == row["frac" if s == "frac" else f"{s}_usd"], (k, s)
    last = TCO_MAX_YEARS
    assert q[tco_years.key(last, "cumulative")] == pytest.approx(q["tco_total_usd"], rel=1e-12)
    assert q[tco_years.key(last, "rent_cumulative")] == pytest.approx(q["tco_rent_total_usd"], rel=1e-12)
    assert q[tco_years.key(1, "cash")] == q["tco_capex_usd"] + q[tco_years.key(1, "opex")]
    assert [q[tco_years.key(k, "frac")] for k in tco_years.YEARS] == [1, 1, 1] + [0] * (last - 3)
    assert q["check_tco_reconciles"] == 0  # Checks sheet: the table's cumulative = capex + opex x years


def test_a_part_year_horizon():
    q = compute(_with(PLAN, "cost", depreciation_years=2.5), CATALOG)
    assert [q[tco_years.key(k, "frac")] for k in (1, 2, 3, 4)] == [1, 1, 0.5, 0]
    assert q[tco_years.key(3, "power")] == pytest.approx(q["tco_power_per_year_usd"] / 2, rel=1e-15)
    assert sum(q[tco_years.key(k, "depreciation")] for k in tco_years.YEARS) == pytest.approx(q["tco_capex_usd"])


def test_staff_and_support_are_opex_lines():
    base = compute(_with(PLAN, "cost", staff_usd_per_year=0.0, support_frac_of_capex_per_year=0.0), CATALOG)
    q = compute(_with(PLAN, "cost", staff_usd_per_year=1e6, support_frac_of_capex_per_year=0.08), CATALOG)
    assert q["tco_staff_per_year_usd"] == 1e6
    assert q["tco_support_per_year_usd"] == pytest.approx(0.08 * q["tco_capex_usd"], rel=1e-15)
    added = 1e6 + 0.08 * q["tco_capex_usd"]
    assert q["tco_opex_per_year_usd"] == pytest.approx(base["tco_opex_per_year_usd"] + added, rel=1e-12)
    assert q["tco_total_usd"] == pytest.approx(base["tco_total_usd"] + 3 * added, rel=1e-12)
    assert q[tco_years.key(2, "staff")] == 1e6 and q[tco_years.key(4, "staff")] == 0
    assert q["tco_capex_usd"] == base["tco_capex_usd"] and q["train_cost_usd"] == base["train_cost_usd"]


@pytest.mark.parametrize("field, value, line", [("storage_usd_per_TB_month", 60.0, "tco_storage_per_year_usd"),
                                                ("ib_switch_usd", 100_000.0, "tco_switch_capex_usd")])
def test_prices_scale_their_line_and_move_the_tco_by_it(field, value, line):
    assert value == 2 * D[field]
    plan = _with(PLAN, "cost", support_frac_of_capex_per_year=0.0)  # support would follow the capex too
    base = compute(plan, CATALOG)
    q = compute(_with(plan, "cost", **{field: value}), CATALOG)
    assert q[line] == pytest.approx(2 * base[line], rel=1e-15)
    times = 1 if line == "tco_switch_capex_usd" else base["tco_years"]  # capex once; opex every year
    assert q["tco_total_usd"] - base["tco_total_usd"] == pytest.approx(base[line] * times, rel=1e-9)


def test_switch_ports_input_and_contingency():
    q = compute(_with(GPT4, "network", switch_ports=32), CATALOG)
    assert (q["tco_leaf_switches"], q["tco_spine_switches"]) == (1024, 512)  # 16,384 ports / 16 down per leaf
    q = compute(_with(PLAN, "cost", contingency_frac=0.1), CATALOG)
    assert q["tco_contingency_usd"] == pytest.approx(0.1 * q["tco_total_usd"], rel=1e-15)
    assert q["tco_total_usd"] == compute(PLAN, CATALOG)["tco_total_usd"]  # apart from the TCO


def test_the_horizon_input_stops_at_the_table_length():
    limit = next(m.le for m in CostInputs.model_fields["depreciation_years"].metadata if hasattr(m, "le"))
    assert limit == TCO_MAX_YEARS == len(tco_years.YEARS)
    assert all(math.isfinite(v) for v in compute(_with(PLAN, "cost", depreciation_years=TCO_MAX_YEARS),
                                                 CATALOG).values() if isinstance(v, float))


def test_a_serving_scenario_owns_its_serving_gpus_in_whole_servers():
    """Purpose serving: the TCO owns the serving GPUs in use (4), in one whole server of 8, powered 24/7 and rented
    beside; the training defaults' GPUs (64 billed) do not enter it."""
    q = compute(SERVE, CATALOG)
    assert q["tco_gpus_owned"] == q["srv_gpus_in_use"] == 4 and q["train_gpus_billed"] == 64
    assert q["tco_nodes"] == 1 and q["tco_nic_ports"] == q["net_nics_per_node"]
    assert q["tco_server_capex_usd"] == q["cost_server_capex_usd"] == D["server_capex_usd"]
    assert q["tco_gpu_power_kW"] * q["cost_pue"] * q["cost_electricity_usd_per_kWh"] == pytest.approx(
        ownership.power_per_year_usd(num_gpus=4, power_usd_per_gpu_hour=q["power_usd_per_gpu_hour"]) / 8760, rel=1e-12)
    assert (q["tco_leaf_switches"], q["tco_spine_switches"], q["tco_links"]) == (1, 0, 8)  # one leaf, no spine
    assert q["tco_rent_per_year_usd"] == tco.rent_per_year_usd(num_gpus=4, gpu_hour_usd=q["gpu_hour_usd"])
    assert q["tco_rent_per_year_usd"] == pytest.approx(q["infer_daily_cost_usd"] * 365, rel=1e-12)
    assert q["tco_all_in_usd_per_gpu_hour"] == pytest.approx(
        tco.tco_usd_per_gpu_hour(tco_usd=q["tco_total_usd"], num_gpus=4, years=q["tco_years"]), rel=1e-15)
    assert q["check_tco_reconciles"] == 0


def test_purpose_training_or_both_leaves_a_training_plans_tco_unchanged():
    base = compute(PLAN, CATALOG)  # purpose both: 640 billed against 4 serving GPUs
    trained = compute(PLAN.model_copy(update={"purpose": "training"}), CATALOG)
    assert base["tco_gpus_owned"] == base["train_gpus_billed"] == 640
    assert base["tco_nodes"] == base["plan_nodes_to_buy"] and base["tco_server_capex_usd"] == base["train_capex_usd"]
    assert base["tco_gpu_power_kW"] * base["cost_pue"] * base["cost_electricity_usd_per_kWh"] * 8760 == \
        pytest.approx(base["own_power_per_year_usd"], rel=1e-12)
    assert {k: trained[k] for k in TCO_KEYS} == {k: base[k] for k in TCO_KEYS}


def test_purpose_serving_and_both_with_the_larger_serving_fleet():
    served = compute(PLAN.model_copy(update={"purpose": "serving"}), CATALOG)
    assert served["tco_gpus_owned"] == served["srv_gpus_in_use"] == 4 and served["tco_nodes"] == 1
    big = _with(PLAN, "inference", replicas=200)  # 800 serving GPUs against 640 billed for training
    both, serving = compute(big, CATALOG), compute(big.model_copy(update={"purpose": "serving"}), CATALOG)
    assert both["srv_gpus_in_use"] == 800 and both["tco_gpus_owned"] == 800 and both["tco_nodes"] == 100
    # the same fleet bought; the storage kept differs by the purpose: both the training storage (dataset, checkpoints,
    # logs), serving the weights served alone
    storage = {k for k in TCO_KEYS
               if "storage" in k or "opex" in k or "cash" in k or ("cumulative" in k and "rent" not in k)}
    storage |= {"tco_total_usd", "tco_all_in_usd_per_gpu_hour", "tco_vs_rent_frac", "tco_contingency_usd",
                "tco_total_with_contingency_usd"}
    assert {k: both[k] for k in TCO_KEYS if k not in storage} == {k: serving[k] for k in TCO_KEYS if k not in storage}
    assert both["tco_storage_TB"] == both["storage_total_TB"] and serving["tco_storage_TB"] == serving[
        "tco_serving_storage_TB"]
    extra = both["tco_storage_per_year_usd"] - serving["tco_storage_per_year_usd"]
    assert extra > 0 and both["tco_total_usd"] - serving["tco_total_usd"] == pytest.approx(extra * both["tco_years"],
                                                                                         rel=1e-9)


def test_a_serving_tco_follows_the_server_price_and_the_replicas():
    base = compute(SERVE, CATALOG)
    dear = compute(_with(SERVE, "cost", server_capex_usd=2 * D["server_capex_usd"]), CATALOG)
    assert dear["tco_server_capex_usd"] == 2 * base["tco_server_capex_usd"]
    # the capex once, and the support on it every year of the horizon
    moved = base["tco_server_capex_usd"] * (1 + base["tco_support_frac"] * base["tco_years"])
    assert dear["tco_total_usd"] - base["tco_total_usd"] == pytest.approx(moved, rel=1e-12)
    more = compute(_with(SERVE, "inference", replicas=3), CATALOG)  # 12 GPUs: two servers
    assert more["tco_gpus_owned"] == 12 and more["tco_nodes"] == 2
    assert more["tco_server_capex_usd"] == 2 * base["tco_server_capex_usd"]
    assert more["tco_gpu_power_kW"] == pytest.approx(3 * base["tco_gpu_power_kW"], rel=1e-15)
    assert more["tco_host_power_kW"] == 2 * base["tco_host_power_kW"]
    assert more["tco_rent_per_year_usd"] == pytest.approx(3 * base["tco_rent_per_year_usd"], rel=1e-15)
    assert more["train_gpus_billed"] == base["train_gpus_billed"]  # the training defaults do not move
