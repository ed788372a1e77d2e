"""CPU offload (spec 17.4.12): tier ratios, ZeRO-Offload PCIe traffic and time, KV read time."""

from __future__ import annotations

from workbook.units import GB

#: ZeRO-Offload per step: BF16 gradients out (2P) + BF16 weights back (2P) (spec 17.4.12)
OFFLOAD_BYTES_PER_PARAM = 4.0


def tier_ratio(*, bw_GBps: float, hbm_bw_GBps: float) -> float:
    """Tier bandwidth relative to HBM (spec 17.4.12): DDR5 50/3350 = 0.015."""
    if hbm_bw_GBps <= 0 or bw_GBps < 0:
        raise ValueError("hbm_bw_GBps must be positive and bw_GBps non-negative")
    return bw_GBps / hbm_bw_GBps


def times_slower(*, bw_GBps: float, hbm_bw_GBps: float) -> float:
    """How many times slower than HBM: HBM / tier (spec 17.4.12)."""
    if bw_GBps <= 0:
        raise ValueError("bw_GBps must be positive")
    return hbm_bw_GBps / bw_GBps


def pcie_effective_GBps(*, pcie_quoted_GBps: float, direction_factor: float = 1.0) -> float:
    """Quoted PCIe figure × explicit direction factor (1 = book's 128 GB/s, 0.5 = one direction)."""
    if pcie_quoted_GBps <= 0 or not 0 < direction_factor <= 1:
        raise ValueError("pcie must be positive and 0 < direction_factor <= 1")
    return pcie_quoted_GBps * direction_factor


def offload_traffic_GB(*, params: float, bytes_per_param: float = OFFLOAD_BYTES_PER_PARAM) -> float:
    """PCIe bytes per step for optimizer offload, 4P (spec 17.4.12): 6.74B → 26.96 GB."""
    if params < 0 or bytes_per_param < 0:
        raise ValueError("params and bytes_per_param must be non-negative")
    return params * bytes_per_param / GB


def offload_time_s(*, traffic_GB: float, pcie_quoted_GBps: float, direction_factor: float = 1.0) -> float:
    """Transfer time of the offload traffic without overlap (spec 17.4.12)."""
    return traffic_GB / pcie_effective_GBps(pcie_quoted_GBps=pcie_quoted_GBps, direction_factor=direction_factor)


def step_overhead_frac(*, extra_s: float, step_s: float, overlap_frac: float = 0.0) -> float:
    """Added step time as a fraction of the step: extra·(1 − overlap)/step (spec 17.4.12)."""
    if step_s <= 0 or not 0 <= overlap_frac <= 1:
        raise ValueError("step_s must be positive and 0 <= overlap_frac <= 1")
    return extra_s * (1 - overlap_frac) / step_s


def kv_read_time_s(*, kv_GB_per_seq: float, batch: float, pcie_quoted_GBps: float,
                   direction_factor: float = 1.0) -> float:
    """Reading an offloaded KV cache once (one decode step): B·M_KV / BW (spec 17.4.12)."""
    if batch < 0 or kv_GB_per_seq < 0:
        raise ValueError("batch and kv_GB_per_seq must be non-negative")
    return batch * kv_GB_per_seq / pcie_effective_GBps(pcie_quoted_GBps=pcie_quoted_GBps,
                                                       direction_factor=direction_factor)
