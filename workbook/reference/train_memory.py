"""Training memory (spec 17.1.4, 17.4.1-17.4.7): weights, optimizer variants, gradients,
activations (one basis plus named variants), overhead, total and minimum GPUs. Sizes in GB."""

from __future__ import annotations

import math

from workbook.reference.excel import excel_ceiling
from workbook.units import GB

#: the chapter's 16-byte ledger (spec 17.4.1): BF16 weights, BF16 grads, FP32 master, Adam m, v
LEDGER_BYTES_PER_PARAM = {"weights": 2.0, "grads": 2.0, "master": 4.0, "adam_m": 4.0, "adam_v": 4.0}
STATIC_BYTES_PER_PARAM = sum(LEDGER_BYTES_PER_PARAM.values())  # 16

#: optimizer state bytes per parameter, "full view" incl. the FP32 master (spec 17.4.3, corrected)
#: name -> {component: bytes/param}
OPTIMIZER_COMPONENTS: dict[str, dict[str, float]] = {
    "adam": {"m": 4.0, "v": 4.0, "master": 4.0},
    "adam_mv": {"m": 4.0, "v": 4.0},  # m, v only (no master)
    "adam_8bit": {"m": 1.0, "v": 1.0, "master": 4.0},
    "sgd_momentum": {"velocity": 4.0, "master": 4.0},
    "adam_mini": {"m": 4.0, "v": 0.0, "master": 4.0},  # v is one scalar per block: ≈0
    "sgd": {"master": 4.0},
}

#: default overhead (CUDA context, workspace) per GPU (spec 17.4.7)
DEFAULT_OVERHEAD_GB = 2.0


def _nonneg(**values: float) -> None:
    for k, v in values.items():
        if v is None or v < 0 or not math.isfinite(v):
            raise ValueError(f"{k} must be finite and non-negative, got {v}")


def bytes_GB(*, params: float, bytes_per_param: float) -> float:
    """M = P·bytes in GB (spec 17.4.2, 17.4.4)."""
    _nonneg(params=params, bytes_per_param=bytes_per_param)
    return params * bytes_per_param / GB


def weights_GB(*, params: float, bytes_per_param: float = 2.0) -> float:
    """Weight memory P·bytes (spec 17.4.2): BF16 2, FP8 1, INT4 0.5 (0.55 with scales)."""
    return bytes_GB(params=params, bytes_per_param=bytes_per_param)


def generic_optimizer_GB(*, params: float, bytes_per_elem: float, n_states: int = 2) -> float:
    """Book's generic form M = P·bytes·(1 + N_states), weights + states (spec 17.1.4)."""
    return bytes_GB(params=params, bytes_per_param=bytes_per_elem * (1 + n_states))


def optimizer_bytes_per_param(optimizer: str) -> float:
    """Optimizer state bytes/param in the full ledger (spec 17.4.3): Adam 12, Adam m+v 8, 8-bit Adam 6,
    SGD+momentum 8, Adam-mini ≈8, plain SGD 4 (master only)."""
    try:
        return sum(OPTIMIZER_COMPONENTS[optimizer.lower()].values())
    except KeyError:
        raise ValueError(f"unknown optimizer {optimizer!r}; expected one of {sorted(OPTIMIZER_COMPONENTS)}") from None


def optimizer_components_GB(*, params: float, optimizer: str = "adam") -> dict[str, float]:
    """Each optimizer component in GB plus ``total`` (spec 17.4.3)."""
    comps = OPTIMIZER_COMPONENTS.get(optimizer.lower())
    if comps is None:
        raise ValueError(f"unknown optimizer {optimizer!r}")
    out = {k: bytes_GB(params=params, bytes_per_param=b) for k, b in comps.items()}
    out["total"] = bytes_GB(params=params, bytes_per_param=sum(comps.values()))
    return out


def optimizer_GB(*, params: float, optimizer: str = "adam") -> float:
    """Optimizer state memory in the full ledger (spec 17.4.3)."""
    return bytes_GB(params=params, bytes_per_param=optimizer_bytes_per_param(optimizer))


def grads_GB(*, params: float, grad_bytes: float = 2.0) -> float:
    """Gradient memory P·bytes_grad: BF16 2, FP32 4; independent of accumulation steps (spec 17.4.4)."""
    return bytes_GB(params=params, bytes_per_param=grad_bytes)


def pct_change(*, value: float, reference: float) -> float:
    """(value − reference)/reference·100."""
    if reference == 0:
        raise ValueError("reference must be non-zero")
    return (value - reference) / reference * 100


# --------------------------------------------------------------------------- activations (17.4.5-17.4.6)
def activation_layer_bytes(*, batch: float, seq_len: float, d_model: float, d_ff: float, n_heads: float,
                           act_bytes: float = 2.0) -> float:
    """Book's dominant-term formula per layer, no recompute: B·S·(4d + 2d_ff)·b + h·B·S²·b (spec 17.4.5)."""
    _nonneg(batch=batch, seq_len=seq_len, d_model=d_model, d_ff=d_ff, n_heads=n_heads, act_bytes=act_bytes)
    return batch * seq_len * (4 * d_model + 2 * d_ff) * act_bytes + n_heads * batch * seq_len**2 * act_bytes


def activations_no_recompute_GB(*, layers: float, batch: float, seq_len: float, d_model: float, d_ff: float,
                                n_heads: float, act_bytes: float = 2.0) -> float:
    """M_act = L·M_act_layer (spec 17.4.5): LLaMA-7B, S=4096 → 44.4 GB."""
    return layers * activation_layer_bytes(batch=batch, seq_len=seq_len, d_model=d_model, d_ff=d_ff,
                                           n_heads=n_heads, act_bytes=act_bytes) / GB


def activations_full_recompute_GB(*, layers: float, batch: float, seq_len: float, d_model: float,
                                  act_bytes: float = 2.0) -> float:
    """Full recompute keeps each layer's input: L·B·S·d·bytes (spec 17.4.6)."""
    _nonneg(layers=layers, batch=batch, seq_len=seq_len, d_model=d_model, act_bytes=act_bytes)
    return layers * batch * seq_len * d_model * act_bytes / GB


def activations_selective_GB(*, layers: float, batch: float, seq_len: float, d_model: float,
                             act_bytes: float = 2.0) -> float:
    """Selective variant of 17.4.6 ex2: keep attention input and output, 2·L·B·S·d·bytes."""
    return 2 * activations_full_recompute_GB(layers=layers, batch=batch, seq_len=seq_len, d_model=d_model,
                                             act_bytes=act_bytes)


def activations_megatron_GB(*, layers: float, batch: float, seq_len: float, d_model: float, n_heads: float) -> float:
    """Megatron estimate S·B·d·(34 + 5·h·S/d) bytes per layer (named variant, spec 17.4.5)."""
    _nonneg(layers=layers, batch=batch, seq_len=seq_len, d_model=d_model, n_heads=n_heads)
    return layers * seq_len * batch * d_model * (34 + 5 * n_heads * seq_len / d_model) / GB


def activation_tensors_bytes(*, batch: float, seq_len: float, d_model: float, d_ff: float, n_heads: float,
                             act_bytes: float = 2.0) -> dict[str, float]:
    """Per-tensor activation sizes of one layer, Table 17-40 (spec 17.4.5)."""
    bsd = batch * seq_len * d_model * act_bytes
    bsf = batch * seq_len * d_ff * act_bytes
    s2 = n_heads * batch * seq_len**2 * act_bytes
    return {
        "attention_input": bsd, "qkv_projection": 3 * bsd, "qk_t_all_heads": s2, "softmax": s2,
        "attention_output": bsd, "ffn_up": bsf, "ffn_gate": bsf, "ffn_down_input": bsf,
    }


def activation_layer_bytes_table17_39(*, batch: float, seq_len: float, d_model: float, d_ff: float,
                                      n_heads: float, act_bytes: float = 2.0) -> float:
    """Table 17-39's accounting per layer (named variant, spec 17.4.5): attention in, QKV (3d), attention
    out, FFN in, FFN out (7d in all), up and gate (2d_ff), QKᵀ and softmax (two h·S²)."""
    _nonneg(batch=batch, seq_len=seq_len, d_model=d_model, d_ff=d_ff, n_heads=n_heads, act_bytes=act_bytes)
    return (batch * seq_len * (7 * d_model + 2 * d_ff) + 2 * n_heads * batch * seq_len**2) * act_bytes


def activation_tensor_sums_GB(tensors_bytes: dict[str, float]) -> dict[str, float]:
    """Layer sums of Table 17-40 (spec 17.4.5): all tensors; softmax buffer reused; also QKV dropped."""
    total = sum(tensors_bytes.values())
    reused = total - tensors_bytes["softmax"]
    dropped = reused - tensors_bytes["qkv_projection"]
    return {"layer": total / GB, "softmax_reused": reused / GB, "qkv_dropped": dropped / GB}


def qkt_bytes(*, n_heads: float, batch: float, seq_len: float, act_bytes: float = 2.0) -> float:
    """Attention score tensor h·B·S²·bytes per layer (spec 17.4.5; also the 17.4.11 peak activation)."""
    _nonneg(n_heads=n_heads, batch=batch, seq_len=seq_len, act_bytes=act_bytes)
    return n_heads * batch * seq_len**2 * act_bytes


# --------------------------------------------------------------------------- totals (17.4.1, 17.4.7)
def static_GB(*, params: float, bytes_per_param: float = STATIC_BYTES_PER_PARAM) -> float:
    """Static ledger (weights + grads + optimizer incl. master), 16P by default (spec 17.4.1)."""
    return bytes_GB(params=params, bytes_per_param=bytes_per_param)


def training_total_GB(*, static_GB: float, activations_GB: float, overhead_GB: float = DEFAULT_OVERHEAD_GB) -> float:
    """M_total ≈ 16P + M_act + M_overhead (spec 17.4.7)."""
    _nonneg(static_GB=static_GB, activations_GB=activations_GB, overhead_GB=overhead_GB)
    return static_GB + activations_GB + overhead_GB


def min_gpus_zero3(*, static_GB: float, hbm_GB: float, activations_GB: float = 0.0,
                   overhead_GB: float = DEFAULT_OVERHEAD_GB) -> int:
    """Minimum GPUs with ZeRO-3: ceil(16P / (HBM − M_act − M_ovh)) (spec 17.4.7, corrected)."""
    room = hbm_GB - activations_GB - overhead_GB
    if room <= 0:
        raise ValueError("activations and overhead alone exceed one GPU's HBM")
    return max(1, int(excel_ceiling(static_GB / room)))


def min_cards(*, size_GB: float, hbm_GB: float) -> int:
    """Cards whose HBM holds a size: ceil(size / HBM) (spec 17.4.2, 17.4.3)."""
    if hbm_GB <= 0:
        raise ValueError("hbm_GB must be positive")
    return max(1, int(excel_ceiling(size_GB / hbm_GB)))
