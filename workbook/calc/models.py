"""Models sheet: parameter counts and FLOPs of the chosen model (spec 17.2, 17.3)."""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import flops as fl
from workbook.reference import params as pa
from workbook.reference.activations import op_sac_gemm_recompute_frac
from workbook.units import BILLION

#: recomputed fraction of one forward per recompute mode (spec 17.4.6: full = 1 forward, +33%;
#: selective ≈ +20% compute, Table 17-41 / ex2)
#: op_selective (torchtitan's op-level selective AC) recomputes the share of the layer's matmul FLOPs it does
#: not save (op_sac_gemm_recompute_frac, from the model's shape); its table row is 0 plus that share
RECOMPUTE_FWD_FRAC = {"none": 0.0, "selective": 0.6, "full": 1.0, "op_selective": 0.0}

QUANTITIES = [
    # intermediate rows of the parameter count (spec 17.2.1-17.2.3), placed before their users
    Q("model_is_mla_flag", "0/1", "Model uses multi-head latent attention (1 = MLA)", "17.2.2"),
    Q("attn_std_params_per_layer", "count", "MHA/GQA/MQA projections per layer: Q + K + V + O (+ QKV bias)", "17.2.1"),
    Q("mla_qk_head_dim", "count", "MLA query/key head width (no-RoPE + RoPE part)", "17.2.2"),
    Q("mla_q_params_per_layer", "count", "MLA query projection per layer (low-rank d·r_q + r_q·h·d_qk, else d·h·d_qk)", "17.2.2"),
    Q("mla_kv_params_per_layer", "count", "MLA K/V projections per layer: down d·(r_kv + rope) + up r_kv·h·(nope + v)", "17.2.2"),
    Q("attn_params_per_layer", "count", "Attention projection parameters per layer", "17.2.1"),
    Q("attn_latent_norm_per_layer", "count", "MLA latent RMSNorm weights per layer (r_q + r_kv)", "17.2.2"),
    Q("ffn_matrices", "count", "Weight matrices per FFN block (SwiGLU/GeGLU 3, plain 2)", "17.2.1"),
    Q("ffn_dense_layers", "count", "Layers with a dense FFN (all layers of a dense model; leading dense layers of an MoE)", "17.2.2"),
    Q("ffn_dense_layer_params", "count", "Dense FFN parameters per layer (matrices·d·d_ff)", "17.2.1"),
    Q("moe_layers", "count", "MoE layers (layers minus leading dense layers; 0 for a dense model)", "17.2.2"),
    Q("moe_expert_params", "count", "Parameters of one expert (matrices·d·d_ff_e)", "17.2.2"),
    Q("moe_router_params_per_layer", "count", "Router parameters per MoE layer (N·d)", "17.2.2"),
    Q("params_embedding", "count", "Embedding + untied LM head parameters", "17.2.4"),
    Q("params_attention", "count", "Attention projection parameters (all layers)", "17.2.1"),
    Q("params_ffn", "count", "FFN parameters incl. experts, shared experts and routers (all layers)", "17.2.2"),
    Q("params_ffn_active", "count", "FFN parameters active per token (dense FFN + top-k and shared experts + routers)", "17.2.2"),
    Q("params_norm", "count", "Normalisation parameters (all layers + final norm)", "17.2.1"),
    Q("params_non_embedding", "count", "Non-embedding parameters P_ne", "17.3.7"),
    Q("params_total", "count", "Parameters, total (from the architecture)", "17.2.1"),
    Q("params_active", "count", "Parameters active per token (MoE: top-k + shared experts)", "17.2.2"),
    Q("params_active_non_embedding", "count", "Active non-embedding parameters (Chinchilla P for FLOPs)", "17.3.9"),
    Q("params_total_B", "B params", "Parameters, total (billions)", "17.2.5"),
    Q("params_active_B", "B params", "Parameters active per token (billions)", "17.2.5"),
    Q("params_vs_published_frac", "fraction", "Computed total vs published total, relative difference", "17.2.5"),
    Q("active_frac", "fraction", "Active share of total parameters", "17.2.2"),
    Q("vocab_share_frac", "fraction", "Embedding share of total parameters", "17.2.4"),
    Q("params_12Ld2", "count", "Shortcut estimate 12·L·d²", "17.2.1"),
    Q("params_12Ld2_shortfall_frac", "fraction", "How far 12·L·d² falls below the computed total", "17.2.1"),
    Q("dff_over_d_ratio", "x", "FFN inner size over d_model (SwiGLU reference 8/3)", "17.2.5"),
    Q("kv_proj_params_per_layer", "count", "K and V projection parameters per layer (2·g·d_h·d)", "17.2.3"),
    Q("fwd_linear_FLOP_per_token", "FLOP", "Forward linear FLOPs per token (2·P_active_ne)", "17.3.7"),
    Q("fwd_attn_FLOP_per_token", "FLOP", "Forward attention FLOPs per token at the training sequence length (4·L·S·d)", "17.3.7"),
    Q("fwd_FLOP_per_token", "FLOP", "Forward FLOPs per token (2·P_active_ne + 4·L·S·d)", "17.3.7"),
    Q("lm_head_FLOP_per_token", "FLOP", "LM head FLOPs per token (2·d·V)", "17.3.6"),
    Q("attn_share_of_fwd_frac", "fraction", "Attention share of the per-token forward FLOPs", "17.3.7"),
    Q("train_FLOP_per_token", "FLOP", "Training FLOPs per token (6·P_active)", "17.3.9"),
    Q("train_total_FLOPs", "FLOP", "Training compute C = 6·P_active·T (total incl. embeddings)", "17.3.8"),
    Q("train_total_ne_FLOPs", "FLOP", "Training compute C = 6·P_active_ne·T (Chinchilla, no embeddings)", "17.3.8"),
    Q("op_sac_gemm_recompute_frac", "fraction",
      "Op-level selective AC: share of a dense layer's matmul FLOPs recomputed (every second matmul: K, O, FFN up; "
      "0 for MoE and MLA models, which it is not modelled for)", "torchtitan parallelize.py _save_list"),
    Q("recompute_compute_factor", "x", "Compute factor of the chosen recompute mode (full 4/3; op_selective "
      "1 + the recomputed matmul share / 3)", "17.4.6"),
    Q("train_hw_FLOPs", "FLOP", "Hardware FLOPs incl. the attention core (3 x 4·L·S·d per token, the full score "
      "matrix as Narayanan 2021 eq. 3 counts it) and recomputation: (C + 3·attention·T) x recompute factor",
      "17.4.6; Narayanan 2021 eq. 3"),
    Q("ideal_gpu_days", "GPU-days", "GPU-days for C at the scenario MFU (compute only)", "17.3.8"),
    Q("ideal_wall_days", "days", "Wall-clock days for C on the job's GPUs at the scenario MFU (compute only)", "17.3.8"),
    Q("moe_dense_equiv_x", "x", "Total/active parameters: FLOP saving versus a dense model of the same size", "17.3.9"),
]


def _num(v) -> float:
    return 0.0 if v is None else float(v)


def _intermediates(m) -> dict[str, float]:
    """The intermediate rows of the parameter count (same definitions as reference.params)."""
    L, d = float(m.layers), float(m.d_model)
    mla = m.attention == "mla"
    h, g, dh = float(m.n_heads), float(m.n_kv_heads), float(m.head_dim)
    std = pa.attention_params(d_model=d, n_heads=h, n_kv_heads=g, head_dim=dh, qkv_bias=bool(m.qkv_bias))["total"]
    rq, rkv = _num(m.q_lora_rank), _num(m.kv_lora_rank)
    rope, nope, v = _num(m.qk_rope_head_dim), _num(m.qk_nope_head_dim), _num(m.v_head_dim)
    qk = nope + rope
    mla_q = d * rq + rq * h * qk if rq else d * h * qk
    mla_kv = d * (rkv + rope) + rkv * h * (nope + v)
    mats = float(pa.ffn_matrices(m.ffn))
    moe = bool(m.moe)
    n_dense = float(m.n_dense_layers or 0) if moe else L
    dense_d_ff = (_num(m.dense_d_ff) if m.dense_d_ff is not None else float(m.d_ff)) if moe else float(m.d_ff)
    return {
        "model_is_mla_flag": 1.0 if mla else 0.0,
        "attn_std_params_per_layer": std,
        "mla_qk_head_dim": qk,
        "mla_q_params_per_layer": mla_q,
        "mla_kv_params_per_layer": mla_kv,
        "attn_params_per_layer": mla_q + mla_kv + h * v * d if mla else std,
        "attn_latent_norm_per_layer": rq + rkv if mla else 0.0,
        "ffn_matrices": mats,
        "ffn_dense_layers": n_dense,
        "ffn_dense_layer_params": mats * d * dense_d_ff,
        "moe_layers": L - n_dense if moe else 0.0,
        "moe_expert_params": mats * d * _num(m.expert_d_ff) if moe else 0.0,
        "moe_router_params_per_layer": _num(m.n_routed_experts) * d if moe else 0.0,
    }


def compute(ctx: Context) -> dict[str, float]:
    m, t = ctx.model, ctx.s.training
    c = pa.model_param_counts(m)
    total, active, emb = c["params_total"], c["params_active"], c["params_embedding"]
    active_ne = active - emb
    L, d = float(m.layers), float(m.d_model)
    attn_tok = fl.attention_FLOPs_per_token(layers=L, seq_len=t.seq_len, d_model=d)
    fwd_tok = fl.forward_FLOPs_per_token(params=active_ne, layers=L, seq_len=t.seq_len, d_model=d)
    s12 = pa.params_12Ld2(layers=L, d_model=d)
    train_c = fl.train_FLOPs(params=active, tokens=t.tokens)
    op_frac = 0.0 if (m.moe or m.attention == "mla") else op_sac_gemm_recompute_frac(
        d_model=d, n_heads=float(m.n_heads), d_ff=float(m.d_ff), head_dim=float(m.head_dim),
        n_kv_heads=float(m.n_kv_heads), ffn=m.ffn)
    factor = fl.recompute_compute_factor(RECOMPUTE_FWD_FRAC[t.recompute]
                                         + (op_frac if t.recompute == "op_selective" else 0.0))
    peak = ctx.q["mfu_peak_TFLOPS"]  # the peak the MFU given refers to
    days = fl.gpu_days(FLOPs=train_c, peak_TFLOPS=peak, mfu=t.mfu)
    if m.attention == "mla":
        kv_proj = d * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * m.n_heads * (m.qk_nope_head_dim + m.v_head_dim)
    else:
        kv_proj = pa.kv_projection_params(d_model=d, n_kv_heads=m.n_kv_heads, head_dim=m.head_dim)
    d_ff = float(m.expert_d_ff if m.moe else m.d_ff)
    return {
        **_intermediates(m),
        "params_ffn_active": c["params_active"] - c["params_embedding"] - c["params_attention"] - c["params_norm"],
        "params_total": total,
        "params_active": active,
        "params_embedding": emb,
        "params_non_embedding": c["params_non_embedding"],
        "params_active_non_embedding": active_ne,
        "params_attention": c["params_attention"],
        "params_ffn": c["params_ffn"],
        "params_norm": c["params_norm"],
        "params_total_B": total / BILLION,
        "params_active_B": active / BILLION,
        "params_vs_published_frac": total / float(m.published_params_total) - 1,
        "active_frac": active / total,
        "vocab_share_frac": emb / total,
        "params_12Ld2": s12,
        "params_12Ld2_shortfall_frac": pa.deviation_pct(estimate=s12, exact=total) / 100,
        "dff_over_d_ratio": d_ff / d,
        "kv_proj_params_per_layer": kv_proj,
        "fwd_linear_FLOP_per_token": fwd_tok - attn_tok,
        "fwd_attn_FLOP_per_token": attn_tok,
        "fwd_FLOP_per_token": fwd_tok,
        "lm_head_FLOP_per_token": fl.lm_head_FLOPs(batch=1, seq_len=1, d_model=d, vocab=float(m.vocab)),
        "attn_share_of_fwd_frac": attn_tok / fwd_tok,
        "train_FLOP_per_token": fl.moe_FLOPs_per_token(params_active=active),
        "train_total_FLOPs": train_c,
        "train_total_ne_FLOPs": fl.train_FLOPs(params=active_ne, tokens=t.tokens),
        "op_sac_gemm_recompute_frac": op_frac,
        "recompute_compute_factor": factor,
        "train_hw_FLOPs": (train_c + fl.TRAIN_FWD_UNITS * attn_tok * t.tokens) * factor,
        "ideal_gpu_days": days,
        "ideal_wall_days": fl.wall_days(gpu_days=days, gpus=t.num_gpus),
        "moe_dense_equiv_x": total / active,
    }
