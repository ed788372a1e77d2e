"""Quantisation (spec 17.8.10, family F10): weight bytes, decode speed-up, quality cost."""

from __future__ import annotations

import math

from workbook.units import BYTES_PER_ELEMENT

#: BF16 is the reference width for speed-ups (spec F10)
BF16_BYTES = BYTES_PER_ELEMENT["bf16"]
#: practical INT4 decode speed-up over BF16: 3-3.5x default (17.8.10), 3-4x (Table 17-120), 2-3x (rule 13)
INT4_PRACTICAL_SPEEDUP_X = {"17.8.10": (3.0, 3.5), "table_17_120": (3.0, 4.0), "rule_13": (2.0, 3.0)}
#: perplexity cost by format (Table 17-119 summary, spec F10), percent increase (low, high)
PERPLEXITY_INCREASE_PCT = {"fp8": (0.0, 0.1), "int8": (0.0, 0.1), "int4": (0.5, 2.0)}


def weight_bytes(*, params: float, bytes_per_param: float) -> float:
    """Weight memory W = P·b_w bytes (spec F10)."""
    if params < 0 or bytes_per_param <= 0:
        raise ValueError("params must be >= 0 and bytes_per_param > 0")
    return params * bytes_per_param


def decode_speedup_vs_bf16_x(*, bytes_per_param: float) -> float:
    """Theoretical memory-bound decode speed-up over BF16: 2/b_w (spec F10)."""
    if bytes_per_param <= 0:
        raise ValueError("bytes_per_param must be > 0")
    return BF16_BYTES / bytes_per_param


def practical_throughput_tok_per_s(*, bound_tok_per_s: float, practical_speedup_x: float, theoretical_speedup_x: float) -> float:
    """Scale a weights-only bound by practical/theoretical speed-up (17.8.10: INT4 3x instead of 4x; erratum 18)."""
    if theoretical_speedup_x <= 0:
        raise ValueError("theoretical_speedup_x must be > 0")
    return bound_tok_per_s * practical_speedup_x / theoretical_speedup_x


def perplexity_increase_pct(*, ppl_baseline: float, ppl_quantised: float) -> float:
    """Relative perplexity increase in percent (Table 17-119)."""
    if ppl_baseline <= 0 or not math.isfinite(ppl_baseline):
        raise ValueError("ppl_baseline must be > 0")
    return (ppl_quantised / ppl_baseline - 1.0) * 100.0


def kv_bytes_scaled(*, kv_bytes_bf16: float, kv_bytes_per_elem: float) -> float:
    """KV cache at another precision: KV_bf16·b_kv/2 (INT8/FP8 KV halves F4)."""
    return kv_bytes_bf16 * kv_bytes_per_elem / BF16_BYTES
