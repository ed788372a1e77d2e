"""Line items of the TCO sheet, first block: the owned cluster's cost lines over the TCO horizon (spec 17.9.3
T8, 17.5.9 table 17-67) of the GPUs owned (the scenario's purpose picks the training or the serving GPUs).
Money in USD. Inputs left blank take the Defaults sheet's value (d_<key>).
"""

from __future__ import annotations


def _blank_default(field: str) -> str:
    """A Plan input, or the catalogue default when it is left blank."""
    return f"=IF(ISBLANK({{{field}}}),d_{field.split('.')[-1]},{{{field}}})"


ITEMS = {
    "tco_switch_ports": _blank_default("network.switch_ports"),
    "tco_leaf_downlink_frac": "=d_leaf_downlink_frac",
    "tco_switch_usd": _blank_default("cost.ib_switch_usd"),
    # GPUs owned by the Plan's purpose: training the GPUs billed, serving the serving GPUs in use, both the larger
    "tco_gpus_owned": "=MAX(IF({purpose_training_flag}=1,{train_gpus_billed},0),"
    "IF({purpose_serving_flag}=1,{srv_gpus_in_use},0))",  # the other purpose's figure is never read
    "tco_nodes": "=ROUNDUP(ROUND({tco_gpus_owned}/{gpu_gpus_per_node},c_count_ceil_digits),0)",
    "tco_nic_ports": "={tco_nodes}*{net_nics_per_node}",
    # fat tree: one leaf while the NIC ports fit its ports; above, leaves give the downlink share to servers
    "tco_two_tier_flag": "=IF({tco_nic_ports}>{tco_switch_ports},1,0)",
    "tco_leaf_switches": "=ROUNDUP(ROUND({tco_nic_ports}/({tco_switch_ports}"
    "*IF({tco_two_tier_flag}=1,{tco_leaf_downlink_frac},1)),c_count_ceil_digits),0)",
    "tco_spine_switches": "={tco_two_tier_flag}*ROUNDUP(ROUND({tco_leaf_switches}*(1-{tco_leaf_downlink_frac}),"
    "c_count_ceil_digits),0)",
    "tco_switches": "={tco_leaf_switches}+{tco_spine_switches}",
    # a non-blocking tree has as many leaf uplinks as downlinks (at a half split)
    "tco_links": "={tco_nic_ports}+{tco_two_tier_flag}*{tco_nic_ports}*(1-{tco_leaf_downlink_frac})"
    "/{tco_leaf_downlink_frac}",
    "tco_optics_usd_per_link": _blank_default("cost.optics_usd_per_link"),
    "tco_optics_capex_usd": "={tco_links}*{tco_optics_usd_per_link}",
    "tco_switch_capex_usd": "={tco_switches}*{tco_switch_usd}",
    "tco_network_capex_usd": "={tco_switch_capex_usd}+{tco_optics_capex_usd}",
    "tco_server_capex_usd": "={tco_nodes}*{cost_server_capex_usd}",
    "tco_capex_usd": "={tco_server_capex_usd}+{tco_network_capex_usd}",
    "tco_serving_storage_TB": "={infer_weights_GB}*c_GB/c_TB",
    # training or both: the training storage (its checkpoints hold the weights served); serving: the weights alone
    "tco_storage_TB": "=IF({purpose_training_flag}=1,{storage_total_TB},{tco_serving_storage_TB})",
    "tco_storage_usd_per_TB_month": _blank_default("cost.storage_usd_per_TB_month"),
    "tco_storage_per_year_usd": "={tco_storage_TB}*{tco_storage_usd_per_TB_month}*c_cost_months_per_year",
    "tco_gpu_power_kW": "={tco_gpus_owned}*{gpu_tdp_W}/c_kilo",
    "tco_host_power_W_per_server": _blank_default("cost.host_power_W_per_server"),
    "tco_host_power_kW": "={tco_nodes}*{tco_host_power_W_per_server}/c_kilo",
    "tco_network_power_kW": "={tco_switches}*d_switch_power_W/c_kilo",
    "tco_it_power_kW": "={tco_gpu_power_kW}+{tco_host_power_kW}+{tco_network_power_kW}",
    # T8 opex, for the whole IT load: kW x PUE x price per kWh x 8760 h
    "tco_power_per_year_usd": "={tco_it_power_kW}*{cost_pue}*{cost_electricity_usd_per_kWh}*c_hours_per_year",
    "tco_space_usd_per_kW_month": _blank_default("cost.space_usd_per_kW_month"),
    "tco_space_per_year_usd": "={tco_it_power_kW}*{tco_space_usd_per_kW_month}*c_cost_months_per_year",
    "tco_staff_fte": "=ROUNDUP(ROUND({tco_gpus_owned}/d_staff_gpus_per_fte,c_count_ceil_digits),0)",
    # a staff figure typed on the Plan wins; blank = people x loaded cost per person-year
    "tco_staff_per_year_usd": "=IF(ISBLANK({cost.staff_usd_per_year}),{tco_staff_fte}*d_staff_usd_per_fte_year,"
    "{cost.staff_usd_per_year})",
    "tco_support_frac": _blank_default("cost.support_frac_of_capex_per_year"),
    "tco_support_per_year_usd": "={tco_capex_usd}*{tco_support_frac}",
    "tco_opex_per_year_usd": "={tco_power_per_year_usd}+{tco_storage_per_year_usd}+{tco_space_per_year_usd}"
    "+{tco_staff_per_year_usd}+{tco_support_per_year_usd}",
    "tco_years": "={cost_depreciation_years}",
    "tco_depreciation_per_year_usd": "={tco_capex_usd}/{tco_years}",
    # T8: capex + opex x years; per GPU-hour over every hour of the horizon
    "tco_total_usd": "={tco_capex_usd}+{tco_opex_per_year_usd}*{tco_years}",
    "tco_all_in_usd_per_gpu_hour": "={tco_total_usd}/({tco_gpus_owned}*{tco_years}*c_hours_per_year)",
    "tco_rent_per_year_usd": "={tco_gpus_owned}*{gpu_hour_usd}*c_hours_per_year",
    "tco_rent_total_usd": "={tco_rent_per_year_usd}*{tco_years}",
    "tco_vs_rent_frac": "=IF({tco_rent_total_usd}>0,{tco_total_usd}/{tco_rent_total_usd},0)",
    "tco_contingency_usd": "={tco_total_usd}*{cost.contingency_frac}",
    "tco_total_with_contingency_usd": "={tco_total_usd}+{tco_contingency_usd}",
}
