"""The selected GPU's and model's catalogue fields, as numbers (spec 17.1.5 table, 17.2.5 table).

Flags are 1/0 and missing values (a GPU without FP8) are 0, as the workbook's INDEX gives them.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.units import field_unit

#: catalogue fields that are text or provenance, not numbers
_SKIP = {"id", "name", "source", "as_of", "field_sources", "nvlink_convention", "memory_kind", "family",
         "ffn", "attention", "norm", "pcie_gen_label"}


def _numeric_fields(cls) -> list[str]:
    out = []
    for name, info in cls.model_fields.items():
        if name in _SKIP:
            continue
        text = str(info.annotation)
        if "str" in text or "date" in text or "dict" in text or "Literal" in text:
            continue
        out.append(name)
    return out


def _quantities() -> list[Q]:
    from workbook.catalog.models import Gpu, Model

    qs = [Q(f"gpu_{f}", _unit(Gpu, f), f"Selected GPU: {f}", "17.1.5") for f in _numeric_fields(Gpu)]
    qs += [Q(f"model_{f}", _unit(Model, f), f"Selected model: {f}", "17.2.5") for f in _numeric_fields(Model)]
    return qs


def _unit(cls, field: str) -> str:
    """The catalogue field's unit (its name's suffix; 0/1 for yes/no fields; else a count)."""
    return field_unit(field, cls.model_fields[field].annotation)


QUANTITIES = _quantities()


def _num(v) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    return float(v)


def compute(ctx: Context) -> dict[str, float]:
    out = {}
    for q in QUANTITIES:
        kind, field = q.name.split("_", 1)
        out[q.name] = _num(getattr(ctx.gpu if kind == "gpu" else ctx.model, field))
    return out
