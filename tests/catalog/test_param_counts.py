"""Architecture fields reproduce the published parameter counts (params.model_param_counts)."""

from __future__ import annotations

import pytest

from workbook.catalog import load_catalog
from workbook.reference.params import model_param_counts

REL_TOL = 0.02
CATALOG = load_catalog()
MODELS = sorted(CATALOG.models)


@pytest.mark.parametrize("model_id", MODELS)
def test_params_total_within_2pct(model_id: str) -> None:
    m = CATALOG.model(model_id)
    got = model_param_counts(m)["params_total"]
    assert got == pytest.approx(m.published_params_total, rel=REL_TOL), (
        f"{model_id}: derived {got:,.0f} vs published {m.published_params_total:,.0f}"
    )


@pytest.mark.parametrize("model_id", [i for i in MODELS if CATALOG.model(i).moe])
def test_params_active_within_2pct(model_id: str) -> None:
    m = CATALOG.model(model_id)
    got = model_param_counts(m)["params_active"]
    assert got == pytest.approx(m.published_params_active, rel=REL_TOL), (
        f"{model_id}: derived active {got:,.0f} vs published {m.published_params_active:,.0f}"
    )


def test_dense_models_have_no_published_active_or_equal() -> None:
    for m in CATALOG.models.values():
        if not m.moe:
            assert m.published_params_active is None, m.id


@pytest.mark.parametrize(
    "model_id, exact",
    [
        ("llama-7b", 6_738_415_616),  # spec 17.1-17.4 §1.4 (with the final norm)
        ("llama-3-8b", 8_030_261_248),
        ("llama-3-70b", 70_553_706_496),
        ("mixtral-8x7b", 46_702_792_704),
        ("gemma-2-27b", 27_227_128_320),
        ("llama-33b", 32_528_943_616),
        ("llama-3.1-405b", 405_853_388_800),  # HF safetensors metadata of meta-llama/Llama-3.1-405B
        ("qwen3-32b", 32_762_123_264),  # released Qwen/Qwen3-32B weights
    ],
)
def test_exact_counts_of_released_weights(model_id: str, exact: int) -> None:
    assert model_param_counts(CATALOG.model(model_id))["params_total"] == exact


@pytest.mark.parametrize("model_id", ["gpt-3-175b", "mt-nlg-530b", "megatron-22b", "megatron-1t"])
def test_gpt_shapes_match_megatron_eq2(model_id: str) -> None:
    """Narayanan et al. 2021 (arXiv 2104.04473) eq. 2, P = 12lh^2 + 13lh + (V + s)h, counts every bias
    and the learned position embeddings (s = 2048); the schema has neither the 6h output/FFN biases per
    layer nor the position table, and counts the final LayerNorm (2h). Exact, at the model's own V."""
    m = CATALOG.model(model_id)
    l, h, v, s = m.layers, m.d_model, m.vocab, 2048
    eq2 = 12 * l * h * h + 13 * l * h + (v + s) * h
    assert model_param_counts(m)["params_total"] == eq2 - 6 * l * h - s * h + 2 * h


def test_megatron_1t_is_table1_count() -> None:
    """Table 1 of Narayanan et al. 2021 lists 1008.0B: eq. 2 at V 51,200 gives 1,008.04B."""
    m = CATALOG.model("megatron-1t")
    l, h = m.layers, m.d_model
    assert 12 * l * h * h + 13 * l * h + (51200 + 2048) * h == pytest.approx(1008.0e9, rel=5e-5)
