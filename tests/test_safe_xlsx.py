"""Bounded reading: hostile workbooks end with one clear error from check_xlsx, verify and the CLI, quickly and
without reading them whole. (Time and memory are bounded by the limits; the benchmark-free checks here are that
each case is refused by the right rule before a parser sees it.)"""

from __future__ import annotations

import io
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from workbook.cli import main
from workbook.errors import InputError
from workbook.safe_xlsx import DEFAULT_LIMITS, OLE_SIGNATURE, check_xlsx

ROOT = Path(__file__).resolve().parents[1]
ONE = str(ROOT / "catalog" / "scenarios" / "17.9.1-llama-7b-h800.yaml")


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("good") / "wb.xlsx"
    assert main(["build", "--scenarios", ONE, "-o", str(out)]) == 0
    return out


def _rewrite(src: Path, dst: Path, replace: dict[str, bytes] | None = None, add: dict[str, bytes] | None = None,
             compression: int = zipfile.ZIP_DEFLATED) -> Path:
    """A copy of *src* with entries replaced or added (what a hostile sender would do)."""
    replace, add = replace or {}, add or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, replace.get(info.filename, zin.read(info.filename)))
        for name, data in add.items():
            zout.writestr(name, data)
    return dst


LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
          + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10) for i in range(1, 10))
          + b']><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">&lol9;</workbook>')
XXE = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
       b'<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">&e;</workbook>')


def _million_rows() -> bytes:
    rows = b"".join(b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (i, i) for i in range(1, 1_000_001))
    return (b'<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            b"<sheetData>" + rows + b"</sheetData></worksheet>")


def _cases(good: Path, tmp: Path) -> dict[str, tuple[Path, str]]:
    bomb = tmp / "bomb.xlsx"
    _rewrite(good, bomb, add={"xl/media/zeros.bin": b"\0" * (64 * 1024 * 1024)})
    truncated = tmp / "truncated.xlsx"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    notzip = tmp / "notzip.xlsx"
    notzip.write_text("name,value\nprice,2\n")
    encrypted = tmp / "encrypted.xlsx"
    encrypted.write_bytes(OLE_SIGNATURE + b"\0" * 4096)
    first_sheet = "xl/worksheets/sheet1.xml"
    return {
        "zip bomb": (bomb, "zip bomb"),
        "billion laughs": (_rewrite(good, tmp / "laughs.xlsx", {"xl/workbook.xml": LAUGHS}), "DOCTYPE"),
        "external entity": (_rewrite(good, tmp / "xxe.xlsx", {"xl/workbook.xml": XXE}), "DOCTYPE"),
        "not a zip": (notzip, "not a zip archive"),
        "truncated": (truncated, "truncated or corrupt"),
        "encrypted": (encrypted, "encrypted"),
        "macro-enabled": (_rewrite(good, tmp / "macro.xlsx", add={"xl/vbaProject.bin": b"\0" * 512}), "macro-enabled"),
        "million rows": (_rewrite(good, tmp / "rows.xlsx", {first_sheet: _million_rows()}), "rows"),
        "absurd dimension": (_rewrite(good, tmp / "dim.xlsx", {first_sheet: (
            b'<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
            b'<dimension ref="A1:XFD1048576"/><sheetData/></worksheet>')}), "1,048,576 rows"),
        "too many entries": (_rewrite(good, tmp / "entries.xlsx", add={f"x/{i}.txt": b"" for i in range(2_100)},
                                      compression=zipfile.ZIP_STORED), "zip entries"),
    }


@pytest.fixture(scope="module")
def hostile(good, tmp_path_factory) -> dict[str, tuple[Path, str]]:
    return _cases(good, tmp_path_factory.mktemp("hostile"))


NAMES = ["zip bomb", "billion laughs", "external entity", "not a zip", "truncated", "encrypted", "macro-enabled",
         "million rows", "absurd dimension", "too many entries"]


def test_own_workbook_passes(good: Path) -> None:
    check_xlsx(good)


@pytest.mark.parametrize("name", NAMES)
def test_check_refuses(name: str, hostile) -> None:
    path, words = hostile[name]
    tracemalloc.start()
    with pytest.raises(InputError) as info:
        check_xlsx(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert words in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)
    assert peak < 64 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB while refusing {name}"


@pytest.mark.parametrize("name", NAMES)
def test_verify_cli_refuses(name: str, hostile, capsys) -> None:
    path, words = hostile[name]
    assert main(["verify", "--engine", "formulas", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"workbook: error: {path}") and words in err and "Traceback" not in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["audit", "import", "keep-edits"])
@pytest.mark.parametrize("name", ["zip bomb", "billion laughs", "external entity", "not a zip", "truncated",
                                  "encrypted", "million rows"])
def test_other_readers_refuse(command: str, name: str, hostile, tmp_path: Path, capsys) -> None:
    path, words = hostile[name]
    argv = {"audit": ["audit", str(path)], "import": ["import", str(path)],
            "keep-edits": ["build", "--scenarios", ONE, "--keep-edits", str(path), "-o", str(tmp_path / "new.xlsx")]}
    assert main(argv[command]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"workbook: error: {path}") and words in err and len(err.splitlines()) == 1
    assert not (tmp_path / "new.xlsx").exists()


def test_limits_are_stated() -> None:
    assert DEFAULT_LIMITS.entry_bytes <= DEFAULT_LIMITS.total_bytes and DEFAULT_LIMITS.ratio >= 50
