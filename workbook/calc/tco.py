"""TCO sheet, first block: the owned cluster's cost lines over the TCO horizon (issue 9, spec 17.9.3 T8, 17.5.9
table 17-67): servers, network switches (from the nodes procured and the NICs per node), storage (the Storage
sheet's total at a price per TB-month; a serving-only plan the weights it serves), power with PUE, staff and
support, capex vs opex, the all-in TCO per GPU-hour, the rent of the same GPUs beside it and the contingency apart. The per-year table is calc.tco_years.

The GPUs owned follow the scenario's purpose (workbook.reference.tco.gpus_owned): training the GPUs billed,
serving the serving GPUs in use (Inference sheet), both the larger; the servers bought are those GPUs in whole
servers, and servers, switches, power, support, the rent alternative and the per-GPU-hour figure follow from
them. Reads the Cost sheet (GPUs billed, server price, power per GPU-hour, GPU-hour price, years), the
Inference sheet's serving GPUs and the Storage sheet's total from ctx.q. Inputs left blank take the catalogue
default (workbook.scenario.resolve).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import ownership, tco

_S = "17.9.3"

QUANTITIES = [
    Q("tco_switch_ports", "count", "Ports per network switch in use (scenario, else default)", _S),
    Q("tco_switch_ports_per_nic", "x", "Switch ports per NIC port (default; 1 = the book's single tier)", _S),
    Q("tco_switch_usd", "USD/switch", "Switch price in use (scenario, else default)", "17.5.9"),
    Q("tco_gpus_owned", "GPUs", "GPUs owned: training the GPUs billed, serving the serving GPUs in use, both the "
      "larger", _S),
    Q("tco_nodes", "nodes", "Servers bought: the GPUs owned in whole servers (GPUs owned / GPUs per server, rounded "
      "up)", "17.5.4"),
    Q("tco_nic_ports", "count", "NIC ports to connect (nodes x NICs per node)", "17.1.2"),
    Q("tco_switches", "count", "Network switches (NIC ports x switch ports per NIC / ports per switch, rounded up)",
      _S),
    Q("tco_network_capex_usd", "USD", "Network capex: switches x switch price (one-off)", _S),
    Q("tco_server_capex_usd", "USD", "Server capex: servers bought x server price (one-off)", _S),
    Q("tco_capex_usd", "USD", "Hardware capex: servers + network (one-off, year 1)", _S),
    Q("tco_serving_storage_TB", "TB", "Serving storage: the model's weights at the inference precision, one copy "
      "(KV Cache sheet)", "17.4.11"),
    Q("tco_storage_TB", "TB", "Storage kept: training or both the Storage sheet's dataset + retained checkpoints + "
      "logs, serving the weights served", "17.7"),
    Q("tco_storage_usd_per_TB_month", "USD/TB-month", "Storage price in use (scenario, else default)", "17.5.9"),
    Q("tco_storage_per_year_usd", "USD/year", "Storage per year: TB x price per TB-month x 12 (opex)", "17.5.9"),
    Q("tco_power_per_year_usd", "USD/year", "Power with PUE per year, GPUs owned at TDP 24/7 (opex)", "17.5.9"),
    Q("tco_staff_per_year_usd", "USD/year", "Staff per year (opex; 0 = not given)", "17.5.9"),
    Q("tco_support_per_year_usd", "USD/year", "Support per year: hardware capex x support share (opex; 0 = not "
      "given)", "17.5.9"),
    Q("tco_opex_per_year_usd", "USD/year", "Opex per year in service: power + storage + staff + support", _S),
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


def compute(ctx: Context) -> dict[str, float]:
    """The owned cluster's cost lines of one scenario."""
    c, net, q = ctx.s.cost, ctx.s.network, ctx.q
    ports, per_nic = float(net.switch_ports), float(ctx.defaults.get("switch_ports_per_nic", 1))
    gpus = tco.gpus_owned(purpose=ctx.s.purpose, train_gpus_billed=q["train_gpus_billed"],
                          serving_gpus=q["srv_gpus_in_use"])
    nodes = float(tco.server_count(gpus=gpus, gpus_per_server=float(ctx.gpu.gpus_per_node)))
    nics = q["net_nics_per_node"]
    switches = float(tco.switch_count(nodes=nodes, nics_per_node=nics, switch_ports=ports,
                                      switch_ports_per_nic=per_nic))
    network = tco.network_capex_usd(switches=switches, switch_usd=float(c.ib_switch_usd))
    servers = tco.server_capex_usd(servers=nodes, server_usd=q["cost_server_capex_usd"])
    capex = servers + network
    kept = tco.storage_kept_TB(purpose=ctx.s.purpose, training_TB=q["storage_total_TB"],
                               serving_weights_GB=q["infer_weights_GB"])
    storage = tco.storage_per_year_usd(storage_TB=kept,
                                       usd_per_TB_month=float(c.storage_usd_per_TB_month))
    support = tco.support_per_year_usd(capex_usd=capex, support_frac_per_year=float(c.support_frac_of_capex_per_year))
    power = ownership.power_per_year_usd(num_gpus=gpus, power_usd_per_gpu_hour=q["power_usd_per_gpu_hour"])
    staff = float(c.staff_usd_per_year)
    opex = power + storage + staff + support
    years = q["cost_depreciation_years"]
    total = tco.tco_usd(capex_usd=capex, opex_per_year_usd=opex, years=years)
    rent = tco.rent_per_year_usd(num_gpus=gpus, gpu_hour_usd=q["gpu_hour_usd"])
    contingency = total * float(c.contingency_frac)
    return {
        "tco_switch_ports": ports,
        "tco_switch_ports_per_nic": per_nic,
        "tco_switch_usd": float(c.ib_switch_usd),
        "tco_gpus_owned": gpus,
        "tco_nodes": nodes,
        "tco_nic_ports": nodes * nics,
        "tco_switches": switches,
        "tco_network_capex_usd": network,
        "tco_server_capex_usd": servers,
        "tco_capex_usd": capex,
        "tco_serving_storage_TB": tco.serving_storage_TB(weights_GB=q["infer_weights_GB"]),
        "tco_storage_TB": kept,
        "tco_storage_usd_per_TB_month": float(c.storage_usd_per_TB_month),
        "tco_storage_per_year_usd": storage,
        "tco_power_per_year_usd": power,
        "tco_staff_per_year_usd": staff,
        "tco_support_per_year_usd": support,
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
