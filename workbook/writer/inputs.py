"""The scenario input rows of the Plan sheet, derived from the Scenario pydantic models."""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from typing import Any

import annotated_types as at
from pydantic import BaseModel

from workbook.scenario.model import Scenario

#: the Scenario sections shown as input blocks, in order, with their block titles
SECTIONS = [
    ("training", "Training inputs"),
    ("inference", "Inference inputs"),
    ("network", "Network inputs"),
    ("storage", "Storage inputs"),
    ("cost", "Cost inputs"),
]


@dataclass(frozen=True)
class InputRow:
    """One input line item: dotted key, label, unit, and how it is validated."""

    key: str
    label: str
    unit: str
    kind: str  # "int", "float", "enum", "gpu", "model", "name"
    choices: tuple[str, ...] = ()
    lo: float | None = None
    hi: float | None = None
    block: str = ""


def _split_description(desc: str, fallback: str) -> tuple[str, str]:
    desc = desc or fallback.replace("_", " ")
    m = re.search(r"\(([^()]*)\)\s*$", desc)
    if m:
        label = desc[: m.start()].strip()
        unit = m.group(1).strip()
        if len(unit) <= 24:
            return label, unit
    return desc.strip(), "-"


def _bounds(info) -> tuple[float | None, float | None]:
    lo = hi = None
    for meta in info.metadata:
        if isinstance(meta, (at.Ge, at.Gt)):
            lo = float(getattr(meta, "ge", getattr(meta, "gt", None)))
        if isinstance(meta, (at.Le, at.Lt)):
            hi = float(getattr(meta, "le", getattr(meta, "lt", None)))
    return lo, hi


def _kind(annotation: Any) -> tuple[str, tuple[str, ...]]:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Union:
        annotation = next(a for a in args if a is not type(None))
        args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return "enum", tuple(str(a) for a in args)
    if annotation is int:
        return "int", ()
    return "float", ()


def _rows_of(section: str, model: type[BaseModel], block: str) -> list[InputRow]:
    rows = []
    for field, info in model.model_fields.items():
        label, unit = _split_description(info.description or "", field)
        kind, choices = _kind(info.annotation)
        lo, hi = _bounds(info)
        rows.append(InputRow(f"{section}.{field}", label[:1].upper() + label[1:], unit, kind, choices, lo, hi, block))
    return rows


def input_rows() -> list[InputRow]:
    """Every input row of the Plan sheet, in order."""
    rows = [
        InputRow("name", "Scenario name", "text", "name", block="Scenario"),
        InputRow("model", "Model (catalogue id, Models sheet)", "id", "model", block="Scenario"),
        InputRow("gpu", "GPU (catalogue id, Hardware sheet)", "id", "gpu", block="Scenario"),
    ]
    for section, block in SECTIONS:
        sub = Scenario.model_fields[section].annotation
        rows += _rows_of(section, sub, block)
    return rows


def input_values(s: Scenario, model_id: str) -> dict[str, Any]:
    """The resolved scenario's value for each input key."""
    out: dict[str, Any] = {"name": s.name, "model": model_id, "gpu": s.gpu}
    for section, _ in SECTIONS:
        for field, value in getattr(s, section).model_dump().items():
            out[f"{section}.{field}"] = value
    return out
