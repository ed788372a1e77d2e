"""The serving view of a model: weight groups by precision and sharding, KV bytes per token
(docs/serving.md "Weights and KV per GPU").

A catalogue Model is cut into the groups a serving engine stores and reads differently:

    attention    the attention projections (GQA: Q, K, V, O; MLA: q_a, q_b, kv_a, kv_b, o)
    dense_ffn    the FFN of dense layers (all layers of a dense model, the leading dense layers of a MoE)
    shared       the shared experts of MoE layers
    routed       the routed experts of MoE layers (a decode step reads only the experts its tokens hit)
    router       the MoE gates
    norms        RMSNorm/LayerNorm weights
    embedding    the input embedding (a decode step reads B rows of it, not the table)
    head         the LM head (read whole every step; the embedding when tied)

Precision. ``weight_precision`` applies to the linear layers (attention, dense FFN, shared and routed
experts). Embedding, LM head, router and norms stay in the checkpoint's precision (BF16) when the
real checkpoints keep them there: Qwen/Qwen3-235B-A22B-FP8 and deepseek-ai/DeepSeek-V3 (FP8
block-quantised linears; embed_tokens, lm_head, gate and norms in BF16), neuralmagic/RedHat
Llama-3.1-70B-Instruct-FP8 (lm_head not quantised), AWQ/GPTQ INT4 checkpoints (embeddings and head in
FP16). FP8 block quantisation (128 x 128 blocks) adds one FP32 scale per block; INT4 uses the spec's
0.55 B/param including scales and zero points (spec 17.4.11).

Sharding over a group of GPUs:

    tp            attention, dense FFN and shared experts split by TP (MLA's q_a/kv_a down-projections
                  are replicated, as vLLM and SGLang hold them); embedding and head vocab-parallel / TP
    ep            routed experts: with ep > 1 every GPU holds (E + redundant)/ep whole experts; with
                  ep = 1 every GPU holds 1/tp of every expert (expert-TP)
    router, norms replicated

KV per token per GPU: GQA 2·L·max(1, g/TP)·d_h·b (heads replicated when TP > g); MLA L·(r_kv + d_rope)·b,
the latent being replicated over TP ranks (vLLM, SGLang). With data-parallel attention (DeepSeek's
DP+EP) tp = 1 and every GPU holds only its own requests' KV.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from workbook.reference.params import ffn_matrices, mla_attention_params
from workbook.units import BYTES_PER_ELEMENT

#: linear-weight bytes per parameter by precision (FP8: one FP32 scale per 128 x 128 block, as the
#: Qwen3/DeepSeek-V3 FP8 checkpoints' weight_block_size [128, 128]; INT4: spec 17.4.11, 0.55 with
#: scales and zero points)
FP8_BLOCK = 128
LINEAR_BYTES_PER_PARAM = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0 + 4.0 / (FP8_BLOCK * FP8_BLOCK),
    "int8": 1.0 + 4.0 / (FP8_BLOCK * FP8_BLOCK),
    "int4": 0.55,
}
#: the precision real checkpoints keep embeddings, head, router and norms in
CHECKPOINT_BYTES_PER_PARAM = 2.0
PRECISIONS = tuple(LINEAR_BYTES_PER_PARAM)


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a finite positive number, got {v!r}")


@dataclass(frozen=True)
class ModelShape:
    """Parameter counts per group and the widths the time and memory models need (counts)."""

    layers: int
    d_model: int
    vocab: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    attention: str
    qk_head_dim: float            # per-head width of Q.K (MLA: nope + rope)
    v_head_dim: float
    kv_lora_rank: float           # MLA latent width (0 for GQA)
    qk_rope_head_dim: float       # MLA shared RoPE key width (0 for GQA)
    attention_per_layer: float    # sharded attention projections
    attention_replicated_per_layer: float  # MLA down-projections (replicated over TP)
    dense_layers: int             # layers with a dense FFN
    dense_ffn_per_layer: float
    dense_ffn_width: float        # d_ff of the dense layers
    moe_layers: int
    n_experts: int
    top_k: int
    n_shared: int
    expert_params: float          # one expert (n_mat·d·d_ff_expert)
    expert_ffn_width: float
    router_per_layer: float
    norms: float
    embedding: float
    head: float                   # 0 when tied (the embedding is the head)
    tied: bool
    ffn_matrices: int

    @property
    def moe(self) -> bool:
        return self.moe_layers > 0

    @property
    def routed_total(self) -> float:
        return self.moe_layers * self.n_experts * self.expert_params

    @property
    def shared_total(self) -> float:
        return self.moe_layers * self.n_shared * self.expert_params

    @property
    def params_total(self) -> float:
        return (self.layers * (self.attention_per_layer + self.attention_replicated_per_layer)
                + self.dense_layers * self.dense_ffn_per_layer + self.routed_total + self.shared_total
                + self.moe_layers * self.router_per_layer + self.norms + self.embedding + self.head)


def model_shape(m: Any) -> ModelShape:
    """The serving shape of a catalogue Model (workbook/catalog/models.py)."""
    L, d = int(m.layers), int(m.d_model)
    n_mat = ffn_matrices(m.ffn)
    if m.attention == "mla":
        mla = mla_attention_params(d_model=d, n_heads=m.n_heads, q_lora_rank=m.q_lora_rank,
                                   kv_lora_rank=m.kv_lora_rank, qk_rope_head_dim=m.qk_rope_head_dim,
                                   qk_nope_head_dim=m.qk_nope_head_dim, v_head_dim=m.v_head_dim)
        replicated = mla["kv_down"] + (d * m.q_lora_rank if m.q_lora_rank else 0.0)
        attn = mla["linear"] - replicated
        qk, vd = float(m.qk_nope_head_dim + m.qk_rope_head_dim), float(m.v_head_dim)
        lora, rope = float(m.kv_lora_rank), float(m.qk_rope_head_dim)
        norms_extra = mla["norm"]
    else:
        attn = d * m.head_dim * (2 * m.n_heads + 2 * m.n_kv_heads)
        if m.qkv_bias:
            attn += m.head_dim * (m.n_heads + 2 * m.n_kv_heads)
        replicated = 0.0
        qk = vd = float(m.head_dim)
        lora = rope = 0.0
        norms_extra = 0.0
    if m.moe:
        moe_layers = L - int(m.n_dense_layers)
        dense_layers = int(m.n_dense_layers)
        dense_ff = float(m.dense_d_ff or m.d_ff)
        expert = float(n_mat * d * m.expert_d_ff)
        n_e, k, n_s = int(m.n_routed_experts), int(m.top_k), int(m.n_shared_experts)
        router = float(d * n_e)
        exp_ff = float(m.expert_d_ff)
    else:
        moe_layers, dense_layers, dense_ff = 0, L, float(m.d_ff)
        expert = router = exp_ff = 0.0
        n_e = k = n_s = 0
    per_norm = 2.0 if m.norm == "layernorm" else 1.0
    norms = L * (float(m.norm_params_per_layer) + norms_extra) + per_norm * d
    emb = float(m.vocab * d)
    return ModelShape(
        layers=L, d_model=d, vocab=int(m.vocab), n_heads=int(m.n_heads), n_kv_heads=int(m.n_kv_heads),
        head_dim=int(m.head_dim), attention=str(m.attention), qk_head_dim=qk, v_head_dim=vd,
        kv_lora_rank=lora, qk_rope_head_dim=rope, attention_per_layer=float(attn),
        attention_replicated_per_layer=float(replicated), dense_layers=dense_layers,
        dense_ffn_per_layer=float(n_mat * d * dense_ff), dense_ffn_width=dense_ff, moe_layers=moe_layers,
        n_experts=n_e, top_k=k, n_shared=n_s, expert_params=expert, expert_ffn_width=exp_ff,
        router_per_layer=router, norms=norms, embedding=emb, head=0.0 if m.tied_embeddings else emb,
        tied=bool(m.tied_embeddings), ffn_matrices=n_mat,
    )


def linear_bytes_per_param(precision: str) -> float:
    """Bytes per linear-layer parameter at a weight precision (scales included)."""
    key = precision.lower()
    if key not in LINEAR_BYTES_PER_PARAM:
        raise ValueError(f"unknown weight precision {precision!r} (one of {', '.join(PRECISIONS)})")
    return LINEAR_BYTES_PER_PARAM[key]


def experts_per_gpu(shape: ModelShape, *, ep: int = 1, redundant_experts: int = 0) -> float:
    """Routed-expert slots a GPU holds: (E + redundant)/ep whole experts with EP (DeepSeek decode:
    (256 + 32)/144 = 2); with ep = 1 the GPU holds a 1/TP slice of each of the E experts (returned as E)."""
    _pos(ep=ep)
    if not shape.moe:
        return 0.0
    if ep == 1:
        return float(shape.n_experts)
    return (shape.n_experts + redundant_experts) / ep


def weight_groups_per_gpu_bytes(shape: ModelShape, *, weight_precision: str = "bf16", tp: int = 1, ep: int = 1,
                                redundant_experts: int = 0, keep_checkpoint_precision: bool = True
                                ) -> dict[str, float]:
    """Bytes of each weight group held by one GPU (see the module docstring for the sharding).

    ``keep_checkpoint_precision`` keeps embedding, head, router and norms in BF16 as real FP8/INT4
    checkpoints do; False quantises the embedding and head too (the book's P·b_w).
    """
    _pos(tp=tp, ep=ep)
    b_lin = linear_bytes_per_param(weight_precision)
    b_keep = CHECKPOINT_BYTES_PER_PARAM if keep_checkpoint_precision else b_lin
    expert_shard = 1.0 if ep > 1 else float(tp)
    slots = experts_per_gpu(shape, ep=ep, redundant_experts=redundant_experts)
    L = shape.layers
    return {
        "attention": L * (shape.attention_per_layer / tp + shape.attention_replicated_per_layer) * b_lin,
        "dense_ffn": shape.dense_layers * shape.dense_ffn_per_layer / tp * b_lin,
        "shared": shape.shared_total / tp * b_lin,
        "routed": shape.moe_layers * slots * shape.expert_params / expert_shard * b_lin,
        "router": shape.moe_layers * shape.router_per_layer * CHECKPOINT_BYTES_PER_PARAM,
        "norms": shape.norms * CHECKPOINT_BYTES_PER_PARAM,
        "embedding": shape.embedding / tp * b_keep,
        "head": shape.head / tp * b_keep,
    }


def weights_per_gpu_bytes(shape: ModelShape, **kw: Any) -> float:
    """All weight bytes one GPU holds (sum of weight_groups_per_gpu_bytes)."""
    return sum(weight_groups_per_gpu_bytes(shape, **kw).values())


def kv_bytes_per_token_per_gpu(shape: ModelShape, *, kv_precision: str = "bf16", tp: int = 1) -> float:
    """KV-cache bytes one token occupies on one GPU (module docstring)."""
    _pos(tp=tp)
    b = BYTES_PER_ELEMENT[kv_precision.lower()]
    if shape.attention == "mla":
        return shape.layers * (shape.kv_lora_rank + shape.qk_rope_head_dim) * b
    heads = max(1.0, shape.n_kv_heads / tp)
    return 2.0 * shape.layers * heads * shape.head_dim * b


def expected_distinct_experts(*, n_experts: float, top_k: float, tokens: float) -> float:
    """Expected number of distinct experts that ``tokens`` tokens routing top-k of E activate,
    E·(1 − (1 − k/E)^B) (uniform, independent routing; balanced load is the design goal of the
    auxiliary-loss and EPLB balancing). 0 tokens activate none; many tokens activate all E."""
    if n_experts <= 0:
        return 0.0
    if not 0 < top_k <= n_experts:
        raise ValueError(f"need 0 < top_k <= n_experts, got {top_k!r} of {n_experts!r}")
    if tokens < 0:
        raise ValueError("tokens must be non-negative")
    return n_experts * (1.0 - (1.0 - top_k / n_experts) ** tokens)
