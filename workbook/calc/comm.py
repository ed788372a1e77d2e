"""Comm sheet: per-GPU, per-step traffic of each parallel dimension and its time on the scenario's
links (spec 17.6.3-17.6.10).

Links: TP, EP and CP groups inside a node use the Hardware sheet's NVLink planning bandwidth;
groups that span nodes, DP and PP across nodes use one NIC per GPU (NIC line rate x network
efficiency x NICs/GPUs per node). Ring times include the alpha term (IB latency default).
Compute per step is the step time in use (Step Time sheet, last block: the step model, or the
MFU given, by the scenario's time model), so this sheet comes after Step Time in
workbook.calc.SHEETS; the step model does its own communication and reads nothing here.
"""

from __future__ import annotations

import math

from workbook.calc.base import Context, Q
from workbook.calc.plan import ceil_count_xl
from workbook.reference import comm as cm
from workbook.units import BITS_PER_BYTE, GB, US_PER_S

#: stands in for an unbounded ratio (no communication) so every value stays finite
RATIO_CAP = 1e9
#: bytes per activation element on the wire (BF16) in the TP/PP/EP/SP volumes (spec 17.6.4-17.6.7)
ACT_BYTES = 2

QUANTITIES = [
    Q("comm_nvlink_GBps", "GB/s", "Intra-node bandwidth used for TP/EP/CP (NVLink planning figure)", "17.6"),
    Q("comm_ib_per_gpu_GBps", "GB/s", "Inter-node bandwidth per GPU (NIC line rate x efficiency)", "17.6"),
    Q("comm_multi_node_flag", "0/1", "Training job spans more than one node (1 = yes)", "17.6"),
    Q("comm_intra_node_GBps", "GB/s", "Bandwidth of a group inside one node (NVLink, else the NIC)", "17.6"),
    Q("comm_dp_pp_bw_GBps", "GB/s", "Bandwidth of the DP and PP traffic (NIC if multi-node, else intra-node)", "17.6.3"),
    Q("comm_alpha_s", "s", "Latency per ring step (IB switch latency)", "17.6.2"),
    Q("comm_activation_GB", "GB", "One micro-batch activation B·S·d at 2 B (the unit of TP/PP/EP traffic)", "17.6.4"),
    Q("comm_compute_step_s", "s", "Compute time per step: the step time in use (step model, else MFU given)",
      "17.6.8"),
    Q("comm_dp_grad_shard_GB", "GB", "Gradient shard each DP·CP rank all-reduces, 2P/(TP·PP)", "17.6.3"),
    Q("comm_dp_volume_GB", "GB", "DP all-reduce bytes sent per GPU per step", "17.6.3"),
    Q("comm_dp_time_s", "s", "DP all-reduce time per step (ring)", "17.6.3"),
    Q("comm_dp_ratio", "x", "Compute / DP communication ratio R (>= 0.5 to scale DP)", "17.6.3"),
    Q("comm_dp_ratio_ok_flag", "0/1", "DP ratio R at or above the 0.5 floor (1 = yes)", "17.6.3"),
    Q("comm_dp_weak_limit_s", "s", "DP all-reduce time as DP grows without bound (2G/BW)", "17.6.9"),
    Q("comm_dp_bw_needed_GBps", "GB/s", "Per-GPU bandwidth to hide the DP all-reduce in one step (flat ring)", "17.6.10"),
    Q("comm_dp_ranks_per_node", "ranks", "DP ranks inside one node (hierarchical all-reduce)", "17.6.10"),
    Q("comm_dp_nodes", "nodes", "Nodes in the inter-node DP ring (hierarchical all-reduce)", "17.6.10"),
    Q("comm_dp_bw_needed_hier_GBps", "GB/s", "Per-GPU IB bandwidth to hide it with a hierarchical all-reduce", "17.6.10"),
    Q("comm_rails_needed", "rails", "400G rails per GPU for the flat-ring requirement", "17.6.10"),
    Q("comm_tp_volume_GB", "GB", "TP bytes sent per GPU per step (GA·L/PP·16·B·S·d·(t-1)/t)", "17.6.4"),
    Q("comm_tp_layer_book_GB", "GB", "TP volume per layer in the book's form, B·S·d·3 bytes (a lower bound; not used in times)",
      "17.9.3", "spec T6 book form, ERRATUM 25"),
    Q("comm_tp_link_GBps", "GB/s", "Bandwidth of the TP group (NVLink if inside a node, else the NIC)", "17.6.4"),
    Q("comm_tp_time_s", "s", "TP communication time per step", "17.6.4"),
    Q("comm_pp_volume_GB", "GB", "PP bytes per boundary link per step (GA·4·B·S·d)", "17.6.5"),
    Q("comm_pp_time_s", "s", "PP communication time per step", "17.6.5"),
    Q("comm_ep_a2a_GB", "GB", "One All-to-All per GPU, top_k·B·S·d·2 B·(EP-1)/EP", "17.6.6"),
    Q("comm_ep_volume_GB", "GB", "EP All-to-All bytes sent per GPU per step (top-k included)", "17.6.6"),
    Q("comm_ep_link_GBps", "GB/s", "Bandwidth of the EP group (NVLink if TP·PP·EP fits a node, else the NIC)", "17.6.6"),
    Q("comm_ep_time_s", "s", "EP All-to-All time per step", "17.6.6"),
    Q("comm_cp_ring_step_GB", "GB", "CP ring step: K and V of the local chunk, 2·B·(S/CP)·d_kv·2 B", "17.6.7"),
    Q("comm_cp_volume_GB", "GB", "CP ring-attention bytes sent per GPU per step", "17.6.7"),
    Q("comm_cp_link_GBps", "GB/s", "Bandwidth of the CP group over TP·CP GPUs (NVLink inside a node, else the NIC)",
      "17.6.7"),
    Q("comm_cp_time_s", "s", "CP ring-attention time per step", "17.6.7"),
    Q("comm_total_time_s", "s", "All communication per step, no overlap", "17.6.8"),
    Q("comm_exposed_time_s", "s", "Communication not hidden by the TP overlap fraction", "17.6.8"),
    Q("comm_step_time_s", "s", "Step time: compute + max(0, exposed comm - compute)", "17.6.8"),
    Q("comm_ratio", "x", "Compute / all communication ratio R", "17.6.3"),
    Q("comm_share_frac", "fraction", "Communication share without overlap, comm / (comm + compute)", "17.6.9"),
    Q("comm_scaling_eff_frac", "fraction", "Scaling efficiency R / (1 + R)", "17.6.3"),
    Q("comm_over_limit_flag", "0/1", "Communication share above the planning limit (20 %) (1 = warn)", "17.9.5"),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q, m, net = ctx.s.training, ctx.q, ctx.model, ctx.s.network
    gpn = int(ctx.gpu.gpus_per_node)
    nvlink = q["nvlink_effective_GBps"]
    ib = net.nic_Gbps / BITS_PER_BYTE * net.network_efficiency * net.nics_per_node / gpn
    alpha = float(ctx.defaults.get("ib_latency_us", 1.0)) / US_PER_S
    multi_node = t.num_gpus > gpn
    tp, pp, ga = t.tp, t.pp, t.grad_accum
    dp = t.num_gpus // (tp * pp)  # gradients are reduced over DP·CP (Megatron's dp_cp group)
    compute_s = q["train_step_time_s"]  # the time model in use
    act = dict(micro_batch=t.micro_batch, seq_len=t.seq_len, d_model=float(m.d_model))
    intra = nvlink if nvlink > 0 else ib

    def link(group_span: int) -> float:
        return nvlink if group_span <= gpn and nvlink > 0 else ib

    grad = cm.dp_grad_shard_GB(params=q["params_total"], tp=tp, pp=pp)
    v_dp = cm.dp_allreduce_GB(grad_GB=grad, dp=dp)
    bw_dp = ib if multi_node else intra
    t_dp = cm.ring_allreduce_time_s(size_GB=grad, n=dp, bw_GBps=bw_dp, alpha_s=alpha) if dp > 1 else 0.0
    v_tp = cm.tp_step_GB(**act, tp=tp, layers=float(m.layers), pp=pp, grad_accum=ga)
    t_tp = cm.transfer_time_s(size_GB=v_tp, bw_GBps=link(tp))
    v_pp = cm.pp_step_link_GB(**act, micro_batches=ga) if pp > 1 else 0.0
    t_pp = cm.transfer_time_s(size_GB=v_pp, bw_GBps=bw_dp)
    a2a = cm.ep_a2a_GB(**act, ep=t.ep, top_k=float(m.top_k or 1))
    v_ep = 0.0
    if m.moe and t.ep > 1:
        moe_layers = float(m.layers) - float(m.n_dense_layers or 0)
        v_ep = ga * cm.ep_total_GB(moe_layers=moe_layers / pp, a2a_GB=a2a)
    t_ep = cm.transfer_time_s(size_GB=v_ep, bw_GBps=link(tp * pp * t.ep))
    kv_dim = float(m.n_kv_heads or 0) * float(m.head_dim or 0)
    # context parallelism passes K and V around a ring of CP ranks (spec 17.6.7's sequence-parallel ring)
    cp = t.cp
    sp_step = cm.sp_ring_step_GB(micro_batch=t.micro_batch, seq_len=t.seq_len, kv_heads=1, head_dim=kv_dim, sp=cp)
    v_sp = 0.0
    if cp > 1:
        v_sp = ga * float(m.layers) / pp * cm.sp_ring_layer_GB(micro_batch=t.micro_batch, seq_len=t.seq_len,
                                                               kv_dim=kv_dim, sp=cp)
    t_sp = cm.transfer_time_s(size_GB=v_sp, bw_GBps=link(tp * cp))
    total = t_dp + t_tp + t_pp + t_ep + t_sp
    exposed = total - t.tp_overlap_frac * t_tp
    step = cm.step_time_hybrid_s(t_compute_s=compute_s, t_tp_s=t_tp, t_dp_s=t_dp + t_pp + t_ep + t_sp,
                                 tp_overlap_frac=t.tp_overlap_frac)
    ratio = compute_s / total if total > 0 else float("inf")
    share = cm.comm_share_frac(t_comm=total, t_compute=compute_s)
    flat = cm.dp_bw_per_gpu_GBps(params=q["params_total"] / (tp * pp), dp=dp, t_step_s=compute_s)
    r_dp = compute_s / t_dp if t_dp > 0 else float("inf")
    ranks_per_node = max(1, min(dp, gpn // (tp * pp)))
    return {
        "comm_nvlink_GBps": nvlink,
        "comm_ib_per_gpu_GBps": ib,
        "comm_multi_node_flag": float(multi_node),
        "comm_intra_node_GBps": intra,
        "comm_dp_pp_bw_GBps": bw_dp,
        "comm_alpha_s": alpha,
        "comm_activation_GB": t.micro_batch * t.seq_len * float(m.d_model) * ACT_BYTES / GB,
        "comm_compute_step_s": compute_s,
        "comm_dp_grad_shard_GB": grad,
        "comm_dp_volume_GB": v_dp,
        "comm_dp_time_s": t_dp,
        "comm_dp_ratio": min(r_dp, RATIO_CAP),
        "comm_dp_ratio_ok_flag": float(r_dp >= cm.R_FLOOR),
        "comm_dp_weak_limit_s": cm.dp_weak_limit_s(grad_GB=grad, bw_GBps=bw_dp),
        "comm_dp_bw_needed_GBps": flat,
        "comm_dp_ranks_per_node": ranks_per_node,
        "comm_dp_nodes": max(1, math.ceil(dp / ranks_per_node)),
        "comm_dp_bw_needed_hier_GBps": cm.dp_bw_per_gpu_hier_GBps(
            grad_GB=grad, dp=dp, ranks_per_node=ranks_per_node, t_step_s=compute_s),
        "comm_rails_needed": ceil_count_xl(flat / (net.nic_Gbps / BITS_PER_BYTE)),
        "comm_tp_volume_GB": v_tp,
        "comm_tp_layer_book_GB": cm.tp_layer_book_GB(**act),
        "comm_tp_link_GBps": link(tp),
        "comm_tp_time_s": t_tp,
        "comm_pp_volume_GB": v_pp,
        "comm_pp_time_s": t_pp,
        "comm_ep_a2a_GB": a2a,
        "comm_ep_volume_GB": v_ep,
        "comm_ep_link_GBps": link(tp * pp * t.ep),
        "comm_ep_time_s": t_ep,
        "comm_cp_ring_step_GB": sp_step,
        "comm_cp_volume_GB": v_sp,
        "comm_cp_link_GBps": link(tp * cp),
        "comm_cp_time_s": t_sp,
        "comm_total_time_s": total,
        "comm_exposed_time_s": exposed,
        "comm_step_time_s": step,
        "comm_ratio": min(ratio, RATIO_CAP),
        "comm_share_frac": share,
        "comm_scaling_eff_frac": 1 - share,
        "comm_over_limit_flag": float(share > float(ctx.defaults.get("comm_max_frac", cm.COMM_SHARE_WARN_FRAC))),
    }
