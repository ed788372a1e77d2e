"""catalog/validation/pending/*.yaml: published points that need a scenario input of the shared contract not
on main yet. Each file is a validation file (source, as_of, publication, a minority of holdouts), names at
least one contract-only input, and loads once those inputs are taken out (the layouts divide, the keys
exist), so moving it up a level after the merge is only a move."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from workbook.validation import DEFAULT_DIR, default_files, load_validation_file
from workbook.validation.model import ValidationFile

PENDING = sorted((DEFAULT_DIR / "pending").glob("*.yaml"))
#: scenario inputs of the shared contract (docs/contract.md) that main does not have yet
CONTRACT_ONLY = {"training": {"framework", "fp8_recipe", "reshard_after_forward"},
                 "inference": {"load", "concurrency"}}


def _strip(scenario: dict) -> tuple[dict, bool]:
    """The scenario without the contract-only inputs (op_selective read as selective); whether it had any."""
    out, had = copy.deepcopy(scenario), False
    for section, names in CONTRACT_ONLY.items():
        block = out.get(section) or {}
        for name in names & set(block):
            block.pop(name)
            had = True
    training = out.get("training") or {}
    if training.get("recompute") == "op_selective":
        training["recompute"] = "selective"
        had = True
    return out, had


def test_default_run_does_not_read_the_pending_folder():
    assert not {p.parent.name for p in default_files()} & {"pending"}


@pytest.mark.parametrize("path", PENDING, ids=[p.stem for p in PENDING])
def test_pending_file_loads_without_the_contract_only_inputs(path: Path, tmp_path: Path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    vf = ValidationFile.model_validate(data)
    assert vf.publication, path.name
    assert 2 * sum(p.holdout for p in vf.points) < len(vf.points), path.name
    data["scenario"], needs = _strip(data["scenario"])
    for point in data["points"]:
        if point.get("scenario"):
            point["scenario"], had = _strip(point["scenario"])
            needs = needs or had
    assert needs, f"{path.name} uses no contract-only input: it belongs in catalog/validation/"
    stripped = tmp_path / path.name
    stripped.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    loaded = load_validation_file(stripped)
    assert len(loaded.cases) == len(vf.points)
    assert all(c.point.source.strip() and c.point.notes.strip() for c in loaded.cases)
