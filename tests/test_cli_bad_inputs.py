"""The bad-input corpus through the command line: for every file, `workbook build` ends with exit 2 and one
line that names the file (and line, field, what was expected), prints no traceback and writes nothing.

The corpus itself (what each message must say) is tests/scenario/test_bad_inputs.py; this adds the
cases that cannot be files of a corpus (a directory, a file too large, a missing file) and the promise that
nothing is written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbook.catalog.yamlio import MAX_YAML_BYTES
from workbook.cli import main

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "data" / "bad"
CATALOG_FILES = {"duplicate_gpu_ids.yaml", "catalog_out_of_range.yaml", "catalog_unknown_field.yaml",
                 "catalog_missing_field.yaml"}


def _catalog_with_gpus(tmp_path: Path, gpus: Path) -> Path:
    folder = tmp_path / "catalog"
    shutil.copytree(ROOT / "catalog", folder)
    shutil.copy(gpus, folder / "gpus.yaml")
    return folder


def _build_fails_cleanly(argv: list[str], out: Path, capsys, where: Path) -> str:
    rc = main(argv + ["-o", str(out)])
    cap = capsys.readouterr()
    assert rc == 2
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1, cap.err
    assert lines[0].startswith(f"workbook: error: {where}"), lines[0]
    assert "Traceback" not in cap.err + cap.out
    assert not out.exists() and not list(out.parent.glob("*.xlsx*")), "a failed build left a file behind"
    return lines[0]


@pytest.mark.parametrize("name", sorted(p.name for p in BAD.glob("*.yaml")))
def test_build_refuses_bad_file(name: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out" / "wb.xlsx"
    out.parent.mkdir()
    path = BAD / name
    if name in CATALOG_FILES:
        folder = _catalog_with_gpus(tmp_path, path)
        _build_fails_cleanly(["build", "--catalog", str(folder)], out, capsys, folder / "gpus.yaml")
    else:
        _build_fails_cleanly(["build", "--scenarios", str(path)], out, capsys, path)


def test_corpus_has_forty_files() -> None:
    assert len(list(BAD.glob("*.yaml"))) >= 40


def test_directory_instead_of_file(tmp_path: Path, capsys) -> None:
    d = tmp_path / "scenario.yaml"
    d.mkdir()
    (tmp_path / "out").mkdir()
    line = _build_fails_cleanly(["build", "--scenarios", str(d)], tmp_path / "out" / "wb.xlsx", capsys, d)
    assert "directory" in line.lower()


def test_file_too_large(tmp_path: Path, capsys) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# " + b"x" * MAX_YAML_BYTES + b"\nname: big\n")
    (tmp_path / "out").mkdir()
    line = _build_fails_cleanly(["build", "--scenarios", str(big)], tmp_path / "out" / "wb.xlsx", capsys, big)
    assert "too large" in line and f"{MAX_YAML_BYTES:,}" in line


def test_missing_file(tmp_path: Path, capsys) -> None:
    gone = tmp_path / "nope.yaml"
    (tmp_path / "out").mkdir()
    line = _build_fails_cleanly(["build", "--scenarios", str(gone)], tmp_path / "out" / "wb.xlsx", capsys, gone)
    assert "No such file" in line or "no such file" in line


@pytest.mark.parametrize("text", ["=1+2", "+SUM(A1:A9)", "-2+3", "@HYPERLINK(\"x\")"])
def test_formula_like_strings_land_as_text(text: str, tmp_path: Path) -> None:
    """A scenario name or description starting with =, +, - or @ is written as text, never as a formula."""
    import openpyxl

    import yaml

    data = yaml.safe_load((ROOT / "catalog" / "scenarios" / "17.9.1-llama-7b-h800.yaml").read_text())
    data.update(name=text, description=f"{text} injected")
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "out" / "wb.xlsx"
    assert main(["build", "--scenarios", str(path), "-o", str(out)]) == 0
    wb = openpyxl.load_workbook(out)
    cells = [c for ws in wb.worksheets for row in ws.iter_rows() for c in row
             if isinstance(c.value, str) and c.value.startswith(text)]
    assert cells, "the name was not written"
    assert all(c.data_type == "s" for c in cells), [(c.parent.title, c.coordinate, c.data_type) for c in cells]
