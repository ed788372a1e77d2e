"""calc.inference on a SimpleNamespace context (LLaMA-7B on H800), checked by hand (spec 17.8)."""

from __future__ import annotations

import math

import pytest

from tests.calc.part_a_context import make_context, run
from workbook.calc import inference
from workbook.scenario.model import InferenceInputs


def _ctx(**inf):
    ctx = make_context(inference=InferenceInputs(**inf))
    run(ctx, "kv_cache")
    return ctx


def test_declares_every_quantity_finite():
    ctx = _ctx()
    out = inference.compute(ctx)
    assert set(out) == {q.name for q in inference.QUANTITIES}
    assert 10 <= len(inference.QUANTITIES) <= 40
    assert len({q.label for q in inference.QUANTITIES}) == len(inference.QUANTITIES)
    assert all(math.isfinite(float(v)) for v in out.values())


def test_hand_calculation_tp1_bf16():
    ctx = _ctx(prompt_tokens=2048, output_tokens=512, batch=32, tp=1, compute_efficiency=0.5,
               memory_efficiency=0.8, decode_compute_efficiency=0.7, runtime_overhead_GB=2.0)
    P = ctx.q["params_total"]
    out = inference.compute(ctx)
    assert out["prefill_compute_ms"] == pytest.approx(2 * P * 2048 / (989.5e12 * 0.5) * 1e3, rel=1e-12)
    kv_tok = 2 * 32 * 4096 * 2  # MHA LLaMA-7B, BF16: 524,288 B/token
    t_mem = (2 * P + 32 * kv_tok * (2048 + 256)) / (3350e9 * 0.8)
    t_comp = 2 * P * 32 / (989.5e12 * 0.7)
    assert out["decode_memory_ms"] == pytest.approx(t_mem * 1e3, rel=1e-12)
    assert out["decode_compute_ms"] == pytest.approx(t_comp * 1e3, rel=1e-12)
    assert out["tpot_ms"] == pytest.approx(max(t_mem, t_comp) * 1e3, rel=1e-12)
    assert out["decode_tokens_per_s_replica"] == pytest.approx(32 / max(t_mem, t_comp), rel=1e-12)
    # capacity: (80 - 2P/1e9 - 2) GB over the full-context KV of one sequence
    free = 80 - 2 * P / 1e9 - 2
    assert out["max_batch_per_replica"] == math.floor(free / (kv_tok * 2560 / 1e9))
    assert out["spec_speedup_x"] == 1.0


def test_speculative_and_tp_sharding():
    ctx = _ctx(spec_draft_tokens=5, spec_accept_rate=0.8, spec_draft_params=68e6, tp=2, replicas=3)
    out = inference.compute(ctx)
    e = (1 - 0.8**6) / 0.2
    assert out["spec_expected_tokens_per_step"] == pytest.approx(e)
    assert out["spec_speedup_x"] == pytest.approx(e / (1 + 5 * 68e6 / ctx.q["params_total"]))
    assert out["infer_num_gpus"] == 6
    assert out["decode_tokens_per_s_total"] == pytest.approx(3 * out["decode_tokens_per_s_replica"])
