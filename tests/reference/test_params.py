"""Unit tests for workbook.reference.params (spec 17.2)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbook.reference import params as p


def _dense(**kw):
    base = dict(layers=32, d_model=4096, d_ff=11008, n_heads=32, n_kv_heads=32, head_dim=128, vocab=32000,
                tied_embeddings=False, ffn="swiglu", attention="mha", qkv_bias=False, norm="rmsnorm",
                norm_params_per_layer=8192, moe=False, q_lora_rank=None, kv_lora_rank=None,
                qk_rope_head_dim=None, qk_nope_head_dim=None, v_head_dim=None, n_routed_experts=None,
                top_k=None, n_shared_experts=None, expert_d_ff=None, n_dense_layers=None, dense_d_ff=None)
    base.update(kw)
    return SimpleNamespace(**base)


LLAMA7B = _dense()
DEEPSEEK_V3 = _dense(layers=61, d_model=7168, d_ff=18432, n_heads=128, n_kv_heads=128, head_dim=128,
                     vocab=129280, attention="mla", norm_params_per_layer=2 * 7168, q_lora_rank=1536,
                     kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, moe=True,
                     n_routed_experts=256, top_k=8, n_shared_experts=1, expert_d_ff=2048, n_dense_layers=3,
                     dense_d_ff=18432)
DEEPSEEK_V2 = _dense(layers=60, d_model=5120, d_ff=12288, n_heads=128, n_kv_heads=128, head_dim=128,
                     vocab=102400, attention="mla", norm_params_per_layer=2 * 5120, q_lora_rank=1536,
                     kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, moe=True,
                     n_routed_experts=160, top_k=6, n_shared_experts=2, expert_d_ff=1536, n_dense_layers=1,
                     dense_d_ff=12288)
PUBLISHED = {
    "llama3-8b": (_dense(d_ff=14336, n_kv_heads=8, vocab=128256), 8.03e9, None),
    "llama3-70b": (_dense(layers=80, d_model=8192, d_ff=28672, n_heads=64, n_kv_heads=8, vocab=128256,
                          norm_params_per_layer=2 * 8192), 70.55e9, None),
    "llama31-405b": (_dense(layers=126, d_model=16384, d_ff=53248, n_heads=128, n_kv_heads=8, vocab=128256,
                            norm_params_per_layer=2 * 16384), 405.85e9, None),
    "qwen25-7b": (_dense(layers=28, d_model=3584, d_ff=18944, n_heads=28, n_kv_heads=4, vocab=152064,
                         qkv_bias=True, norm_params_per_layer=2 * 3584), 7.62e9, None),
    "qwen25-72b": (_dense(layers=80, d_model=8192, d_ff=29568, n_heads=64, n_kv_heads=8, vocab=152064,
                          qkv_bias=True, norm_params_per_layer=2 * 8192), 72.71e9, None),
    "mistral-7b": (_dense(d_ff=14336, n_kv_heads=8), 7.24e9, None),
    "mixtral-8x7b": (_dense(d_ff=14336, n_kv_heads=8, moe=True, n_routed_experts=8, top_k=2, n_shared_experts=0,
                            expert_d_ff=14336, n_dense_layers=0), 46.70e9, 12.88e9),
    "deepseek-v2": (DEEPSEEK_V2, 235.7e9, 21.4e9),
    "deepseek-v3": (DEEPSEEK_V3, 671e9, 37.6e9),
    "gemma2-27b": (_dense(layers=46, d_model=4608, d_ff=36864, n_heads=32, n_kv_heads=16, head_dim=128,
                          vocab=256000, tied_embeddings=True, ffn="geglu", norm_params_per_layer=4 * 4608),
                   27.23e9, None),
    "gpt2-small": (_dense(layers=12, d_model=768, d_ff=3072, n_heads=12, n_kv_heads=12, head_dim=64, vocab=50257,
                          tied_embeddings=True, ffn="gelu", qkv_bias=True, norm="layernorm",
                          norm_params_per_layer=4 * 768), 124e6, None),
}


def test_llama7b_exact_with_final_norm():
    c = p.model_param_counts(LLAMA7B)
    assert c["params_total"] == 6_738_415_616
    assert c["params_active"] == c["params_total"]
    assert c["params_embedding"] == 262_144_000
    assert c["params_non_embedding"] == c["params_total"] - 262_144_000
    assert c["params_attention"] + c["params_ffn"] + c["params_norm"] == c["params_non_embedding"]


def test_deepseek_v3_exact():
    c = p.model_param_counts(DEEPSEEK_V3)
    assert c["params_total"] == 671_026_404_352
    assert c["params_active"] == 37_552_282_624


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_counts_within_2pct(name):
    m, total, active = PUBLISHED[name]
    c = p.model_param_counts(m)
    assert c["params_total"] == pytest.approx(total, rel=0.02)
    if active is not None:
        assert c["params_active"] == pytest.approx(active, rel=0.02)


def test_book_dense_formula_llama7b():
    r = p.dense_params(layers=32, d_model=4096, d_ff=11008, vocab=32000, tied=False)
    assert r["per_layer"] == 202_383_360
    assert r["params_total"] == 6_738_411_520
    assert p.params_12Ld2(layers=32, d_model=4096) == 6_442_450_944


def test_gqa_saving_and_kv_share():
    assert p.gqa_saving_params(d_model=4096, n_kv_heads=8, head_dim=128) == 1.5 * 4096**2
    assert p.kv_projection_params(d_model=8192, n_kv_heads=8, head_dim=128) == 16_777_216
    assert p.vocab_share_frac(vocab=50000, d_model=512, params_total=80e6) == pytest.approx(0.32)


def test_moe_top_k_too_large():
    with pytest.raises(ValueError):
        p.moe_params(moe_layers=1, d_model=8, expert_d_ff=8, n_experts=2, top_k=3)


@settings(max_examples=200, deadline=None)
@given(
    layers=st.integers(1, 128), d=st.integers(1, 64).map(lambda x: 64 * x), heads=st.sampled_from([1, 2, 4, 8, 16]),
    n=st.integers(1, 256), k_frac=st.floats(0, 1), shared=st.integers(0, 4), dense=st.integers(0, 3),
    eff=st.integers(1, 64).map(lambda x: 64 * x), vocab=st.integers(1, 300_000), tied=st.booleans(),
)
def test_moe_active_never_exceeds_total(layers, d, heads, n, k_frac, shared, dense, eff, vocab, tied):
    k = max(1, int(round(k_frac * n)))
    m = _dense(layers=layers + dense, d_model=d, d_ff=4 * d, n_heads=heads, n_kv_heads=1, head_dim=d // heads,
               vocab=vocab, tied_embeddings=tied, norm_params_per_layer=2 * d, moe=True, n_routed_experts=n,
               top_k=k, n_shared_experts=shared, expert_d_ff=eff, n_dense_layers=dense)
    c = p.model_param_counts(m)
    assert 0 < c["params_active"] <= c["params_total"]
    assert all(v >= 0 for v in c.values())
    if k == n:
        assert c["params_active"] == c["params_total"]
