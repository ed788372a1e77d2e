"""Attention data-parallelism of a MoE/MLA serving group (docs/serving.md "Attention DP").

A serving group is TP·EP GPUs. With EP > 1 the experts are sharded over the EP ranks and every EP
rank is also an attention-DP rank: it holds the attention (and shared-expert) weights of a TP-way
shard, runs the attention of its own sequences only and keeps only their KV (for MLA the latent
cache, which is never replicated across DP ranks; SGLang --enable-dp-attention, DeepSeek day 6
"MLA/Shared Expert DP144"). Hence

    DP            = EP                       attention replicas of the group (1 without EP)
    batch_rank    = B_group / DP             what decode_time.decode_step takes as ``batch``
    lambda_rank   = lambda_group / DP        Little's law holds per rank: B_rank = lambda_rank·(time in system)
    KV requests   = DP · requests one rank's pool holds
    MoE tokens    = batch_rank·DP            every rank's tokens reach the experts (decode_time)

With EP = 1 there is one attention replica (TP ranks see the whole batch), DP = 1. The degree is
tied to EP because ``tp`` is the attention TP of one rank and the group is TP·EP GPUs.
"""

from __future__ import annotations

import math

from workbook.reference.args import positive as _pos


def attention_dp_degree(*, ep: int) -> int:
    """Attention-DP ranks of one serving group: EP (each EP rank attends its own sequences), 1 without EP."""
    _pos(ep=ep)
    return int(ep)


def group_gpus(*, tp: int, ep: int) -> int:
    """GPUs of one serving group: DP ranks of TP GPUs each = TP·EP."""
    _pos(tp=tp, ep=ep)
    return int(tp * ep)


def group_nodes(*, tp: int, ep: int, gpus_per_node: int) -> int:
    """Nodes one serving group of TP·EP GPUs spans, ceil(TP·EP / GPUs per node): its all-to-all crosses them."""
    _pos(gpus_per_node=gpus_per_node)
    return int(math.ceil(group_gpus(tp=tp, ep=ep) / gpus_per_node))


def rank_batch(*, group_batch: float, ep: int) -> float:
    """Requests one attention-DP rank decodes (the decode step's ``batch``), the group's shared evenly."""
    return group_batch / attention_dp_degree(ep=ep)


def rank_rate(*, group_rate_per_s: float, ep: int) -> float:
    """Arrival rate one attention-DP rank sees (requests are balanced over the ranks)."""
    return group_rate_per_s / attention_dp_degree(ep=ep)


def group_requests(*, rank_requests: float, ep: int) -> float:
    """Requests the whole group holds (KV capacity) or decodes: DP x one rank's."""
    return rank_requests * attention_dp_degree(ep=ep)
