"""Hardware sheet: derived figures of the chosen GPU and node (spec 17.1.2-17.1.6, 17.4.12)."""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import hardware as hw
from workbook.reference import offload as off
from workbook.units import MS_PER_S

#: fallbacks when the catalogue defaults lack a key (values from spec 17.1.2 / 17.4.12)
FALLBACK_DEFAULTS = {"hbm_efficiency": 0.9, "encoding_efficiency": 0.97, "cpu_dram_bw_GBps": 50.0,
                     "nvme_bw_GBps": 7.0}

QUANTITIES = [
    Q("net_nic_Gbps", "Gbit/s", "NIC line rate in use (scenario, else catalogue default)", "17.1.2"),
    Q("net_nics_per_node", "count", "NICs per node in use (scenario, else catalogue default)", "17.1.2"),
    Q("net_network_efficiency", "fraction", "Network efficiency in use (scenario, else catalogue default)", "17.1.2"),
    Q("net_nvlink_efficiency", "fraction", "NVLink efficiency in use (scenario, else catalogue default)", "17.1.2"),
    Q("net_nvlink_direction_factor", "x", "NVLink direction factor in use (1 = quoted bidirectional, 0.5 = one direction)", "17.1.2"),
    Q("net_pcie_direction_factor", "x", "PCIe direction factor in use (1 = quoted figure, 0.5 = one direction)", "17.4.12"),
    Q("train_peak_TFLOPS", "TFLOPS", "Dense peak at the training precision (FP8 falls back to BF16 without FP8 units)", "17.1.4"),
    Q("mfu_peak_TFLOPS", "TFLOPS", "Peak an MFU refers to (training.mfu_peak: dense BF16, or the training precision's)",
      "17.5.2", note="MFU given, MFU and HFU reported"),
    Q("gpu_native_fp8_flag", "0/1", "GPU has native FP8 tensor cores (1 = yes)", "17.1.5"),
    Q("ridge_FLOP_per_byte", "FLOP/B", "Roofline ridge point (BF16): peak FLOPS / HBM bandwidth", "17.1.3"),
    Q("ridge_train_FLOP_per_byte", "FLOP/B", "Roofline ridge point at the training precision", "17.1.3"),
    Q("bw_flops_ratio_B_per_kFLOP", "B/kFLOP", "HBM bandwidth / BF16 compute (bytes per 1000 FLOPs, the book's x1e-3 ratio)", "17.1.5"),
    Q("hbm_effective_GBps", "GB/s", "HBM bandwidth after planning derate", "17.1.2"),
    Q("hbm_sweep_ms", "ms", "Time to read the whole HBM once at peak bandwidth", "17.1.2"),
    Q("nvlink_effective_GBps", "GB/s", "NVLink planning bandwidth (quoted x direction factor x efficiency)", "17.1.2"),
    Q("pcie_effective_GBps", "GB/s", "PCIe bandwidth used for copies (quoted x direction factor)", "17.4.12"),
    Q("nic_port_GBps", "GB/s", "One NIC port line rate in GB/s (Gbit/s / 8)", "17.1.2"),
    Q("node_network_Tbps", "Tbit/s", "Node network line rate (NICs x Gbit/s)", "17.1.2"),
    Q("node_network_GBps", "GB/s", "Node network bandwidth, line rate (NICs x Gbit/s / 8)", "17.1.2"),
    Q("node_network_after_encoding_GBps", "GB/s", "Node network bandwidth after line coding (64b/66b)", "17.1.2"),
    Q("node_network_effective_GBps", "GB/s", "Node network planning bandwidth (line rate x network efficiency)", "17.1.2"),
    Q("network_per_gpu_GBps", "GB/s", "Network line rate per GPU (node bandwidth / GPUs per node)", "17.1.6"),
    Q("nvlink_to_nic_port_ratio", "x", "NVLink (quoted) over one NIC port: why TP stays inside a node", "17.1.6"),
    Q("node_nvlink_aggregate_GBps", "GB/s", "NVLink aggregate of one node (GPUs x quoted NVLink)", "17.1.6"),
    Q("node_nvlink_bisection_GBps", "GB/s", "NVLink bisection of one node (half the GPUs x quoted NVLink)", "17.1.6"),
    Q("node_hbm_GB", "GB", "HBM of one node (GPUs per node x HBM)", "17.1.6"),
    Q("pcie_vs_hbm_frac", "fraction", "PCIe bandwidth relative to HBM", "17.4.12"),
    Q("cpu_dram_vs_hbm_frac", "fraction", "CPU DRAM bandwidth relative to HBM", "17.4.12"),
    Q("nvme_vs_hbm_frac", "fraction", "NVMe SSD bandwidth relative to HBM", "17.4.12"),
    Q("hbm_vs_pcie_slowdown_x", "x", "How many times slower PCIe is than HBM", "17.4.12"),
]


def _default(ctx: Context, key: str) -> float:
    return float(ctx.defaults.get(key, FALLBACK_DEFAULTS[key]))


def train_peak_TFLOPS(gpu, precision: str) -> float:
    """Dense peak for a training precision (spec 17.1.4): FP8 needs native units, else BF16 rate."""
    if precision == "fp8":
        return float(gpu.fp8_dense_TFLOPS or gpu.bf16_dense_TFLOPS)
    if precision == "fp16":
        return float(gpu.fp16_dense_TFLOPS)
    if precision == "fp32":
        return float(gpu.fp32_TFLOPS)
    return float(gpu.bf16_dense_TFLOPS)


def mfu_peak_TFLOPS(gpu, precision: str, basis: str) -> float:
    """The peak an MFU refers to: the dense BF16 peak ("bf16"), or the training precision's ("precision")."""
    return train_peak_TFLOPS(gpu, precision) if basis == "precision" else float(gpu.bf16_dense_TFLOPS)


def compute(ctx: Context) -> dict[str, float]:
    g, net, t = ctx.gpu, ctx.s.network, ctx.s.training
    hbm_bw = float(g.hbm_bw_GBps)
    peak = train_peak_TFLOPS(g, t.precision)
    nvlink = float(g.nvlink_bw_GBps or 0.0)
    pcie = off.pcie_effective_GBps(pcie_quoted_GBps=float(g.pcie_bw_GBps), direction_factor=net.pcie_direction_factor)
    port = hw.gbit_to_GBps(net.nic_Gbps)
    node_net = hw.nic_aggregate_GBps(nics=net.nics_per_node, gbit_per_port=net.nic_Gbps)
    n = int(g.gpus_per_node)
    return {
        "net_nic_Gbps": net.nic_Gbps,
        "net_nics_per_node": net.nics_per_node,
        "net_network_efficiency": net.network_efficiency,
        "net_nvlink_efficiency": net.nvlink_efficiency,
        "net_nvlink_direction_factor": net.nvlink_direction_factor,
        "net_pcie_direction_factor": net.pcie_direction_factor,
        "train_peak_TFLOPS": peak,
        "mfu_peak_TFLOPS": mfu_peak_TFLOPS(g, t.precision, t.mfu_peak),
        "gpu_native_fp8_flag": g.fp8_dense_TFLOPS is not None,
        "ridge_FLOP_per_byte": hw.ridge_FLOP_per_byte(peak_TFLOPS=g.bf16_dense_TFLOPS, hbm_bw_GBps=hbm_bw),
        "ridge_train_FLOP_per_byte": hw.ridge_FLOP_per_byte(peak_TFLOPS=peak, hbm_bw_GBps=hbm_bw),
        "bw_flops_ratio_B_per_kFLOP": 1e3 * hw.bw_per_flop_B_per_FLOP(hbm_bw_GBps=hbm_bw, peak_TFLOPS=g.bf16_dense_TFLOPS),
        "hbm_effective_GBps": hw.derated_bw_GBps(bw_GBps=hbm_bw, efficiency=_default(ctx, "hbm_efficiency")),
        "hbm_sweep_ms": hw.transfer_time_s(size_GB=g.hbm_GB, bw_GBps=hbm_bw) * MS_PER_S,
        "nvlink_effective_GBps": nvlink * net.nvlink_direction_factor * net.nvlink_efficiency,
        "pcie_effective_GBps": pcie,
        "nic_port_GBps": port,
        "node_network_Tbps": hw.nic_aggregate_Tbps(nics=net.nics_per_node, gbit_per_port=net.nic_Gbps),
        "node_network_GBps": node_net,
        "node_network_after_encoding_GBps": node_net * _default(ctx, "encoding_efficiency"),
        "node_network_effective_GBps": node_net * net.network_efficiency,
        "network_per_gpu_GBps": node_net / n,
        "nvlink_to_nic_port_ratio": nvlink / port,
        "node_nvlink_aggregate_GBps": hw.switch_aggregate_GBps(gpus=n, per_gpu_bw_GBps=nvlink),
        "node_nvlink_bisection_GBps": hw.bisection_bw_GBps(gpus=n, per_gpu_bw_GBps=nvlink),
        "node_hbm_GB": n * float(g.hbm_GB),
        "pcie_vs_hbm_frac": off.tier_ratio(bw_GBps=pcie, hbm_bw_GBps=hbm_bw),
        "cpu_dram_vs_hbm_frac": off.tier_ratio(bw_GBps=_default(ctx, "cpu_dram_bw_GBps"), hbm_bw_GBps=hbm_bw),
        "nvme_vs_hbm_frac": off.tier_ratio(bw_GBps=_default(ctx, "nvme_bw_GBps"), hbm_bw_GBps=hbm_bw),
        "hbm_vs_pcie_slowdown_x": off.times_slower(bw_GBps=pcie, hbm_bw_GBps=hbm_bw),
    }
