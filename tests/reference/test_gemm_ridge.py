"""The GEMM smooth roofline (decode_time.gemm_time_s) against the published GEMM tables it is fitted
to (docs/serving.md "Factors"; catalog/efficiency.yaml gemm_ridge_p_fp8 / gemm_ridge_p_bf16).

Model of one GEMM of M x K by K x N: t_mem = bytes/(HBM x decode_hbm_efficiency), t_comp =
2MNK/(peak x serving_gemm_efficiency), t = (t_mem^p + t_comp^p)^(1/p). Only p is fitted; the two
efficiencies are the catalogue's.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from tests.reference import serving_validation as sv
from workbook.reference import decode_time as dt
from workbook.units import GB, TERA

#: deepseek-ai/DeepGEMM README, commit 327ec92 (2025-04-09), H800 SXM5, FP8 x FP8 -> BF16, every row of
#: the three tables (normal GEMMs, grouped contiguous, grouped masked): (groups, M per group, N, K, TFLOPS)
DEEPGEMM_H800_FP8 = [
    (1, 64, 2112, 7168, 206), (1, 64, 24576, 1536, 289), (1, 64, 32768, 512, 219), (1, 64, 7168, 16384, 336),
    (1, 64, 4096, 7168, 287), (1, 64, 7168, 2048, 295), (1, 128, 2112, 7168, 352), (1, 128, 24576, 1536, 535),
    (1, 128, 32768, 512, 358), (1, 128, 7168, 16384, 645), (1, 128, 4096, 7168, 533), (1, 128, 7168, 2048, 510),
    (1, 4096, 2112, 7168, 1127), (1, 4096, 24576, 1536, 1212), (1, 4096, 32768, 512, 775),
    (1, 4096, 7168, 16384, 1520), (1, 4096, 4096, 7168, 1410), (1, 4096, 7168, 2048, 1168),
    (4, 8192, 4096, 7168, 1346), (4, 8192, 7168, 2048, 1214), (8, 4096, 4096, 7168, 1346),
    (8, 4096, 7168, 2048, 1214), (1, 1024, 4096, 7168, 1233), (1, 1024, 7168, 2048, 925),
    (2, 512, 4096, 7168, 1040), (2, 512, 7168, 2048, 916), (4, 256, 4096, 7168, 932), (4, 256, 7168, 2048, 815),
]
#: vllm-project/vllm PR 49363 (2026-07-21), H100, torch-bf16 TFLOP/s, google/gemma-4-31B-it shapes, M >= 64
#: (M = 1 and 16 stream the weights only and do not see p): (groups, M, N, K, TFLOPS)
VLLM49363_H100_BF16 = [
    (1, 64, 12288, 5376, 182.588263), (1, 128, 12288, 5376, 352.560566),
    (1, 64, 43008, 5376, 187.994464), (1, 128, 43008, 5376, 364.745064), (1, 256, 43008, 5376, 593.264799),
]
#: the fits' stated errors (efficiency.yaml field_sources): largest and rms of model/measured - 1
FP8_LARGEST, FP8_RMS = 0.32, 0.14
BF16_LARGEST = 0.15


def _bounds(row, hw, *, in_bytes, out_bytes, peak_TFLOPS):
    g, m, n, k, _ = row
    flops = 2.0 * g * m * n * k
    nbytes = g * (in_bytes * (m * k + k * n) + out_bytes * m * n)
    t_mem = nbytes / (hw["hbm_bw_GBps"] * GB * hw["decode_hbm_efficiency"])
    t_comp = flops / (peak_TFLOPS * TERA * hw["serving_gemm_efficiency"])
    return t_mem, t_comp, flops / (row[4] * TERA)


def _errors(rows, hw, p, **kw):
    out = []
    for row in rows:
        t_mem, t_comp, t_meas = _bounds(row, hw, **kw)
        out.append(dt.gemm_time_s(memory_s=t_mem, compute_s=t_comp, ridge_p=p) / t_meas - 1)
    return out


def _fit_p(rows, hw, **kw):
    """Least squares of log(model/measured) over p, golden-section search on [1, 16] (the catalogue's range)."""
    def cost(p):
        return sum(math.log1p(e) ** 2 for e in _errors(rows, hw, p, **kw))
    lo, hi, r = 1.0, 16.0, (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - r * (hi - lo), lo + r * (hi - lo)
        lo, hi = (lo, b) if cost(a) < cost(b) else (a, hi)
    return (lo + hi) / 2


FP8 = dict(in_bytes=1.0, out_bytes=2.0, peak_TFLOPS=sv.H800["fp8_TFLOPS"])
BF16 = dict(in_bytes=2.0, out_bytes=2.0, peak_TFLOPS=sv.H100["peak_TFLOPS"])


def test_fp8_fit_reproduces_the_deepgemm_h800_table():
    p = dt.gemm_ridge_p(sv.H800, weight_precision="fp8")
    assert p == sv.H800["gemm_ridge_p_fp8"] == pytest.approx(_fit_p(DEEPGEMM_H800_FP8, sv.H800, **FP8), abs=0.01)
    err = _errors(DEEPGEMM_H800_FP8, sv.H800, p, **FP8)
    assert max(abs(e) for e in err) <= FP8_LARGEST
    assert math.sqrt(sum(math.log1p(e) ** 2 for e in err) / len(err)) <= FP8_RMS
    # the ideal max() (p -> infinity) is the worse description of the same table
    ideal = [max(b[0], b[1]) / b[2] - 1 for b in (_bounds(r, sv.H800, **FP8) for r in DEEPGEMM_H800_FP8)]
    assert sum(math.log1p(e) ** 2 for e in ideal) > 2 * sum(math.log1p(e) ** 2 for e in err)


def test_bf16_fit_reproduces_the_vllm_h100_table():
    p = dt.gemm_ridge_p(sv.H100, weight_precision="bf16")
    assert p == sv.H100["gemm_ridge_p_bf16"] == pytest.approx(_fit_p(VLLM49363_H100_BF16, sv.H100, **BF16), abs=0.05)
    err = _errors(VLLM49363_H100_BF16, sv.H100, p, **BF16)
    assert max(abs(e) for e in err) <= BF16_LARGEST
    # the one row at the ridge (M = 256, M ~ peak/BW = 295) is the one p is read from
    assert abs(err[-1]) < 0.01


def test_precision_picks_the_exponent_as_the_peak():
    hw = sv.H100
    assert dt.gemm_ridge_p(hw, weight_precision="FP8") == dt.gemm_ridge_p(hw, weight_precision="int8") == \
        hw["gemm_ridge_p_fp8"]
    assert dt.gemm_ridge_p(hw, weight_precision="int4") == dt.gemm_ridge_p(hw, weight_precision="bf16") == \
        hw["gemm_ridge_p_bf16"]


@given(a=st.floats(1e-9, 1), b=st.floats(1e-9, 1), p=st.floats(1, 16), da=st.floats(0, 1))
def test_smooth_roofline_bounds_and_monotone(a, b, p, da):
    t = dt.gemm_time_s(memory_s=a, compute_s=b, ridge_p=p)
    assert max(a, b) * (1 - 1e-12) <= t <= (a + b) * (1 + 1e-12)
    assert dt.gemm_time_s(memory_s=a + da, compute_s=b, ridge_p=p) >= t * (1 - 1e-12)
    assert dt.gemm_time_s(memory_s=b, compute_s=a, ridge_p=p) == pytest.approx(t)


def test_bad_inputs():
    with pytest.raises(ValueError):
        dt.gemm_time_s(memory_s=-1.0, compute_s=1.0, ridge_p=2.0)
    with pytest.raises(ValueError):
        dt.gemm_time_s(memory_s=1.0, compute_s=1.0, ridge_p=0.0)


def test_catalogue_rejects_an_exponent_outside_1_16(tmp_path):
    from tests.reference.test_step_time import GOOD
    from workbook.catalog.efficiency import load_efficiency
    from workbook.errors import InputError

    p = tmp_path / "efficiency.yaml"
    for bad in ("gemm_ridge_p_fp8: 20", "gemm_ridge_p_fp8: 0.5"):
        p.write_text(GOOD.replace("gemm_ridge_p_fp8: 1.53", bad), encoding="utf-8")
        with pytest.raises(InputError) as e:
            load_efficiency(p)
        assert "gemm_ridge_p_fp8" in str(e.value)
