"""Scenario-level calculation: the registry, the shipped scenarios, and invariants over random scenarios."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbook.calc import SHEETS, compute, dataframe, registry
from workbook.catalog import load_catalog
from workbook.scenario import load_scenarios
from workbook.scenario.sample import random_scenarios

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "catalog" / "scenarios").glob("*.yaml"))
#: quantities that are differences and may legitimately be negative (serving: the load block's 1 − c·slope
#: and linear-fit intercept, the KV budget of each engine rule before the floor at 0, model vs measured;
#: Sensitivity: changes, and switching values below 0 = none)
SIGNED = ("headroom", "vs_published", "shortfall", "kv_free", "denom", "intercept", "_rule_GiB", "vs_measured",
          "dcost", "seq_switch", "power_switch", "_dmonth_", "_d1M_",
          "_qb", "_qc", "_tf_u", "_tl_u", "_ti_u", "_wq0",  # serving_max_load: quadratic coefficients, step budgets,
          # the queue-wait tangent at rate 0
          # (< 0: target missed)
          "npv_buy_saving",  # TCO: rent NPV - buy NPV (< 0: renting is cheaper)
          "_buy_usd", "buy_cumulative",  # Cash Flow: the buy path's net cash out (< 0: the residual value comes in)
          "_line")  # serving_load: the secant's crossing, intercept / denom (< 0 with denom <= 0: not valid)
#: names that end so are signed: the load refinements' secant slope of Little's law's map (srv_ss<k>_g,
#: srv_ml<k>_g), which falls where a larger batch spreads the prefill over more prompts per step
SIGNED_ENDINGS = ("_g",)
CATALOG = load_catalog()


def test_registry_names_unique_and_units_in_every_quantity():
    reg = registry()
    assert len(reg) > 250
    labels = [e.q.label for e in reg.values()]
    assert len(labels) == len(set(labels)), "labels must be unique (they are the row labels)"
    for name, e in reg.items():
        assert e.q.unit and e.q.section, name
        assert e.module in SHEETS


def test_every_shipped_scenario_computes_and_passes_its_checks():
    assert len(SHIPPED) >= 5
    for sc in load_scenarios(SHIPPED):
        r = compute(sc, CATALOG)
        failed = [k for k, v in r.items() if k.startswith("check_") and v != 0]
        assert not failed, f"{sc.name}: {failed}"


def test_dataframe_has_a_row_per_quantity_and_a_column_per_scenario():
    scs = load_scenarios(SHIPPED[:2])
    df = dataframe(scs, CATALOG)
    assert list(df.columns[:4]) == ["unit", "section", "sheet", "label"]
    assert [sc.name for sc in scs] == list(df.columns[4:])
    assert len(df) == len(registry())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), index=st.integers(0, 11))
def test_all_results_finite_and_non_negative_for_valid_input(seed, index):
    sc = random_scenarios(CATALOG, index + 1, seed=seed)[index]
    r = compute(sc, CATALOG)
    for name, v in r.items():
        assert math.isfinite(v), (sc.name, name, v)
        if not any(s in name for s in SIGNED) and not name.endswith(SIGNED_ENDINGS):
            assert v >= 0, (sc.name, name, v)


def test_a_falling_littles_law_map_gives_a_negative_slope_and_a_valid_steady_state():
    """Seed 13 (gpt4-class-moe, DeepSeek profile, TP 8, EP 2): at the fourth refinement Little's law's batch
    falls a little as the batch grows (133.378 -> 133.371; more prompts per prefill step), so the secant
    slope is negative (-1.1e-4); every other quantity stays finite and non-negative. (Seed 123 showed it
    before the decode all-to-all's SM share.)"""
    sc = random_scenarios(CATALOG, 1, seed=13)[0]
    r = compute(sc, CATALOG)
    assert r["srv_ss4_g"] < 0 < r["srv_ss4_denom"]
    for name, v in r.items():
        assert math.isfinite(v), name
        if not any(s in name for s in SIGNED) and not name.endswith(SIGNED_ENDINGS):
            assert v >= 0, (name, v)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_more_gpus_never_lengthen_training_at_fixed_mfu(seed):
    sc = random_scenarios(CATALOG, 1, seed=seed)[0]
    t = sc.training
    bigger = sc.model_copy(update={"training": t.model_copy(update={"num_gpus": t.num_gpus * 2})})
    assert compute(bigger, CATALOG)["train_days_actual"] <= compute(sc, CATALOG)["train_days_actual"]


@pytest.mark.parametrize("seed,index", [(1468, 8), (3265, 7)])
def test_the_max_load_batch_is_never_negative_past_the_cuda_graph_range(seed, index):
    """Found by the property test above (2026-12-04): SGLang 0.3.0 (107 us of CPU per running sequence) on a
    small model, where the decode step between b0 and 2 b0 grows faster than linearly; its secant extrapolated
    to a negative step at batch 0 and Little's law then gave a negative batch. The intercept is at least 0."""
    sc = random_scenarios(CATALOG, index + 1, seed=seed)[index]
    r = compute(sc, CATALOG)
    ml = {k: v for k, v in r.items() if k.startswith("srv_ml")}
    assert all(math.isfinite(v) for v in ml.values())
    assert all(v >= 0 for k, v in ml.items() if k.endswith(("_batch", "_intercept"))), ml
