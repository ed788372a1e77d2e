"""Regenerate with a changelog: a build against a changed catalogue lists the changes on a Changelog sheet;
--keep-edits carries a person's edited inputs into the new build and lists them; no change, no sheet."""

from __future__ import annotations

import shutil
from pathlib import Path

import openpyxl
import pytest

from tests.private_catalog import private_catalog
from workbook.cli import main
from workbook.readback import key_rows
from workbook.writer.changelog import CHANGELOG_SHEET

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "17.9.4-70b-plan-h800.yaml"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    private_catalog(tmp_path, SCENARIO)
    return tmp_path


def _build(folder: Path, out: str, *extra: str) -> Path:
    path = folder / "out" / out
    assert main(["build", "--catalog", str(folder / "catalog"), "-o", str(path), *extra]) == 0
    return path


def _log(path: Path) -> list[tuple]:
    wb = openpyxl.load_workbook(path)
    if CHANGELOG_SHEET not in wb.sheetnames:
        return []
    return [r for r in wb[CHANGELOG_SHEET].iter_rows(min_row=5, values_only=True) if r[0]]


def _set_yaml(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_no_change_no_sheet_and_same_bytes(folder: Path) -> None:
    first = _build(folder, "wb.xlsx").read_bytes()
    assert _log(folder / "out" / "wb.xlsx") == []
    assert _build(folder, "wb.xlsx").read_bytes() == first


def test_catalogue_change_is_listed(folder: Path) -> None:
    _build(folder, "wb.xlsx")
    _set_yaml(folder / "catalog" / "gpus.yaml", "  hbm_bw_GBps: 3350\n", "  hbm_bw_GBps: 3400\n")
    log = _log(_build(folder, "wb.xlsx"))
    assert ("changed", "Hardware", "h800", "hbm_bw_GBps", "3350", "3400") in log
    assert all(r[0] == "changed" and r[3] == "hbm_bw_GBps" for r in log)


def test_removed_gpu_is_listed(folder: Path) -> None:
    _build(folder, "wb.xlsx")
    gpus = folder / "catalog" / "gpus.yaml"
    text = gpus.read_text()
    start = text.index("- id: rtx-4090")
    end = text.find("\n- id:", start + 1)
    gpus.write_text(text[:start] + (text[end + 1:] if end != -1 else ""))
    eff = folder / "catalog" / "efficiency.yaml"
    text = eff.read_text()
    start = text.index("- gpu: rtx-4090")
    end = text.find("\n- gpu:", start + 1)
    eff.write_text(text[:start] + (text[end + 1:] if end != -1 else ""))
    log = _log(_build(folder, "wb.xlsx"))
    assert ("removed", "Hardware", "rtx-4090", None, None, None) in log
    assert ("removed", "Efficiency", "rtx-4090", None, None, None) in log


def test_keep_edits_after_a_catalogue_change(folder: Path, capsys) -> None:
    old = _build(folder, "wb.xlsx")
    edited = folder / "finance.xlsx"
    shutil.copy(old, edited)
    wb = openpyxl.load_workbook(edited)
    plan = wb["Plan"]
    plan[f"F{key_rows(plan)['training.target_days'] + 1}"] = 45
    wb.save(edited)
    _set_yaml(folder / "catalog" / "gpus.yaml", "  hbm_bw_GBps: 3350\n", "  hbm_bw_GBps: 3400\n")
    capsys.readouterr()
    new = _build(folder, "new.xlsx", "--keep-edits", str(edited))
    out = capsys.readouterr().out
    assert "kept edit Plan" in out and "target_days" in out and "45" in out
    log = _log(new)
    assert ("changed", "Hardware", "h800", "hbm_bw_GBps", "3350", "3400") in log
    assert any(r[0] == "kept edit" and r[3] == "training.target_days" and r[5] == "45" for r in log)
    wb = openpyxl.load_workbook(new)
    assert wb["Plan"][f"F{key_rows(wb['Plan'])['training.target_days'] + 1}"].value == 45
    assert "target_days: 45" not in (folder / "catalog" / "scenarios" / SCENARIO).read_text()  # files untouched
