"""Line items of the Comm sheet: per-GPU, per-step traffic of each parallel dimension and its time
on the scenario's links (spec 17.6.2-17.6.10).

A group inside one node (TP, EP over TP·PP·EP GPUs, CP over TP·CP GPUs) uses the NVLink planning bandwidth, else
one NIC per GPU; DP and PP use the NIC when the job spans nodes. Volumes are bytes sent per GPU.
The compute time per step they are set against is the step time in use (Step Time sheet).
"""

from __future__ import annotations

from workbook.calc.comm import ACT_BYTES, RATIO_CAP
from workbook.reference import comm as cm
from workbook.units import US_PER_S

CONSTANTS = [
    ("us_per_s", US_PER_S, "us/s", "Microseconds per second", "definition"),
    ("comm_ratio_cap", RATIO_CAP, "x", "Ratio shown when there is no communication (stands in for infinity)",
     "workbook convention (calc.comm)"),
    ("comm_r_floor", cm.R_FLOOR, "x", "Floor on R = T_compute / T_DP for DP scaling (the book's iron rule)",
     "spec 17.6.3"),
    ("comm_grad_bytes", 2, "B/param", "Gradient bytes per parameter in the DP all-reduce (BF16)", "spec 17.6.3"),
    ("comm_act_bytes", ACT_BYTES, "B", "Bytes per activation element on the wire (BF16)", "spec 17.6.4-17.6.7"),
    ("comm_tp_ops_per_layer", 8, "ops", "TP f/g operations per layer per micro-batch (fwd + bwd)", "spec 17.6.4"),
    ("comm_tp_book_bytes", cm.BOOK_TP_BYTES_PER_ELEMENT, "B", "Bytes per element in the book's TP volume B·S·d·3",
     "spec T6 (book form), 17.9.3"),
    ("comm_ep_a2a_per_layer", 4, "ops", "All-to-Alls per MoE layer (dispatch + combine, fwd + bwd)", "spec 17.6.6"),
]


def _link(span: str) -> str:
    """Bandwidth of a group of *span* GPUs: NVLink if it fits one node (and the GPU has NVLink), else the NIC."""
    return (f"=IF(AND({span}<={{gpu_gpus_per_node}},{{comm_nvlink_GBps}}>0),"
            "{comm_nvlink_GBps},{comm_ib_per_gpu_GBps})")


ITEMS = {
    "comm_nvlink_GBps": "={nvlink_effective_GBps}",
    "comm_ib_per_gpu_GBps": "={net_nic_Gbps}/c_bits_per_byte*{net_network_efficiency}*{net_nics_per_node}"
    "/{gpu_gpus_per_node}",
    "comm_multi_node_flag": "=IF({training.num_gpus}>{gpu_gpus_per_node},1,0)",
    "comm_intra_node_GBps": "=IF({comm_nvlink_GBps}>0,{comm_nvlink_GBps},{comm_ib_per_gpu_GBps})",
    "comm_dp_pp_bw_GBps": "=IF({comm_multi_node_flag}=1,{comm_ib_per_gpu_GBps},{comm_intra_node_GBps})",
    "comm_alpha_s": "=d_ib_latency_us/c_us_per_s",
    "comm_activation_GB": "={training.micro_batch}*{training.seq_len}*{model_d_model}*c_comm_act_bytes/c_GB",
    "comm_compute_step_s": "={train_step_time_s}",
    "comm_dp_grad_shard_GB": "=c_comm_grad_bytes*{params_total}/({training.tp}*{training.pp})/c_GB",
    "comm_dp_volume_GB": "=c_two*({plan_dp_cp}-1)/{plan_dp_cp}*{comm_dp_grad_shard_GB}",
    # ring all-reduce: 2(DP-1) latency steps + bytes sent / bandwidth (0 when DP = 1)
    "comm_dp_time_s": "=c_two*({plan_dp_cp}-1)*{comm_alpha_s}+{comm_dp_volume_GB}/{comm_dp_pp_bw_GBps}",
    "comm_dp_ratio": "=IF({comm_dp_time_s}>0,MIN({comm_compute_step_s}/{comm_dp_time_s},c_comm_ratio_cap),"
    "c_comm_ratio_cap)",
    "comm_dp_ratio_ok_flag": "=IF({comm_dp_ratio}>=c_comm_r_floor,1,0)",
    "comm_dp_weak_limit_s": "=c_two*{comm_dp_grad_shard_GB}/{comm_dp_pp_bw_GBps}",
    "comm_dp_bw_needed_GBps": "={comm_dp_volume_GB}/{comm_compute_step_s}",
    "comm_dp_ranks_per_node": "=MAX(1,MIN({plan_dp_cp},INT({gpu_gpus_per_node}/({training.tp}*{training.pp}))))",
    "comm_dp_nodes": "=MAX(1,ROUNDUP({plan_dp_cp}/{comm_dp_ranks_per_node},0))",
    # inter-node ring over the nodes on 1/ranks_per_node of the shard (0 on a single node)
    "comm_dp_bw_needed_hier_GBps": "=c_two*({comm_dp_nodes}-1)/{comm_dp_nodes}"
    "*{comm_dp_grad_shard_GB}/{comm_dp_ranks_per_node}/{comm_compute_step_s}",
    "comm_rails_needed": "=ROUNDUP(ROUND({comm_dp_bw_needed_GBps}/{nic_port_GBps},c_count_ceil_digits),0)",
    "comm_tp_volume_GB": "={training.grad_accum}*{model_layers}/{training.pp}*c_comm_tp_ops_per_layer"
    "*{comm_activation_GB}*({training.tp}-1)/{training.tp}",
    "comm_tp_layer_book_GB": "={comm_activation_GB}/c_comm_act_bytes*c_comm_tp_book_bytes",
    "comm_tp_link_GBps": _link("{training.tp}"),
    "comm_tp_time_s": "={comm_tp_volume_GB}/{comm_tp_link_GBps}",
    # per boundary link: activation forward + gradient back, GA micro-batches (boundaries run in parallel)
    "comm_pp_volume_GB": "=IF({training.pp}>1,{training.grad_accum}*c_two*{comm_activation_GB},0)",
    "comm_pp_time_s": "={comm_pp_volume_GB}/{comm_dp_pp_bw_GBps}",
    "comm_ep_a2a_GB": "=MAX(1,{model_top_k})*{comm_activation_GB}*({training.ep}-1)/{training.ep}",
    # MoE only: GA x MoE layers of this stage x 4 All-to-Alls (0 when EP = 1)
    "comm_ep_volume_GB": "={model_moe}*{training.grad_accum}*({model_layers}-{model_n_dense_layers})/{training.pp}"
    "*c_comm_ep_a2a_per_layer*{comm_ep_a2a_GB}",
    "comm_ep_link_GBps": _link("{training.tp}*{training.pp}*{training.ep}"),
    "comm_ep_time_s": "={comm_ep_volume_GB}/{comm_ep_link_GBps}",
    "comm_cp_ring_step_GB": "=c_two*{training.micro_batch}*{training.seq_len}/{training.cp}"
    "*{model_n_kv_heads}*{model_head_dim}*c_comm_act_bytes/c_GB",
    # (CP-1) ring steps per layer, L/PP layers, GA micro-batches (0 when CP = 1)
    "comm_cp_volume_GB": "={training.grad_accum}*{model_layers}/{training.pp}*({training.cp}-1)"
    "*{comm_cp_ring_step_GB}",
    "comm_cp_link_GBps": _link("{training.tp}*{training.cp}"),
    "comm_cp_time_s": "={comm_cp_volume_GB}/{comm_cp_link_GBps}",
    "comm_total_time_s": "={comm_dp_time_s}+{comm_tp_time_s}+{comm_pp_time_s}+{comm_ep_time_s}+{comm_cp_time_s}",
    "comm_exposed_time_s": "={comm_total_time_s}-{training.tp_overlap_frac}*{comm_tp_time_s}",
    "comm_step_time_s": "={comm_compute_step_s}+MAX(0,{comm_exposed_time_s}-{comm_compute_step_s})",
    "comm_ratio": "=IF({comm_total_time_s}>0,MIN({comm_compute_step_s}/{comm_total_time_s},c_comm_ratio_cap),"
    "c_comm_ratio_cap)",
    "comm_share_frac": "={comm_total_time_s}/({comm_total_time_s}+{comm_compute_step_s})",
    "comm_scaling_eff_frac": "=1-{comm_share_frac}",
    "comm_over_limit_flag": "=IF({comm_share_frac}>d_comm_max_frac,1,0)",
}
