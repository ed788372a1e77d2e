"""Shared pieces of the scenario-level calculation: the quantity declaration and the context."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Q:
    """One named quantity: the spine shared by reference results, sheet rows and JSON keys."""

    name: str
    unit: str
    label: str
    section: str
    note: str = ""  # a remark for the Notes column (the unit column holds units only)


@dataclass
class Context:
    """What a calc module sees: resolved scenario, catalogue records and earlier results."""

    s: Any  # resolved workbook.scenario.Scenario (no nulls left)
    gpu: Any  # workbook.catalog Gpu
    model: Any  # workbook.catalog Model
    defaults: dict[str, float]
    q: dict[str, float] = field(default_factory=dict)
    eff: Any = None  # workbook.catalog GpuEfficiency of the GPU (the step-time model's factors)
    engines: Any = None  # workbook.catalog.engines.EnginesCatalog (None: catalog/engines.yaml)
