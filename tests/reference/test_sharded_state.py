"""Tests for workbook.reference.sharded_state: Megatron's bytes per parameter, dense vs expert
sharding, Korthikanti Figure 1's weights + optimizer per GPU, DeepSeek-V3 on 2,048 H800 and
monotonicity properties.

Korthikanti et al. 2022 Figure 1, "parameters and optimizer state" per GPU (GiB; Calculon's
validation.py transcription), fp16 weights + fp32 main grads + fp32 master, m, v = 18 B/param, no
distributed optimizer:

| model | layout      | published | ours, middle stage | err    | ours, embedding stage | err   |
|-------|-------------|-----------|--------------------|--------|-----------------------|-------|
| 22B   | TP8 PP1     | 45.56     | (PP 1: one stage)  |        | 46.24                 | +1.5% |
| 175B  | TP8 PP8     | 45.56     | 45.57              | +0.02% | 46.89                 | +2.9% |
| 530B  | TP8 PP35    | 31.64     | 31.65              | +0.01% | 33.84                 | +7.0% |
| 1T    | TP8 PP64    | 32.96     | 32.96              | +0.01% | 35.71                 | +8.4% |

The published values equal 18 B × 12h²L/(t·p): a stage without the embedding.
"""

import math
from types import SimpleNamespace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbook.catalog import load_catalog
from workbook.reference import activations as act
from workbook.reference import sharded_state as ss
from workbook.reference.params import model_param_counts
from workbook.reference.train_memory import DEFAULT_OVERHEAD_GB
from workbook.units import GB

CATALOGUE = load_catalog()


def gpt(layers, d, heads):
    return SimpleNamespace(layers=layers, d_model=d, d_ff=4 * d, n_heads=heads, n_kv_heads=heads,
                           head_dim=d // heads, vocab=51200, ffn="gelu", norm="layernorm",
                           attention="mha", moe=False, tied_embeddings=True, qkv_bias=False,
                           norm_params_per_layer=4 * d)


#: name -> (model, GPUs, TP, PP, published GiB)
FIG1_STATE = {
    "22B": (gpt(48, 6144, 64), 8, 8, 1, 45.5625),
    "175B": (gpt(96, 12288, 96), 64, 8, 8, 45.5625),
    "530B": (gpt(105, 20480, 128), 280, 8, 35, 31.640625),
    "1T": (gpt(128, 25600, 160), 512, 8, 64, 32.958984375),
}


# --------------------------------------------------------------------------- bytes per parameter
def test_megatron_dist_optimizer_table():
    """docs/user-guide/features/dist_optimizer.md: 20 / 18 / 16 and 4+16/d, 6+12/d, 8+8/d."""
    for recipe, full, fixed, sharded in (("fp16_fp16_grads", 20, 4, 16), ("bf16_fp32_grads", 18, 6, 12),
                                         ("fp32", 16, 8, 8)):
        assert ss.state_bytes_per_param(recipe=recipe) == full
        for d in (1, 8, 64):
            assert ss.state_bytes_per_param(recipe=recipe, zero_stage=1, shard_degree=d) == \
                pytest.approx(fixed + sharded / d)
    assert ss.state_bytes_per_param(recipe="bf16_bf16_grads") == 16  # the book's ledger
    assert ss.state_bytes_per_param(recipe="deepseek_v3") == 14


def test_zero_stages():
    """ZeRO-2 also shards gradients, ZeRO-3 the weights (Rajbhandari et al. 2020)."""
    d = 8
    assert ss.state_bytes_per_param(recipe="bf16_bf16_grads", zero_stage=2, shard_degree=d) == 2 + 14 / d
    assert ss.state_bytes_per_param(recipe="bf16_bf16_grads", zero_stage=3, shard_degree=d) == 16 / d
    c = ss.state_components_bytes_per_param(recipe="bf16_fp32_grads", zero_stage=1, shard_degree=4)
    assert (c["weights_group"], c["grads_group"], c["optimizer_group"]) == (2, 4, 3)
    with pytest.raises(ValueError):
        ss.state_bytes_per_param(zero_stage=4)
    with pytest.raises(ValueError):
        ss.state_bytes_per_param(recipe="fp64")
    with pytest.raises(ValueError):
        ss.state_bytes_per_param(recipe={"momentum": 4})


def test_group_sizes():
    assert ss.dense_data_parallel(num_gpus=2048, tp=1, pp=16) == 128
    assert ss.expert_data_parallel(num_gpus=2048, pp=16, ep=64) == 2  # = DP·CP/EP
    assert ss.expert_data_parallel(num_gpus=1024, pp=8, ep=64, etp=1) == 2
    with pytest.raises(ValueError):
        ss.dense_data_parallel(num_gpus=100, tp=8, pp=1)
    with pytest.raises(ValueError):
        ss.expert_data_parallel(num_gpus=64, pp=8, ep=16)


@pytest.mark.parametrize("mid", sorted(CATALOGUE.models))
def test_split_counts_sum_to_model_total(mid):
    m = CATALOGUE.model(mid)
    c = ss.sharding_param_counts(m)
    assert ss.sharding_params_total(c) == pytest.approx(model_param_counts(m)["params_total"], rel=1e-12)


def test_pipeline_stages_cover_the_model_once():
    m = CATALOGUE.model("deepseek-v3")
    c = ss.sharding_param_counts(m)
    counts = act.stage_layer_counts(layers=61, pp=16)
    starts = [sum(counts[:i]) for i in range(16)]
    parts = [ss.stage_params(counts=c, first_layer=starts[i], n_layers=counts[i], first_stage=i == 0,
                             last_stage=i == 15, pp=16) for i in range(16)]
    total = sum(p["tp_sharded"] + p["replicated"] + p["expert"] for p in parts)
    assert total == pytest.approx(ss.sharding_params_total(c))


def test_tied_embedding_copy_on_last_stage():
    m = gpt(8, 1024, 16)
    first = ss.model_state_per_gpu(m, num_gpus=2, pp=2, stage=0)
    last = ss.model_state_per_gpu(m, num_gpus=2, pp=2, stage=1)
    assert first["dense_params"] == pytest.approx(last["dense_params"] - 1024 * 2)  # final LayerNorm
    one = ss.model_state_per_gpu(m, num_gpus=1)
    assert one["dense_params"] == pytest.approx(model_param_counts(m)["params_total"])


# --------------------------------------------------------------------------- Korthikanti Figure 1
@pytest.mark.parametrize("name", sorted(FIG1_STATE))
def test_figure1_weights_and_optimizer(name):
    m, n, tp, pp, pub = FIG1_STATE[name]
    most = ss.model_state_per_gpu(m, num_gpus=n, tp=tp, pp=pp, recipe="bf16_fp32_grads")
    assert abs(most["total_GiB"] - pub) / pub < 0.10, f"{name}: published {pub}, ours {most['total_GiB']:.2f}"
    if pp > 1:
        mid = ss.model_state_per_gpu(m, num_gpus=n, tp=tp, pp=pp, stage=pp // 2)
        assert abs(mid["total_GiB"] - pub) / pub < 1e-3, f"{name}: published {pub}, ours {mid['total_GiB']:.3f}"


# --------------------------------------------------------------------------- DeepSeek-V3
DSV3 = dict(num_gpus=2048, tp=1, pp=16, ep=64, zero_stage=1, recipe="deepseek_v3")
EXPERT = 3 * 7168 * 2048  # one SwiGLU expert


def test_deepseek_v3_state_shards_experts_over_ep():
    """PP16 × EP64, ZeRO-1: DP = 128, expert-DP = 2. DualPipe rank 0 holds stages 0 (3 dense layers
    + 1 MoE, embedding) and 15 (3 MoE layers, output head): 4 MoE layers × 256/64 experts."""
    m = CATALOGUE.model("deepseek-v3")
    r = ss.model_state_per_gpu(m, **DSV3, dualpipe=True, stage=0)
    assert (r["dp"], r["edp"]) == (128, 2)
    assert r["expert_params"] == 4 * 4 * EXPERT
    assert r["expert_bytes"] == pytest.approx(4 * 4 * EXPERT * (2 + 4 + 8 / 2))
    worst = ss.model_state_per_gpu(m, **DSV3, dualpipe=True)
    assert worst["total_GB"] < 40
    # without EP sharding the experts alone would not fit
    assert ss.model_state_per_gpu(m, **{**DSV3, "ep": 1}, dualpipe=True)["total_GB"] > 80


def test_deepseek_v3_fits_80GB_h800():
    """2,048 H800 (80 GB), PP16 × EP64, ZeRO-1, DualPipe, micro-batch 1 × 4096 tokens, TP 1, no
    dropout, FlashAttention, with the report's memory measures (§3.2.3 recompute RMSNorm and the MLA
    up-projection; §3.3.2 FP8-cached Linear inputs and SwiGLU inputs, SwiGLU output recomputed =
    Megatron's layernorm, mla_up_proj and moe_act modules): state + activations + 2 GB overhead fit
    on every rank. Without those measures (plain selective recompute) they would not."""
    m = CATALOGUE.model("deepseek-v3")
    hbm = CATALOGUE.gpu("h800").hbm_GB * GB
    state = ss.model_state_per_gpu(m, **DSV3, dualpipe=True)["per_stage"]
    kw = dict(seq_len=4096, micro_batch=1, tp=1, pp=16, schedule="dualpipe", flash_attention=True,
              dropout=False)
    ds = act.activations_per_gpu(m, **kw, recompute="selective",
                                 recompute_modules={"layernorm", "mla_up_proj", "moe_act"},
                                 linear_input_bytes=1, expert_act_input_bytes=1)["per_stage"]
    totals = [s["total_bytes"] + a["peak_bytes"] + DEFAULT_OVERHEAD_GB * GB for s, a in zip(state, ds)]
    assert max(totals) < hbm, f"{max(totals) / GB:.1f} GB"
    plain = act.activations_per_gpu(m, **kw, recompute="selective")["per_stage"]
    assert max(s["total_bytes"] + a["peak_bytes"] for s, a in zip(state, plain)) > hbm


# --------------------------------------------------------------------------- properties
MOE_IDS = sorted(k for k, v in CATALOGUE.models.items() if v.moe)


@settings(max_examples=150, deadline=None)
@given(mid=st.sampled_from(MOE_IDS), ep_exp=st.integers(0, 5), zero=st.sampled_from(ss.ZERO_STAGES),
       pp=st.sampled_from([1, 2, 4]), tp=st.sampled_from([1, 2]), dual=st.booleans(),
       recipe=st.sampled_from(sorted(ss.PRECISION_RECIPES)))
def test_more_ep_never_raises_expert_memory(mid, ep_exp, zero, pp, tp, dual, recipe):
    m = CATALOGUE.model(mid)
    ep = 2 ** ep_exp
    assume(m.n_routed_experts % (2 * ep) == 0)
    n = tp * pp * 64
    kw = dict(num_gpus=n, tp=tp, pp=pp, zero_stage=zero, recipe=recipe, dualpipe=dual)
    a = ss.model_state_per_gpu(m, ep=ep, **kw)
    b = ss.model_state_per_gpu(m, ep=2 * ep, **kw)
    for sa, sb in zip(a["per_stage"], b["per_stage"]):
        assert sb["expert_bytes"] <= sa["expert_bytes"] * (1 + 1e-12)
        assert sb["total_bytes"] <= sa["total_bytes"] * (1 + 1e-12)
        assert sb["dense_bytes"] == pytest.approx(sa["dense_bytes"])


@settings(max_examples=150, deadline=None)
@given(mid=st.sampled_from(sorted(CATALOGUE.models)), dp=st.sampled_from([1, 2, 8, 64]),
       recipe=st.sampled_from(sorted(ss.PRECISION_RECIPES)))
def test_higher_zero_stage_never_raises(mid, dp, recipe):
    m = CATALOGUE.model(mid)
    vals = [ss.model_state_per_gpu(m, num_gpus=dp, zero_stage=z, recipe=recipe)["total_bytes"]
            for z in ss.ZERO_STAGES]
    assert all(math.isfinite(v) and v > 0 for v in vals)
    assert all(b <= a * (1 + 1e-12) for a, b in zip(vals, vals[1:]))


# --------------------------------------------------------------------------- memo and shared holdings
def test_bytes_per_param_memo_key_is_complete():
    """The memoised bytes per parameter follow every input: recipe name or items, stage, degree."""
    base = ss.state_components_bytes_per_param(recipe="bf16_fp32_grads", zero_stage=1, shard_degree=8)
    assert base["total"] == pytest.approx(6 + 12 / 8)
    assert ss.state_components_bytes_per_param(recipe="deepseek_v3", zero_stage=1, shard_degree=8)["total"] == \
        pytest.approx(6 + 8 / 8)
    assert ss.state_components_bytes_per_param(recipe="bf16_fp32_grads", zero_stage=2, shard_degree=8)["total"] == \
        pytest.approx(2 + 16 / 8)
    assert ss.state_components_bytes_per_param(recipe="bf16_fp32_grads", zero_stage=1, shard_degree=16)["total"] == \
        pytest.approx(6 + 12 / 16)
    a = {"weights": 2.0, "grads": 4.0, "master": 4.0, "adam_m": 8.0}
    b = {**a, "adam_m": 4.0}
    assert ss.state_components_bytes_per_param(recipe=a, zero_stage=1, shard_degree=8)["total"] == pytest.approx(7.5)
    assert ss.state_components_bytes_per_param(recipe=b, zero_stage=1, shard_degree=8)["total"] == pytest.approx(7)
    # callers get their own copy
    got = ss.state_components_bytes_per_param(recipe=a, zero_stage=1, shard_degree=8)
    got["total"] = -1.0
    assert ss.state_components_bytes_per_param(recipe=a, zero_stage=1, shard_degree=8)["total"] == pytest.approx(7.5)
    with pytest.raises(ValueError, match="unknown recipe"):
        ss.state_components_bytes_per_param(recipe=(("weights", 2.0),), zero_stage=1, shard_degree=8)


@pytest.mark.parametrize("mid, kw", [
    ("llama-3-70b", dict(tp=8, pp=5, cp=2)), ("llama-3-70b", dict(tp=2, pp=1)),
    ("mixtral-8x7b", dict(tp=2, pp=4, ep=4)), ("deepseek-v3", dict(tp=4, pp=8, ep=8, dualpipe=True)),
    ("gpt4-class-moe", dict(tp=4, pp=60, ep=2)),
])
@pytest.mark.parametrize("zero", [0, 1, 3])
def test_shared_holdings_give_the_same_state(mid, kw, zero):
    """stage_holdings computed once and passed in, with ranks that hold the same computed once,
    give the rows a computation from scratch gives, rank by rank."""
    m = CATALOGUE.model(mid)
    dualpipe = kw.pop("dualpipe", False)
    held = ss.stage_holdings(m, tp=kw["tp"], pp=kw["pp"], ep=kw.get("ep", 1), dualpipe=dualpipe)
    for dp in (kw.get("ep", 1), 4 * kw.get("ep", 1)):
        n = kw["tp"] * kw["pp"] * kw.get("cp", 1) * dp
        full = ss.model_state_per_gpu(m, num_gpus=n, zero_stage=zero, dualpipe=dualpipe, **kw)
        assert ss.model_state_per_gpu(m, num_gpus=n, zero_stage=zero, dualpipe=dualpipe, holdings=held, **kw) == full
        deg = ss.shard_degrees(num_gpus=n, **kw)
        rows, index = ss.holding_states(held, dense_shard_degree=deg["dense"], expert_shard_degree=deg["expert"],
                                        zero_stage=zero)
        assert len(index) == kw["pp"] and len(rows) <= min(kw["pp"], 6)  # first, last, dense/MoE boundary
        for r, j in zip(full["per_stage"], index):
            assert {**rows[j], "stage": r["stage"], "stages_held": r["stages_held"]} == r
    with pytest.raises(ValueError, match="holdings must give"):
        ss.model_state_per_gpu(m, num_gpus=kw["tp"] * kw["pp"] * kw.get("cp", 1) * 8, holdings=held[:-1], **kw)


def test_zero3_without_reshard_after_forward_keeps_the_stage_weights_gathered():
    """FSDP reshard_after_forward=False: at the backward's start every layer of the stage is gathered, so the
    working set adds the stage's other weights unsharded (issue 21); at ZeRO 0-2 the flag changes nothing."""
    from workbook.catalog import load_catalog
    from workbook.reference import sharded_state as ss

    m = load_catalog().model("llama-3-8b")
    on = ss.model_state_per_gpu(m, num_gpus=16, zero_stage=3)
    off = ss.model_state_per_gpu(m, num_gpus=16, zero_stage=3, reshard_after_forward=False)
    w = 2.0  # BF16 weights of the default recipe
    extra = (on["dense_params"] + on["expert_params"] - on["zero3_layer_params"]) * w
    assert off["model_states_bytes"] - on["model_states_bytes"] == pytest.approx(extra)
    z1 = [ss.model_state_per_gpu(m, num_gpus=16, zero_stage=1, reshard_after_forward=r)["model_states_bytes"]
          for r in (True, False)]
    assert z1[0] == z1[1]
