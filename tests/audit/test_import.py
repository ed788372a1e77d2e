"""workbook import: an edited price goes back into the catalogue file (comments and order kept), a rebuild
shows it on the Hardware sheet and in every number that depends on it; bad edits write nothing."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from workbook.calc import compute
from workbook.catalog import load_catalog
from tests.private_catalog import private_catalog
from workbook.cli import main
from workbook.readback import key_rows
from workbook.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "17.9.4-70b-plan-h800.yaml"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    """A private catalogue (with one scenario) and a workbook built from it."""
    cat = private_catalog(tmp_path, SCENARIO)
    assert main(["build", "--catalog", str(cat), "-o", str(tmp_path / "wb.xlsx")]) == 0
    return tmp_path


def _hardware_cell(ws, gpu: str, field: str) -> str:
    header = next(r for r in range(1, 20) if ws.cell(r, 1).value == "id")
    col = next(c for c in range(1, ws.max_column + 1) if ws.cell(header, c).value == field)
    row = next(r for r in range(header, ws.max_row + 1) if ws.cell(r, 1).value == gpu)
    return ws.cell(row, col).coordinate


def _edit(path: Path, edit) -> None:
    wb = openpyxl.load_workbook(path)
    edit(wb)
    wb.save(path)


def _snapshot(cat: Path) -> dict[str, bytes]:
    return {p.relative_to(cat).as_posix(): p.read_bytes() for p in sorted(cat.rglob("*.yaml"))}


def test_price_round_trip(folder: Path, capsys) -> None:
    cat, wb_path = folder / "catalog", folder / "wb.xlsx"
    scenario = load_scenario(cat / "scenarios" / SCENARIO)
    before = compute(scenario, load_catalog(cat))
    basis = scenario.cost.price_basis
    _edit(wb_path, lambda wb: wb["Hardware"].__setitem__(
        _hardware_cell(wb["Hardware"], "h800", f"price_{basis}_usd_per_gpu_hour"), 3.10))
    original = _snapshot(cat)
    assert main(["import", str(wb_path), "--catalog", str(cat)]) == 0
    out = capsys.readouterr().out
    assert "gpus.yaml:" in out and f"h800.price_{basis}_usd_per_gpu_hour" in out and "-> 3.1" in out
    assert _snapshot(cat) == original, "import without --write changed a file"
    assert main(["import", str(wb_path), "--catalog", str(cat), "--write"]) == 0
    changed = _snapshot(cat)
    assert [k for k in changed if changed[k] != original[k]] == ["gpus.yaml"]
    old_lines = original["gpus.yaml"].decode().splitlines()
    new_lines = changed["gpus.yaml"].decode().splitlines()
    diff = [(a, b) for a, b in zip(old_lines, new_lines) if a != b]
    assert len(old_lines) == len(new_lines) and len(diff) == 1  # one line changed; comments and order kept
    assert diff[0][1].strip() == f"price_{basis}_usd_per_gpu_hour: 3.1"
    after = compute(scenario, load_catalog(cat))
    if scenario.cost.gpu_hour_usd is None:  # the scenario takes the catalogue price
        assert after["gpu_hour_usd"] == pytest.approx(3.10)
        assert after["train_cost_usd"] == pytest.approx(before["train_cost_usd"] * 3.10 / before["gpu_hour_usd"])
    rebuilt = folder / "rebuilt.xlsx"
    assert main(["build", "--catalog", str(cat), "-o", str(rebuilt)]) == 0
    ws = openpyxl.load_workbook(rebuilt)["Hardware"]
    assert ws[_hardware_cell(ws, "h800", f"price_{basis}_usd_per_gpu_hour")].value == pytest.approx(3.10)


def test_plan_input_goes_to_its_scenario_file(folder: Path) -> None:
    cat, wb_path = folder / "catalog", folder / "wb.xlsx"
    _edit(wb_path, lambda wb: wb["Plan"].__setitem__(f"F{key_rows(wb['Plan'])['training.target_days'] + 1}", 45))
    assert main(["import", str(wb_path), "--catalog", str(cat), "--write"]) == 0
    text = (cat / "scenarios" / SCENARIO).read_text()
    assert load_scenario(cat / "scenarios" / SCENARIO).training.target_days == 45
    assert text.startswith((ROOT / "catalog" / "scenarios" / SCENARIO).read_text().splitlines()[0])  # comments kept


def test_invalid_edit_writes_nothing(folder: Path, capsys) -> None:
    cat, wb_path = folder / "catalog", folder / "wb.xlsx"
    _edit(wb_path, lambda wb: wb["Hardware"].__setitem__(_hardware_cell(wb["Hardware"], "h800", "hbm_GB"), -80))
    original = _snapshot(cat)
    assert main(["import", str(wb_path), "--catalog", str(cat), "--write"]) == 2
    err = capsys.readouterr().err
    assert "gpus.yaml" in err and "hbm_GB" in err and "-80" in err
    assert _snapshot(cat) == original


def _copy_row(ws, id_header: str, src_id: str, new_id: str) -> None:
    header = next(r for r in range(1, 20) if ws.cell(r, 1).value == id_header)
    src = next(r for r in range(header, ws.max_row + 1) if ws.cell(r, 1).value == src_id)
    dst = next(r for r in range(src, ws.max_row + 2) if ws.cell(r, 1).value in (None, ""))
    for c in range(1, ws.max_column + 1):
        ws.cell(dst, c).value = ws.cell(src, c).value
    ws.cell(dst, 1).value = new_id


def test_added_gpu_row_becomes_a_record(folder: Path, capsys) -> None:
    cat, wb_path = folder / "catalog", folder / "wb.xlsx"
    _edit(wb_path, lambda wb: _copy_row(wb["Hardware"], "id", "h100", "h100-leased"))
    original = _snapshot(cat)
    assert main(["import", str(wb_path), "--catalog", str(cat), "--write"]) == 2  # a GPU needs its efficiency row
    assert "no efficiency record for GPU h100-leased" in capsys.readouterr().err
    assert _snapshot(cat) == original
    _edit(wb_path, lambda wb: _copy_row(wb["Efficiency"], "gpu", "h100", "h100-leased"))
    assert main(["import", str(wb_path), "--catalog", str(cat), "--write"]) == 0
    gpus = load_catalog(cat).gpus
    assert "h100-leased" in gpus and gpus["h100-leased"].hbm_GB == gpus["h100"].hbm_GB
