"""KV cache (spec 17.2.3, 17.4.9-17.4.10): size, per-token size, MLA latent cache, compression."""

from __future__ import annotations

import re

from workbook.units import GB


def _nonneg(**values: float) -> None:
    for k, v in values.items():
        if v < 0:
            raise ValueError(f"{k} must be non-negative, got {v}")


def kv_elements_per_token(*, layers: float, n_kv_heads: float, head_dim: float) -> float:
    """K and V values per token over all layers: 2·L·g·d_h (spec 17.2.3)."""
    _nonneg(layers=layers, n_kv_heads=n_kv_heads, head_dim=head_dim)
    return 2 * layers * n_kv_heads * head_dim


def kv_bytes_per_token(*, layers: float, n_kv_heads: float, head_dim: float, kv_bytes: float = 2.0) -> float:
    """Per-token KV bytes 2·L·g·d_h·bytes (spec 17.2.3, 17.4.9)."""
    _nonneg(kv_bytes=kv_bytes)
    return kv_elements_per_token(layers=layers, n_kv_heads=n_kv_heads, head_dim=head_dim) * kv_bytes


def kv_cache_bytes(*, layers: float, batch: float, seq_len: float, d_kv: float, kv_bytes: float = 2.0) -> float:
    """M_KV = 2·L·B·S·d_kv·bytes with d_kv = g·d_h (spec 17.4.9)."""
    _nonneg(layers=layers, batch=batch, seq_len=seq_len, d_kv=d_kv, kv_bytes=kv_bytes)
    return 2 * layers * batch * seq_len * d_kv * kv_bytes


def kv_cache_GB(*, layers: float, batch: float, seq_len: float, n_kv_heads: float | None = None,
                head_dim: float | None = None, d_kv: float | None = None, kv_bytes: float = 2.0) -> float:
    """KV cache in GB, 2·L·B·S·g·d_h·bytes (spec 17.4.9). Give d_kv or (n_kv_heads, head_dim)."""
    if d_kv is None:
        if n_kv_heads is None or head_dim is None:
            raise ValueError("give d_kv or both n_kv_heads and head_dim")
        d_kv = n_kv_heads * head_dim
    return kv_cache_bytes(layers=layers, batch=batch, seq_len=seq_len, d_kv=d_kv, kv_bytes=kv_bytes) / GB


def mla_kv_bytes_per_token(*, layers: float, kv_lora_rank: float, qk_rope_head_dim: float,
                           kv_bytes: float = 2.0) -> float:
    """MLA caches the latent plus the shared RoPE key: L·(r_kv + d_rope)·bytes per token (spec 17.4.10).
    DeepSeek-V2: 512 + 64 = 576 values per layer."""
    _nonneg(layers=layers, kv_lora_rank=kv_lora_rank, qk_rope_head_dim=qk_rope_head_dim, kv_bytes=kv_bytes)
    return layers * (kv_lora_rank + qk_rope_head_dim) * kv_bytes


# --------------------------------------------------------------------------- compression (17.4.10)
def quant_factor(*, kv_bytes: float, baseline_bytes: float = 2.0) -> float:
    """Precision factor relative to a BF16 cache: INT8/FP8 ×0.5 (spec 17.4.10)."""
    return kv_bytes / baseline_bytes


def gqa_factor(*, n_kv_heads: float, n_heads: float) -> float:
    """GQA factor g/h relative to MHA (MQA: 1/h) (spec 17.4.10)."""
    if n_heads <= 0 or not 0 < n_kv_heads <= n_heads:
        raise ValueError("need 0 < n_kv_heads <= n_heads")
    return n_kv_heads / n_heads


def mla_factor(*, latent_width: float, original_width: float) -> float:
    """MLA factor = cached latent width / original KV width (spec 17.4.10): 512/4096 = 1/8."""
    if original_width <= 0:
        raise ValueError("original_width must be positive")
    return latent_width / original_width


def compressed_kv_GB(*, baseline_GB: float, precision_factor: float = 1.0, gqa: float = 1.0,
                     mla: float = 1.0, keep_frac: float = 1.0) -> float:
    """Compressed KV = baseline × each factor; GQA is 1 when the baseline already is GQA (spec 17.4.10)."""
    if not 0 <= keep_frac <= 1:
        raise ValueError("keep_frac must be in [0, 1]")
    return baseline_GB * precision_factor * gqa * mla * keep_frac


_SCHEME_TOKEN = re.compile(r"^(none|int8|fp8|int4|gqa|mqa|mla-(\d+(?:\.\d+)?)x|evict-(\d+(?:\.\d+)?)pct)$")


def scheme_factor(scheme: str, *, gqa_vs_baseline: float = 1.0, mqa_vs_baseline: float | None = None) -> float:
    """Factor of a scheme string like 'gqa-int8', 'mla-8x', 'evict-50pct' (tokens joined by '-'/'+').

    'gqa'/'mqa' contribute their factor relative to the baseline (1 when the baseline is already GQA,
    so GQA is not counted twice, spec 17.4.10); 'evict-Xpct' keeps (100 − X)%.
    """
    factor = 1.0
    tokens = re.findall(r"mla-[\d.]+x|evict-[\d.]+pct|[a-z0-9]+", scheme.lower())
    for tok in tokens:
        mt = _SCHEME_TOKEN.match(tok)
        if not mt:
            raise ValueError(f"unknown KV compression token {tok!r} in {scheme!r}")
        if tok in ("int8", "fp8"):
            factor *= 0.5
        elif tok == "int4":
            factor *= 0.25
        elif tok == "gqa":
            factor *= gqa_vs_baseline
        elif tok == "mqa":
            if mqa_vs_baseline is None:
                raise ValueError("mqa needs mqa_vs_baseline (1/h relative to MHA)")
            factor *= mqa_vs_baseline
        elif mt.group(2):
            factor /= float(mt.group(2))
        elif mt.group(3):
            factor *= 1 - float(mt.group(3)) / 100
    return factor
