"""Which catalogue values a plan rests on are estimates or assumptions (docs/contract.md, issue 25).

A plan must never silently rest on a guess. ``provenance_flags`` lists, for one GPU (and model and price
basis), every value the catalogue itself marks as not measured or not published:

- an efficiency record (catalog/efficiency.yaml) whose ``source`` starts with "assumed" (copied from
  another GPU), or one of whose ``field_sources`` says "assumed";
- a price of the basis (catalog/gpus.yaml) whose ``field_sources`` text starts with "estimate:" or says
  "estimate", "assumed" or "verify";
- any other GPU or model field whose ``field_sources`` text starts with "estimate:" or "assumed", or says
  "verify"; a model marked ``hypothetical``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional

__all__ = ["PRICE_FIELD_BY_BASIS", "PURCHASE_FIELDS", "ProvenanceFlag", "provenance_flags"]

Status = Literal["estimated", "assumed"]

#: scenario ``cost.price_basis`` -> the gpus.yaml field (USD per GPU-hour)
PRICE_FIELD_BY_BASIS: dict[str, str] = {
    "on_demand": "price_on_demand_usd_per_gpu_hour",
    "reserved": "price_reserved_usd_per_gpu_hour",
    "reserved_1y": "price_reserved_1y_usd_per_gpu_hour",
    "reserved_3y": "price_reserved_3y_usd_per_gpu_hour",
    "spot": "price_spot_usd_per_gpu_hour",
}
#: purchase prices (USD): flagged when no price basis is asked (no calculation reads them yet: the TCO takes the
#: server capex from the scenario or Defaults), so a plan at a basis is not flagged for a value it does not use
PURCHASE_FIELDS: tuple[str, ...] = ("purchase_usd_per_gpu", "purchase_usd_per_server")

_PRICE_FIELDS = frozenset(PRICE_FIELD_BY_BASIS.values()) | frozenset(PURCHASE_FIELDS)


@dataclass(frozen=True)
class ProvenanceFlag:
    """One catalogue value a plan uses that is an estimate or an assumption.

    ``record`` is "<file>:<id>" (e.g. "efficiency.yaml:b200"), ``field`` the field name ("source" when the
    whole record is assumed), ``text`` one sentence for a reader, ``source`` the catalogue's own words.
    """

    record: str
    field: str
    status: Status
    text: str
    source: str


def _status_of(text: str) -> Optional[Status]:
    """'estimated' / 'assumed' / None for a field_sources or source text."""
    low = text.strip().lower()
    if low.startswith("inferred"):
        return None  # derived from a published figure by a stated rule
    if low.startswith("assumed") or "assumed equal" in low or low.endswith("- assumed"):
        return "assumed"
    if low.startswith("estimate") or "estimate" in low or "verify" in low:
        return "estimated"
    return None


def _gpu_flags(gpu: Any, price_basis: Optional[str]) -> list[ProvenanceFlag]:
    rec = f"gpus.yaml:{gpu.id}"
    wanted_prices = set(_PRICE_FIELDS) if price_basis is None else {PRICE_FIELD_BY_BASIS.get(price_basis, "")}
    out = []
    for field, text in gpu.field_sources.items():
        if field in _PRICE_FIELDS and (field not in wanted_prices or getattr(gpu, field, None) is None):
            continue
        status = _status_of(text)
        if status is None:
            continue
        value = getattr(gpu, field, None)
        what = "price" if field in _PRICE_FIELDS else "value"
        out.append(ProvenanceFlag(
            record=rec, field=field, status=status, source=text,
            text=f"{gpu.name}: {field} = {value} is {'an estimate' if status == 'estimated' else 'assumed'}"
                 f" ({what} not published or not measured)"))
    return out


def _efficiency_flags(eff: Any) -> list[ProvenanceFlag]:
    rec = f"efficiency.yaml:{eff.gpu}"
    out = []
    if eff.source.strip().lower().startswith("assumed"):
        out.append(ProvenanceFlag(
            record=rec, field="source", status="assumed", source=eff.source,
            text=f"step-time efficiency factors of {eff.gpu} are assumed (copied from another GPU, "
                 f"no measurement of its own)"))
    for field, text in eff.field_sources.items():
        if _status_of(text) == "assumed":
            out.append(ProvenanceFlag(record=rec, field=field, status="assumed", source=text,
                                      text=f"{eff.gpu}: {field} = {getattr(eff, field)} is assumed"))
    return out


def _model_flags(model: Any) -> list[ProvenanceFlag]:
    rec = f"models.yaml:{model.id}"
    out = []
    if getattr(model, "hypothetical", False):
        out.append(ProvenanceFlag(record=rec, field="hypothetical", status="assumed", source=model.source,
                                  text=f"{model.name} is a hypothetical architecture, not a published model"))
    for field, text in model.field_sources.items():
        status = _status_of(text)
        if status is not None:
            out.append(ProvenanceFlag(record=rec, field=field, status=status, source=text,
                                      text=f"{model.name}: {field} = {getattr(model, field, None)} is "
                                           f"{'an estimate' if status == 'estimated' else 'assumed'}"))
    return out


def provenance_flags(catalog: Any, gpu_id: str, model_id: Optional[str] = None,
                     price_basis: Optional[str] = None) -> list[ProvenanceFlag]:
    """Every estimated or assumed catalogue value a plan on ``gpu_id`` (and ``model_id``) rests on.

    ``price_basis`` ('on_demand', 'reserved', 'reserved_1y', 'reserved_3y', 'spot') limits the price flags to
    that basis; None flags every price the GPU carries. Order: GPU fields, efficiency record, model.
    """
    flags = _gpu_flags(catalog.gpu(gpu_id), price_basis)
    if gpu_id in catalog.efficiency:
        flags += _efficiency_flags(catalog.efficiency[gpu_id])
    if model_id is not None:
        flags += _model_flags(catalog.model(model_id))
    return flags
