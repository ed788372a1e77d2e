"""Line items of the Hardware block (Plan sheet): derived figures of the selected GPU and node
(spec 17.1.2-17.1.6, 17.4.12)."""

from __future__ import annotations

#: training precision -> which peak column applies (CHOOSE index below: 1 FP32, 2 BF16, 3 FP16, 4 FP8)
TABLES = {
    "train_peak": (
        "precision",
        [
            ("fp32", {"choice": 1}),
            ("bf16", {"choice": 2}),
            ("fp16", {"choice": 3}),
            ("fp8", {"choice": 4}),
        ],
        "spec 17.1.4 (peak per training precision; FP8 falls back to BF16 without FP8 units)",
    ),
}


def _net(field: str) -> str:
    """A network input: the scenario value, or the catalogue default when the input is left blank."""
    return f"=IF(ISBLANK({{network.{field}}}),d_{field},{{network.{field}}})"


ITEMS = {
    "net_nic_Gbps": _net("nic_Gbps"),
    "net_nics_per_node": _net("nics_per_node"),
    "net_network_efficiency": _net("network_efficiency"),
    "net_nvlink_efficiency": _net("nvlink_efficiency"),
    "net_nvlink_direction_factor": _net("nvlink_direction_factor"),
    "net_pcie_direction_factor": _net("pcie_direction_factor"),
    "train_peak_TFLOPS": "=CHOOSE(INDEX(t_train_peak_choice,MATCH({training.precision},t_train_peak_precision,0)),"
    "{gpu_fp32_TFLOPS},{gpu_bf16_dense_TFLOPS},{gpu_fp16_dense_TFLOPS},"
    "IF({gpu_fp8_dense_TFLOPS}>0,{gpu_fp8_dense_TFLOPS},{gpu_bf16_dense_TFLOPS}))",
    "mfu_peak_TFLOPS": "=IF({training.mfu_peak}=\"precision\",{train_peak_TFLOPS},{gpu_bf16_dense_TFLOPS})",
    "gpu_native_fp8_flag": "=IF({gpu_fp8_dense_TFLOPS}>0,1,0)",
    "ridge_FLOP_per_byte": "={gpu_bf16_dense_TFLOPS}*c_tera/({gpu_hbm_bw_GBps}*c_GB)",
    "ridge_train_FLOP_per_byte": "={train_peak_TFLOPS}*c_tera/({gpu_hbm_bw_GBps}*c_GB)",
    "bw_flops_ratio_B_per_kFLOP": "=c_kilo*{gpu_hbm_bw_GBps}*c_GB/({gpu_bf16_dense_TFLOPS}*c_tera)",
    "hbm_effective_GBps": "={gpu_hbm_bw_GBps}*d_hbm_efficiency",
    "hbm_sweep_ms": "={gpu_hbm_GB}/{gpu_hbm_bw_GBps}*c_ms_per_s",
    "nvlink_effective_GBps": "={gpu_nvlink_bw_GBps}*{net_nvlink_direction_factor}*{net_nvlink_efficiency}",
    "pcie_effective_GBps": "={gpu_pcie_bw_GBps}*{net_pcie_direction_factor}",
    "nic_port_GBps": "={net_nic_Gbps}/c_bits_per_byte",
    "node_network_Tbps": "={net_nics_per_node}*{net_nic_Gbps}/c_kilo",
    "node_network_GBps": "={net_nics_per_node}*{net_nic_Gbps}/c_bits_per_byte",
    "node_network_after_encoding_GBps": "={node_network_GBps}*d_encoding_efficiency",
    "node_network_effective_GBps": "={node_network_GBps}*{net_network_efficiency}",
    "network_per_gpu_GBps": "={node_network_GBps}/{gpu_gpus_per_node}",
    "nvlink_to_nic_port_ratio": "={gpu_nvlink_bw_GBps}/{nic_port_GBps}",
    "node_nvlink_aggregate_GBps": "={gpu_gpus_per_node}*{gpu_nvlink_bw_GBps}",
    "node_nvlink_bisection_GBps": "={gpu_gpus_per_node}/c_two*{gpu_nvlink_bw_GBps}",
    "node_hbm_GB": "={gpu_gpus_per_node}*{gpu_hbm_GB}",
    "pcie_vs_hbm_frac": "={pcie_effective_GBps}/{gpu_hbm_bw_GBps}",
    "cpu_dram_vs_hbm_frac": "=d_cpu_dram_bw_GBps/{gpu_hbm_bw_GBps}",
    "nvme_vs_hbm_frac": "=d_nvme_bw_GBps/{gpu_hbm_bw_GBps}",
    "hbm_vs_pcie_slowdown_x": "={gpu_hbm_bw_GBps}/{pcie_effective_GBps}",
}
