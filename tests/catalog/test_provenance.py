"""provenance_flags: every estimated or assumed catalogue value a plan rests on (workbook/catalog/provenance.py)."""

from __future__ import annotations

import dataclasses

import pytest

from workbook.catalog import load_catalog
from workbook.catalog.provenance import PRICE_FIELD_BY_BASIS, ProvenanceFlag, provenance_flags
from workbook.errors import InputError

CATALOG = load_catalog()


def test_flag_is_a_frozen_dataclass_with_the_contract_fields() -> None:
    names = [f.name for f in dataclasses.fields(ProvenanceFlag)]
    assert names == ["record", "field", "status", "text", "source"]
    flag = ProvenanceFlag(record="gpus.yaml:x", field="f", status="assumed", text="t", source="s")
    with pytest.raises(dataclasses.FrozenInstanceError):
        flag.status = "estimated"  # type: ignore[misc]


def test_every_assumed_efficiency_record_is_flagged() -> None:
    for gid, eff in CATALOG.efficiency.items():
        flags = provenance_flags(CATALOG, gid, None, "on_demand")
        whole = [f for f in flags if f.record == f"efficiency.yaml:{gid}" and f.field == "source"]
        assert bool(whole) == eff.source.lower().startswith("assumed"), gid
        for f in whole:
            assert f.status == "assumed" and f.source == eff.source


def test_price_flags_follow_the_basis_and_the_field_sources() -> None:
    for gid, gpu in CATALOG.gpus.items():
        for basis, field in PRICE_FIELD_BY_BASIS.items():
            flags = [f for f in provenance_flags(CATALOG, gid, None, basis) if f.field.startswith("price_")]
            assert all(f.field == field for f in flags), (gid, basis)  # only the basis's price
            text = gpu.field_sources.get(field, "").lower()
            marked = getattr(gpu, field, None) is not None and (
                text.startswith("estimate") or "estimate" in text or "verify" in text or "assumed equal" in text)
            assert bool(flags) == marked, (gid, basis, text)
            assert all(f.status in ("estimated", "assumed") and f.source for f in flags)


def test_a_model_and_an_unknown_gpu() -> None:
    flags = provenance_flags(CATALOG, "h100", "gpt4-class-moe", None)
    assert any(f.record == "models.yaml:gpt4-class-moe" for f in flags) == CATALOG.model("gpt4-class-moe").hypothetical
    with pytest.raises(InputError):
        provenance_flags(CATALOG, "no-such-gpu", None, None)


def test_no_basis_flags_every_marked_price() -> None:
    gpu = CATALOG.gpu("h100")
    marked = {f for f, t in gpu.field_sources.items() if f.startswith("price_") and "estimate" in t.lower()
              and getattr(gpu, f, None) is not None}
    got = {f.field for f in provenance_flags(CATALOG, "h100", None, None) if f.field.startswith("price_")}
    assert got == marked and marked
