"""The scenario input rows of the Plan sheet, derived from the Scenario pydantic models.

Each row carries what the Plan sheet and the Checks sheet need: the label, a short title (the
validation title and the INPUT ERROR text), the unit, a note, an example, the allowed range or
choices, and whether a blank is allowed (optional fields: blank = the catalogue default).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

import annotated_types as at
from pydantic import BaseModel

from workbook.scenario.model import Scenario, required_if

#: the Scenario sections shown as input blocks, in order, with their block titles
SECTIONS = [
    ("training", "Training inputs"),
    ("inference", "Inference inputs"),
    ("network", "Network inputs (blank = the Defaults sheet)"),
    ("storage", "Storage inputs (blank = the Defaults sheet)"),
    ("cost", "Cost inputs"),
]


#: inputs that hold an id of a catalogue table -> the sheet of that table (its ids: defined name cat_<kind>_id)
CATALOGUE_KINDS = {"gpu": "Hardware", "model": "Models", "engine": "Engines"}


@dataclass(frozen=True)
class InputRow:
    """One input line item: dotted key, label, title, unit, note, and how it is validated."""

    key: str
    label: str
    title: str
    unit: str
    kind: str  # "int", "float", "enum", "gpu", "model", "engine", "name"
    choices: tuple[str, ...] = ()
    lo: float | None = None
    hi: float | None = None
    block: str = ""
    note: str = ""
    example: Any = None
    optional: bool = False
    #: ("training.time_model", "measured"): the sibling choice under which a blank is an error
    required_if: tuple[str, str] | None = None
    #: ("training.precision", "fp8"): an optional input that may only be given under that sibling choice
    only_if: tuple[str, str] | None = None

    @property
    def name(self) -> str:
        """The key as a defined-name fragment (``training.mfu`` -> ``training_mfu``)."""
        return self.key.replace(".", "_")

    def expectation(self) -> str:
        """What the cell must hold, in words: 'a fraction from 0.05 to 0.9, e.g. 0.40'."""
        if self.choices:
            text = "one of " + ", ".join(self.choices)
        elif self.kind in CATALOGUE_KINDS:
            text = f"an id from the {CATALOGUE_KINDS[self.kind]} sheet"
        elif self.kind == "name":
            text = "a name of 1 to 64 characters"
        else:
            what = "a whole number" if self.kind == "int" else ("a fraction" if self.unit == "fraction" else "a number")
            unit = "" if self.unit in ("fraction", "count") else f" {self.unit}"
            text = f"{what} from {_num(self.lo)} to {_num(self.hi)}{unit}"
        if self.example is not None and not self.choices and self.kind not in (*CATALOGUE_KINDS, "name"):
            text += f", e.g. {_num(self.example)}"
        if self.required_if:
            text += f"; required when {self.required_if[0]} is {self.required_if[1]}"
        if self.only_if:
            text += f"; only when {self.only_if[0]} is {self.only_if[1]}"
        if self.optional:
            text += "; blank = " + (self.note.split("blank = ", 1)[1] if "blank = " in self.note else "default")
        return text

    def message(self) -> str:
        return f"{self.title}: {self.expectation()}"


def _num(v: Any) -> str:
    if v is None:
        return "?"
    v = float(v)
    if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
        return f"{v:.3g}".replace("e+0", "e").replace("e+", "e")
    return f"{v:,.10g}" if abs(v) >= 1000 else f"{v:.10g}"


def _bounds(info) -> tuple[float | None, float | None]:
    lo = hi = None
    for meta in info.metadata:
        if isinstance(meta, (at.Ge, at.Gt)):
            lo = float(getattr(meta, "ge", getattr(meta, "gt", None)))
        if isinstance(meta, (at.Le, at.Lt)):
            hi = float(getattr(meta, "le", getattr(meta, "lt", None)))
    return lo, hi


def _kind(annotation: Any) -> tuple[str, tuple[str, ...], bool]:
    args = typing.get_args(annotation)
    optional = False
    if typing.get_origin(annotation) is typing.Union:
        optional = type(None) in args
        annotation = next(a for a in args if a is not type(None))
        args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        return "enum", tuple(str(a) for a in args), optional
    if annotation is int:
        return "int", (), optional
    return "float", (), optional


def _row(key: str, info, block: str) -> InputRow:
    extra = info.json_schema_extra or {}
    kind, choices, optional = _kind(info.annotation)
    kind = extra.get("kind", kind)
    lo, hi = _bounds(info)
    cond = required_if(info)
    when = (f"{key.rsplit('.', 1)[0]}.{cond[0]}", cond[1]) if cond else None
    only = tuple(extra["only_if"].split("=", 1)) if extra.get("only_if") else None
    only_if = (f"{key.rsplit('.', 1)[0]}.{only[0]}", only[1]) if only else None
    return InputRow(key, info.description, info.title, extra["unit"], kind, choices, lo, hi, block,
                    extra.get("note", ""), (info.examples or [None])[0], optional, when, only_if)


def _rows_of(section: str, model: type[BaseModel], block: str) -> list[InputRow]:
    return [_row(f"{section}.{field}", info, block) for field, info in model.model_fields.items()]


def input_rows() -> list[InputRow]:
    """Every input row of the Plan sheet, in order (the scenario name is the header row)."""
    rows = [
        InputRow("name", "Scenario name (the column header on every sheet)", "Scenario name", "text", "name",
                 block="Scenario"),
        InputRow("model", "Model (catalogue id, Models sheet)", "Model", "id", "model", block="Scenario"),
        InputRow("gpu", "GPU (catalogue id, Hardware sheet)", "GPU", "id", "gpu", block="Scenario"),
        _row("purpose", Scenario.model_fields["purpose"], "Scenario"),
    ]
    for section, block in SECTIONS:
        sub = Scenario.model_fields[section].annotation
        rows += _rows_of(section, sub, block)
    return rows


def input_values(s: Scenario, model_id: str) -> dict[str, Any]:
    """The scenario's own value for each input key (None where the scenario leaves it to the catalogue)."""
    out: dict[str, Any] = {"name": s.name, "model": model_id, "gpu": s.gpu, "purpose": s.purpose}
    for section, _ in SECTIONS:
        for field, value in getattr(s, section).model_dump().items():
            out[f"{section}.{field}"] = value
    return out
