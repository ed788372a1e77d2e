"""Multi-year total cost of ownership of a bought cluster (spec 17.9.3 T8, 17.5.9 table 17-67): the network
switches and the storage priced apart from the servers, staff and support, and the horizon year by year
(capex in year 1, opex and straight-line depreciation per year in service, cumulative), beside the rent of
the same GPUs. Money in USD; a horizon of N years may end inside a year (N = 2.5: year 3 counts half).

Which GPUs are owned follows the scenario's purpose (docs/planner.md, "The TCO sheet"): a training plan owns the
GPUs it bills (spares and whole nodes included), a serving plan the serving GPUs in use, a plan of both the
larger of the two (one cluster bought once trains the model and then serves it). They sit in whole servers:
the servers bought are the GPUs owned / GPUs per server, rounded up, at the server price each.

Book check (17.9.3, 16,384 H800 = 2,048 servers of 8 GPUs, 8 NDR ports each): servers 2,048 x $300K =
$614.4M; switches 16,384 ports / 64 ports per switch = 256 x $50K = $12.8M; with Lustre $1-3M and power and
cooling $2-4M a month, the 3-year TCO is $1.63-1.80 per GPU-hour (spec ERRATUM 28; the book printed 1.0-1.3).
"""

from __future__ import annotations

from workbook.reference.train_cost import _nonneg
from workbook.reference.training import ceil_count
from workbook.units import GB, HOURS_PER_YEAR, TB

MONTHS_PER_YEAR = 12.0


PURPOSES = ("training", "serving", "both")


def gpus_owned(*, purpose: str, train_gpus_billed: float, serving_gpus: float) -> float:
    """GPUs the TCO owns: training -> the training GPUs billed; serving -> the serving GPUs in use; both -> the
    larger of the two (one cluster, bought once, trains the model and then serves it; a fleet that serves while
    the next model trains is a second scenario of purpose serving, whose TCO adds)."""
    _nonneg(train_gpus_billed=train_gpus_billed, serving_gpus=serving_gpus)
    if purpose == "training":
        return train_gpus_billed
    if purpose == "serving":
        return serving_gpus
    if purpose == "both":
        return max(train_gpus_billed, serving_gpus)
    raise ValueError(f"purpose must be one of {PURPOSES}, got {purpose!r}")


def server_count(*, gpus: float, gpus_per_server: float) -> int:
    """Servers bought = ceil(GPUs owned / GPUs per server): whole servers (28 serving GPUs of 8 per server: 4)."""
    _nonneg(gpus=gpus)
    if gpus_per_server <= 0:
        raise ValueError("gpus_per_server must be positive")
    return ceil_count(gpus / gpus_per_server)


def server_capex_usd(*, servers: float, server_usd: float) -> float:
    """Server capex = servers x price per server (17.9.3: 2,048 x $300K = $614.4M)."""
    _nonneg(servers=servers, server_usd=server_usd)
    return servers * server_usd


def switch_count(*, nodes: float, nics_per_node: float, switch_ports: float, switch_ports_per_nic: float = 1.0) -> int:
    """Switches = ceil(nodes x NICs per node x switch ports per NIC / ports per switch) (17.9.3: one leaf port
    per NIC, 16,384 / 64 = 256; a two-tier non-blocking fat tree needs 3 switch ports per NIC)."""
    _nonneg(nodes=nodes, nics_per_node=nics_per_node, switch_ports_per_nic=switch_ports_per_nic)
    if switch_ports <= 0:
        raise ValueError("switch_ports must be positive")
    return ceil_count(nodes * nics_per_node * switch_ports_per_nic / switch_ports)


def network_capex_usd(*, switches: float, switch_usd: float) -> float:
    """Switch capex = switches x price per switch (17.9.3: 256 x $50K = $12.8M)."""
    _nonneg(switches=switches, switch_usd=switch_usd)
    return switches * switch_usd


def serving_storage_TB(*, weights_GB: float) -> float:
    """Storage a serving fleet keeps: the model's weights at the inference precision, one copy on the shared store
    every server loads from (LLaMA-3-70B at BF16: 141 GB = 0.141 TB); no dataset, no training checkpoints."""
    _nonneg(weights_GB=weights_GB)
    return weights_GB * GB / TB


def storage_kept_TB(*, purpose: str, training_TB: float, serving_weights_GB: float) -> float:
    """Storage the TCO prices by the purpose: training or both -> the training storage (dataset, retained
    checkpoints, logs; the checkpoints hold the weights served); serving -> the served weights alone."""
    _nonneg(training_TB=training_TB)
    if purpose in ("training", "both"):
        return training_TB
    if purpose == "serving":
        return serving_storage_TB(weights_GB=serving_weights_GB)
    raise ValueError(f"purpose must be one of {PURPOSES}, got {purpose!r}")


def storage_per_year_usd(*, storage_TB: float, usd_per_TB_month: float) -> float:
    """Storage kept for a year: TB x price per TB-month x 12 (table 17-67: $0.01-0.05 per GB-month self-hosted)."""
    _nonneg(storage_TB=storage_TB, usd_per_TB_month=usd_per_TB_month)
    return storage_TB * usd_per_TB_month * MONTHS_PER_YEAR


def support_per_year_usd(*, capex_usd: float, support_frac_per_year: float) -> float:
    """Vendor support as a share of the hardware capex, each year."""
    _nonneg(capex_usd=capex_usd, support_frac_per_year=support_frac_per_year)
    return capex_usd * support_frac_per_year


def year_fractions(*, years: float, max_years: int) -> list[float]:
    """Share of each year 1..max_years inside a horizon of *years*: 1, ..., 1, the part year, then 0."""
    if years <= 0 or years > max_years:
        raise ValueError(f"years must be in (0, {max_years}], got {years!r}")
    return [max(0.0, min(1.0, years - k)) for k in range(max_years)]


def tco_usd(*, capex_usd: float, opex_per_year_usd: float, years: float) -> float:
    """T8: capex + opex x years."""
    _nonneg(capex_usd=capex_usd, opex_per_year_usd=opex_per_year_usd, years=years)
    return capex_usd + opex_per_year_usd * years


def tco_usd_per_gpu_hour(*, tco_usd: float, num_gpus: float, years: float) -> float:
    """T8: TCO / (N_GPU x years x 8760 h), every GPU-hour of the horizon counted (24/7)."""
    if num_gpus <= 0 or years <= 0:
        raise ValueError("num_gpus and years must be positive")
    return tco_usd / (num_gpus * years * HOURS_PER_YEAR)


def rent_per_year_usd(*, num_gpus: float, gpu_hour_usd: float) -> float:
    """The same GPUs rented 24/7 for a year: N x price x 8760 h."""
    _nonneg(num_gpus=num_gpus, gpu_hour_usd=gpu_hour_usd)
    return num_gpus * gpu_hour_usd * HOURS_PER_YEAR


def by_year(*, capex_usd: float, opex_per_year_usd: dict[str, float], rent_per_year_usd: float, years: float,
            max_years: int) -> list[dict[str, float]]:
    """Years 1..max_years: the share in service, capex (year 1), each opex line and their sum, depreciation,
    the owned cash and its cumulative sum, and the rent alternative and its cumulative sum. Years past the
    horizon are all 0 (their cumulative sums stay at the horizon's totals)."""
    out, cash_sum, rent_sum = [], 0.0, 0.0
    for k, frac in enumerate(year_fractions(years=years, max_years=max_years), start=1):
        row = {"frac": frac, "capex_usd": capex_usd if k == 1 else 0.0}
        row.update({f"{name}_usd": v * frac for name, v in opex_per_year_usd.items()})
        row["opex_usd"] = sum(opex_per_year_usd.values()) * frac
        row["depreciation_usd"] = capex_usd / years * frac
        row["cash_usd"] = row["capex_usd"] + row["opex_usd"]
        cash_sum += row["cash_usd"]
        row["cumulative_usd"] = cash_sum
        row["rent_usd"] = rent_per_year_usd * frac
        rent_sum += row["rent_usd"]
        row["rent_cumulative_usd"] = rent_sum
        out.append(row)
    return out
