"""Op-level selective activation checkpointing (training.recompute: op_selective, torchtitan's per-op SAC)
and the caching allocator's reserve (issue 21 items 8 and 11).

Unit checks against torchtitan's policy (``_save_list``, "saves output of all compute ops, except every
second mm") and hypothesis properties: memory never falls as the micro-batch grows; op_selective keeps
between full recompute and none; more recompute (none <= op_selective <= full) never lowers the step time.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from workbook import calc
from workbook.catalog import load_catalog
from workbook.catalog.frameworks import shipped_frameworks
from workbook.errors import InputError
from workbook.reference import activations as ra
from workbook.reference import step_time as stm
from workbook.scenario.model import Scenario
from workbook.scenario.resolve import resolve
from workbook.units import GB

CAT = load_catalog()
#: dense GQA/MHA models (op_selective is refused for MoE and MLA models)
DENSE = ["llama-3-8b", "llama-3-70b", "llama-13b", "gpt-3-175b", "qwen-2.5-7b"]
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
L3_8B = dict(d_model=4096, n_heads=32, n_kv_heads=8, head_dim=128, d_ff=14336, ffn="swiglu")


def test_llama3_block_saves_every_other_matmul_in_forward_order():
    mms = ra.op_sac_matmuls(**L3_8B)
    assert [m["name"] for m in mms] == ["q", "k", "v", "o", "gate", "up", "down"]
    assert [m["name"] for m in mms if m["saved"]] == ["q", "v", "gate", "down"]
    # (wk + wo + w3) / all, in weight elements: (1024 + 4096 + 14336) / (2 x (4096 + 1024) + 3 x 14336)
    frac = (1024 + 4096 + 14336) / (2 * (4096 + 1024) + 3 * 14336)
    assert ra.op_sac_gemm_recompute_frac(**L3_8B) == pytest.approx(frac) == pytest.approx(0.3654, abs=1e-4)


def test_gelu_mha_block_recomputes_half_the_matmul_flops():
    # q k v o fc1 fc2: k, o, fc2 recomputed = (d + d + 4d) / (4d + 8d)
    assert ra.op_sac_gemm_recompute_frac(d_model=1024, n_heads=16, d_ff=4096, ffn="gelu") == pytest.approx(0.5)


def test_llama3_layer_keeps_the_saved_outputs():
    tokens = 8192 * 2
    kept = ra.layer_activation_bytes(seq_len=8192, micro_batch=2, norm="rmsnorm", flash_attention=True,
                                     dropout=False, recompute="op_selective", **L3_8B)
    # layer input, Q, V, attention output, gate, down output (2 B each) + the fp32 LSE of 32 heads
    assert kept == pytest.approx(tokens * (2 * (4096 + 4096 + 1024 + 4096 + 14336 + 4096) + 4 * 32))


def test_mla_and_moe_layers_are_refused():
    for m in ("deepseek-v3", "mixtral-8x7b"):
        shape = ra.layer_shape_from_model(CAT.model(m), moe_layer=True)
        with pytest.raises(ValueError, match="op_selective"):
            ra.layer_saved_tensors(seq_len=1024, micro_batch=1, **shape, recompute="op_selective")


@pytest.mark.parametrize("model", ["mixtral-8x7b", "deepseek-v3", "deepseek-v2"])
def test_scenario_refuses_op_selective_for_moe_or_mla(model):
    sc = Scenario(name="x", model=model, gpu="h100",
                  training={"num_gpus": 16, "tp": 2, "recompute": "op_selective"})
    with pytest.raises(InputError) as err:
        resolve(sc, CAT)
    assert err.value.field == "training.recompute"
    assert "none" in err.value.expected and "full" in err.value.expected


def _scenario(model: str, **training) -> Scenario:
    base = {"num_gpus": 16, "tp": 1, "micro_batch": 1, "seq_len": 4096, "zero_stage": 3, "memory_model": "tensors"}
    return Scenario(name="op", model=model, gpu="h100", training={**base, **training})


def test_calc_layer_matches_the_reference_and_the_allocator_reserve():
    sc = _scenario("llama-3-8b", recompute="op_selective", tp=2, framework="fsdp2_eager")
    r = calc.compute(sc, CAT)
    shape = ra.layer_shape_from_model(CAT.model("llama-3-8b"), moe_layer=False)
    ref = ra.layer_activation_bytes(seq_len=4096, micro_batch=1, tp=2, sequence_parallel=True,
                                    flash_attention=True, dropout=False, recompute="op_selective", **shape)
    assert r["act_op_sac_layer_GB"] == pytest.approx(ref / GB)
    assert r["act_dense_layer_GB"] == r["act_op_sac_layer_GB"]
    reserve = shipped_frameworks()["fsdp2_eager"].allocator_reserve_frac
    assert r["state_allocated_per_gpu_GB"] == pytest.approx(r["state_total_per_gpu_GB"] - r["train_overhead_GB"])
    assert r["state_reserved_per_gpu_GB"] == pytest.approx(r["state_allocated_per_gpu_GB"] * (1 + reserve))
    assert r["zero_device_need_GB"] > r["state_total_per_gpu_GB"]
    assert r["zero_device_fits_flag"] == (r["zero_device_need_GB"] <= r["zero_hbm_device_GB"])
    assert r["st_recompute_gemm_frac"] == pytest.approx(ra.op_sac_gemm_recompute_frac(**L3_8B))
    assert r["st_tp_collectives"] == 5


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(DENSE), zero=st.sampled_from([0, 1, 3]), tp=st.sampled_from([1, 2, 8]),
       mb=st.sampled_from([1, 2, 4]))
def test_op_selective_memory_never_falls_as_the_micro_batch_grows(model, zero, tp, mb):
    def mem(b: int) -> dict[str, float]:
        return calc.compute(_scenario(model, recompute="op_selective", tp=tp, micro_batch=b, zero_stage=zero), CAT)

    small, big = mem(mb), mem(2 * mb)
    for key in ("zero_total_per_gpu_GB", "state_reserved_per_gpu_GB", "zero_device_need_GB"):
        assert big[key] >= small[key], key


@SETTINGS
@given(model=st.sampled_from(DENSE), seq=st.sampled_from([1024, 4096, 8192]), mb=st.sampled_from([1, 2, 4]),
       flash=st.booleans(), dropout=st.booleans())
def test_op_selective_layer_keeps_between_full_and_none(model, seq, mb, flash, dropout):
    """Without TP (torchtitan's FSDP runs). Under TP it can keep more than no recompute: it saves the down
    projection's tokens x d partial sums on every rank (docs/activations.md)."""
    shape = ra.layer_shape_from_model(CAT.model(model), moe_layer=False)
    kw = dict(seq_len=seq, micro_batch=mb, flash_attention=flash, dropout=dropout, **shape)
    full, op, none = (ra.layer_activation_bytes(**kw, recompute=r) for r in ("full", "op_selective", "none"))
    assert full <= op <= none


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(DENSE), mb=st.sampled_from([1, 2]), zero=st.sampled_from([1, 3]))
def test_op_selective_memory_per_gpu_between_full_and_none(model, mb, zero):
    tot = {r: calc.compute(_scenario(model, recompute=r, micro_batch=mb, zero_stage=zero, num_gpus=64), CAT)
           for r in ("full", "op_selective", "none")}
    for key in ("state_act_per_gpu_GB", "zero_total_per_gpu_GB", "state_reserved_per_gpu_GB"):
        assert tot["full"][key] <= tot["op_selective"][key] <= tot["none"][key], key


@SETTINGS
@given(model=st.sampled_from(DENSE), gpu=st.sampled_from(["a100-80gb", "h100", "h200"]),
       tp=st.sampled_from([1, 2, 8]), pp=st.sampled_from([1, 2]), mb=st.sampled_from([1, 2]),
       seq=st.sampled_from([2048, 8192]), kernel=st.sampled_from(["flash", "unfused"]),
       zero=st.sampled_from([1, 3]), dp=st.sampled_from([1, 8]), overlap=st.sampled_from([0.0, 0.5]))
def test_more_recompute_never_lowers_the_step_time(model, gpu, tp, pp, mb, seq, kernel, zero, dp, overlap):
    m = CAT.model(model)
    assume(m.n_heads % tp == 0 and m.layers % pp == 0)
    kw = dict(stm.arch_from_model(m), tp=tp, pp=pp, micro_batch=mb, seq_len=seq, attention_kernel=kernel,
              tp_overlap_frac=overlap,
              **stm.hardware_from_catalog(gpu=CAT.gpu(gpu), efficiency=CAT.efficiency_of(gpu)))
    steps = [stm.step_time(dp=dp, micro_batches=4, zero_stage=zero, recompute=r, **kw)["step_s"]
             for r in ("none", "op_selective", "full")]
    assert steps[0] <= steps[1] * (1 + 1e-12) and steps[1] <= steps[2] * (1 + 1e-12)
