"""TCO sheet, first block: the owned cluster's cost lines over the TCO horizon (issue 9, spec 17.9.3 T8, 17.5.9
table 17-67): servers (the server price includes the host CPUs, memory and NICs), the network as a fat tree (leaves, and
spines above one leaf's ports) with optics and cables per link, storage (the Storage sheet's total at a price
per TB-month; a serving-only plan the weights it serves), power with PUE for the whole IT load (GPUs, hosts,
switches), data-centre space per kW-month, staff and support (issue 23), capex vs opex, the all-in TCO per GPU-hour, the rent of the same GPUs beside it and the contingency apart. The per-year table is calc.tco_years.

The GPUs owned follow the scenario's purpose (workbook.reference.tco.gpus_owned): training the GPUs billed,
serving the serving GPUs in use (Inference sheet), both the larger; the servers bought are those GPUs in whole
servers, and servers, switches, power, support, the rent alternative and the per-GPU-hour figure follow from
them. Reads the Cost sheet (GPUs billed, server price, power per GPU-hour, GPU-hour price, years), the
Inference sheet's serving GPUs and the Storage sheet's total from ctx.q. Inputs left blank take the catalogue
default (workbook.scenario.resolve).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import tco, tco_bill

_S = "17.9.3"
_FT = "fat tree (Al-Fares 2008)"

QUANTITIES = [
    Q("tco_switch_ports", "count", "Ports per network switch in use (scenario, else default)", _S),
    Q("tco_leaf_downlink_frac", "fraction", "Share of a leaf's ports facing the servers (default; 0.5 = "
      "non-blocking)", "fat tree (Al-Fares 2008)"),
    Q("tco_switch_usd", "USD/switch", "Switch price in use (scenario, else default)", "17.5.9"),
    Q("tco_gpus_owned", "GPUs", "GPUs owned: training the GPUs billed, serving the serving GPUs in use, both the "
      "larger", _S),
    Q("tco_nodes", "nodes", "Servers bought: the GPUs owned in whole servers (GPUs owned / GPUs per server, rounded "
      "up)", "17.5.4"),
    Q("tco_nic_ports", "count", "NIC ports to connect (nodes x NICs per node)", "17.1.2"),
    Q("tco_two_tier_flag", "0/1", "1 = a spine tier is needed (NIC ports above one leaf's ports)", _FT),
    Q("tco_leaf_switches", "count", "Leaf switches: NIC ports / (ports x downlink share), rounded up (one tier: / "
      "ports)", _FT),
    Q("tco_spine_switches", "count", "Spine switches: leaves x uplink share, rounded up (0 for one tier)", _FT),
    Q("tco_switches", "count", "Network switches: leaves + spines", _FT),
    Q("tco_links", "count", "Cabled links: one per NIC port + the leaf uplinks of a two-tier tree", _FT),
    Q("tco_optics_usd_per_link", "USD/link", "Optics per link in use: two transceivers + one cable (scenario, else "
      "default)", "issue 23"),
    Q("tco_optics_capex_usd", "USD", "Optics and cables: links x price per link (one-off)", "issue 23"),
    Q("tco_switch_capex_usd", "USD", "Switch capex: switches x switch price (one-off)", _S),
    Q("tco_network_capex_usd", "USD", "Network capex: switches + optics and cables (one-off)", _S),
    Q("tco_server_capex_usd", "USD", "Server capex: servers bought x server price (one-off)", _S),
    Q("tco_capex_usd", "USD", "Hardware capex: servers + network (one-off, year 1)", _S),
    Q("tco_serving_storage_TB", "TB", "Serving storage: the model's weights at the inference precision, one copy "
      "(KV Cache sheet)", "17.4.11"),
    Q("tco_storage_TB", "TB", "Storage kept: training or both the Storage sheet's dataset + retained checkpoints + "
      "logs, serving the weights served", "17.7"),
    Q("tco_storage_usd_per_TB_month", "USD/TB-month", "Storage price in use (scenario, else default)", "17.5.9"),
    Q("tco_storage_per_year_usd", "USD/year", "Storage per year: TB x price per TB-month x 12 (opex)", "17.5.9"),
    Q("tco_gpu_power_kW", "kW", "GPU load: GPUs owned x TDP", "17.5.9"),
    Q("tco_host_power_W_per_server", "W", "Host power per server in use: CPUs, memory, NICs, fans (scenario, "
      "else default)", "issue 23"),
    Q("tco_host_power_kW", "kW", "Host load: servers x host power", "issue 23"),
    Q("tco_network_power_kW", "kW", "Network load: switches x switch power (default)", "issue 23"),
    Q("tco_it_power_kW", "kW", "IT load: GPUs + hosts + network", "issue 23"),
    Q("tco_power_per_year_usd", "USD/year", "Power per year: IT load x PUE x electricity price x 8760 h, 24/7 "
      "(opex)", "17.5.9"),
    Q("tco_space_usd_per_kW_month", "USD/kW-month", "Space price in use (scenario, else default)", "issue 23"),
    Q("tco_space_per_year_usd", "USD/year", "Data-centre space per year: IT load x price per kW-month x 12 (opex)",
      "issue 23"),
    Q("tco_staff_fte", "FTE", "Operations staff: GPUs owned / GPUs per person (default), rounded up", "issue 23"),
    Q("tco_staff_per_year_usd", "USD/year", "Staff per year: the Plan's figure, else people x cost per person-year "
      "(opex)", "17.5.9"),
    Q("tco_support_frac", "fraction", "Support share of the capex per year in use (scenario, else default)",
      "17.5.9"),
    Q("tco_support_per_year_usd", "USD/year", "Support per year: hardware capex x support share (opex)", "17.5.9"),
    Q("tco_opex_per_year_usd", "USD/year", "Opex per year in service: power + storage + space + staff + support",
      _S),
    Q("tco_years", "years", "TCO horizon (the depreciation period in use)", _S),
    Q("tco_depreciation_per_year_usd", "USD/year", "Depreciation per full year: hardware capex / years", _S),
    Q("tco_total_usd", "USD", "TCO over the horizon: capex + opex per year x years", _S),
    Q("tco_all_in_usd_per_gpu_hour", "USD/GPU-h", "All-in TCO per GPU-hour: TCO / (GPUs owned x years x 8760 h)",
      _S),
    Q("tco_rent_per_year_usd", "USD/year", "Rent alternative: the GPUs owned rented 24/7 for a year", "17.5.9"),
    Q("tco_rent_total_usd", "USD", "Rent alternative over the horizon", "17.5.9"),
    Q("tco_vs_rent_frac", "fraction", "Owned TCO as a share of the rent over the horizon (0 = no rent price)",
      "17.5.9"),
    Q("tco_contingency_usd", "USD", "Contingency on the owned TCO (apart from it)", "contingency (planning practice)"),
    Q("tco_total_with_contingency_usd", "USD", "Owned TCO plus contingency", "contingency (planning practice)"),
]


def _network(ctx: Context, nodes: float) -> dict[str, float]:
    """The fabric of the servers bought: leaves, spines, links, optics, switch and network capex."""
    c, q, ports = ctx.s.cost, ctx.q, float(ctx.s.network.switch_ports)
    frac = float(ctx.defaults["leaf_downlink_frac"])
    nic_ports = nodes * q["net_nics_per_node"]
    fabric = {"nic_ports": nic_ports, "switch_ports": ports, "downlink_frac": frac}
    leaves, spines = float(tco_bill.leaf_switches(**fabric)), float(tco_bill.spine_switches(**fabric))
    links = tco_bill.links(**fabric)
    optics = tco_bill.optics_capex_usd(links=links, usd_per_link=float(c.optics_usd_per_link))
    switch_capex = tco.network_capex_usd(switches=leaves + spines, switch_usd=float(c.ib_switch_usd))
    return {"tco_leaf_downlink_frac": frac, "tco_nic_ports": nic_ports,
            "tco_two_tier_flag": float(tco_bill.two_tier(nic_ports=nic_ports, switch_ports=ports)),
            "tco_leaf_switches": leaves, "tco_spine_switches": spines, "tco_switches": leaves + spines,
            "tco_links": links, "tco_optics_usd_per_link": float(c.optics_usd_per_link),
            "tco_optics_capex_usd": optics, "tco_switch_capex_usd": switch_capex,
            "tco_network_capex_usd": switch_capex + optics}


def _running(ctx: Context, gpus: float, nodes: float, switches: float, capex: float) -> dict[str, float]:
    """Power with PUE for the whole IT load, space, staff and support per year."""
    c, q = ctx.s.cost, ctx.q
    kw = tco_bill.it_power_kW(gpus=gpus, gpu_tdp_W=q["gpu_tdp_W"], servers=nodes,
                              host_W_per_server=float(c.host_power_W_per_server), switches=switches,
                              switch_W=float(ctx.defaults["switch_power_W"]))
    fte = float(tco_bill.staff_fte(gpus=gpus, gpus_per_fte=float(ctx.defaults["staff_gpus_per_fte"])))
    support_frac = float(c.support_frac_of_capex_per_year)
    return {
        "tco_gpu_power_kW": kw["gpu"], "tco_host_power_W_per_server": float(c.host_power_W_per_server),
        "tco_host_power_kW": kw["host"], "tco_network_power_kW": kw["network"], "tco_it_power_kW": kw["it"],
        "tco_power_per_year_usd": tco_bill.power_per_year_usd(it_kW=kw["it"], pue=q["cost_pue"],
                                                             usd_per_kWh=q["cost_electricity_usd_per_kWh"]),
        "tco_space_usd_per_kW_month": float(c.space_usd_per_kW_month),
        "tco_space_per_year_usd": tco_bill.space_per_year_usd(it_kW=kw["it"],
                                                             usd_per_kW_month=float(c.space_usd_per_kW_month)),
        "tco_staff_fte": fte,
        "tco_staff_per_year_usd": tco_bill.staff_per_year_usd(
            fte=fte, usd_per_fte_year=float(ctx.defaults["staff_usd_per_fte_year"]),
            override_usd=None if c.staff_usd_per_year is None else float(c.staff_usd_per_year)),
        "tco_support_frac": support_frac,
        "tco_support_per_year_usd": tco.support_per_year_usd(capex_usd=capex, support_frac_per_year=support_frac),
    }


def compute(ctx: Context) -> dict[str, float]:
    """The owned cluster's cost lines of one scenario."""
    c, q = ctx.s.cost, ctx.q
    gpus = tco.gpus_owned(purpose=ctx.s.purpose, train_gpus_billed=q["train_gpus_billed"],
                          serving_gpus=q["srv_gpus_in_use"])
    nodes = float(tco.server_count(gpus=gpus, gpus_per_server=float(ctx.gpu.gpus_per_node)))
    net = _network(ctx, nodes)
    servers = tco.server_capex_usd(servers=nodes, server_usd=q["cost_server_capex_usd"])
    capex = servers + net["tco_network_capex_usd"]
    kept = tco.storage_kept_TB(purpose=ctx.s.purpose, training_TB=q["storage_total_TB"],
                               serving_weights_GB=q["infer_weights_GB"])
    storage = tco.storage_per_year_usd(storage_TB=kept,
                                       usd_per_TB_month=float(c.storage_usd_per_TB_month))
    run = _running(ctx, gpus, nodes, net["tco_switches"], capex)
    opex = (run["tco_power_per_year_usd"] + storage + run["tco_space_per_year_usd"] + run["tco_staff_per_year_usd"]
            + run["tco_support_per_year_usd"])
    years = q["cost_depreciation_years"]
    total = tco.tco_usd(capex_usd=capex, opex_per_year_usd=opex, years=years)
    rent = tco.rent_per_year_usd(num_gpus=gpus, gpu_hour_usd=q["gpu_hour_usd"])
    contingency = total * float(c.contingency_frac)
    return {
        "tco_switch_ports": float(ctx.s.network.switch_ports),
        "tco_switch_usd": float(c.ib_switch_usd),
        "tco_gpus_owned": gpus,
        "tco_nodes": nodes,
        **net,
        "tco_server_capex_usd": servers,
        "tco_capex_usd": capex,
        "tco_serving_storage_TB": tco.serving_storage_TB(weights_GB=q["infer_weights_GB"]),
        "tco_storage_TB": kept,
        "tco_storage_usd_per_TB_month": float(c.storage_usd_per_TB_month),
        "tco_storage_per_year_usd": storage,
        **run,
        "tco_opex_per_year_usd": opex,
        "tco_years": years,
        "tco_depreciation_per_year_usd": capex / years,
        "tco_total_usd": total,
        "tco_all_in_usd_per_gpu_hour": tco.tco_usd_per_gpu_hour(tco_usd=total, num_gpus=gpus, years=years),
        "tco_rent_per_year_usd": rent,
        "tco_rent_total_usd": rent * years,
        "tco_vs_rent_frac": total / (rent * years) if rent > 0 else 0.0,
        "tco_contingency_usd": contingency,
        "tco_total_with_contingency_usd": total + contingency,
    }
