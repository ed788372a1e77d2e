"""Issue 24's examples through the command line: each ends in one line and exit 2 (or a correct result), nothing
is written outside the output folder, and no user edit is lost or overwritten."""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.formula import ArrayFormula

from tests.private_catalog import built_private_catalog
from workbook.cli import main
from workbook.readback import key_rows

ROOT = Path(__file__).resolve().parents[1]
ONE = str(ROOT / "catalog" / "scenarios" / "17.9.1-llama-7b-h800.yaml")
SCENARIO = "17.9.4-70b-plan-h800.yaml"
REQUEST = ROOT / "catalog" / "requests" / "17.9.4-70b-h800.yaml"


def _fails(argv: list[str], capsys, *words: str) -> str:
    rc = main(argv)
    cap = capsys.readouterr()
    lines = cap.err.strip().splitlines()
    assert rc == 2, (rc, cap.out[-500:], cap.err)
    assert len(lines) == 1 and lines[0].startswith("workbook: error: "), cap.err
    assert "Traceback" not in cap.err + cap.out
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() and not p.is_symlink() else b"<link>")
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A private catalogue with one scenario and the workbook built from it (module-wide: copy before editing)."""
    return built_private_catalog(tmp_path_factory.mktemp("built"), SCENARIO)


@pytest.fixture()
def folder(built: Path, tmp_path: Path) -> Path:
    shutil.copytree(built / "catalog", tmp_path / "catalog")
    shutil.copy(built / "wb.xlsx", tmp_path / "wb.xlsx")
    return tmp_path


@pytest.fixture()
def stub_pdf(monkeypatch) -> None:
    """plan writes a stub PDF (the PDF's LibreOffice run is tested in tests/export)."""
    from workbook import safe_write

    monkeypatch.setattr("workbook.planner.outputs.write_pdf",
                        lambda xlsx: safe_write.write_bytes(xlsx.with_suffix(".pdf"), b"%PDF-stub"))


def _edit(src: Path, dst: Path, edit) -> Path:
    wb = openpyxl.load_workbook(src)
    edit(wb)
    wb.save(dst)
    return dst


def _plan_cell(wb, key: str) -> str:
    return f"F{key_rows(wb['Plan'])[key] + 1}"


# ------------------------------------------------------------------------------------------- writing
def test_output_paths_refused(tmp_path: Path, capsys) -> None:
    (tmp_path / "afile").write_text("x")
    _fails(["build", "--scenarios", ONE, "-o", str(tmp_path / "afile" / "wb.xlsx")], capsys, "under a file")
    _fails(["build", "--scenarios", ONE, "-o", str(tmp_path / ("x" * 300 + ".xlsx"))], capsys, "at most 255 bytes")
    _fails(["build", "--scenarios", ONE, "-o", ONE], capsys, "one of the inputs")
    (tmp_path / "link.xlsx").symlink_to(tmp_path / "elsewhere.xlsx")
    _fails(["build", "--scenarios", ONE, "-o", str(tmp_path / "link.xlsx")], capsys, "symbolic link")
    assert not (tmp_path / "elsewhere.xlsx").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "link.xlsx"]


def test_plan_never_writes_through_a_planted_link(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "17.9.4-70b-h800.md").symlink_to(tmp_path / "created-elsewhere.md")  # dangling
    _fails(["plan", str(REQUEST), "-o", str(out), "--force"], capsys, "symbolic link")
    assert not (tmp_path / "created-elsewhere.md").exists()
    assert [p.name for p in out.iterdir()] == ["17.9.4-70b-h800.md"]


def test_an_output_folder_that_is_a_link_is_refused(built: Path, tmp_path: Path, capsys) -> None:
    """plan -o outdir/plans with plans -> another folder (in the issue /etc, which got the plan's four files): one
    line naming the link, its target and the real path to name instead; exit 2; nothing written there. The same
    for the folder of build's and export's output file."""
    real, link = tmp_path / "real", tmp_path / "outdir" / "plans"
    real.mkdir()
    link.parent.mkdir()
    link.symlink_to(real)
    wb = shutil.copy(built / "wb.xlsx", tmp_path / "w.xlsx")
    for argv, what, name in ((["plan", str(REQUEST), "-o", str(link)], "output", real),
                             (["plan", str(REQUEST), "-o", str(link), "--force"], "output", real),
                             (["build", "--scenarios", ONE, "-o", str(link / "wb.xlsx")], "output", real / "wb.xlsx"),
                             (["export", str(wb), "--pdf", str(link / "w.pdf")], "PDF", real / "w.pdf")):
        _fails(argv, capsys, f"{link}: the {what} folder is a symbolic link to {real}; it is not followed",
               f"name the real path: {name})")
    assert list(real.iterdir()) == []


def test_import_refuses_a_catalogue_folder_that_is_a_link(folder: Path, capsys) -> None:
    cat = folder / "catalog"
    path = _edit(folder / "wb.xlsx", folder / "edited.xlsx",
                 lambda w: w["Plan"].__setitem__(_plan_cell(w, "training.target_days"), 45))
    (folder / "shared").symlink_to(cat)
    before = _tree(cat)
    _fails(["import", str(path), "--catalog", str(folder / "shared"), "--write"], capsys,
           f"{folder / 'shared'}: the output folder is a symbolic link to {cat}")
    assert _tree(cat) == before


@pytest.mark.slow
def test_a_link_among_the_output_folders_parents_is_followed(tmp_path: Path, stub_pdf) -> None:
    """tmp/alias -> tmp/real, plan -o tmp/alias/out (out a real folder): the user's own environment, as
    /home -> /data/home; the plan is written into tmp/real/out."""
    (tmp_path / "real" / "out").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert main(["plan", str(REQUEST), "-o", str(tmp_path / "alias" / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "real" / "out").iterdir()) == [
        ".workbook-builds.json", "17.9.4-70b-h800.md", "17.9.4-70b-h800.pdf", "17.9.4-70b-h800.plan.json",
        "17.9.4-70b-h800.xlsx"]


def test_export_refuses_its_input_as_output(built: Path, tmp_path: Path, capsys) -> None:
    wb = shutil.copy(built / "wb.xlsx", tmp_path / "w.xlsx")
    before = Path(wb).read_bytes()
    _fails(["export", str(wb), "--pdf", str(wb)], capsys, "one of the inputs")
    _fails(["export", str(wb), "--sheets", ","], capsys, "--sheets")
    assert Path(wb).read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["w.xlsx"]


def test_a_full_disk_leaves_nothing(tmp_path: Path, capsys, monkeypatch) -> None:
    from workbook.writer import xlsx

    scratch = tmp_path / "shm"
    scratch.mkdir()
    monkeypatch.setattr(xlsx, "scratch_dir", lambda: str(scratch))
    real_close = xlsx.Writer.close

    def full(self):
        real_close(self)  # the part files were written; the disk fills as the zip is finished
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(xlsx.Writer, "close", full)
    out = tmp_path / "out"
    _fails(["build", "--scenarios", ONE, "-o", str(out / "wb.xlsx")], capsys, "disk full")
    assert list(out.iterdir()) == [] and list(scratch.iterdir()) == []


def test_sheet_named_with_an_ampersand_is_escaped_for_export(built: Path, tmp_path: Path) -> None:
    from workbook.export.pdf import only_sheets

    src = _edit(built / "wb.xlsx", tmp_path / "rd.xlsx", lambda wb: setattr(wb["Cost"], "title", "R&D"))
    only_sheets(src, tmp_path / "staged.xlsx", ["Cover"])
    assert openpyxl.load_workbook(tmp_path / "staged.xlsx", read_only=True).sheetnames[-1] == "Manifest"


def test_chart_names_are_text_never_references(tmp_path: Path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(Path(ONE).read_text().replace("name: llama-7b-h800x256", "name: plan!B2 rev", 1))
    assert "plan!B2 rev" in scen.read_text()
    assert main(["build", "--scenarios", str(scen), "-o", str(tmp_path / "wb.xlsx")]) == 0
    with zipfile.ZipFile(tmp_path / "wb.xlsx") as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    refs = [f for c in charts for f in re.findall(r"<c:f>([^<]*)</c:f>", c)]
    assert charts and not [f for f in refs if "B2" in f], refs
    assert any("plan!B2 rev" in c for c in charts)


# ------------------------------------------------------------------------------------------- reading
def test_calc_of_a_device_is_refused(capsys) -> None:
    _fails(["calc", "/dev/zero"], capsys, "not a regular file")


def _with_sheet(src: Path, dst: Path, extra_row: bytes) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = re.sub(rb"<dimension ref=\"[^\"]*\"/>", b"", data).replace(b"</sheetData>",
                                                                                 extra_row + b"</sheetData>")
            zout.writestr(info, data)
    return dst


def test_workbooks_bounded_by_what_they_hold(built: Path, tmp_path: Path, capsys) -> None:
    far = _with_sheet(built / "wb.xlsx", tmp_path / "far.xlsx",
                      b'<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>')
    wide = _with_sheet(built / "wb.xlsx", tmp_path / "wide.xlsx", b'<row r="900">' + b"".join(
        b'<c r="%s900"><v>1</v></c>' % get_column_letter(c).encode() for c in range(1, 5001)) + b"</row>")
    for path in (far, wide):
        for cmd in (["audit"], ["import"]):
            _fails(cmd + [str(path)], capsys, "2,000 columns")


# ------------------------------------------------------------------------------------------- round trip
def test_formula_typed_into_an_input_is_refused(folder: Path, capsys) -> None:
    cat, wb = folder / "catalog", folder / "wb.xlsx"
    before = _tree(cat)
    for i, value in enumerate(['=WEBSERVICE("http://example.com/x")', ArrayFormula("A1", "=SUM(1,2)")]):
        def edit(w, value=value):
            cell = _plan_cell(w, "training.tokens")
            if isinstance(value, ArrayFormula):
                value = ArrayFormula(cell, value.text)
            w["Plan"][cell] = value
        path = _edit(wb, folder / f"f{i}.xlsx", edit)
        _fails(["import", str(path), "--catalog", str(cat), "--write"], capsys, "formula", "Plan!F")
        _fails(["build", "--catalog", str(cat), "--keep-edits", str(path), "-o", str(folder / "n.xlsx")], capsys,
               "formula")
    assert _tree(cat) == before and not (folder / "n.xlsx").exists()


def test_edit_after_an_inserted_plan_row_is_found_by_its_key(folder: Path, capsys) -> None:
    cat, wb = folder / "catalog", folder / "wb.xlsx"

    def edit(w):
        cell = _plan_cell(w, "training.target_days")
        w["Plan"][cell] = 45
        w["Plan"].insert_rows(8)  # moves every input below row 8 one row down (openpyxl keeps values)

    path = _edit(wb, folder / "moved.xlsx", edit)
    assert main(["import", str(path), "--catalog", str(cat), "--write"]) == 0
    out = capsys.readouterr().out
    assert "training.target_days" in out and "-> 45" in out
    assert "target_days: 45" in (cat / "scenarios" / SCENARIO).read_text()


def test_a_colleagues_later_change_is_a_conflict(folder: Path, capsys) -> None:
    cat, wb = folder / "catalog", folder / "wb.xlsx"
    path = _edit(wb, folder / "edited.xlsx",
                 lambda w: w["Plan"].__setitem__(_plan_cell(w, "training.target_days"), 45))
    scen = cat / "scenarios" / SCENARIO
    text = scen.read_text()
    assert re.search(r"target_days: \d+", text)
    scen.write_text(re.sub(r"target_days: \d+(\.\d+)?", "target_days: 77", text, count=1))  # the colleague
    before = _tree(cat)
    _fails(["import", str(path), "--catalog", str(cat), "--write"], capsys, "conflict", "77", "45")
    assert _tree(cat) == before


def test_audit_sees_a_redirected_defined_name(folder: Path, capsys) -> None:
    def edit(w):
        name = next(n for n in w.defined_names if not n.startswith("_xlnm"))
        dn = w.defined_names[name]
        dn.attr_text = re.sub(r"\$([A-Z]+)\$", lambda m: f"${get_column_letter(openpyxl.utils.column_index_from_string(m.group(1)) + 1)}$", dn.attr_text, count=1)

    path = _edit(folder / "wb.xlsx", folder / "names.xlsx", edit)
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out
    assert "Defined names redirected" in out and "NOT SOUND" in out


def test_manifest_sheet_deleted(folder: Path, capsys) -> None:
    path = _edit(folder / "wb.xlsx", folder / "nm.xlsx", lambda w: w.remove(w["Manifest"]))
    for cmd in (["audit", str(path)], ["import", str(path), "--catalog", str(folder / "catalog")],
                ["build", "--catalog", str(folder / "catalog"), "--keep-edits", str(path), "-o",
                 str(folder / "n.xlsx")]):
        _fails(cmd, capsys, "Manifest")


def test_validation_value_that_overflows(tmp_path: Path, capsys) -> None:
    src = ROOT / "catalog" / "validation" / "deepseek-v3-h800.yaml"
    text = src.read_text()
    assert "    value: 2.664\n    unit: M GPU-h\n    scale: 1.0e6\n" in text
    bad = tmp_path / "v.yaml"
    bad.write_text(text.replace("    value: 2.664\n    unit: M GPU-h", "    value: 1.0e305\n    unit: M GPU-h"))
    _fails(["validate", str(bad), "--json"], capsys, "not a finite non-zero number")


def test_malformed_sheet_xml_is_one_line_everywhere(built: Path, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "ctrl.xlsx"
    with zipfile.ZipFile(built / "wb.xlsx") as zin, zipfile.ZipFile(bad, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "xl/sharedStrings.xml":
                data = data.replace(b"</t>", b"\x0b</t>", 1)  # what a control character in a name once wrote
            zout.writestr(info, data)
    for cmd in (["audit", str(bad)], ["import", str(bad)], ["verify", str(bad), "--engine", "formulas"],
                ["build", "--scenarios", ONE, "--keep-edits", str(bad), "-o", str(tmp_path / "k.xlsx")]):
        _fails(cmd, capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctrl.xlsx"]


@pytest.mark.slow
def test_plan_force_backs_up_an_edited_output(tmp_path: Path, stub_pdf, capsys) -> None:
    out = tmp_path / "out"
    assert main(["plan", str(REQUEST), "-o", str(out)]) == 0
    workbook = out / "17.9.4-70b-h800.xlsx"
    first = workbook.read_bytes()
    (out / "17.9.4-70b-h800.md").write_text("edited by hand")
    capsys.readouterr()
    assert main(["plan", str(REQUEST), "-o", str(out), "--force"]) == 0
    assert "17.9.4-70b-h800.backup-1.md" in capsys.readouterr().out
    assert (out / "17.9.4-70b-h800.backup-1.md").read_text() == "edited by hand"
    # every earlier file is kept as version 1 (issue 23: a plan never destroys an earlier plan), edited or not
    assert (out / "17.9.4-70b-h800.backup-1.xlsx").read_bytes() == first
    assert sorted(p.name for p in out.iterdir()) == [
        ".workbook-builds.json", "17.9.4-70b-h800.backup-1.md", "17.9.4-70b-h800.backup-1.pdf",
        "17.9.4-70b-h800.backup-1.plan.json", "17.9.4-70b-h800.backup-1.xlsx", "17.9.4-70b-h800.md",
        "17.9.4-70b-h800.pdf", "17.9.4-70b-h800.plan.json", "17.9.4-70b-h800.xlsx"]


def test_a_colleagues_change_to_another_field_is_kept_and_noted(folder: Path, capsys) -> None:
    cat, wb = folder / "catalog", folder / "wb.xlsx"
    path = _edit(wb, folder / "edited.xlsx",
                 lambda w: w["Plan"].__setitem__(_plan_cell(w, "training.target_days"), 45))
    scen = cat / "scenarios" / SCENARIO
    scen.write_text(scen.read_text() + "# a colleague's comment\n")  # the file changed; the field did not
    assert main(["import", str(path), "--catalog", str(cat), "--write"]) == 0
    out = capsys.readouterr().out
    assert f"note: {scen} changed since the build" in out
    text = scen.read_text()
    assert "target_days: 45" in text and "# a colleague's comment" in text
