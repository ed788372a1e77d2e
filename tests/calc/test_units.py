"""The unit vocabulary: every unit the workbook shows is one of workbook.units.UNITS."""

from __future__ import annotations

from workbook.calc import registry
from workbook.units import UNITS, field_unit


def test_every_quantity_unit_is_in_the_vocabulary():
    bad = {name: e.q.unit for name, e in registry().items() if e.q.unit not in UNITS}
    assert bad == {}


def test_catalogue_field_and_default_units_are_in_the_vocabulary():
    from workbook.catalog import load_catalog
    from workbook.catalog.models import Gpu, GpuEfficiency, Model

    for cls in (Gpu, Model, GpuEfficiency):
        for f, info in cls.model_fields.items():
            assert field_unit(f, info.annotation) in UNITS, f
    defaults = load_catalog().defaults.records
    assert {k: r.unit for k, r in defaults.items() if r.unit not in UNITS} == {}


def test_constant_units_are_in_the_vocabulary():
    from workbook.writer import _collect_constants

    consts, _ = _collect_constants()
    bad = {c[0]: c[2] for c in consts if c[2] not in UNITS}
    assert bad == {}


def test_field_units_from_the_name():
    assert field_unit("hbm_bw_GBps") == "GB/s" and field_unit("hbm_GB") == "GB"
    assert field_unit("price_spot_usd_per_gpu_hour") == "USD/GPU-h" and field_unit("tdp_W") == "W"
    assert field_unit("moe", bool) == "0/1" and field_unit("pcie_gen", int) == "gen"
    assert field_unit("d_model", int) == "count"
