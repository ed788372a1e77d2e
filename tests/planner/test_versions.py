"""Plan versions (workbook.planner.versions): --force keeps the earlier plan as numbered backups and the re-plan
lists what changed."""

from __future__ import annotations

from pathlib import Path

from workbook.planner import versions

REQUEST = Path("catalog/requests/17.9.4-70b-h800.yaml")
CATALOG = sorted(Path("catalog").glob("*.yaml"))


def _data(gpus: int, cost: float) -> dict:
    return {"training": {"recommended": {"gpu": "h800", "num_gpus": gpus, "train_cost_usd": cost,
                                         "train_days": 58.66}}, "serving": {"status": "not requested"}}


def _write_plan(path: Path, data: dict, force: bool) -> dict:
    rec = versions.prepare(path, force, str(REQUEST), CATALOG, data)
    for p in versions.files(path)[:-1]:
        p.write_text(f"version {data['version']}")
    versions.write_record(path, rec)
    return data


def test_force_keeps_numbered_backups_and_lists_the_changes(tmp_path):
    path = tmp_path / "17.9.4-70b-h800.xlsx"
    first = _write_plan(path, _data(528, 1486690.0), force=False)
    assert first["version"] == 1 and first["changes"] == []
    second = _write_plan(path, _data(544, 1492209.0), force=True)
    assert second["version"] == 2
    for s in versions.SUFFIXES:  # version 1 kept whole
        assert (tmp_path / f"17.9.4-70b-h800.backup-1{s}").exists()
    assert (tmp_path / "17.9.4-70b-h800.backup-1.xlsx").read_text() == "version 1"
    assert ["result", "Training: GPUs", "528", "544"] in second["changes"]
    assert ["result", "Training: rent for the run (USD)", "$1,486,690", "$1,492,209"] in second["changes"]
    assert not [c for c in second["changes"] if c[0] in ("input", "catalogue")]  # same request and catalogue
    third = _write_plan(path, _data(544, 1492209.0), force=True)
    assert third["version"] == 3 and third["changes"] == []
    assert (tmp_path / "17.9.4-70b-h800.backup-2.xlsx").read_text() == "version 2"


def test_a_changed_request_field_is_an_input_change(tmp_path):
    before = versions.record(str(REQUEST), CATALOG, _data(528, 1.0), 1)
    edited = tmp_path / "r.yaml"
    edited.write_text(REQUEST.read_text().replace("target_days: 60", "target_days: 58"))
    after = versions.record(str(edited), CATALOG, _data(528, 1.0), 2)
    assert versions.changes(before, after) == [("input", "target_days", "60", "58")]
