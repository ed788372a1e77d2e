"""Scenario-level calculation: every named quantity of one scenario, in data-flow order.

``compute(scenario, catalog)`` runs the sheet modules in order (each one's ``compute(ctx)``
sees the quantities of the earlier ones) and returns ``{name: value}``. ``registry()`` lists
every :class:`Q` with its sheet; ``dataframe()`` gives one row per quantity and one column per
scenario, for notebooks.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from types import ModuleType
from typing import Iterable

from workbook.calc.base import Context, Q

#: sheet module name -> workbook sheet title, in data-flow order
SHEETS: dict[str, str] = {
    "input_checks": "Plan",  # right below the inputs: they read the inputs and the catalogue only
    "selection": "Plan",
    "price": "Plan",  # the GPU-hour price in use, its check and the count of all input errors
    "hardware": "Plan",
    "models": "Plan",
    "plan": "Plan",
    "train_memory": "Training Memory",
    "activations": "Activations",
    "act_stages": "Activations",
    "sharded_state": "ZeRO",
    "zero": "ZeRO",
    "kv_cache": "KV Cache",
    "serving_memory": "KV Cache",
    "step_inputs": "Step Time",
    "step_time": "Step Time",
    "step_total": "Step Time",
    "step_gpus": "Step Time",
    "step_measured": "Step Time",
    "train_time": "Step Time",
    "comm": "Comm",  # after Step Time: its ratios and shares are against the step time in use
    "storage": "Storage",
    "inference": "Inference",
    "serving_step": "Inference",
    "serving_prefill": "Inference",
    "serving_load": "Inference",
    "serving_offline_run": "Inference",
    "serving_disagg": "Inference",
    "serving_load_models": "Inference",
    "serving_use": "Inference",
    "serving_max_load": "Inference",
    "cost": "Cost",
    "tco": "TCO",  # after Cost and Inference: it owns the training or the serving GPUs
    "tco_years": "TCO",
    "tco_npv": "TCO",  # rent vs buy by NPV: reads the per-year table above
    "sensitivity": "Sensitivity",
    "serving_sensitivity": "Sensitivity",  # after TCO: the power driver moves the owned fleet's whole power bill
    "cash_flow": "Cash Flow",  # months from a start month: the rent path and the buy path (TCO sheet's bill)
    "cash_flow_periods": "Cash Flow",  # the months summed by fiscal quarter and fiscal year
    "checks": "Checks",
    "status": "Checks",
}


@dataclass(frozen=True)
class Entry:
    """A quantity with the sheet (module) that computes it."""

    q: Q
    module: str

    @property
    def sheet(self) -> str:
        return SHEETS[self.module]


def modules() -> list[tuple[str, ModuleType]]:
    return [(name, importlib.import_module(f"workbook.calc.{name}")) for name in SHEETS]


def registry() -> dict[str, Entry]:
    """Every quantity by name. Raises if a name is declared twice."""
    out: dict[str, Entry] = {}
    for name, mod in modules():
        for q in mod.QUANTITIES:
            if q.name in out:
                raise ValueError(f"quantity {q.name!r} declared in {out[q.name].module} and {name}")
            out[q.name] = Entry(q, name)
    return out


def compute_resolved(s, gpu, model, defaults: dict[str, float], eff=None, engines=None,
                     keys: Iterable[str] | None = None) -> dict[str, float]:
    """All quantities for a resolved scenario (no nulls) and its catalogue records (``eff``: the
    GPU's efficiency record, which the Step Time sheet needs; ``engines``: the serving-engine
    catalogue, catalog/engines.yaml when None). With ``keys``, stop after the first sheet module
    by which all of them are computed (the later modules are skipped: calibration's fast path)."""
    ctx = Context(s=s, gpu=gpu, model=model, defaults=defaults, eff=eff, engines=engines)
    wanted = set(keys) if keys is not None else None
    for name, mod in modules():
        if wanted is not None and wanted <= ctx.q.keys():
            break
        values = mod.compute(ctx)
        declared = {q.name for q in mod.QUANTITIES}
        missing = declared - set(values)
        extra = set(values) - declared
        if missing or extra:
            raise RuntimeError(f"calc.{name}: missing {sorted(missing)}, undeclared {sorted(extra)}")
        for key in (q.name for q in mod.QUANTITIES):
            ctx.q[key] = _number(values[key], key)
    return ctx.q


def _number(value, key: str) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"quantity {key} is not finite: {v}")
    return v


def compute(scenario, catalog) -> dict[str, float]:
    """All quantities of one scenario against a catalogue."""
    from workbook.scenario.resolve import resolve

    s, gpu, model = resolve(scenario, catalog)
    return compute_resolved(s, gpu, model, catalog.defaults.as_dict(), catalog.efficiency_of(gpu.id),
                            engines=catalog.engines)


def dataframe(scenarios: Iterable, catalog=None):
    """One row per quantity (name, unit, section, sheet, label), one column per scenario."""
    import pandas as pd

    from workbook.catalog import load_catalog

    catalog = catalog or load_catalog()
    reg = registry()
    scenarios = list(scenarios)
    data = {
        "name": list(reg),
        "unit": [e.q.unit for e in reg.values()],
        "section": [e.q.section for e in reg.values()],
        "sheet": [e.sheet for e in reg.values()],
        "label": [e.q.label for e in reg.values()],
    }
    for sc in scenarios:
        values = compute(sc, catalog)
        data[sc.name] = [values[n] for n in reg]
    return pd.DataFrame(data).set_index("name")
