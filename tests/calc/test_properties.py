"""Issue 7's properties on what the workbook shows (the scenario-level calculation, every sheet):
more CP or SP never raises activation memory per GPU; more EP never raises expert memory per GPU;
a larger bubble never shortens the step; more micro-batches never enlarge a 1F1B
bubble. The reference functions have their own property tests (tests/reference: activations,
sharded_state, step_time); these check the rows the sheets hold, through the scenario inputs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from workbook.calc import compute
from workbook.catalog import load_catalog
from workbook.scenario.model import Scenario

CATALOG = load_catalog()
TOL = 1 + 1e-12
DENSE = ["llama-3-8b", "llama-3-70b"]
MOE = ["mixtral-8x7b", "deepseek-v2", "qwen3-235b-a22b"]


def _q(model: str, **training) -> dict[str, float]:
    t = dict(tokens=1e12, seq_len=8192, micro_batch=1, grad_accum=16, num_gpus=64, tp=2, pp=2, zero_stage=1,
             time_model="step")
    t.update(training)
    return compute(Scenario(name="p", model=model, gpu="h100", purpose="training", training=t), CATALOG)


def test_models_are_in_the_catalogue():
    assert all(m in CATALOG.models for m in DENSE + MOE)
    assert all(CATALOG.models[m].moe for m in MOE)


@settings(max_examples=20, deadline=None)
@given(model=st.sampled_from(DENSE), cp=st.sampled_from([1, 2, 4]), tp=st.sampled_from([1, 2, 4]),
       recompute=st.sampled_from(["none", "selective", "full"]), flash=st.sampled_from(["on", "off"]))
def test_more_cp_or_sp_never_raises_activations_per_gpu(model, cp, tp, recompute, flash):
    kw = dict(tp=tp, pp=2, recompute=recompute, flash_attention=flash, sequence_parallel="off")
    base = _q(model, cp=cp, num_gpus=32 * cp, **kw)["act_per_gpu_GB"]
    assert _q(model, cp=2 * cp, num_gpus=64 * cp, **kw)["act_per_gpu_GB"] <= base * TOL  # same DP, CP doubled
    if tp > 1:
        assert _q(model, cp=cp, num_gpus=32 * cp, **{**kw, "sequence_parallel": "on"})["act_per_gpu_GB"] <= base * TOL


@settings(max_examples=20, deadline=None)
@given(model=st.sampled_from(MOE), ep=st.sampled_from([1, 2, 4]), zero=st.sampled_from([0, 1, 2, 3]))
def test_more_ep_never_raises_expert_memory_per_gpu(model, ep, zero):
    kw = dict(tp=1, pp=2, num_gpus=64, zero_stage=zero)
    a, b = _q(model, ep=ep, **kw), _q(model, ep=2 * ep, **kw)
    assert b["state_expert_params_per_gpu"] <= a["state_expert_params_per_gpu"] * TOL
    assert b["state_per_gpu_GB"] <= a["state_per_gpu_GB"] * TOL
    assert b["st_expert_params_gpu"] <= a["st_expert_params_gpu"] * TOL  # the step model's count too


@settings(max_examples=20, deadline=None)
@given(model=st.sampled_from(DENSE), pp=st.sampled_from([2, 4, 8]), ga=st.integers(1, 64),
       recompute=st.sampled_from(["none", "full"]))
def test_larger_bubble_never_shortens_the_step(model, pp, ga, recompute):
    kw = dict(pp=pp, grad_accum=ga, num_gpus=16 * pp, recompute=recompute)
    one, zb = _q(model, pipeline_schedule="1f1b", **kw), _q(model, pipeline_schedule="zero_bubble", **kw)
    assert one["st_bubble_frac"] >= zb["st_bubble_frac"] == 0
    assert one["st_bubble_step_s"] >= zb["st_bubble_step_s"]
    assert one["st_step_s"] >= zb["st_step_s"]
    assert one["train_step_time_s"] >= zb["train_step_time_s"]  # the step time in use
    assert one["ckpt_interval_min"] >= zb["ckpt_interval_min"]  # and what reads it


@settings(max_examples=20, deadline=None)
@given(model=st.sampled_from(DENSE), pp=st.sampled_from([1, 2, 4, 8]), ga=st.integers(1, 63),
       schedule=st.sampled_from(["1f1b", "interleaved"]))
def test_more_microbatches_never_enlarge_the_bubble_fraction(model, pp, ga, schedule):
    kw = dict(pp=pp, num_gpus=16 * pp, pipeline_schedule=schedule, virtual_stages=2)
    a, b = _q(model, grad_accum=ga, **kw), _q(model, grad_accum=ga + 1, **kw)
    assert b["st_bubble_frac"] <= a["st_bubble_frac"]
    assert b["plan_bubble_frac"] <= a["plan_bubble_frac"]  # the book's (PP-1)/GA on the Plan sheet
    if schedule == "1f1b":
        assert a["st_bubble_frac"] == pytest.approx((pp - 1) / ga)
