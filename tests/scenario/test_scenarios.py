"""Shipped scenarios load, resolve and satisfy the layout rules; resolve fills nulls by key."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.catalog import DEFAULT_DIR, load_catalog
from workbook.errors import InputError
from workbook.reference.layout import layout_checks
from workbook.scenario import load_scenario, load_scenarios
from workbook.scenario.resolve import LEFT_NULL, resolve

CATALOG = load_catalog()
FILES = sorted((DEFAULT_DIR / "scenarios").glob("*.yaml"))


def test_the_book_cases_are_shipped() -> None:
    names = {p.name.split("-")[0] for p in FILES}
    assert {"17.9.1", "17.9.2", "17.9.3", "17.9.4", "17.9.6"} <= names
    gpus = {load_scenario(p).gpu for p in FILES if p.name.startswith("17.9.6")}
    assert gpus == {"h800", "h20"}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario_loads_resolves_and_has_a_valid_layout(path: Path) -> None:
    s = load_scenario(path)
    r, gpu, model = resolve(s, CATALOG)
    for section in ("network", "storage", "cost"):
        for key, value in getattr(r, section).model_dump().items():
            assert value is not None or key in LEFT_NULL, f"{section}.{key} left null"  # budget, staff
    t = r.training
    checks = layout_checks(num_gpus=t.num_gpus, tp=t.tp, pp=t.pp, layers=model.layers, ep=t.ep,
                           gpus_per_node=gpu.gpus_per_node)
    assert all(checks.values()), checks
    if model.moe:
        assert model.n_routed_experts % t.ep == 0
    # one serving replica sits inside a node, or spans whole nodes (the 1.8T MoE of 17.9.3)
    assert r.inference.tp <= gpu.gpus_per_node or r.inference.tp % gpu.gpus_per_node == 0
    assert s.description


def test_scenario_names_unique() -> None:
    assert len({s.name for s in load_scenarios(FILES)}) == len(FILES)


def test_17_9_4_inputs() -> None:
    s = load_scenario(DEFAULT_DIR / "scenarios" / "17.9.4-70b-plan-h800.yaml")
    t = s.training
    assert (t.tokens, t.target_days, t.mfu, t.tp, t.pp, t.num_gpus // (t.tp * t.pp)) == (3e12, 60, 0.4, 8, 2, 40)
    assert s.cost.budget_usd == 2e6 and s.gpu == "h800"
    r, _, _ = resolve(s, CATALOG)
    assert r.cost.gpu_hour_usd == 2.0  # reserved H800 price from the catalogue


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_resolve_fills_nulls_by_key_and_keeps_given_values(tmp_path: Path) -> None:
    p = _write(tmp_path, "name: t\nmodel: llama-7b\ngpu: h20\nnetwork:\n  nic_Gbps: 200\ncost:\n  price_basis: spot\n")
    r, gpu, _ = resolve(load_scenario(p), CATALOG)
    d = CATALOG.defaults.as_dict()
    assert r.network.nic_Gbps == 200
    assert r.network.nics_per_node == d["nics_per_node"]
    assert r.storage.ckpt_bytes_per_param == d["ckpt_bytes_per_param"]
    assert r.cost.pue == d["pue"]
    assert r.cost.gpu_hour_usd == gpu.price_spot_usd_per_gpu_hour == 0.5
    assert r.cost.budget_usd is None


def test_missing_price_for_basis(tmp_path: Path) -> None:
    p = _write(tmp_path, "name: t\nmodel: llama-7b\ngpu: b200\ncost:\n  price_basis: spot\n")
    with pytest.raises(InputError, match="no spot price") as err:
        resolve(load_scenario(p), CATALOG)
    assert err.value.line == 4


def test_inline_model_arch(tmp_path: Path) -> None:
    arch = CATALOG.model("llama-7b").model_dump(exclude={"id", "name", "source", "as_of", "field_sources",
                                                        "notes", "published_params_total", "family",
                                                        "hypothetical"})
    lines = "\n".join(f"  {k}: {str(v).lower() if isinstance(v, bool) else ('null' if v is None else v)}"
                      for k, v in arch.items())
    p = _write(tmp_path, f"name: inline\ngpu: h800\nmodel_arch:\n{lines}\n")
    _, _, model = resolve(load_scenario(p), CATALOG)
    assert model.layers == 32 and model.hypothetical
    assert model.published_params_total == 6_738_415_616  # derived when not given


def test_both_model_and_arch_rejected(tmp_path: Path) -> None:
    p = _write(tmp_path, "name: t\nmodel: llama-7b\nmodel_arch: {layers: 2}\ngpu: h800\n")
    with pytest.raises(InputError, match="exactly one of 'model'"):
        load_scenario(p)


def test_duplicate_scenario_names(tmp_path: Path) -> None:
    a = _write(tmp_path, "name: same\nmodel: llama-7b\ngpu: h800\n", "a.yaml")
    b = _write(tmp_path, "\nname: same\nmodel: llama-7b\ngpu: h20\n", "b.yaml")
    with pytest.raises(InputError, match="duplicate scenario name 'same'") as err:
        load_scenarios([a, b])
    assert err.value.file == str(b) and err.value.line == 2
