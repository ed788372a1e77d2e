"""efficiency.yaml ``compute_as``: GPUs on one compute die share its matmul and attention efficiency; the loader
refuses a tie that names no record, a chain, or a value that differs, naming file, line, record and field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workbook.calibrate.overlay import load_overlay
from workbook.catalog import load_catalog
from workbook.catalog.efficiency import load_efficiency
from workbook.catalog.models import COMPUTE_FIELDS, compute_record
from workbook.errors import InputError

SHIPPED = Path(__file__).resolve().parents[2] / "catalog" / "efficiency.yaml"


def _edited(tmp_path: Path, gpu: str, **fields) -> Path:
    recs = yaml.safe_load(SHIPPED.read_text())
    for r in recs:
        if r["gpu"] == gpu:
            r.update(fields)
    out = tmp_path / "efficiency.yaml"
    out.write_text(yaml.safe_dump(recs, sort_keys=False))
    return out


def test_the_shipped_ties_are_the_same_dies():
    cat = load_catalog()
    ties = {g: r.compute_as for g, r in cat.efficiency.items() if r.compute_as}
    assert ties == {"a100-40gb": "a100-80gb", "a800": "a100-80gb", "h800": "h100", "h200": "h100",
                    "gb200": "b200", "mi325x": "mi300x"}
    for gpu, die in ties.items():
        assert compute_record(cat.efficiency, gpu) == die
        for f in COMPUTE_FIELDS:
            assert getattr(cat.efficiency[gpu], f) == getattr(cat.efficiency[die], f), (gpu, f)


def test_the_same_die_has_the_same_dense_peak_except_the_power_limited_parts():
    cat = load_catalog()
    same_peak = [g for g, r in cat.efficiency.items() if r.compute_as
                 and cat.gpus[g].bf16_dense_TFLOPS == cat.gpus[r.compute_as].bf16_dense_TFLOPS]
    assert set(same_peak) >= {"a100-40gb", "a800", "h800", "h200", "mi325x"}


def test_a_tied_value_that_differs_is_refused_with_both_values(tmp_path):
    path = _edited(tmp_path, "h200", attention_efficiency=0.5)
    with pytest.raises(InputError, match=r"h200.attention_efficiency is 0.5 but h200 has compute_as: h100 "
                                         r"\(the same compute die\), whose attention_efficiency is") as err:
        load_efficiency(path)
    assert err.value.line is not None and err.value.field == "h200.attention_efficiency"
    assert err.value.file == str(path)


@pytest.mark.parametrize("target", ["nope", "h800", "h200"])
def test_a_tie_to_an_unknown_record_a_chain_or_itself_is_refused(tmp_path, target):
    path = _edited(tmp_path, "h200", compute_as=target)
    with pytest.raises(InputError, match="h200.compute_as names") as err:
        load_efficiency(path)
    assert err.value.field == "h200.compute_as" and err.value.line is not None


def test_an_overlay_that_moves_a_die_without_its_tied_gpus_is_refused(tmp_path):
    rec = yaml.safe_load(SHIPPED.read_text())
    h100 = next(r for r in rec if r["gpu"] == "h100")
    h100["attention_efficiency"] = 0.3
    (tmp_path / "efficiency.yaml").write_text(yaml.safe_dump([h100], sort_keys=False))
    with pytest.raises(InputError, match="has compute_as: h100"):
        load_overlay(tmp_path)


def test_compute_as_is_not_a_workbook_column():
    """The tie is a catalogue-review rule; on the Efficiency sheet each GPU's row stays its own input."""
    from workbook.writer.catalog_sheets import table_fields

    assert "compute_as" not in table_fields(list(load_catalog().efficiency.values()))
