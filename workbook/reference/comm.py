"""Network communication (spec 17.6): collectives (alpha-beta), DP/TP/PP/EP/SP volumes, hybrid
step models, communication/compute ratio, weak/strong scaling, network sizing and topology.

Conventions (spec 17.6): volumes are bytes SENT per GPU (full-duplex links, one direction counted),
sizes in GB (1e9 B), bandwidths are effective one-direction per-GPU GB/s, times in s.
"""

from __future__ import annotations

import math

from workbook.reference.training import ceil_count
from workbook.units import BITS_PER_BYTE, GB, GIGA

#: link constants used in 17.6 (book values; spec 17.6 "Link constants", 17.5.1/17.5.2 flags)
LINK_SPEEDS: dict[str, float] = {
    "H800_NVLink_spec_bidir_GBps": 400,
    "H800_NVLink_eff_GBps": 150,
    "H100_NVLink_spec_bidir_GBps": 900,
    "H100_NVLink_eff_GBps": 300,
    "H20_NVLink_spec_bidir_GBps": 900,
    "H20_NVLink_eff_GBps": 300,
    "IB_NDR_Gbps": 400,
    "IB_NDR_GBps": 50,
    "rails_per_node": 8,
    "protocol_eff_low": 0.85,
    "protocol_eff_high": 0.90,
    "IB_switch_latency_us": 1,
    "NVSwitch_domain_GBps": 400,  # 17.6.6 only
    "IB_aggregate_GBps": 200,  # 17.6.3 only
}
#: table 17-73 (spec 17.6.10): cluster size -> topology (upper bound, label, topology)
TOPOLOGY_TABLE: list[tuple[float, str, str]] = [
    (8, "<=8", "NVLink only (single node)"),
    (64, "<=64", "2-rail Fat-Tree"),
    (576, "<=576", "NVSwitch + 8-rail"),
    (math.inf, ">576", "multi-pod 3-tier CLOS Fat-Tree"),
]
#: the book's "iron rule" floor on R = T_compute / T_DP (spec 17.6.3)
R_FLOOR = 0.5
#: communication share above which the plan is flagged (planning rule of thumb, 17.9.5: 20 %)
COMM_SHARE_WARN_FRAC = 0.2


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not v > 0:
            raise ValueError(f"{name} must be positive, got {v!r}")


def gbps_to_GBps(gbit_per_s: float) -> float:
    """Line rate Gbit/s -> GB/s (divide by 8) (spec 17.6)."""
    return gbit_per_s / BITS_PER_BYTE


def transfer_time_s(*, size_GB: float, bw_GBps: float, alpha_s: float = 0.0, steps: float = 0) -> float:
    """alpha-beta time: steps * alpha + size / BW (spec 17.6)."""
    _pos(bw_GBps=bw_GBps)
    return steps * alpha_s + size_GB / bw_GBps


# --------------------------------------------------------------------------- 17.6.1-17.6.2 collectives
def collective_send_GB(*, primitive: str, size_GB: float, n: int) -> float:
    """Bytes sent per GPU (table 17-71). size = full buffer for all_reduce/reduce_scatter/all_to_all,
    own contribution for all_gather, message for broadcast (root, flat) and p2p."""
    _pos(n=n)
    f = {
        "all_reduce": 2 * (n - 1) / n,
        "all_gather": n - 1,
        "reduce_scatter": (n - 1) / n,
        "broadcast": n - 1,
        "p2p": 1,
        "all_to_all": (n - 1) / n,
    }
    if primitive not in f:
        raise ValueError(f"unknown primitive {primitive!r}")
    return f[primitive] * size_GB


def collective_total_GB(*, primitive: str, size_GB: float, n: int) -> float:
    """Total bytes moved = sum of bytes sent over all GPUs (table 17-71, corrected: P2P G, A2A (N-1)G)."""
    senders = 1 if primitive in ("broadcast", "p2p") else n
    return senders * collective_send_GB(primitive=primitive, size_GB=size_GB, n=n)


def ring_allreduce_time_s(*, size_GB: float, n: int, bw_GBps: float, alpha_s: float = 0.0) -> float:
    """T_ring = 2(N-1) alpha + 2(N-1)/N * G / BW (spec 17.6.2)."""
    return transfer_time_s(size_GB=collective_send_GB(primitive="all_reduce", size_GB=size_GB, n=n),
                           bw_GBps=bw_GBps, alpha_s=alpha_s, steps=2 * (n - 1))


def tree_allreduce_time_s(*, size_GB: float, n: int, bw_GBps: float, alpha_s: float = 0.0,
                          model: str = "alpha_beta") -> float:
    """Tree all-reduce (spec 17.6.2): "alpha_beta" 2 log2(N) alpha + 2 G/BW (recommended);
    "book" 2 log2(N) G/BW (the book's ex1 model)."""
    _pos(n=n, bw_GBps=bw_GBps)
    lg = math.log2(n)
    if model == "alpha_beta":
        return 2 * lg * alpha_s + 2 * size_GB / bw_GBps
    if model == "book":
        return 2 * lg * size_GB / bw_GBps
    raise ValueError(f"unknown model {model!r}")


def algbw_frac(n: float) -> float:
    """NCCL algorithm bandwidth / BW_eff for ring all-reduce, N/(2(N-1)); -> 0.5 as N -> inf (spec 17.6.2)."""
    if math.isinf(n):
        return 0.5
    if n < 2:
        raise ValueError("n must be >= 2")
    return n / (2 * (n - 1))


# --------------------------------------------------------------------------- per-strategy volumes (F11)
def dp_grad_shard_GB(*, params: float, tp: int = 1, pp: int = 1, grad_bytes: float = 2) -> float:
    """Gradient bytes each DP rank all-reduces: 2P/(TP*PP) (spec 17.5.8, 17.6.3)."""
    _pos(tp=tp, pp=pp)
    return grad_bytes * params / (tp * pp) / GB


def dp_allreduce_GB(*, grad_GB: float, dp: int) -> float:
    """V_DP = 2(DP-1)/DP * G per GPU per step (spec 17.6.3)."""
    return collective_send_GB(primitive="all_reduce", size_GB=grad_GB, n=dp)


def tp_fg_GB(*, micro_batch: float, seq_len: float, d_model: float, tp: int, act_bytes: float = 2) -> float:
    """V_fg = B*S*d*2 B*(TP-1)/TP per f/g operation (spec 17.6.4)."""
    _pos(tp=tp)
    return micro_batch * seq_len * d_model * act_bytes * (tp - 1) / tp / GB


def tp_layer_GB(*, micro_batch: float, seq_len: float, d_model: float, tp: int) -> float:
    """V_layer = 8 V_fg = 16*B*S*d*(TP-1)/TP per layer per micro-batch, fwd + bwd (spec 17.6.4)."""
    return 8 * tp_fg_GB(micro_batch=micro_batch, seq_len=seq_len, d_model=d_model, tp=tp)


#: the book's TP volume per layer, B*S*d*3 bytes (spec T6 "book form", ERRATUM 25)
BOOK_TP_BYTES_PER_ELEMENT = 3


def tp_layer_book_GB(*, micro_batch: float, seq_len: float, d_model: float) -> float:
    """The book's form of the TP volume, V = B*S*d*3 bytes per layer (spec T6; 17.9.3 uses it as a lower bound,
    ERRATUM 25 calls it ambiguous). A named variant beside the standard form (``tp_layer_GB``), not used in times."""
    return micro_batch * seq_len * d_model * BOOK_TP_BYTES_PER_ELEMENT / GB


def tp_step_GB(*, micro_batch: float, seq_len: float, d_model: float, tp: int, layers: float, pp: int = 1,
               grad_accum: float = 1) -> float:
    """V_TP per GPU per step = GA * (L/PP) * V_layer (spec 17.6.4, 17.6.8)."""
    _pos(pp=pp)
    return grad_accum * layers / pp * tp_layer_GB(micro_batch=micro_batch, seq_len=seq_len, d_model=d_model, tp=tp)


def pp_boundary_GB(*, micro_batch: float, seq_len: float, d_model: float, act_bytes: float = 2) -> float:
    """Activation forward + gradient back across one boundary: 2*B*S*d*2 B = 4BSd (spec 17.6.5)."""
    return 2 * micro_batch * seq_len * d_model * act_bytes / GB


def pp_total_GB(*, micro_batch: float, seq_len: float, d_model: float, pp: int) -> float:
    """(K-1) boundaries x 4BSd per micro-batch, summed over links (spec 17.6.5)."""
    return (pp - 1) * pp_boundary_GB(micro_batch=micro_batch, seq_len=seq_len, d_model=d_model)


def pp_step_link_GB(*, micro_batch: float, seq_len: float, d_model: float, micro_batches: float) -> float:
    """Per boundary link per step: m x 4BSd (boundaries run in parallel) (spec 17.6.5, 17.6.8)."""
    return micro_batches * pp_boundary_GB(micro_batch=micro_batch, seq_len=seq_len, d_model=d_model)


def ep_a2a_GB(*, micro_batch: float, seq_len: float, d_model: float, ep: int, top_k: float = 1,
              capacity_factor: float = 1.0, act_bytes: float = 2) -> float:
    """One All-to-All: top_k * c * B*S*d*2 B*(EP-1)/EP (spec 17.6.6; top_k = c = 1 is the book)."""
    _pos(ep=ep)
    return top_k * capacity_factor * micro_batch * seq_len * d_model * act_bytes * (ep - 1) / ep / GB


def ep_total_GB(*, moe_layers: float, a2a_GB: float, a2a_per_layer: int = 4) -> float:
    """V_EP = L_moe * 4 * V_a2a (dispatch + combine, fwd + bwd) (spec 17.6.6)."""
    return moe_layers * a2a_per_layer * a2a_GB


def sp_ring_step_GB(*, micro_batch: float, seq_len: float, kv_heads: float, head_dim: float, sp: int,
                    act_bytes: float = 2) -> float:
    """One ring step sends K and V of the local chunk: 2*B*h_kv*(S/SP)*d_head*2 B (spec 17.6.7)."""
    _pos(sp=sp)
    return 2 * micro_batch * kv_heads * (seq_len / sp) * head_dim * act_bytes / GB


def sp_ring_layer_GB(*, micro_batch: float, seq_len: float, kv_dim: float, sp: int) -> float:
    """Bytes sent per GPU per layer: (SP-1)*4*B*S*d_kv/SP (spec 17.6.7, d_kv = h_kv*d_head)."""
    return (sp - 1) * sp_ring_step_GB(micro_batch=micro_batch, seq_len=seq_len, kv_heads=1, head_dim=kv_dim, sp=sp)


# --------------------------------------------------------------------------- ratios and overlap (F12)
def compute_comm_ratio(*, t_compute: float, t_comm: float) -> float:
    """R = T_compute / T_comm; R > 1 compute-bound (spec 17.6.3)."""
    _pos(t_comm=t_comm)
    return t_compute / t_comm


def comm_share_frac(*, t_comm: float, t_compute: float) -> float:
    """Share without overlap: T_comm / (T_comm + T_compute) (spec 17.6.3-17.6.9)."""
    total = t_comm + t_compute
    return t_comm / total if total > 0 else 0.0


def scaling_efficiency_frac(ratio: float) -> float:
    """eta = R / (1 + R) (spec 17.6.3)."""
    return ratio / (1 + ratio)


def step_time_hybrid_s(*, t_compute_s: float, t_tp_s: float = 0.0, t_dp_s: float = 0.0, t_pp_s: float = 0.0,
                       tp_overlap_frac: float = 0.0, model: str = "exposed") -> float:
    """Hybrid step (spec 17.6.8): "max" = max(T_compute, T_TP, T_DP, T_PP) (full overlap);
    "exposed" = T_compute + max(0, (1-overlap)*T_TP + T_DP + T_PP - T_compute) (book model b)."""
    if model == "max":
        return max(t_compute_s, t_tp_s, t_dp_s, t_pp_s)
    if model == "exposed":
        exposed = (1 - tp_overlap_frac) * t_tp_s + t_dp_s + t_pp_s
        return t_compute_s + max(0.0, exposed - t_compute_s)
    raise ValueError(f"unknown model {model!r}")


# --------------------------------------------------------------------------- 17.6.9 scaling
def dp_weak_limit_s(*, grad_GB: float, bw_GBps: float) -> float:
    """T_DP as N -> inf: 2 G / BW = 4P/BW (spec 17.6.9, corrected)."""
    _pos(bw_GBps=bw_GBps)
    return 2 * grad_GB / bw_GBps


def strong_scaling_compute(*, t_compute_n0: float, n0: float, n1: float) -> float:
    """Fixed global batch: T_compute(N1) = T_compute(N0) * N0/N1 (spec 17.6.9)."""
    _pos(n1=n1)
    return t_compute_n0 * n0 / n1


def speedup_efficiency(*, t_step_n0: float, t_step_n1: float, n0: float, n1: float) -> dict[str, float]:
    """Speed-up T(N0)/T(N1) and parallel efficiency speed-up * N0/N1 (spec 17.6.9, relabelled)."""
    _pos(t_step_n1=t_step_n1, n1=n1)
    s = t_step_n0 / t_step_n1
    return {"speedup_x": s, "efficiency_frac": s * n0 / n1}


def n_crit(*, bw_GBps: float, t_compute_1gpu_s: float, params: float) -> float:
    """Critical GPU count (share = 50 %): BW * T_1GPU / (4P), P in parameters (spec 17.6.9, corrected)."""
    _pos(params=params)
    return bw_GBps * GIGA * t_compute_1gpu_s / (4 * params)


# --------------------------------------------------------------------------- 17.6.10 network sizing
def dp_bw_per_gpu_GBps(*, params: float, dp: int, t_step_s: float, grad_accum: float = 1,
                       grad_bytes: float = 2) -> float:
    """Flat ring over all DP ranks: 2(N-1)/N * 2P / (GA * T_step) (spec 17.6.10)."""
    _pos(t_step_s=t_step_s, grad_accum=grad_accum)
    g = grad_bytes * params / GB
    return dp_allreduce_GB(grad_GB=g, dp=dp) / (grad_accum * t_step_s)


def dp_bw_per_gpu_hier_GBps(*, grad_GB: float, dp: int, ranks_per_node: int, t_step_s: float,
                            grad_accum: float = 1) -> float:
    """Hierarchical all-reduce (spec 17.6.10): NVLink reduce-scatter over the DP ranks of a node,
    then an IB ring over the nodes on 1/ranks_per_node of the data: 2(n-1)/n * G/r / (GA*T_step)."""
    _pos(t_step_s=t_step_s, grad_accum=grad_accum, ranks_per_node=ranks_per_node)
    n_nodes = max(1, math.ceil(dp / ranks_per_node))
    if n_nodes == 1:
        return 0.0
    return dp_allreduce_GB(grad_GB=grad_GB / ranks_per_node, dp=n_nodes) / (grad_accum * t_step_s)


def rails_needed(*, bw_GBps: float, rail_GBps: float = LINK_SPEEDS["IB_NDR_GBps"]) -> int:
    """ceil(BW / 50 GB/s) NDR rails (spec 17.6.10, 17.5.6)."""
    _pos(rail_GBps=rail_GBps)
    return ceil_count(bw_GBps / rail_GBps)


def topology_for_cluster(num_gpus: float) -> dict[str, str]:
    """Topology recommendation of table 17-73 (spec 17.6.10)."""
    for bound, label, topo in TOPOLOGY_TABLE:
        if num_gpus <= bound:
            return {"cluster_size": label, "topology": topo}
    raise ValueError("unreachable")
