"""The serving validation files (catalog/validation/serving-*.yaml) on the workbook's engine rows: the
points with the same inputs as the reference table (tests/reference/serving_validation.py) give the
same figures, and the points that fail today are exactly the ones docs/serving.md reports as not
matched (strict: a point that starts to pass, or one that starts to fail, is news)."""

from __future__ import annotations

import pytest

from tests.reference import serving_validation as sv
from workbook.validation import DEFAULT_DIR, validate

FILES = sorted(DEFAULT_DIR.glob("serving-*.yaml"))
#: yaml point -> reference-table point with identical inputs
SAME_INPUTS = {
    "kv-vllm-tokens": "kv-vllm-qwen3-235b-fp8-tp4",
    "kv-vllm-GiB": "kv-vllm-qwen3-235b-fp8-tp4-GiB",
    "kv-sglang-tokens": "kv-sglang-qwen3-235b-fp8-tp4",
    "step-batch1": "step-llama70-tp4-batch1",
    "step-batch55": "step-llama70-tp4-batch55",
    "ttft-5k-nim-tp2-fp8": "ttft-llama70-fp8-tp2-5k-nim",
    "disagg-decode-node": "deepseek-decode-node",
    "disagg-prefill-node": "deepseek-prefill-node",
}
#: the points outside their target today (docs/serving.md; the reference table's strict xfails)
NOT_MATCHED = {"kv-vllm-tokens", "kv-vllm-GiB", "disagg-prefill-node"}


@pytest.fixture(scope="module")
def results():
    return {r.point: r for r in validate(FILES)}


def test_serving_files_exist_and_cover_the_issue_points(results):
    assert len(FILES) == 6
    assert set(SAME_INPUTS) <= set(results) and len(results) == 25


def test_deepseek_decode_step_is_the_reference_at_the_whole_batch(results):
    """The reference table's point is at 14.8k/8/21 = 88.1 requests per GPU; the scenario takes 88."""
    from workbook.reference import decode_time as dt

    step = dt.decode_step(sv.DSV3, batch=88, context_tokens=sv.DS_KV_LEN, hw=sv.H800,
                          engine=sv.ENGINES.profile("deepseek-v3-infer"), tp=1, ep=sv.DS_EP,
                          redundant_experts=sv.DS_REDUNDANT, weight_precision="fp8", ep_overlap_frac=1.0,
                          ep_nodes=sv.DS_NODES)
    assert results["decode-tpot"].ours == pytest.approx(step["step_s"] * 1e3, rel=1e-9)


def test_a100_step_points_are_the_reference_step_on_the_datasheet_device(results):
    """Llama-3-8B on one A100 (no device record: datasheet HBM, the GPU's HBM efficiency) at batch 1 and 6,
    the mean contexts of the LambdaLabs windows (29 + 1250/2 and 72 + 140/2 tokens)."""
    from types import SimpleNamespace

    from workbook.catalog import load_catalog
    from workbook.reference import decode_time as dt
    from workbook.reference.serving_shape import model_shape

    cat = load_catalog()
    eff = cat.efficiency["a100-80gb"]
    hw = dt.serving_hardware(gpu=cat.gpu("a100-80gb"), efficiency=eff,
                             device=SimpleNamespace(cuda_total_GiB=80e9 / 2**30,
                                                    decode_hbm_efficiency=eff.hbm_efficiency))
    for point, batch, ctx in (("step-batch1-8b", 1, 29 + 625), ("step-batch6-8b", 6, 72 + 70)):
        step = dt.decode_step(model_shape(cat.model("llama-3-8b")), batch=batch, context_tokens=ctx, hw=hw,
                              engine=sv.ENGINES.profile("vllm-0.6.0"), tp=1)
        assert results[point].ours == pytest.approx(step["step_s"] * 1e3, rel=1e-9), point


def test_deepseek_profile_step_is_two_passes_of_64_at_ep128(results):
    """DeepSeek's balanced decode profile (EP128 on 16 nodes, 128 requests per GPU, 4K context, no
    redundant experts): the reference's step with the profile's two micro-batches."""
    from workbook.reference import decode_time as dt

    eng = sv.ENGINES.profile("deepseek-v3-infer")
    kw = dict(context_tokens=4096, hw=sv.H800, tp=1, ep=128, redundant_experts=0, weight_precision="fp8",
              ep_overlap_frac=1.0, ep_nodes=16)
    step = dt.decode_step(sv.DSV3, batch=128, engine=eng, **kw)
    half = dt.decode_step(sv.DSV3, batch=64, engine=eng.model_copy(update={"decode_micro_batches": 1}), **kw)
    assert results["profile-decode-step"].ours == pytest.approx(step["step_s"] * 1e3, rel=1e-9)
    assert step["step_s"] == pytest.approx(2 * half["step_s"], rel=1e-12)
    assert results["profile-decode-step"].published == pytest.approx(128 * 8 / 18598 * 1e3, rel=1e-3)


@pytest.mark.parametrize("point", sorted(SAME_INPUTS))
def test_workbook_rows_give_the_reference_table(results, point):
    ref = {p["name"]: p for p in sv.points()}[SAME_INPUTS[point]]
    assert results[point].ours == pytest.approx(ref["ours"], rel=1e-9)
    assert results[point].published == pytest.approx(ref["published"], rel=1e-12)


def test_failing_points_are_the_unmatched_ones(results):
    assert {name for name, r in results.items() if not r.passed} == NOT_MATCHED
