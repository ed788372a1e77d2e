"""Seed 001 memory-ledger lecture: 16/18/20(22)Ψ ledgers, ZeRO with a selectable optimizer split,
activations (none / selective / full), offload, and the §5.2 capacity planner mirrored exactly
(spec 17.8-17.9-and-001 §4 T4-T5, §9, §10, errata 36, 38-43).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbook.units import GiB

#: bytes per parameter of the ledgers (seed 001 §1.2; erratum 36)
WEIGHT_BF16_BYTES = 2.0
GRAD_BF16_BYTES = 2.0
GRAD_FP32_BYTES = 4.0
ADAMW_BYTES = 12.0  # FP32 master 4 + m 4 + v 4
FP32_BUCKET_BYTES = 4.0
#: the part of the 12-byte optimizer ZeRO-1 shards: 12 (seed 001, DeepSpeed) or 8 (seed 000: m, v only)
ZERO1_SHARDED_OPT_BYTES = {"12P": 12.0, "8P": 8.0}
#: Korthikanti activation constants (seed 001 §2): 34·B·S·d linear, 5·B·H·S² attention scores, 2·B·S·d checkpoint
ACT_LINEAR_BYTES = 34.0
ACT_QUADRATIC_BYTES = 5.0
ACT_CHECKPOINT_BYTES = 2.0
#: planner constants (seed 001 §5.2, §9)
PLANNER_VOCAB = 128256
PLANNER_TRAIN_RUNTIME_GiB = 3.5
PLANNER_INFER_RUNTIME_GiB = 3.0
PLANNER_PAGED_UTILISATION = 0.96
#: communication volume per step in units of Ψ elements (seed 001 §1.3)
COMM_VOLUME_PSI = {0: 2.0, 1: 2.0, 2: 2.0, 3: 3.0}


def ledger_bytes_per_param(
    *, grad_bytes: float = GRAD_BF16_BYTES, bucket_bytes: float = 0.0,
    weight_bytes: float = WEIGHT_BF16_BYTES, optimizer_bytes: float = ADAMW_BYTES,
) -> float:
    """Static bytes per parameter: weights + grads + optimizer + optional DDP flat bucket (seed 001 §1.2).

    16Ψ = 2 + 2 + 12; 18Ψ with FP32 grads; 20Ψ = 16Ψ + 4Ψ bucket; 22Ψ = 18Ψ + 4Ψ (erratum 36).
    """
    return weight_bytes + grad_bytes + optimizer_bytes + bucket_bytes


@dataclass(frozen=True)
class ZeroLedger:
    """Per-GPU static memory split (bytes)."""

    weights_bytes: float
    grads_bytes: float
    optimizer_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.grads_bytes + self.optimizer_bytes


def zero_per_gpu(
    *,
    params: float,
    stage: int,
    dp: int,
    model_parallel: float = 1,
    weight_bytes: float = WEIGHT_BF16_BYTES,
    grad_bytes: float = GRAD_BF16_BYTES,
    optimizer_bytes: float = ADAMW_BYTES,
    sharded_optimizer_bytes: float | None = None,
) -> ZeroLedger:
    """ZeRO-0..3 per-GPU state with Ψ → Ψ/(TP·PP·EP) and N_d = DP (spec T4).

    ``sharded_optimizer_bytes`` is the part of the optimizer ZeRO-1/2 shard: all of it (12P, seed 001,
    default) or 8 (seed 000: Adam m, v; the FP32 master stays with the weights). ZeRO-3 shards all.
    """
    if stage not in (0, 1, 2, 3):
        raise ValueError(f"ZeRO stage must be 0-3, got {stage!r}")
    if dp < 1 or model_parallel <= 0 or params < 0:
        raise ValueError("dp >= 1, model_parallel > 0 and params >= 0 required")
    psi = params / model_parallel
    sharded = optimizer_bytes if sharded_optimizer_bytes is None else sharded_optimizer_bytes
    if not 0 <= sharded <= optimizer_bytes:
        raise ValueError("sharded_optimizer_bytes must lie in [0, optimizer_bytes]")
    if stage == 0:
        return ZeroLedger(weight_bytes * psi, grad_bytes * psi, optimizer_bytes * psi)
    opt = ((optimizer_bytes - sharded) + sharded / dp) * psi
    if stage == 3:
        return ZeroLedger(weight_bytes * psi / dp, grad_bytes * psi / dp, optimizer_bytes * psi / dp)
    grads = grad_bytes * psi / dp if stage == 2 else grad_bytes * psi
    return ZeroLedger(weight_bytes * psi, grads, opt)


def comm_volume_psi(*, stage: int) -> float:
    """Communication per step in Ψ elements: DDP/ZeRO-1/2 = 2, ZeRO-3 = 3 (+50%) (seed 001 §1.3)."""
    return COMM_VOLUME_PSI[stage]


# --------------------------------------------------------------------------- activations (T5)
def activation_bytes_per_layer(*, batch: float, seq_len: float, d_model: float, n_heads: float, recompute: str) -> float:
    """Per-layer activations: none 34BSd + 5BH·S², selective 34BSd, full 2BSd (seed 001 §2, spec T5)."""
    linear = ACT_LINEAR_BYTES * batch * seq_len * d_model
    if recompute == "none":
        return linear + ACT_QUADRATIC_BYTES * batch * n_heads * seq_len**2
    if recompute == "selective":
        return linear
    if recompute == "full":
        return ACT_CHECKPOINT_BYTES * batch * seq_len * d_model
    raise ValueError(f"recompute must be none|selective|full, got {recompute!r}")


def activation_quadratic_bytes_per_layer(*, batch: float, seq_len: float, n_heads: float) -> float:
    """Attention-score term 5·B·H·S² bytes per layer (seed 001 §2; Appendix Q3)."""
    return ACT_QUADRATIC_BYTES * batch * n_heads * seq_len**2


def activation_bytes(
    *, layers: float, batch: float, seq_len: float, d_model: float, n_heads: float, recompute: str, tp: int = 1
) -> float:
    """Model activations per GPU: L·per-layer/TP (seed 001 planner, spec T5)."""
    return layers * activation_bytes_per_layer(
        batch=batch, seq_len=seq_len, d_model=d_model, n_heads=n_heads, recompute=recompute
    ) / tp


def quadratic_attention_share_frac(*, layers: float, seq_len: float, d_model: float, params: float) -> float:
    """Quadratic attention FLOPs as a share of 6P per token: 12·L·S·d/(6·P) (seed 001 §4.2, spec T2)."""
    return 12.0 * layers * seq_len * d_model / (6.0 * params)


def seq_quadratic_growth_x(*, seq_from: float, seq_to: float) -> float:
    """Growth of an S² term between two lengths (seed 001 §2.1)."""
    return (seq_to / seq_from) ** 2


def hfu_over_mfu(*, train_flops_factor: float = 6.0, recompute_flops_factor: float = 8.0) -> float:
    """HFU/MFU with full recompute = 8/6 (seed 001 §4.1)."""
    return recompute_flops_factor / train_flops_factor


# --------------------------------------------------------------------------- offload (seed 001 §1.4; transfer time: offload.py)
def mfu_retained_frac(*, compute_s: float, stall_s: float) -> float:
    """Fraction of the no-stall MFU kept when a serial stall is added: t/(t + stall)."""
    return compute_s / (compute_s + stall_s)


# --------------------------------------------------------------------------- the planner (§9)
def planner_params(*, layers: int, d_model: int, n_heads: int, n_kv_heads: int, d_ffn: int, vocab: int = PLANNER_VOCAB) -> dict[str, float]:
    """Planner parameter count: attn 2d²(1+H_kv/H_q)L, ffn 3·d·d_ffn·L, emb 2Vd, norms ignored (§9)."""
    attn = 2 * d_model**2 * (1 + n_kv_heads / n_heads) * layers
    ffn = 3 * d_model * d_ffn * layers
    emb = 2 * vocab * d_model
    return {"attn": attn, "ffn": ffn, "emb": emb, "non_embed": attn + ffn, "total": attn + ffn + emb}


def planner_train(
    *, params_total: float, params_non_embed: float, layers: int, d_model: int, n_heads: int,
    num_gpus: int, mem_GiB: float = 80, batch: int = 1, seq_len: int = 4096, tp: int = 8,
    mode: str = "selective", runtime_GiB: float = PLANNER_TRAIN_RUNTIME_GiB,
) -> dict[str, float]:
    """The planner's train(): ZeRO-3 static over all N in GiB, activations/TP, +3.5 GiB (§9).

    ``tokens_per_step`` is the planner's B·S·N (overcounts ×TP, erratum 43); ``tokens_per_step_true``
    is B·S·DP.
    """
    static = 16 * params_total / GiB / num_gpus
    act = activation_bytes(layers=layers, batch=batch, seq_len=seq_len, d_model=d_model, n_heads=n_heads,
                           recompute=mode, tp=tp) / GiB
    total = static + act + runtime_GiB
    tokens = batch * seq_len * num_gpus
    return {
        "static_GiB": static, "act_GiB": act, "total_GiB": total, "is_oom": float(total > mem_GiB),
        "tokens_per_step": tokens, "tokens_per_step_true": batch * seq_len * num_gpus / tp,
        "step_FLOPs": 6 * params_non_embed * tokens,
    }


def planner_infer(
    *, params_total: float, layers: int, d_model: int, n_heads: int, n_kv_heads: int, num_gpus: int,
    mem_GiB: float = 80, seq_len: int = 8192, kv_bytes: float = 2,
    runtime_GiB: float = PLANNER_INFER_RUNTIME_GiB, usable_frac: float = PLANNER_PAGED_UTILISATION,
) -> dict[str, float]:
    """The planner's infer(): weights/N, avail = max(0, mem − w − 3), per-card KV per sequence, floor (§9)."""
    w = 2 * params_total / GiB / num_gpus
    avail = max(0.0, mem_GiB - w - runtime_GiB)
    per_card = 2 * kv_bytes * layers * d_model * (n_kv_heads / n_heads) * seq_len / num_gpus
    max_conc = math.floor(avail * GiB * usable_frac / per_card + 1e-9)
    return {"weight_GiB": w, "avail_GiB": avail, "kv_per_seq_card_GiB": per_card / GiB, "max_concurrency": max_conc}
