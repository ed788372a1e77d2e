"""The owned cluster's full bill beyond servers and GPU power (issue 23 item 3): a non-blocking two-tier fat
tree (leaf + spine) with its optics and cables, power with PUE for all the IT load (GPUs at TDP, host CPUs /
memory / NICs per server, network switches), data-centre space per kW-month of IT load, and staff per GPUs.
Money in USD, power in W or kW.

Fat tree (Al-Fares et al., "A scalable, commodity data center network architecture", SIGCOMM 2008): a leaf of
k ports gives half of them to servers and half to the spine when the fabric is non-blocking (downlink share
0.5); up to k NIC ports one leaf is enough (no spine). With more, leaves = ceil(NIC ports / (k x downlink
share)) and the spine terminates every leaf uplink: spines = ceil(leaves x (1 - downlink share)). Every link
(NIC to leaf, leaf to spine) carries two transceivers and one cable. A two-tier tree of k-port switches tops
out at k^2/2 NIC ports per fabric (2,048 for k = 64, one rail of the book's 16,384-port 8-rail cluster); above
that a third tier is needed, which this bill does not price.

The book's 17.9.3 count (one switch port per NIC, 256 switches for 16,384 ports) is workbook.reference.tco.
switch_count with switch_ports_per_nic = 1; a non-blocking two-tier tree uses 3 switch ports per NIC (768).
"""

from __future__ import annotations

from workbook.reference.train_cost import _nonneg
from workbook.reference.training import ceil_count
from workbook.units import HOURS_PER_YEAR

WATTS_PER_KW = 1000.0
MONTHS_PER_YEAR = 12.0


def two_tier(*, nic_ports: float, switch_ports: float) -> bool:
    """A spine tier is needed when the NIC ports exceed one leaf's ports."""
    if switch_ports <= 0:
        raise ValueError("switch_ports must be positive")
    return nic_ports > switch_ports


def leaf_switches(*, nic_ports: float, switch_ports: float, downlink_frac: float) -> int:
    """Leaves: ceil(NIC ports / ports) while one tier suffices (0 or 1), else ceil(NIC ports / (ports x downlink
    share)) (528 NDR ports on 64-port leaves, half down: 17)."""
    _nonneg(nic_ports=nic_ports)
    if not 0 < downlink_frac <= 1:
        raise ValueError("downlink_frac must be in (0, 1]")
    if not two_tier(nic_ports=nic_ports, switch_ports=switch_ports):
        return ceil_count(nic_ports / switch_ports)
    return ceil_count(nic_ports / (switch_ports * downlink_frac))


def spine_switches(*, nic_ports: float, switch_ports: float, downlink_frac: float) -> int:
    """Spines: 0 for one tier, else ceil(leaves x ports x uplink share / ports) (17 leaves x 32 uplinks / 64 = 9)."""
    if not two_tier(nic_ports=nic_ports, switch_ports=switch_ports):
        return 0
    leaves = leaf_switches(nic_ports=nic_ports, switch_ports=switch_ports, downlink_frac=downlink_frac)
    return ceil_count(leaves * (1 - downlink_frac))


def links(*, nic_ports: float, switch_ports: float, downlink_frac: float) -> float:
    """Cabled links: one per NIC port, plus for two tiers the leaf uplinks that keep the tree non-blocking
    (NIC ports x uplink share / downlink share; = NIC ports at a half split)."""
    _nonneg(nic_ports=nic_ports)
    up = nic_ports * (1 - downlink_frac) / downlink_frac
    return nic_ports + (up if two_tier(nic_ports=nic_ports, switch_ports=switch_ports) else 0.0)


def optics_capex_usd(*, links: float, usd_per_link: float) -> float:
    """Optics and cables: links x (two transceivers + one cable) per link."""
    _nonneg(links=links, usd_per_link=usd_per_link)
    return links * usd_per_link


def it_power_kW(*, gpus: float, gpu_tdp_W: float, servers: float, host_W_per_server: float, switches: float,
                switch_W: float) -> dict[str, float]:
    """IT load in kW: GPUs at TDP, the host of each server (CPUs, memory, NICs, fans: server power less its GPUs),
    the switches; and their sum."""
    _nonneg(gpus=gpus, gpu_tdp_W=gpu_tdp_W, servers=servers, host_W_per_server=host_W_per_server,
            switches=switches, switch_W=switch_W)
    out = {"gpu": gpus * gpu_tdp_W / WATTS_PER_KW, "host": servers * host_W_per_server / WATTS_PER_KW,
           "network": switches * switch_W / WATTS_PER_KW}
    out["it"] = out["gpu"] + out["host"] + out["network"]
    return out


def power_per_year_usd(*, it_kW: float, pue: float, usd_per_kWh: float) -> float:
    """A year of 24/7 power for the whole IT load with the facility overhead: kW x PUE x price x 8760 h."""
    _nonneg(it_kW=it_kW, pue=pue, usd_per_kWh=usd_per_kWh)
    return it_kW * pue * usd_per_kWh * HOURS_PER_YEAR


def space_per_year_usd(*, it_kW: float, usd_per_kW_month: float) -> float:
    """Colocation space and cooling capacity, priced per kW of IT load per month (CBRE's wholesale asking rate
    basis), x 12; the power itself is metered apart (power line)."""
    _nonneg(it_kW=it_kW, usd_per_kW_month=usd_per_kW_month)
    return it_kW * usd_per_kW_month * MONTHS_PER_YEAR


def staff_fte(*, gpus: float, gpus_per_fte: float) -> int:
    """Operations staff in whole people: ceil(GPUs owned / GPUs one engineer runs)."""
    _nonneg(gpus=gpus)
    if gpus_per_fte <= 0:
        raise ValueError("gpus_per_fte must be positive")
    return ceil_count(gpus / gpus_per_fte)


def staff_per_year_usd(*, fte: float, usd_per_fte_year: float, override_usd: float | None = None) -> float:
    """Staff per year: the given figure when the plan gives one, else people x loaded cost per person-year."""
    if override_usd is not None:
        _nonneg(override_usd=override_usd)
        return override_usd
    _nonneg(fte=fte, usd_per_fte_year=usd_per_fte_year)
    return fte * usd_per_fte_year
