"""FLOP counts (spec 17.1.1, 17.3): matmul, per-layer forward, per-token, 6PT, recompute, MoE,
compute time and GPU-days. FLOPs are counts (one MAC = 2 FLOPs); FLOPS are rates."""

from __future__ import annotations

from workbook.units import SECONDS_PER_DAY, TERA

#: forward-equivalents of one training step: forward 1 + backward 2 (spec 17.1.1)
TRAIN_FWD_UNITS = 3.0
#: elementwise costs in FLOPs per element (spec 17.3.4-17.3.5)
RMSNORM_FLOPS_PER_ELEMENT = 5.0
LAYERNORM_FLOPS_PER_ELEMENT = 10.0
ACTIVATION_FLOPS_PER_ELEMENT = {"relu": 1.0, "gelu": 5.0, "silu": 5.0}


def _nonneg(**values: float) -> None:
    for k, v in values.items():
        if v < 0:
            raise ValueError(f"{k} must be non-negative, got {v}")


def matmul_FLOPs(*, m: float, n: float, k: float, batch: float = 1) -> float:
    """C[m×n] = A[m×k]·B[k×n]: 2·m·n·k (batched: ×b) (spec 17.1.1, 17.3.1)."""
    _nonneg(m=m, n=n, k=k, batch=batch)
    return 2 * batch * m * n * k


def linear_FLOPs(*, tokens: float, d_in: float, d_out: float) -> float:
    """Linear layer on B·S tokens: 2·B·S·d_in·d_out (spec 17.1.1)."""
    return matmul_FLOPs(m=tokens, n=d_out, k=d_in)


def layer_linear_FLOPs(
    *,
    batch: float,
    seq_len: float,
    d_model: float,
    d_ff: float,
    n_heads: float | None = None,
    n_kv_heads: float | None = None,
    head_dim: float | None = None,
    ffn_matrices: int = 3,
) -> dict[str, float]:
    """Forward FLOPs of one layer's linear parts (spec 17.3.2).

    MHA: QKV 6·B·S·d², O 2·B·S·d², each FFN matrix 2·B·S·d·d_ff; total 2·B·S·d·(4d + 3d_ff).
    GQA: the QKV term becomes 2·B·S·d·(h·d_h + 2·g·d_h).
    """
    t = batch * seq_len
    if n_heads is None:
        q_width = kv_width = d_model
    else:
        dh = d_model / n_heads if head_dim is None else head_dim
        q_width = n_heads * dh
        kv_width = (n_heads if n_kv_heads is None else n_kv_heads) * dh
    q = linear_FLOPs(tokens=t, d_in=d_model, d_out=q_width)
    kv = linear_FLOPs(tokens=t, d_in=d_model, d_out=2 * kv_width)
    o = linear_FLOPs(tokens=t, d_in=q_width, d_out=d_model)
    ffn_one = linear_FLOPs(tokens=t, d_in=d_model, d_out=d_ff)
    ffn = ffn_matrices * ffn_one
    return {"q": q, "qkv": q + kv, "o": o, "ffn_matrix": ffn_one, "ffn": ffn, "total": q + kv + o + ffn}


def attention_score_FLOPs(*, batch: float, seq_len: float, d_model: float) -> float:
    """QKᵀ (and likewise AV): 2·B·h·S²·d_h = 2·B·S²·d (spec 17.3.3)."""
    _nonneg(batch=batch, seq_len=seq_len, d_model=d_model)
    return 2 * batch * seq_len**2 * d_model


def attention_core_FLOPs(*, batch: float, seq_len: float, d_model: float, causal: bool = False) -> float:
    """QKᵀ + AV per layer: 4·B·S²·d, full S×S (causal kernels about half) (spec 17.3.3)."""
    full = 2 * attention_score_FLOPs(batch=batch, seq_len=seq_len, d_model=d_model)
    return full / 2 if causal else full


def norm_FLOPs(*, batch: float, seq_len: float, d_model: float, norms: float = 1,
               flops_per_element: float = RMSNORM_FLOPS_PER_ELEMENT) -> float:
    """Normalisation: ≈5 FLOPs/element for RMSNorm (10 LayerNorm) × B·S·d per norm (spec 17.3.4)."""
    _nonneg(batch=batch, seq_len=seq_len, d_model=d_model, norms=norms)
    return norms * flops_per_element * batch * seq_len * d_model


def activation_FLOPs(*, batch: float, seq_len: float, d_ff: float, flops_per_element: float = 5.0,
                     layers: float = 1) -> float:
    """Activation function on B·S·d_ff elements (SiLU/GELU ≈5, ReLU 1 FLOP/element) (spec 17.3.5)."""
    _nonneg(batch=batch, seq_len=seq_len, d_ff=d_ff, layers=layers)
    return layers * flops_per_element * batch * seq_len * d_ff


def lm_head_FLOPs(*, batch: float, seq_len: float, d_model: float, vocab: float) -> float:
    """LM head 2·B·S·d·V (tied or not); the input embedding lookup is 0 FLOPs (spec 17.3.6)."""
    return linear_FLOPs(tokens=batch * seq_len, d_in=d_model, d_out=vocab)


# --------------------------------------------------------------------------- per token (17.3.7, 17.3.9)
def forward_FLOPs_per_token(*, params: float, layers: float = 0, seq_len: float = 0, d_model: float = 0) -> float:
    """C_fwd ≈ 2·P + 4·L·S·d per token (spec 17.3.7). Pass P_ne (Chinchilla) or P_total, say which."""
    _nonneg(params=params, layers=layers, seq_len=seq_len, d_model=d_model)
    return 2 * params + 4 * layers * seq_len * d_model


def attention_FLOPs_per_token(*, layers: float, seq_len: float, d_model: float) -> float:
    """Attention term of the per-token forward, 4·L·S·d (spec 17.3.7)."""
    return forward_FLOPs_per_token(params=0, layers=layers, seq_len=seq_len, d_model=d_model)


def train_FLOPs_per_token(*, params: float, layers: float = 0, seq_len: float = 0, d_model: float = 0,
                          recompute: bool = False) -> float:
    """Training ≈ 3·C_fwd (6·P without attention); full recompute ≈ 4·C_fwd (spec 17.3.7, 17.4.6)."""
    units = TRAIN_FWD_UNITS + (1 if recompute else 0)
    return units * forward_FLOPs_per_token(params=params, layers=layers, seq_len=seq_len, d_model=d_model)


def train_FLOPs(*, params: float, tokens: float, recompute_fwd_frac: float = 0.0) -> float:
    """C = 6·P·T_tok (P = P_ne dense, P_active MoE); with recompute (3 + f)/3 × (8PT at f = 1)
    (spec 17.3.8, 17.3.9, 17.4.6)."""
    _nonneg(params=params, tokens=tokens, recompute_fwd_frac=recompute_fwd_frac)
    return 2 * (TRAIN_FWD_UNITS + recompute_fwd_frac) * params * tokens


def recompute_compute_factor(recompute_fwd_frac: float) -> float:
    """Compute factor of recomputing a fraction f of the forward: (3 + f)/3 (spec 17.4.6)."""
    if not 0 <= recompute_fwd_frac <= 1:
        raise ValueError("recompute fraction must be in [0, 1]")
    return (TRAIN_FWD_UNITS + recompute_fwd_frac) / TRAIN_FWD_UNITS


def moe_FLOPs_per_token(*, params_active: float, train: bool = True) -> float:
    """MoE per token: 2·P_active forward, 6·P_active training (spec 17.3.9)."""
    _nonneg(params_active=params_active)
    return (2 * TRAIN_FWD_UNITS if train else 2) * params_active


def router_FLOPs(*, batch: float, seq_len: float, d_model: float, n_experts: float) -> float:
    """Router ≈ 2·B·S·d·N, negligible (spec 17.3.9)."""
    return linear_FLOPs(tokens=batch * seq_len, d_in=d_model, d_out=n_experts)


# --------------------------------------------------------------------------- time (17.3.1, 17.3.8)
def compute_time_s(*, FLOPs: float, peak_TFLOPS: float, mfu: float = 1.0) -> float:
    """t = FLOPs / (peak·MFU) (spec 17.3.1)."""
    if peak_TFLOPS <= 0 or not 0 < mfu <= 1:
        raise ValueError("peak must be positive and 0 < mfu <= 1")
    return FLOPs / (peak_TFLOPS * TERA * mfu)


def gpu_days(*, FLOPs: float, peak_TFLOPS: float, mfu: float = 1.0) -> float:
    """GPU-days = C / (peak · 86,400 · MFU) (spec 17.3.8)."""
    return compute_time_s(FLOPs=FLOPs, peak_TFLOPS=peak_TFLOPS, mfu=mfu) / SECONDS_PER_DAY


def wall_days(*, gpu_days: float, gpus: float) -> float:
    """Wall-clock days = GPU-days / GPUs (spec 17.3.8)."""
    if gpus <= 0:
        raise ValueError("gpus must be positive")
    return gpu_days / gpus
