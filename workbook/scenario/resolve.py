"""Resolve a scenario against the catalogue: look up GPU and model, fill null inputs from defaults."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import ValidationError

from workbook.catalog.models import Catalog, Gpu, Model
from workbook.catalog.yamlio import line_of, to_input_error
from workbook.errors import InputError
from workbook.scenario.model import Scenario

#: sections whose null fields take the catalogue default of the same key
DEFAULTED_SECTIONS = ("network", "storage", "cost")
#: null fields that stay null after resolution, and why
LEFT_NULL = {"budget_usd": "null means no budget",
             "staff_usd_per_year": "null means people x cost per person (TCO sheet)"}
#: null fields filled from the GPU record instead of defaults.yaml
FROM_GPU = {"gpu_hour_usd": "the GPU's catalogue price for cost.price_basis"}


def _where(scenario: Scenario, loc: tuple) -> dict[str, Any]:
    lines = scenario._source_lines or {}
    return {"file": scenario._source_file, "line": line_of(lines, loc) if lines else None}


def _lookup(scenario: Scenario, catalog: Catalog, kind: str) -> Any:
    try:
        return catalog.gpu(scenario.gpu) if kind == "gpu" else catalog.model(scenario.model)
    except InputError as err:
        raise InputError(err.message, field=kind, expected=err.expected, **_where(scenario, (kind,))) from None


def inline_model(scenario: Scenario) -> Model:
    """Validate ``model_arch`` as a catalogue Model (id, name, source, as_of filled in if absent)."""
    arch = dict(scenario.model_arch or {})
    arch.setdefault("id", "inline")
    arch.setdefault("name", f"{scenario.name} (inline architecture)")
    arch.setdefault("source", f"scenario {scenario._source_file or scenario.name}: model_arch")
    arch.setdefault("as_of", dt.date.today())
    arch.setdefault("family", "inline")
    arch.setdefault("hypothetical", True)
    derived = "published_params_total" not in arch
    if derived:
        arch["published_params_total"] = 1.0  # placeholder; replaced by the derived count below
        if arch.get("moe") and "published_params_active" not in arch:
            arch["published_params_active"] = 1.0
    try:
        model = Model.model_validate(arch)
    except ValidationError as exc:
        where = _where(scenario, ())
        raise to_input_error(exc, file=where["file"], lines=scenario._source_lines or {}, model=Model,
                             prefix=("model_arch",)) from None
    if derived:
        from workbook.reference.params import model_param_counts

        counts = model_param_counts(model)
        update = {"published_params_total": counts["params_total"]}
        if model.moe:
            update["published_params_active"] = counts["params_active"]
        model = model.model_copy(update=update)
    return model


def _layout_fits_model(scenario: Scenario, model: Model) -> None:
    """The layout rules that need the model: PP stages hold at least one layer each, and EP splits
    the routed experts evenly (Megatron; workbook.reference.sharded_state)."""
    t = scenario.training
    if t.pp > model.layers:
        raise InputError(f"pp={t.pp} exceeds the model's {model.layers} layers", field="training.pp",
                         expected=f"1 to {model.layers}", **_where(scenario, ("training", "pp")))
    if t.recompute == "op_selective" and (model.moe or model.attention == "mla"):
        kind = "an MoE" if model.moe else "an MLA"
        raise InputError(f"recompute 'op_selective' (torchtitan's op-level selective AC) is modelled for dense "
                         f"GQA/MHA models only; {model.id!r} is {kind} model", field="training.recompute",
                         expected="one of none, selective, full", **_where(scenario, ("training", "recompute")))
    if model.moe and model.n_routed_experts and model.n_routed_experts % t.ep:
        raise InputError(f"ep={t.ep} must divide the model's {model.n_routed_experts} routed experts",
                         field="training.ep", expected="a divisor of the routed experts",
                         **_where(scenario, ("training", "ep")))


def _engine_known(scenario: Scenario, catalog: Catalog) -> None:
    """The serving-engine profile is one of the catalogue's (catalog/engines.yaml, Engines sheet)."""
    engines = catalog.engines
    if engines is None:
        return
    ids = [p.id for p in engines.profiles]
    if scenario.inference.engine not in ids:
        raise InputError(f"unknown engine profile {scenario.inference.engine!r}", field="inference.engine",
                         expected="one of " + ", ".join(ids), **_where(scenario, ("inference", "engine")))


def resolve(scenario: Scenario, catalog: Catalog) -> tuple[Scenario, Gpu, Model]:
    """(scenario with network/storage/cost nulls filled, GPU record, model record).

    A null ``cost.gpu_hour_usd`` takes the GPU's catalogue price for ``cost.price_basis``
    (InputError if the GPU has none). ``cost.budget_usd`` stays null (no budget). Every other
    null takes the default of the same key (catalog/defaults.yaml).
    """
    gpu = _lookup(scenario, catalog, "gpu")
    model = _lookup(scenario, catalog, "model") if scenario.model is not None else inline_model(scenario)
    _layout_fits_model(scenario, model)
    _engine_known(scenario, catalog)

    data = scenario.model_dump()
    for section in DEFAULTED_SECTIONS:
        for key, value in data[section].items():
            if value is not None or key in LEFT_NULL:
                continue
            if key in FROM_GPU:
                basis = scenario.cost.price_basis
                price = gpu.price_usd_per_gpu_hour(basis)
                if price is None:
                    raise InputError(
                        f"GPU {gpu.id!r} has no {basis} price in the catalogue; give cost.gpu_hour_usd "
                        "or another price_basis", field="cost.price_basis", **_where(scenario, ("cost",)),
                    )
                data[section][key] = price
                continue
            if key not in catalog.defaults:
                raise InputError(
                    "no catalogue default for this null field; give a value",
                    field=f"{section}.{key}", **_where(scenario, (section, key)),
                )
            data[section][key] = catalog.defaults.value(key)
    try:
        resolved = Scenario.model_validate(data)
    except ValidationError as exc:
        where = _where(scenario, ())
        raise to_input_error(exc, file=where["file"], lines=scenario._source_lines or {}, model=Scenario) from None
    resolved._source_file = scenario._source_file
    resolved._source_lines = scenario._source_lines
    resolved._network_given = frozenset(k for k, v in scenario.network.model_dump().items() if v is not None)
    return resolved, gpu, model
