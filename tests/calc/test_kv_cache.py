"""calc.kv_cache on LLaMA-7B / H800 (spec 17.4.9-17.4.12)."""

from types import SimpleNamespace

import pytest

from tests.calc.part_a_context import LLAMA7B, make_context, run


def test_defaults_batch32():
    q = run(make_context(), "kv_cache")
    assert q["kv_per_token_bytes"] == 2 * 32 * 4096 * 2
    assert q["kv_context_tokens"] == 2560
    assert q["kv_cache_GB"] == pytest.approx(32 * 2560 * 524288 / 1e9)
    assert q["infer_weights_GB"] == pytest.approx(2 * 6_738_415_616 / 1e9)
    assert q["infer_per_gpu_GB"] == pytest.approx(q["infer_weights_GB"] + q["kv_cache_GB"] + 2)
    assert q["infer_fits_flag"] == 1
    assert q["infer_min_tp_fit"] == 1
    assert q["kv_vs_mha_frac"] == 1


def test_int4_tp2_and_mla():
    q = run(make_context(inference={"weight_precision": "int4", "kv_precision": "fp8", "tp": 2}), "kv_cache")
    assert q["infer_weights_per_gpu_GB"] == pytest.approx(0.55 * 6_738_415_616 / 1e9 / 2)
    assert q["kv_per_token_bytes"] == 2 * 32 * 4096
    mla = SimpleNamespace(**{**vars(LLAMA7B), "attention": "mla", "q_lora_rank": 1536, "kv_lora_rank": 512,
                             "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128})
    q = run(make_context(model=mla, inference={"tp": 4}), "kv_cache")
    assert q["kv_per_token_bytes"] == 32 * 576 * 2
    assert q["infer_kv_shard_divisor"] == 1
