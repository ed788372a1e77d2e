"""Catalogue messages: the record by its id, unknown fields first with the closest name, every problem,
null prices, and published parameter counts checked against the architecture (workbook/catalog/problems.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbook.catalog import DEFAULT_DIR, Gpu, load_catalog
from workbook.catalog.load import load_records
from workbook.errors import InputError

H100_LINES = (DEFAULT_DIR / "gpus.yaml").read_text(encoding="utf-8")


def _gpus_file(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "gpus.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _copy_catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "catalog"
    shutil.copytree(DEFAULT_DIR, folder)
    return folder


def test_a_misspelt_field_is_named_first_with_the_closest_name(tmp_path: Path) -> None:
    text = H100_LINES.replace("  price_on_demand_usd_per_gpu_hour: 3.00\n", "  price_on_demnd_usd_per_gpu_hour: 3.00\n")
    text = text.replace("  tdp_W: 700\n  sm_count: 132\n  gpus_per_node: 8\n  price_on_demnd",
                        "  sm_count: 132\n  gpus_per_node: 8\n  price_on_demnd")  # h100 also loses tdp_W
    with pytest.raises(InputError) as info:
        load_records(_gpus_file(tmp_path, text), Gpu)
    err = str(info.value)
    assert info.value.field == "h100.price_on_demnd_usd_per_gpu_hour"
    assert "unknown field (did you mean price_on_demand_usd_per_gpu_hour?)" in err
    assert "h100.tdp_W: required field is missing" in err  # every problem, after the unknown one
    assert "[" not in info.value.field and len(err.splitlines()) == 1


def test_problems_of_several_records_are_all_named_by_id(tmp_path: Path) -> None:
    text = H100_LINES.replace("  hbm_GB: 141\n", "  hbm_GB: -141\n").replace("  tdp_W: 400\n", "  tdp_W: 0\n", 1)
    with pytest.raises(InputError) as info:
        load_records(_gpus_file(tmp_path, text), Gpu)
    err = str(info.value)
    assert "h200.hbm_GB" in err and "a100-80gb.tdp_W" in err and "1 more" in err


def test_null_price_means_not_known(tmp_path: Path) -> None:
    text = H100_LINES.replace("  price_on_demand_usd_per_gpu_hour: 3.00\n", "  price_on_demand_usd_per_gpu_hour: null\n")
    gpus = load_records(_gpus_file(tmp_path, text), Gpu)
    assert gpus["h100"].price_on_demand_usd_per_gpu_hour is None
    assert gpus["h100"].price_usd_per_gpu_hour("on_demand") is None


def test_published_parameter_count_far_from_the_architecture_is_refused(tmp_path: Path) -> None:
    folder = _copy_catalog(tmp_path)
    models = folder / "models.yaml"
    text = models.read_text(encoding="utf-8")
    start = text.index("- id: llama-3-8b")
    head, rest = text[:start], text[start:]
    line = next(ln for ln in rest.splitlines() if ln.startswith("  published_params_total:"))
    rest = rest.replace(line, "  published_params_total: 9.6e9", 1)  # 20 % above 8.03e9
    models.write_text(head + rest, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_catalog(folder)
    err = str(info.value)
    assert info.value.field == "llama-3-8b.published_params_total"
    assert "9,600,000,000" in err and "8,030,261,248" in err and "+19.5 %" in err


def test_shipped_catalogue_passes_the_parameter_check() -> None:
    load_catalog(DEFAULT_DIR)
