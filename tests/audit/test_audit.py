"""Round trip: build, edit with openpyxl as a user would, recalculate with LibreOffice (as Excel does on save),
and the audit finds exactly those edits and nothing else."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import openpyxl
import pytest

from workbook.audit.audit import audit
from workbook.cli import main
from workbook.engines.libreoffice import convert_recalculated
from workbook.writer import build
from workbook.catalog import load_catalog
from workbook.scenario import load_scenarios
from workbook.readback import key_rows
from workbook.writer.layout import value_col_name

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [ROOT / "catalog" / "scenarios" / n for n in ("17.9.1-llama-7b-h800.yaml", "17.9.4-70b-plan-h800.yaml")]
EDIT_KINDS = {"input_changed", "catalogue_row_added", "formula_overwritten", "formula_altered", "formula_deleted",
              "constant_changed", "cell_added", "rows_moved", "sheet_renamed", "sheet_removed", "sheet_added",
              "input_invalid"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("audit") / "wb.xlsx"
    build(path, load_scenarios(SCENARIOS), load_catalog(), [("Catalogue hash", "test")])
    return path


def _edit(built: Path, tmp: Path, edit, recalc: bool = True) -> Path:
    path = tmp / "edited.xlsx"
    shutil.copy(built, path)
    wb = openpyxl.load_workbook(path)
    edit(wb)
    wb.save(path)
    if not recalc:
        return path
    return convert_recalculated([path], tmp / "lo")[0]


def _cell(wb, sheet: str, key: str, i: int = 0) -> str:
    return f"{value_col_name(i)}{key_rows(wb[sheet])[key] + 1}"


def _kinds(report) -> Counter:
    return Counter(f.kind for f in report.findings if f.kind in EDIT_KINDS)


def test_unedited_is_sound(built: Path) -> None:
    r = audit(built)
    assert r.sound and not r.findings and r.recomputed and r.cells_compared > 500


def test_libreoffice_round_trip_is_sound(built: Path, tmp_path: Path) -> None:
    r = audit(_edit(built, tmp_path, lambda wb: None))
    assert r.sound, r.text()
    assert not r.findings


def test_changed_price(built: Path, tmp_path: Path) -> None:
    def edit(wb):
        wb["Plan"][_cell(wb, "Plan", "cost.gpu_hour_usd", 1)] = 3.25
    r = audit(_edit(built, tmp_path, edit))
    assert _kinds(r) == Counter({"input_changed": 1})
    (f,) = r.of("input_changed")
    assert f.sheet == "Plan" and f.new == "3.25" and "Price" in f.label
    assert r.sound and r.recomputed  # a changed input is an edit, not a problem, once recalculated


def test_changed_price_not_recalculated_is_stale(built: Path, tmp_path: Path) -> None:
    def edit(wb):
        wb["Plan"][_cell(wb, "Plan", "cost.gpu_hour_usd", 1)] = 3.25
    r = audit(_edit(built, tmp_path, edit, recalc=False))
    assert _kinds(r) == Counter({"input_changed": 1})
    assert r.of("stale_value") and not r.of("value_disagrees") and not r.sound


def test_overwritten_formula(built: Path, tmp_path: Path) -> None:
    target = {}

    def edit(wb):
        target["cell"] = _cell(wb, "Cost", "train_cost_usd", 0)
        wb["Cost"][target["cell"]] = 1000000
    r = audit(_edit(built, tmp_path, edit))
    assert _kinds(r) == Counter({"formula_overwritten": 1})
    (f,) = r.of("formula_overwritten")
    assert (f.sheet, f.cell, f.new) == ("Cost", target["cell"], "1000000") and f.old.startswith("=")
    assert any(v.cell == target["cell"] for v in r.of("value_disagrees")) and not r.sound


def test_deleted_row(built: Path, tmp_path: Path) -> None:
    def edit(wb):
        wb["Storage"].delete_rows(key_rows(wb["Storage"])["ckpt_size_GB"] + 1)
    r = audit(_edit(built, tmp_path, edit, recalc=False))
    assert _kinds(r) == Counter({"rows_moved": 1})
    assert r.of("rows_moved")[0].sheet == "Storage" and not r.sound


def test_added_gpu_row(built: Path, tmp_path: Path) -> None:
    def edit(wb):
        ws = wb["Hardware"]
        src = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "h100")
        dst = next(r for r in range(src, ws.max_row + 2) if ws.cell(r, 1).value in (None, ""))
        for c in range(1, ws.max_column + 1):
            ws.cell(dst, c).value = ws.cell(src, c).value
        ws.cell(dst, 1).value = "h100-custom"
    r = audit(_edit(built, tmp_path, edit))
    assert _kinds(r) == Counter({"catalogue_row_added": 1})
    assert r.of("catalogue_row_added")[0].new == "h100-custom"


def test_renamed_sheet(built: Path, tmp_path: Path) -> None:
    def edit(wb):
        wb["Storage"].title = "Storage IO"
    r = audit(_edit(built, tmp_path, edit, recalc=False))
    assert _kinds(r) == Counter({"sheet_renamed": 1})
    f = r.of("sheet_renamed")[0]
    assert (f.old, f.new) == ("Storage", "Storage IO")


def test_cli_exit_codes(built: Path, tmp_path: Path, capsys) -> None:
    assert main(["audit", str(built)]) == 0
    assert "SOUND" in capsys.readouterr().out
    bad = tmp_path / "bad.xlsx"
    bad.write_text("not a workbook")
    assert main(["audit", str(bad)]) == 2
    assert "not a zip archive" in capsys.readouterr().err
    edited = _edit(built, tmp_path, lambda wb: wb["Cost"].__setitem__(_cell(wb, "Cost", "train_cost_usd"), 1),
                   recalc=False)
    assert main(["audit", "--json", str(edited)]) == 1
    assert '"formula_overwritten"' in capsys.readouterr().out


def test_foreign_workbook_is_refused(tmp_path: Path, capsys) -> None:
    path = tmp_path / "foreign.xlsx"
    wb = openpyxl.Workbook()
    wb.active["A1"] = "budget"
    wb.save(path)
    assert main(["audit", str(path)]) == 2
    assert "no Manifest sheet" in capsys.readouterr().err
