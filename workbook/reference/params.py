"""Parameter counts (spec 17.2): dense, GQA/MQA, MLA, MoE, vocabulary share, 12Ld² shortcut.

All results are counts (no unit suffix). ``model_param_counts`` works on any object with the
catalogue ``Model`` attributes (docs/contract.md); the smaller functions take plain numbers.
"""

from __future__ import annotations

import math
from typing import Any

#: weight matrices per FFN block by FFN kind (spec 17.2.1: SwiGLU/GeGLU 3, plain 2)
FFN_MATRICES: dict[str, int] = {"swiglu": 3, "geglu": 3, "gelu": 2, "relu": 2, "plain": 2}


def _check_nonneg(**values: float) -> None:
    for name, v in values.items():
        if v is None or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a finite non-negative number, got {v!r}")


def ffn_matrices(ffn: str) -> int:
    """Number of d×d_ff matrices of an FFN kind (spec 17.2.1)."""
    try:
        return FFN_MATRICES[ffn.lower()]
    except KeyError:
        raise ValueError(f"unknown ffn kind {ffn!r}; expected one of {sorted(FFN_MATRICES)}") from None


# --------------------------------------------------------------------------- attention (17.2.1, 17.2.3)
def attention_params(
    *, d_model: float, n_heads: float, n_kv_heads: float, head_dim: float, qkv_bias: bool = False
) -> dict[str, float]:
    """General attention projections (spec 17.2.1): Q d·h·d_h, K = V d·g·d_h, O h·d_h·d (+ QKV bias).

    MHA g = h, GQA 1 < g < h, MQA g = 1. Returns q, k, v, o, bias and total counts.
    """
    _check_nonneg(d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim)
    q = d_model * n_heads * head_dim
    k = d_model * n_kv_heads * head_dim
    v = k
    o = n_heads * head_dim * d_model
    bias = (n_heads + 2 * n_kv_heads) * head_dim if qkv_bias else 0.0
    return {"q": q, "k": k, "v": v, "o": o, "bias": bias, "total": q + k + v + o + bias}


def attention_params_mha_4d2(d_model: float) -> float:
    """Book's MHA approximation 4·d² per layer (spec 17.2.1, 17.2.2)."""
    _check_nonneg(d_model=d_model)
    return 4 * d_model**2


def kv_projection_params(*, d_model: float, n_kv_heads: float, head_dim: float) -> float:
    """K and V projection parameters per layer, 2·g·d_h·d (spec 17.2.3)."""
    _check_nonneg(d_model=d_model, n_kv_heads=n_kv_heads, head_dim=head_dim)
    return 2 * n_kv_heads * head_dim * d_model


def gqa_saving_params(*, d_model: float, n_kv_heads: float, head_dim: float) -> float:
    """Per-layer saving of GQA/MQA against MHA with h·d_h = d: 2d² − 2·g·d_h·d (spec 17.2.1 ex2)."""
    return 2 * d_model**2 - kv_projection_params(d_model=d_model, n_kv_heads=n_kv_heads, head_dim=head_dim)


def mla_attention_params(
    *,
    d_model: float,
    n_heads: float,
    q_lora_rank: float | None,
    kv_lora_rank: float,
    qk_rope_head_dim: float,
    qk_nope_head_dim: float,
    v_head_dim: float,
) -> dict[str, float]:
    """Multi-head latent attention as in the DeepSeek-V2/V3 configs (spec 17.2.2, 17.4.10).

    Q: d·r_q + r_q·h·(nope+rope) with a low-rank query (or d·h·(nope+rope) without one);
    KV down: d·(r_kv + rope); KV up: r_kv·h·(nope + v); O: h·v·d. Latent RMSNorms r_q + r_kv
    are returned separately as ``norm``.
    """
    _check_nonneg(d_model=d_model, n_heads=n_heads, kv_lora_rank=kv_lora_rank,
                  qk_rope_head_dim=qk_rope_head_dim, qk_nope_head_dim=qk_nope_head_dim,
                  v_head_dim=v_head_dim)
    qk_head = qk_nope_head_dim + qk_rope_head_dim
    if q_lora_rank:
        q = d_model * q_lora_rank + q_lora_rank * n_heads * qk_head
        q_norm = q_lora_rank
    else:
        q = d_model * n_heads * qk_head
        q_norm = 0.0
    kv_down = d_model * (kv_lora_rank + qk_rope_head_dim)
    kv_up = kv_lora_rank * n_heads * (qk_nope_head_dim + v_head_dim)
    o = n_heads * v_head_dim * d_model
    linear = q + kv_down + kv_up + o
    return {"q": q, "kv_down": kv_down, "kv_up": kv_up, "o": o, "linear": linear,
            "norm": q_norm + kv_lora_rank, "total": linear + q_norm + kv_lora_rank}


# --------------------------------------------------------------------------- FFN, norms, embeddings
def ffn_params(*, d_model: float, d_ff: float, ffn: str = "swiglu") -> float:
    """FFN block (spec 17.2.1): SwiGLU/GeGLU 3·d·d_ff, plain two-matrix 2·d·d_ff."""
    _check_nonneg(d_model=d_model, d_ff=d_ff)
    return ffn_matrices(ffn) * d_model * d_ff


def embedding_params(*, vocab: float, d_model: float, tied: bool) -> float:
    """Input embedding plus LM head (spec 17.2.1): V·d if tied, 2·V·d if untied."""
    _check_nonneg(vocab=vocab, d_model=d_model)
    return vocab * d_model * (1 if tied else 2)


def vocab_share_frac(*, vocab: float, d_model: float, params_total: float, tied: bool = True) -> float:
    """Vocabulary share f = V·d / P (tied), 2·V·d / P (untied) (spec 17.2.4)."""
    if params_total <= 0:
        raise ValueError("params_total must be positive")
    return embedding_params(vocab=vocab, d_model=d_model, tied=tied) / params_total


# --------------------------------------------------------------------------- dense totals (17.2.1)
def dense_params(
    *,
    layers: float,
    d_model: float,
    d_ff: float,
    vocab: float,
    n_heads: float | None = None,
    n_kv_heads: float | None = None,
    head_dim: float | None = None,
    tied: bool = False,
    ffn: str = "swiglu",
    qkv_bias: bool = False,
    norm_params_per_layer: float | None = None,
    final_norm: bool = False,
) -> dict[str, float]:
    """Dense Transformer count P = E + L·(P_attn + P_ffn + norms) [+ final norm] (spec 17.2.1).

    Without head counts, attention is the book's MHA 4d². Norms default to two RMSNorms (2d).
    """
    if n_heads is None:
        attn = attention_params_mha_4d2(d_model)
    else:
        attn = attention_params(
            d_model=d_model, n_heads=n_heads,
            n_kv_heads=n_heads if n_kv_heads is None else n_kv_heads,
            head_dim=d_model / n_heads if head_dim is None else head_dim, qkv_bias=qkv_bias,
        )["total"]
    ffn_p = ffn_params(d_model=d_model, d_ff=d_ff, ffn=ffn)
    norm = 2 * d_model if norm_params_per_layer is None else norm_params_per_layer
    per_layer = attn + ffn_p + norm
    emb = embedding_params(vocab=vocab, d_model=d_model, tied=tied)
    final = d_model if final_norm else 0.0
    layers_total = layers * per_layer
    return {
        "attn_per_layer": attn, "ffn_per_layer": ffn_p, "norm_per_layer": norm,
        "per_layer": per_layer, "layers_total": layers_total, "embedding": emb,
        "final_norm": final, "params_total": layers_total + emb + final,
    }


def params_12Ld2(*, layers: float, d_model: float) -> float:
    """Shortcut P ≈ 12·L·d² (spec 17.2.1; valid for plain FFN d_ff = 4d or SwiGLU d_ff = 8d/3)."""
    _check_nonneg(layers=layers, d_model=d_model)
    return 12 * layers * d_model**2


def deviation_pct(*, estimate: float, exact: float) -> float:
    """Relative deviation of an estimate below/above the exact value, (exact − est)/exact·100."""
    if exact == 0:
        raise ValueError("exact must be non-zero")
    return (exact - estimate) / exact * 100


def swiglu_dff_for_12Ld2(d_model: float) -> float:
    """SwiGLU inner size for which 3·d·d_ff = 8d² (the 12Ld² condition): 8d/3 (spec 17.2.1)."""
    return 8 * d_model / 3


# --------------------------------------------------------------------------- MoE (17.2.2)
def expert_params(*, d_model: float, expert_d_ff: float, ffn: str = "swiglu") -> float:
    """One expert (spec 17.2.2): 3·d·d_ff_e for SwiGLU."""
    return ffn_params(d_model=d_model, d_ff=expert_d_ff, ffn=ffn)


def router_params(*, d_model: float, n_experts: float, bias: bool = False) -> float:
    """Router per MoE layer: N·d (+N with a bias) (spec 17.2.2)."""
    _check_nonneg(d_model=d_model, n_experts=n_experts)
    return n_experts * d_model + (n_experts if bias else 0)


def moe_params(
    *,
    moe_layers: float,
    d_model: float,
    expert_d_ff: float,
    n_experts: float,
    top_k: float,
    n_shared: float = 0,
    dense_non_moe: float = 0,
    ffn: str = "swiglu",
    include_router: bool = True,
) -> dict[str, float]:
    """MoE totals (spec 17.2.2, corrected: shared experts belong to the total).

    P_total  = P_dense_non_moe + L_moe·((N + N_shared)·expert + router)
    P_active = P_dense_non_moe + L_moe·((top_k + N_shared)·expert + router)
    """
    if top_k > n_experts:
        raise ValueError(f"top_k={top_k} exceeds n_experts={n_experts}")
    e = expert_params(d_model=d_model, expert_d_ff=expert_d_ff, ffn=ffn)
    router = router_params(d_model=d_model, n_experts=n_experts) if include_router else 0.0
    total_layer = (n_experts + n_shared) * e + router
    active_layer = (top_k + n_shared) * e + router
    return {
        "per_expert": e, "router_per_layer": router,
        "moe_per_layer": n_experts * e, "moe_total_per_layer": total_layer,
        "active_per_layer": active_layer,
        "routed_active_per_layer": top_k * e, "shared_per_layer": n_shared * e,
        "moe_total": moe_layers * total_layer, "moe_active": moe_layers * active_layer,
        "params_total": dense_non_moe + moe_layers * total_layer,
        "params_active": dense_non_moe + moe_layers * active_layer,
    }


# --------------------------------------------------------------------------- whole model from catalogue
def _get(m: Any, name: str, default: Any = None) -> Any:
    v = getattr(m, name, default)
    return default if v is None else v


def model_param_counts(m: Any) -> dict[str, float]:
    """All parameter counts of a catalogue Model (spec 17.2.1-17.2.2, 17.2.5).

    Dense MHA/GQA/MQA (optional QKV bias) or MLA attention; SwiGLU/GeGLU/GELU FFN; MoE with routed
    and shared experts, routers and leading dense layers; norms per layer plus a final norm
    (LayerNorm counts weight and bias); tied or untied embeddings.
    Returns params_total, params_active, params_embedding, params_non_embedding, params_attention,
    params_ffn, params_norm.
    """
    L = float(m.layers)
    d = float(m.d_model)
    ffn_kind = str(_get(m, "ffn", "swiglu"))
    norm_kind = str(_get(m, "norm", "rmsnorm")).lower()
    if L <= 0 or d <= 0:
        raise ValueError("layers and d_model must be positive")

    # attention
    attention_kind = str(_get(m, "attention", "mha")).lower()
    attn_norm = 0.0
    if attention_kind == "mla":
        mla = mla_attention_params(
            d_model=d, n_heads=m.n_heads, q_lora_rank=_get(m, "q_lora_rank"),
            kv_lora_rank=m.kv_lora_rank, qk_rope_head_dim=m.qk_rope_head_dim,
            qk_nope_head_dim=m.qk_nope_head_dim, v_head_dim=m.v_head_dim,
        )
        attn_layer = mla["linear"]
        attn_norm = mla["norm"]
    else:
        n_heads = float(m.n_heads)
        head_dim = float(_get(m, "head_dim", d / n_heads))
        n_kv = float(_get(m, "n_kv_heads", n_heads))
        attn_layer = attention_params(d_model=d, n_heads=n_heads, n_kv_heads=n_kv, head_dim=head_dim,
                                      qkv_bias=bool(_get(m, "qkv_bias", False)))["total"]
    params_attention = L * attn_layer

    # norms: per-layer norm weights (default two norms: 2d, doubled for LayerNorm bias) + final norm
    per_norm = 2.0 if norm_kind == "layernorm" else 1.0
    norm_layer = float(_get(m, "norm_params_per_layer", 2 * d * per_norm))
    params_norm = L * (norm_layer + attn_norm) + per_norm * d

    # FFN: dense layers, then MoE layers
    if bool(_get(m, "moe", False)):
        n_dense = float(_get(m, "n_dense_layers", 0))
        dense_d_ff = float(_get(m, "dense_d_ff", m.d_ff))
        expert_d_ff = float(_get(m, "expert_d_ff", m.d_ff))
        moe = moe_params(
            moe_layers=L - n_dense, d_model=d, expert_d_ff=expert_d_ff,
            n_experts=float(m.n_routed_experts), top_k=float(m.top_k),
            n_shared=float(_get(m, "n_shared_experts", 0)), ffn=ffn_kind,
        )
        dense_ffn = n_dense * ffn_params(d_model=d, d_ff=dense_d_ff, ffn=ffn_kind)
        params_ffn = dense_ffn + moe["moe_total"]
        params_ffn_active = dense_ffn + moe["moe_active"]
    else:
        params_ffn = L * ffn_params(d_model=d, d_ff=float(m.d_ff), ffn=ffn_kind)
        params_ffn_active = params_ffn

    params_embedding = embedding_params(vocab=float(m.vocab), d_model=d, tied=bool(_get(m, "tied_embeddings", False)))
    non_emb = params_attention + params_ffn + params_norm
    non_emb_active = params_attention + params_ffn_active + params_norm
    return {
        "params_total": params_embedding + non_emb,
        "params_active": params_embedding + non_emb_active,
        "params_embedding": params_embedding,
        "params_non_embedding": non_emb,
        "params_attention": params_attention,
        "params_ffn": params_ffn,
        "params_norm": params_norm,
    }
