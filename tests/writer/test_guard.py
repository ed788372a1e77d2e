"""Safe writing: a build replaces only the file an earlier build wrote; an edited one is kept (or backed up)."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from workbook.cli import main
from workbook.writer import guard

ROOT = Path(__file__).resolve().parents[2]
ONE = str(ROOT / "catalog" / "scenarios" / "17.9.1-llama-7b-h800.yaml")


def _build(out: Path, *extra: str) -> int:
    return main(["build", "--scenarios", ONE, "-o", str(out), *extra])


def test_rebuild_over_own_output(tmp_path: Path) -> None:
    out = tmp_path / "wb.xlsx"
    assert _build(out) == 0
    first = out.read_bytes()
    assert guard.written_by_us(out)
    assert _build(out) == 0
    assert out.read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == [guard.BUILD_LOG, "wb.xlsx"]


def test_edited_workbook_is_kept(tmp_path: Path, capsys) -> None:
    out = tmp_path / "wb.xlsx"
    assert _build(out) == 0
    wb = openpyxl.load_workbook(out)
    wb["Plan"]["A1"] = "edited by finance"
    wb.save(out)
    edited = out.read_bytes()
    capsys.readouterr()
    assert _build(out) == 2
    err = capsys.readouterr().err
    assert str(out) in err and "it is kept" in err and "--force" in err
    assert out.read_bytes() == edited


def test_force_moves_edited_file_to_backup(tmp_path: Path) -> None:
    out = tmp_path / "wb.xlsx"
    assert _build(out) == 0
    assert guard.written_by_us(out)
    wb = openpyxl.load_workbook(out)
    wb["Plan"]["A1"] = "edited"
    wb.save(out)
    edited = out.read_bytes()
    assert _build(out, "--force") == 0
    backup = tmp_path / "wb.backup-1.xlsx"
    assert backup.read_bytes() == edited
    assert guard.written_by_us(out)
    wb.save(out)
    assert _build(out, "--force") == 0
    assert (tmp_path / "wb.backup-2.xlsx").exists()


def test_foreign_file_is_kept(tmp_path: Path, capsys) -> None:
    out = tmp_path / "report.xlsx"
    out.write_bytes(b"somebody else's file")
    assert _build(out) == 2
    assert out.read_bytes() == b"somebody else's file"


@pytest.mark.parametrize("content", [b"", b"{not json"])
def test_unreadable_log_means_not_ours(tmp_path: Path, content: bytes) -> None:
    out = tmp_path / "wb.xlsx"
    assert _build(out) == 0
    (tmp_path / guard.BUILD_LOG).write_bytes(content)
    assert not guard.written_by_us(out)
    assert _build(out) == 2
