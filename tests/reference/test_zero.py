"""Unit tests for workbook.reference.zero (spec 17.4.8) and ZeRO-3 memory as the allocator sees it:
DeepSpeed's estimator (deepspeed/runtime/zero/stage3.py ``estimate_zero3_model_states_mem_needs``,
docs/code-docs/source/memory.rst), the tensor model's gathered layer (workbook.reference.sharded_state)
and the fit against the device's bytes."""

import math
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbook.catalog import load_catalog
from workbook.reference import sharded_state as ss
from workbook.reference import zero as zr
from workbook.units import GiB

CATALOGUE = load_catalog()


def test_table17_46_corrected():
    assert zr.zero_per_gpu_GB(params=6.74e9, stage=1, n=8) == pytest.approx(37.07)
    assert zr.zero_per_gpu_GB(params=6.74e9, stage=2, n=8) == pytest.approx(25.275)
    assert zr.zero_per_gpu_GB(params=6.74e9, stage=3, n=8) == pytest.approx(13.48)
    assert zr.zero_sharded_slice_GB(params=6.74e9, stage=1, n=8) == pytest.approx(10.11)
    assert zr.zero3_traffic_GB(params=6.74e9) == pytest.approx(40.44)
    with pytest.raises(ValueError):
        zr.zero_per_gpu_GB(params=1, stage=4, n=1)


@given(p=st.floats(1e6, 1e13), n=st.integers(1, 100_000), w=st.floats(0, 8), g=st.floats(0, 8), o=st.floats(0, 16),
       mp=st.integers(1, 512))
def test_each_stage_needs_no_more_than_previous(p, n, w, g, o, mp):
    mem = [zr.zero_per_gpu_GB(params=p, stage=s, n=n, weight_bytes=w, grad_bytes=g, optimizer_bytes=o,
                              model_parallel=mp) for s in zr.STAGES]
    assert all(math.isfinite(m) and m >= 0 for m in mem)
    for a, b in zip(mem, mem[1:]):
        assert b <= a * (1 + 1e-12)


# --------------------------------------------------------------------------- ZeRO-3 working set (DeepSpeed)
LLAMA3_70B_PARAMS = 70_553_706_496  # Hugging Face meta-llama/Meta-Llama-3-70B
LLAMA3_EMBEDDING = 128_256 * 8_192


def test_deepspeed_estimator_llama3_70b_on_64_gpus():
    """gpu_mem = 4 x largest_layer_params + int(18 x total_params / total_gpus): 24.05e9 B, which
    the estimator prints as '22.39GB' (bytes / 2**30)."""
    b = zr.deepspeed_zero3_gpu_bytes(total_params=LLAMA3_70B_PARAMS, largest_layer_params=LLAMA3_EMBEDDING,
                                     total_gpus=64)
    assert b == 24_045_922_560
    assert round(b / GiB, 2) == 22.39


def test_deepspeed_docs_t5_3b_cold_example():
    """memory.rst: estimate_zero3_model_states_mem_needs_all_cold(total_params=2851e6,
    largest_layer_params=32e6, num_gpus_per_node=8) prints 6.09GB per GPU with offload none."""
    b = zr.deepspeed_zero3_gpu_bytes(total_params=2851e6, largest_layer_params=32e6, total_gpus=8)
    assert f"{b / 2**30:6.2f}" == "  6.09"


def test_llama3_70b_model_states_equal_deepspeed():
    m = CATALOGUE.model("llama-3-70b")
    r = ss.model_state_per_gpu(m, num_gpus=64, zero_stage=3, recipe="bf16_fp32_grads")
    assert r["total_bytes"] == pytest.approx(18 * LLAMA3_70B_PARAMS / 64)  # the spec's plain (w + g + o)/N
    assert r["zero3_layer_params"] == LLAMA3_EMBEDDING  # the embedding outweighs a block (0.86B)
    assert r["model_states_bytes"] == pytest.approx(24_045_922_560)
    assert r["model_states_GB"] == pytest.approx(24.05, abs=0.005)
    # at the 16-byte ledger (BF16 gradients) the plain figure is the 17.6 GB the book formula gives
    assert ss.model_state_per_gpu(m, num_gpus=64, zero_stage=3, recipe="bf16_bf16_grads")["total_GB"] == \
        pytest.approx(17.64, abs=0.005)


@pytest.mark.parametrize("stage", [0, 1, 2])
def test_no_working_set_below_zero3(stage):
    r = ss.model_state_per_gpu(CATALOGUE.model("llama-3-70b"), num_gpus=64, zero_stage=stage)
    assert r["zero3_working_bytes"] == 0 and r["model_states_bytes"] == r["total_bytes"]


def test_gathered_layer_is_a_block_when_it_outweighs_the_embedding():
    """Llama 3.1 405B: one block (3.2B) > the embedding (2.1B); with TP 8 it is split over TP."""
    m = CATALOGUE.model("llama-3.1-405b")
    c = ss.sharding_param_counts(m)
    block = ss.block_params_per_gpu(c, moe_layer=False, tp=8)
    assert block > c["embedding"] / 8
    r = ss.model_state_per_gpu(m, num_gpus=1024, tp=8, pp=8, zero_stage=3)
    assert all(s["zero3_layer_params"] == pytest.approx(block) for s in r["per_stage"])


def test_moe_block_holds_this_gpus_experts_only():
    m = CATALOGUE.model("deepseek-v3")
    c = ss.sharding_param_counts(m)
    one = ss.block_params_per_gpu(c, moe_layer=True, tp=1, ep=1)
    ep64 = ss.block_params_per_gpu(c, moe_layer=True, tp=1, ep=64)
    assert one - ep64 == pytest.approx(c["routed_experts_per_moe_layer"] * (1 - 1 / 64))


def test_tied_head_on_one_stage_is_the_embedding():
    c = ss.sharding_param_counts(SimpleNamespace(
        layers=2, d_model=64, d_ff=256, n_heads=4, n_kv_heads=4, head_dim=16, vocab=50_000, ffn="gelu",
        norm="layernorm", attention="mha", moe=False, tied_embeddings=True, qkv_bias=False))
    one = ss.gathered_layer_params(c, first_layer=0, n_layers=2, first_stage=True, last_stage=True, pp=1)
    last = ss.gathered_layer_params(c, first_layer=1, n_layers=1, first_stage=False, last_stage=True, pp=2)
    assert one == last == c["embedding"]


# --------------------------------------------------------------------------- properties

@settings(max_examples=120, deadline=None)
@given(mid=st.sampled_from(sorted(CATALOGUE.models)), tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4]),
       dp=st.integers(1, 64), more=st.integers(1, 8), recipe=st.sampled_from(sorted(ss.PRECISION_RECIPES)))
def test_more_gpus_never_raise_zero3_state_per_gpu(mid, tp, pp, dp, more, recipe):
    """More data-parallel GPUs (same TP x PP) shard the state thinner; the gathered layer does not grow."""
    m = CATALOGUE.model(mid)
    kw = dict(tp=tp, pp=pp, zero_stage=3, recipe=recipe)
    a = ss.model_state_per_gpu(m, num_gpus=tp * pp * dp, **kw)
    b = ss.model_state_per_gpu(m, num_gpus=tp * pp * dp * more, **kw)
    assert b["model_states_bytes"] <= a["model_states_bytes"] * (1 + 1e-12)
    assert b["zero3_layer_params"] == a["zero3_layer_params"]


@settings(max_examples=200, deadline=None)
@given(need=st.floats(1, 300), mib=st.sampled_from([g.hbm_device_MiB for g in CATALOGUE.gpus.values()]),
       frac=st.floats(0.5, 1.0), lower=st.floats(0.0, 0.5))
def test_smaller_allocatable_fraction_never_turns_a_fail_into_a_pass(need, mib, frac, lower):
    low = max(0.5, frac - lower)
    cap, cap_low = (zr.device_capacity_GB(hbm_device_MiB=mib, allocatable_frac=f) for f in (frac, low))
    assert cap_low <= cap
    if not zr.fits(need_GB=need, capacity_GB=cap):
        assert not zr.fits(need_GB=need, capacity_GB=cap_low)


def test_h100_device_bytes_exceed_the_80_GB_label():
    cap = zr.device_capacity_GB(hbm_device_MiB=CATALOGUE.gpu("h100").hbm_device_MiB, allocatable_frac=1.0)
    assert cap == pytest.approx(85.52, abs=0.005)
    with pytest.raises(ValueError):
        zr.device_capacity_GB(hbm_device_MiB=81559, allocatable_frac=0)
