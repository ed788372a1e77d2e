"""The screen's caches (workbook.planner.screen): with them warm, every layout gets what the reference
functions give it from scratch, so no cache key misses an input the answer depends on."""

from __future__ import annotations

import itertools

import pytest

from tests.planner.helpers import CATALOG, request
from workbook.calc.act_stages import stage_activations
from workbook.calc.step_inputs import step_kwargs
from workbook.planner.candidates import Layout, Shape, model_of
from workbook.planner.screen import Screen
from workbook.reference import sharded_state as ss
from workbook.reference import step_time as stm
from workbook.units import GB, SECONDS_PER_DAY


def _layouts():
    """Layouts that differ from one another in one field at a time, and some in several."""
    base = Layout(Shape(2, 1, 2, 2, 1, "full", 1, "bf16"), dp=4, grad_accum=8)
    fields = {"tp": [1, 4], "cp": [2], "pp": [1, 4], "ep": [1, 4], "micro_batch": [2], "recompute": ["none", "selective"],
              "zero_stage": [0, 2, 3]}
    out = [base]
    for name, values in fields.items():
        for v in values:
            out.append(Layout(Shape(**{**base.shape.__dict__, name: v}), base.dp, base.grad_accum))
    out += [Layout(base.shape, 8, 8), Layout(base.shape, 4, 16), Layout(Shape(2, 1, 2, 2, 1, "full", 0, "bf16"), 8, 4)]
    # the same DP·CP with CP 1 and 2 (they share a state), with each ZeRO stage
    out += [Layout(Shape(2, cp, 2, 2, 1, "full", z, "bf16"), 8 // cp, 8) for z in (0, 1, 3) for cp in (1, 2)]
    out += [Layout(Shape(tp, 1, pp, 2, 1, "full", z, "bf16"), dp, 8)
            for tp, pp, z, dp in itertools.product((1, 2), (1, 2), (0, 3), (2, 4))]
    return out


@pytest.fixture(scope="module")
def screen():
    req = request(model="mixtral-8x7b", constraints={"max_gpus": 256})
    model, fields = model_of(req, CATALOG)
    return Screen(req, CATALOG, CATALOG.gpu("h100"), model, fields, "bf16"), req, model


def _memory_from_scratch(scr: Screen, lay: Layout) -> float:
    s = lay.shape
    state = ss.model_state_per_gpu(scr.model, num_gpus=lay.num_gpus, tp=s.tp, pp=s.pp, cp=s.cp, ep=s.ep, etp=s.tp,
                                   zero_stage=s.zero_stage, recipe=scr.recipe)["per_stage"]
    acts = stage_activations(scr._ctx(lay))["per_stage"]
    return max(r["total_bytes"] / GB + a["peak_bytes"] / GB for r, a in zip(state, acts)) + scr.overhead_GB


def test_warm_caches_give_what_the_reference_gives_from_scratch(screen):
    scr, req, _ = screen
    lays = _layouts()
    for _ in range(2):  # the second round reads every cache warm
        for lay in lays:
            assert scr.step_kwargs(lay) == step_kwargs(scr._ctx(lay))
            r = scr.screen(lay)
            assert r.memory_GB == _memory_from_scratch(scr, lay)
            step = stm.step_time(**step_kwargs(scr._ctx(lay)))
            assert r.days == req.tokens / step["tokens_per_s"] / SECONDS_PER_DAY * req.training.overhead_factor
            assert r.mfu == step["mfu"]
    assert len({(r.memory_GB, r.days) for r in map(scr.screen, set(lays))}) == len(set(lays))
