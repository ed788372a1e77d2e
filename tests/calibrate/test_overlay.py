"""Catalogue overlays: some files and records merged over the shipped catalogue by id; bad overlays refused."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from workbook.calibrate.factors import Factor
from workbook.calibrate.overlay import is_overlay, load_catalog_dir, write_overlay
from workbook.catalog import load_catalog
from workbook.errors import InputError


def test_written_overlay_merges_efficiency_and_engine_records_by_id(tmp_path):
    cat = load_catalog()
    values = {Factor("efficiency.gemm_efficiency", "h100"): 0.61, Factor("engine.cpu_overhead_frac", "vllm-0.6.0"): 0.2,
              Factor("device.decode_hbm_efficiency", "h100"): 0.8}
    files = write_overlay(tmp_path, cat, values, source="calibrated from x.yaml", as_of=dt.date(2026, 12, 4),
                          note="fit: 3 points")
    assert sorted(p.name for p in files) == ["efficiency.yaml", "engines.yaml"] and is_overlay(tmp_path)
    merged = load_catalog_dir(tmp_path)
    for f, v in values.items():
        assert f.value(merged) == v
    assert merged.efficiency["a100-80gb"] == cat.efficiency["a100-80gb"]
    assert [p.id for p in merged.engines.profiles] == [p.id for p in cat.engines.profiles]
    assert merged.engines.profile("vllm-0.10") == cat.engines.profile("vllm-0.10")
    assert merged.efficiency["h100"].source == "calibrated from x.yaml"


def test_unknown_gpu_in_an_overlay_names_the_file(tmp_path):
    rec = load_catalog().efficiency["h100"].model_dump(mode="json")
    rec["gpu"] = "h999"
    (tmp_path / "efficiency.yaml").write_text(yaml.safe_dump([rec]))
    with pytest.raises(InputError) as e:
        load_catalog_dir(tmp_path)
    assert "efficiency.yaml" in str(e.value) and "h999" in str(e.value)


def test_bad_value_in_an_overlay_engine_profile_is_refused(tmp_path):
    prof = load_catalog().engines.profile("vllm-0.10").model_dump(mode="json")
    prof["memory_fraction"] = 3
    (tmp_path / "engines.yaml").write_text(yaml.safe_dump({"profiles": [prof]}))
    with pytest.raises(InputError) as e:
        load_catalog_dir(tmp_path)
    assert "engines.yaml" in str(e.value) and "memory_fraction" in str(e.value)


def test_a_folder_that_is_neither_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError) as e:
        load_catalog_dir(tmp_path)
    assert "neither a catalogue" in str(e.value)


def test_a_profile_twice_in_an_overlay_is_refused(tmp_path):
    prof = load_catalog().engines.profile("vllm-0.10").model_dump(mode="json")
    (tmp_path / "engines.yaml").write_text(yaml.safe_dump({"profiles": [prof, dict(prof)]}))
    with pytest.raises(InputError) as e:
        load_catalog_dir(tmp_path)
    assert "engines.yaml" in str(e.value) and "duplicate id 'vllm-0.10'" in str(e.value)


def test_an_overlay_record_without_a_newer_field_keeps_the_shipped_value(tmp_path):
    """An overlay written before serving_gemm_efficiency existed still loads: the fields its record leaves out keep
    the shipped record's values; the fields it has replace them, and bad ones are still refused by line."""
    cat = load_catalog()
    write_overlay(tmp_path, cat, {Factor("efficiency.gemm_efficiency", "a100-80gb"): 0.61}, source="old overlay",
                  as_of=dt.date(2026, 11, 30), note="fit: 1 point")
    path = tmp_path / "efficiency.yaml"
    recs = yaml.safe_load(path.read_text())
    for rec in recs:
        rec.pop("serving_gemm_efficiency")
    path.write_text(yaml.safe_dump(recs, sort_keys=False))
    merged = load_catalog_dir(tmp_path)
    for gpu in ("a100-80gb", "a100-40gb", "a800"):
        assert merged.efficiency[gpu].gemm_efficiency == 0.61
        assert merged.efficiency[gpu].serving_gemm_efficiency == cat.efficiency[gpu].serving_gemm_efficiency
    recs[0]["hbm_efficiency"] = 1.5
    path.write_text(yaml.safe_dump(recs, sort_keys=False))
    with pytest.raises(InputError) as e:
        load_catalog_dir(tmp_path)
    assert "efficiency.yaml" in str(e.value) and "hbm_efficiency" in str(e.value)
