"""The shipped catalogue: loads, provenance on every record, unique ids, spec values, lookups."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from workbook.catalog import DEFAULT_DIR, Gpu, Model, load_catalog
from workbook.catalog.load import load_records
from workbook.catalog.yamlio import load_yaml
from workbook.errors import InputError
from workbook.scenario.model import CostInputs, NetworkInputs, StorageInputs
from workbook.scenario.resolve import FROM_GPU, LEFT_NULL

CATALOG = load_catalog()
SPEC_GPUS = {"h100", "h800", "h200", "h20", "a100-80gb", "a800", "b200", "l40s", "rtx-4090", "v100"}
SPEC_MODELS = {
    "llama-7b", "llama-13b", "llama-65b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-405b",
    "qwen-2.5-7b", "qwen-2.5-72b", "mistral-7b", "mixtral-8x7b", "mixtral-8x22b", "deepseek-v2",
    "deepseek-v3", "gemma-2-27b", "gpt-2-small", "gpt-3-175b", "gpt4-class-moe",
}


def test_catalog_loads_with_every_spec_gpu_and_model() -> None:
    assert SPEC_GPUS <= set(CATALOG.gpus)
    assert SPEC_MODELS <= set(CATALOG.models)
    assert len(CATALOG.defaults.records) >= 20


def test_every_record_has_source_and_as_of() -> None:
    records = [*CATALOG.gpus.values(), *CATALOG.models.values(), *CATALOG.defaults.records.values()]
    for r in records:
        assert r.source.strip(), r
        assert isinstance(r.as_of, dt.date), r


@pytest.mark.parametrize("name, id_field", [("gpus.yaml", "id"), ("models.yaml", "id"), ("defaults.yaml", "key")])
def test_ids_unique_in_files(name: str, id_field: str) -> None:
    data, _ = load_yaml(DEFAULT_DIR / name)
    ids = [rec[id_field] for rec in data]
    assert len(ids) == len(set(ids))


def test_field_sources_name_real_fields_and_external_values_are_marked() -> None:
    for g in CATALOG.gpus.values():
        assert set(g.field_sources) <= set(Gpu.model_fields)
    for m in CATALOG.models.values():
        assert set(m.field_sources) <= set(Model.model_fields)
    # values not stated by the spec are marked as external datasheet values
    assert "external" in CATALOG.gpu("h200").field_sources["hbm_bw_GBps"]
    assert "external" in CATALOG.gpu("a100-80gb").field_sources["nvlink_bw_GBps"]


def test_spec_stated_gpu_values() -> None:
    h800, h20, h100 = CATALOG.gpu("h800"), CATALOG.gpu("h20"), CATALOG.gpu("h100")
    assert (h800.bf16_dense_TFLOPS, h800.fp8_dense_TFLOPS, h800.hbm_GB, h800.hbm_bw_GBps) == (989.5, 1979, 80, 3350)
    assert (h800.nvlink_bw_GBps, h800.nvlink_links, h800.tdp_W) == (400, 8, 700)
    assert (h20.bf16_dense_TFLOPS, h20.fp8_dense_TFLOPS, h20.hbm_GB, h20.hbm_bw_GBps) == (148, 296, 96, 4000)
    assert (h20.nvlink_bw_GBps, h20.tdp_W) == (900, 500)
    assert (h100.nvlink_bw_GBps, h100.pcie_bw_GBps) == (900, 64)
    assert CATALOG.gpu("a100-80gb").fp8_dense_TFLOPS is None  # Ampere has no FP8
    assert CATALOG.gpu("b200").hbm_GB == 192 and CATALOG.gpu("b200").fp4_dense_TFLOPS == 9000
    assert CATALOG.gpu("rtx-4090").memory_kind == "GDDR6X"
    for g in CATALOG.gpus.values():
        assert g.nvlink_convention == "bidirectional_aggregate"


def test_spec_prices() -> None:
    h800, h20 = CATALOG.gpu("h800"), CATALOG.gpu("h20")
    assert (h800.price_on_demand_usd_per_gpu_hour, h800.price_reserved_usd_per_gpu_hour,
            h800.price_spot_usd_per_gpu_hour) == (4.0, 2.0, 1.0)
    assert (h20.price_on_demand_usd_per_gpu_hour, h20.price_spot_usd_per_gpu_hour) == (1.0, 0.5)
    assert h800.price_usd_per_gpu_hour("reserved") == 2.0


def test_spec_defaults() -> None:
    d = CATALOG.defaults.as_dict()
    assert d["nic_Gbps"] == 400 and d["nics_per_node"] == 8
    assert d["encoding_efficiency"] == pytest.approx(64 / 66)
    assert d["cpu_dram_bw_GBps"] == 50 and d["nvme_bw_GBps"] == 7
    assert d["dataset_bytes_per_token"] == 4
    assert d["nvlink_direction_factor"] == 1 and d["pcie_direction_factor"] == 1
    assert d["fs_write_GBps"] == 100 and d["depreciation_years"] == 3


@pytest.mark.parametrize("section", [NetworkInputs, StorageInputs, CostInputs])
def test_every_null_scenario_field_has_a_default(section) -> None:
    for name, info in section.model_fields.items():
        if info.default is None and name not in LEFT_NULL and name not in FROM_GPU:
            assert name in CATALOG.defaults, f"{section.__name__}.{name} has no catalogue default"
            # the default must itself be a valid value of the field
            section.model_validate({name: CATALOG.defaults.value(name)})


def test_unknown_ids_name_the_closest() -> None:
    with pytest.raises(InputError, match="closest: h800") as err:
        CATALOG.gpu("h8000")
    assert err.value.field == "gpu"
    with pytest.raises(InputError, match="llama-3-70b"):
        CATALOG.model("llama3-70b")
    with pytest.raises(InputError, match="closest: nic_Gbps"):
        CATALOG.defaults.value("nic_gbps")


def test_duplicate_id_in_catalog_dir(tmp_path: Path) -> None:
    for f in ("gpus.yaml", "models.yaml", "defaults.yaml", "efficiency.yaml", "mfu.yaml"):
        shutil.copy(DEFAULT_DIR / f, tmp_path / f)
    text = (tmp_path / "models.yaml").read_text()
    (tmp_path / "models.yaml").write_text(text.replace("- id: llama-13b", "- id: llama-7b"))
    with pytest.raises(InputError, match="duplicate id 'llama-7b'") as err:
        load_catalog(tmp_path)
    assert err.value.file.endswith("models.yaml") and err.value.line is not None


def test_model_consistency_rules() -> None:
    base = CATALOG.model("llama-3-8b").model_dump()
    with pytest.raises(ValidationError, match="n_kv_heads == n_heads"):
        Model.model_validate({**base, "attention": "mha"})
    with pytest.raises(ValidationError, match="moe: true needs"):
        Model.model_validate({**base, "moe": True})
    with pytest.raises(ValidationError, match="only apply to attention 'mla'"):
        Model.model_validate({**base, "kv_lora_rank": 512})
    with pytest.raises(ValidationError, match="field_sources names unknown fields"):
        Model.model_validate({**base, "field_sources": {"nope": "x"}})


def test_load_records_rejects_non_list(tmp_path: Path) -> None:
    p = tmp_path / "gpus.yaml"
    p.write_text("id: h800\n")
    with pytest.raises(InputError, match="list of records"):
        load_records(p, Gpu)
