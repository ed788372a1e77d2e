"""The DP enumeration by runs (candidates.dp_runs) against a DP-by-DP walk of the same rules."""

from __future__ import annotations

import bisect
import math

import pytest

from tests.planner.helpers import CATALOG, request
from workbook.planner.candidates import Rules, Shape, dp_options, dp_runs


def _walk(shape: Shape, req, gpu, rules: Rules) -> list[tuple[int, int]]:
    """The rules one DP at a time (the enumeration before runs)."""
    c, t, gpn = req.constraints, req.training, int(gpu.gpus_per_node)
    replica = shape.tp * shape.cp * shape.pp
    seqs = round(t.global_batch_tokens / t.seq_len)
    node_step = gpn // math.gcd(replica, gpn) if c.whole_nodes else 1
    step = math.lcm(node_step, shape.ep // math.gcd(shape.ep, shape.cp))
    dp_max = c.max_gpus // replica
    if dp_max * shape.micro_batch > seqs:
        rules.drop("global_batch_too_small", f"DP x mb {shape.micro_batch} above {seqs} sequences per step")
        dp_max = seqs // shape.micro_batch
    out = []
    for dp in range(step, dp_max + 1, step):
        ga = -(-seqs // (dp * shape.micro_batch))
        if ga < shape.pp:
            rules.drop("ga_below_pp", f"GA {ga} < PP{shape.pp} at DP{dp} (the 1F1B pipeline does not fill)")
            break
        if ga * dp * shape.micro_batch > seqs * (1 + t.global_batch_tolerance):
            rules.drop("global_batch_overshoot", f"GA {ga} x DP{dp} x mb {shape.micro_batch} overshoots {seqs}")
            continue
        out.append((dp, ga))
    return out


@pytest.mark.parametrize("tol", [0.0, 0.05, 0.25, 1.0, 4.0])
@pytest.mark.parametrize("whole_nodes", [True, False])
@pytest.mark.parametrize("batch", [4096, 4096 * 37, 1048576, 4194304 * 3])
def test_runs_list_what_a_dp_by_dp_walk_lists(tol, whole_nodes, batch):
    req = request(training={"seq_len": 4096, "global_batch_tokens": batch, "global_batch_tolerance": tol},
                  constraints={"max_gpus": 2048, "whole_nodes": whole_nodes})
    gpu = CATALOG.gpu("h100")
    fast, slow = Rules(), Rules()
    for tp in (1, 2, 8):
        for cp in (1, 2):
            for pp in (1, 3, 4, 16):
                for ep in (1, 4, 8):
                    for mb in (1, 2, 3):
                        shape = Shape(tp, cp, pp, ep, mb, "full", 1, "bf16")
                        opts = dp_runs(shape, req, gpu, fast)
                        walked = _walk(shape, req, gpu, slow)
                        assert list(opts) == walked
                        assert [opts.dp(i) for i in range(len(opts))] == [dp for dp, _ in walked]
                        assert [opts[i] for i in range(len(opts))] == walked
                        dps = [dp for dp, _ in walked]
                        for v in (0.5, 1, 7.999999999, 8, 8.0000001, 100.3, 333, 1e9):
                            assert opts.index_at_least(v) == bisect.bisect_left(dps, v)
    assert list(fast.removed.items()) == list(slow.removed.items())


def test_dp_options_is_the_runs_listed():
    req = request()
    shape = Shape(2, 1, 2, 1, 1, "full", 1, "bf16")
    assert dp_options(shape, req, CATALOG.gpu("h100"), Rules()) == list(dp_runs(shape, req, CATALOG.gpu("h100"), Rules()))


def test_dp_runs_depend_on_tp_cp_pp_ep_and_micro_batch_only():
    """The search keeps one DpOptions per (TP, CP, PP, EP, micro-batch): recompute, ZeRO and precision
    do not change it; each of the five does."""
    req = request(constraints={"max_gpus": 512, "whole_nodes": True})
    gpu = CATALOG.gpu("h100")

    def runs(shape):
        r = Rules()
        return list(dp_runs(shape, req, gpu, r)), list(r.removed.items())

    base = Shape(2, 1, 2, 1, 1, "full", 1, "bf16")
    assert runs(base) == runs(Shape(2, 1, 2, 1, 1, "none", 3, "fp8"))
    for changed in (Shape(4, 1, 2, 1, 1, "full", 1, "bf16"), Shape(2, 2, 2, 1, 1, "full", 1, "bf16"),
                    Shape(2, 1, 4, 1, 1, "full", 1, "bf16"), Shape(2, 1, 2, 16, 1, "full", 1, "bf16"),
                    Shape(2, 1, 2, 1, 2, "full", 1, "bf16")):
        assert runs(changed) != runs(base)


@pytest.mark.parametrize("model_id, kept", [("llama-3-8b", True), ("mixtral-8x7b", False), ("deepseek-v2", False)])
def test_op_selective_is_searched_for_dense_models_only(model_id, kept):
    from workbook.planner.candidates import shapes

    req = request(constraints={"recompute": ["full", "op_selective"], "max_gpus": 64})
    rules = Rules()
    modes = {s.recompute for s in shapes(req, CATALOG.model(model_id), CATALOG.gpu("h100"), rules)}
    assert modes == ({"full", "op_selective"} if kept else {"full"})
    assert ("op_selective_dense_only" in rules.removed) != kept
