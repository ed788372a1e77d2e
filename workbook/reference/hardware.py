"""Hardware concepts (spec 17.1): numeric formats, ridge point, BW/FLOPS, NICs, derates,
transfer and all-reduce times, bisection bandwidth, roofline, capacity fit lists."""

from __future__ import annotations

import math
from typing import Mapping

from workbook.units import BITS_PER_BYTE, GB, TB, TERA


# --------------------------------------------------------------------------- numeric formats (17.1.4)
#: Table 17-1: name -> (sign bits, exponent bits, mantissa bits, finite_only ("FN" variant))
FLOAT_FORMATS: dict[str, tuple[int, int, int, bool]] = {
    "fp32": (1, 8, 23, False),
    "tf32": (1, 8, 10, False),
    "bf16": (1, 8, 7, False),
    "fp16": (1, 5, 10, False),
    "fp8_e4m3": (1, 4, 3, True),  # OCP E4M3FN: no infinities, only S.1111.111 is NaN
    "fp8_e5m2": (1, 5, 2, False),
}
#: storage bytes where they differ from the bit count (TF32 is held in a 32-bit word)
FORMAT_STORAGE_BYTES: dict[str, float] = {"tf32": 4.0}
#: integer formats: name -> bits
INT_FORMATS: dict[str, int] = {"int8": 8, "int4": 4}
#: quantile formats without a closed-form range: name -> bits (NF4: QLoRA's 4-bit NormalFloat)
QUANTILE_FORMATS: dict[str, int] = {"nf4": 4}


def float_format_bytes(*, sign_bits: int, exp_bits: int, mantissa_bits: int) -> float:
    """Bytes of a floating-point format, (s + e + m)/8 (spec 17.1.4, Table 17-1)."""
    return (sign_bits + exp_bits + mantissa_bits) / BITS_PER_BYTE


def float_format_limits(*, exp_bits: int, mantissa_bits: int, finite_only: bool = False) -> dict[str, float]:
    """Largest finite and smallest normal value of a binary float format (spec 17.1.4).

    bias = 2^(e−1) − 1; min normal = 2^(1−bias). IEEE-style: the all-ones exponent is reserved,
    max = 2^(2^e − 2 − bias)·(2 − 2^−m). ``finite_only`` (OCP E4M3FN): the all-ones exponent holds
    normals except mantissa all-ones (NaN), max = 2^(2^e − 1 − bias)·(2 − 2^(1−m)).
    """
    if exp_bits < 2 or mantissa_bits < 1:
        raise ValueError("need exp_bits >= 2 and mantissa_bits >= 1")
    bias = 2 ** (exp_bits - 1) - 1
    if finite_only:
        max_finite = math.ldexp(2 - math.ldexp(1, 1 - mantissa_bits), 2**exp_bits - 1 - bias)
    else:
        max_finite = math.ldexp(2 - math.ldexp(1, -mantissa_bits), 2**exp_bits - 2 - bias)
    return {"max_finite": max_finite, "min_normal": math.ldexp(1, 1 - bias)}


def int_format_range(bits: int) -> dict[str, float]:
    """Two's-complement range and bytes of an INTn format: [−2^(n−1), 2^(n−1) − 1] (spec 17.1.4)."""
    if bits < 1:
        raise ValueError("bits must be >= 1")
    return {"bytes": bits / BITS_PER_BYTE, "min": -(2 ** (bits - 1)), "max": 2 ** (bits - 1) - 1}


def numeric_format(name: str) -> dict[str, float]:
    """Row of Table 17-1 for a format name (bytes, and max_finite/min_normal or min/max)."""
    key = name.lower()
    if key in FLOAT_FORMATS:
        s, e, m, fn = FLOAT_FORMATS[key]
        row = {"bytes": FORMAT_STORAGE_BYTES.get(key, float_format_bytes(sign_bits=s, exp_bits=e, mantissa_bits=m))}
        row.update(float_format_limits(exp_bits=e, mantissa_bits=m, finite_only=fn))
        return row
    if key in INT_FORMATS:
        return int_format_range(INT_FORMATS[key])
    if key in QUANTILE_FORMATS:
        return {"bytes": QUANTILE_FORMATS[key] / BITS_PER_BYTE}
    raise ValueError(f"unknown numeric format {name!r}")


# --------------------------------------------------------------------------- ridge point, ratios (17.1.3, 17.1.5)
def ridge_FLOP_per_byte(*, peak_TFLOPS: float, hbm_bw_GBps: float) -> float:
    """Roofline ridge point R = peak FLOP/s / HBM B/s (spec 17.1.3). H100: 295.4 FLOP/B."""
    if peak_TFLOPS <= 0 or hbm_bw_GBps <= 0:
        raise ValueError("peak_TFLOPS and hbm_bw_GBps must be positive")
    return peak_TFLOPS * TERA / (hbm_bw_GBps * GB)


def bw_per_flop_B_per_FLOP(*, hbm_bw_GBps: float, peak_TFLOPS: float) -> float:
    """Bandwidth-to-compute ratio in bytes per FLOP (spec 17.1.5); the book prints it ×1e3."""
    return 1.0 / ridge_FLOP_per_byte(peak_TFLOPS=peak_TFLOPS, hbm_bw_GBps=hbm_bw_GBps)


def attainable_TFLOPS(*, intensity_FLOP_per_byte: float, peak_TFLOPS: float, hbm_bw_GBps: float) -> float:
    """Roofline: min(peak, I·BW) in TFLOPS (spec 17.1.3)."""
    if intensity_FLOP_per_byte < 0:
        raise ValueError("intensity must be non-negative")
    return min(peak_TFLOPS, intensity_FLOP_per_byte * hbm_bw_GBps * GB / TERA)


def is_compute_bound(*, intensity_FLOP_per_byte: float, ridge_FLOP_per_byte: float) -> bool:
    """I > R: compute-bound; otherwise bandwidth-bound (spec 17.1.3)."""
    return intensity_FLOP_per_byte > ridge_FLOP_per_byte


# --------------------------------------------------------------------------- links and networks (17.1.2, 17.1.6)
#: 64b/66b line coding (spec 17.1.2)
ENCODING_EFFICIENCY_64B66B = 64.0 / 66.0


def gbit_to_GBps(gbit_per_s: float) -> float:
    """Gbit/s ÷ 8 = GB/s (spec 17.1.2)."""
    return gbit_per_s / BITS_PER_BYTE


def nic_aggregate_GBps(*, nics: float, gbit_per_port: float, efficiency: float = 1.0) -> float:
    """Node network bandwidth = ports × Gbit/s ÷ 8 × efficiency (spec 17.1.2): 8×400 → 400 GB/s."""
    if nics < 0 or gbit_per_port < 0 or not 0 < efficiency <= 1:
        raise ValueError("nics, gbit_per_port >= 0 and 0 < efficiency <= 1")
    return nics * gbit_to_GBps(gbit_per_port) * efficiency


def nic_aggregate_Tbps(*, nics: float, gbit_per_port: float) -> float:
    """Node network line rate in Tbit/s (spec 17.1.2): 8×400 Gbit/s = 3.2 Tbit/s."""
    return nics * gbit_per_port / 1e3


def derated_bw_GBps(*, bw_GBps: float, efficiency: float, direction_factor: float = 1.0) -> float:
    """Planning bandwidth = quoted × direction factor × efficiency (spec 17.1.2; README units)."""
    if bw_GBps < 0 or not 0 < efficiency <= 1 or not 0 < direction_factor <= 1:
        raise ValueError("bw >= 0, 0 < efficiency <= 1, 0 < direction_factor <= 1")
    return bw_GBps * direction_factor * efficiency


def transfer_time_s(*, size_GB: float, bw_GBps: float) -> float:
    """t = bytes / bandwidth (spec 17.1.2)."""
    if bw_GBps <= 0 or size_GB < 0:
        raise ValueError("bw_GBps must be positive and size_GB non-negative")
    return size_GB / bw_GBps


def ring_allreduce_data_GB(*, size_GB: float, n: int) -> float:
    """Data each member sends in a ring all-reduce: 2(N−1)/N · size (spec 17.1.2, 17.1.6)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    return 2 * (n - 1) / n * size_GB


def ring_allreduce_time_s(*, size_GB: float, n: int, bw_GBps: float) -> float:
    """Ring all-reduce lower bound t = 2(N−1)/N · size / BW (spec 17.1.2)."""
    return transfer_time_s(size_GB=ring_allreduce_data_GB(size_GB=size_GB, n=n), bw_GBps=bw_GBps)


def tree_allreduce_time_s(*, size_GB: float, bw_GBps: float) -> float:
    """Book's tree all-reduce model t = 2·size / BW (spec 17.1.6)."""
    return transfer_time_s(size_GB=2 * size_GB, bw_GBps=bw_GBps)


def switch_aggregate_GBps(*, gpus: int, per_gpu_bw_GBps: float) -> float:
    """Aggregate of a switched domain = GPUs × per-GPU bandwidth (spec 17.1.6: DGX H800 3.2 TB/s)."""
    return gpus * per_gpu_bw_GBps


def bisection_bw_GBps(*, gpus: int, per_gpu_bw_GBps: float) -> float:
    """Bisection bandwidth of a non-blocking switch: (GPUs/2) × per-GPU bandwidth (spec 17.1.6)."""
    return gpus / 2 * per_gpu_bw_GBps


def GBps_to_TBps(bw_GBps: float) -> float:
    """GB/s → TB/s (decimal)."""
    return bw_GBps * GB / TB


# --------------------------------------------------------------------------- capacity fit lists (17.1.5)
def per_card_GB(*, params: float, bytes_per_param: float, cards: int = 1) -> float:
    """Memory needed per card = P·bytes / cards (spec 17.1.5, Table 17-6/17-7)."""
    if cards < 1 or params < 0 or bytes_per_param < 0:
        raise ValueError("cards >= 1, params and bytes >= 0")
    return params * bytes_per_param / cards / GB


def gpus_fitting(*, need_GB: float, hbm_GB: Mapping[str, float],
                 native_fp8: Mapping[str, bool] | None = None) -> list[str]:
    """GPUs (in the given order) whose HBM holds need_GB; optionally only those with native FP8."""
    return [name for name, cap in hbm_GB.items()
            if cap >= need_GB and (native_fp8 is None or native_fp8.get(name, False))]
