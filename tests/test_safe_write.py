"""workbook/safe_write.py: temporaries never through a link, nothing left on failure, no write over an input or
outside the folder asked for, numbered backups, the build log locked, OS errors as one line."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from workbook import safe_write
from workbook.errors import InputError
from workbook.writer import guard


def test_atomic_write_leaves_only_the_file(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "a.md"
    safe_write.write_text(out, "hello")
    assert out.read_text() == "hello"
    assert sorted(p.name for p in out.parent.iterdir()) == ["a.md"]
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # an output's usual mode, not the temporary's 0600


@pytest.mark.parametrize("dangling", [True, False])
def test_destination_link_is_refused_and_its_target_untouched(tmp_path: Path, dangling: bool) -> None:
    target = tmp_path / "elsewhere" / "target.txt"
    target.parent.mkdir()
    if not dangling:
        target.write_text("precious")
    link = tmp_path / "out" / "plan.md"
    link.parent.mkdir()
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        safe_write.write_text(link, "x")
    assert target.exists() is not dangling and (dangling or target.read_text() == "precious")
    assert sorted(p.name for p in link.parent.iterdir()) == ["plan.md"]


@pytest.mark.parametrize("inside", [True, False])
def test_output_folder_link_is_refused_and_its_target_untouched(tmp_path: Path, inside: bool) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "plans").symlink_to(real)  # a folder planted as a link, e.g. to /etc
    dest = tmp_path / "out" / "plans" / "plan.md"
    checks = {"inside": tmp_path / "out" / "plans"} if inside else {}
    with pytest.raises(InputError) as info:
        safe_write.write_text(dest, "x", **checks)
    msg = str(info.value)
    assert msg.startswith(f"{tmp_path / 'out' / 'plans'}: the output folder is a symbolic link to {real}")
    assert f"name the real path: {real if inside else real / 'plan.md'}" in msg and "\n" not in msg
    assert list(real.iterdir()) == []


def test_link_below_the_named_folder_is_refused(tmp_path: Path) -> None:
    real, out = tmp_path / "real", tmp_path / "out"
    real.mkdir()
    out.mkdir()
    (out / "sub").symlink_to(real)  # a subfolder the tool would enter, planted as a link
    with pytest.raises(InputError, match=f"a folder below the output folder {out} is a symbolic link to {real}"):
        safe_write.write_text(out / "sub" / "deeper" / "plan.md", "x", inside=out)
    assert list(real.iterdir()) == []


def test_links_among_the_named_folders_parents_are_followed(tmp_path: Path) -> None:
    (tmp_path / "real" / "out").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "real")  # the user's environment, e.g. /home -> /data/home
    out = tmp_path / "alias" / "out"
    safe_write.write_text(out / "plan.md", "x", inside=out)
    safe_write.write_text(out / "new" / "plan.md", "y")  # a folder the tool creates below: a real one
    assert (tmp_path / "real" / "out" / "plan.md").read_text() == "x"
    assert (tmp_path / "real" / "out" / "new" / "plan.md").read_text() == "y"


def test_a_folder_link_planted_while_writing_is_refused(tmp_path: Path) -> None:
    elsewhere, out = tmp_path / "elsewhere", tmp_path / "out"
    elsewhere.mkdir()
    out.mkdir()
    with pytest.raises(InputError, match="symbolic link"):
        with safe_write.atomic_file(out / "plan.md") as f:
            f.write(b"x")
            out.rename(tmp_path / "moved")
            out.symlink_to(elsewhere)
    assert list(elsewhere.iterdir()) == []


def test_a_link_planted_at_the_temporary_name_is_never_followed(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "target.txt"
    target.write_text("precious")
    names = iter(["aaaa", "aaaa", "bbbb"])
    monkeypatch.setattr(safe_write.secrets, "token_hex", lambda n: next(names))
    (tmp_path / ".out.pdf.aaaa.part").symlink_to(target)  # the name the first attempt would use
    safe_write.write_bytes(tmp_path / "out.pdf", b"%PDF")
    assert target.read_text() == "precious"
    assert (tmp_path / "out.pdf").read_bytes() == b"%PDF"


def test_failure_removes_the_temporary(tmp_path: Path) -> None:
    out = tmp_path / "a.bin"
    out.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with safe_write.atomic_file(out) as f:
            f.write(b"half")
            raise RuntimeError("boom")
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin"]


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "disk full"), (errno.EACCES, "permission denied"),
                                         (errno.EROFS, "read-only"), (errno.ENAMETOOLONG, "too long")])
def test_os_errors_are_one_line(tmp_path: Path, code: int, words: str) -> None:
    out = tmp_path / "a.bin"
    with pytest.raises(InputError) as info:
        with safe_write.atomic_file(out) as f:
            raise OSError(code, os.strerror(code))
    assert words in str(info.value) and "\n" not in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_refusals(tmp_path: Path) -> None:
    src = tmp_path / "w.xlsx"
    src.write_bytes(b"PK")
    with pytest.raises(InputError, match="one of the inputs"):
        safe_write.check_destination(src, inputs=[src])
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="under a file"):
        safe_write.check_destination(tmp_path / "file" / "out.xlsx")
    with pytest.raises(InputError, match="at most 255 bytes"):
        safe_write.check_destination(tmp_path / ("x" * 300 + ".xlsx"))
    with pytest.raises(InputError, match="outside the folder"):
        safe_write.check_destination(tmp_path / "out" / ".." / "escaped.md", inside=tmp_path / "out")
    with pytest.raises(InputError, match="directory"):
        safe_write.check_destination(tmp_path)


def test_write_all_is_all_or_nothing(tmp_path: Path, monkeypatch) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("a: 1\n")
    b.write_text("b: 1\n")
    real, calls = safe_write._create_temp, []

    def failing(dest):
        calls.append(dest)
        if len(calls) == 2:
            raise InputError("cannot write: read-only file system", file=str(dest))
        return real(dest)

    monkeypatch.setattr(safe_write, "_create_temp", failing)
    with pytest.raises(InputError, match="read-only"):
        safe_write.write_all({a: b"a: 2\n", b: b"b: 2\n"})
    assert a.read_text() == "a: 1\n" and b.read_text() == "b: 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


def test_write_all_refuses_a_folder_link_before_writing_anything(tmp_path: Path) -> None:
    cat, real = tmp_path / "cat", tmp_path / "real"
    (real / "scenarios").mkdir(parents=True)
    cat.mkdir()
    (cat / "gpus.yaml").write_text("a: 1\n")
    (real / "scenarios" / "s.yaml").write_text("b: 1\n")
    (cat / "scenarios").symlink_to(real / "scenarios")  # below the named catalogue folder
    files = {cat / "gpus.yaml": b"a: 2\n", cat / "scenarios" / "s.yaml": b"b: 2\n"}
    with pytest.raises(InputError, match=f"a folder below the output folder {cat} is a symbolic link"):
        safe_write.write_all(files, inside=[cat])
    assert sorted(p.name for p in cat.iterdir()) == ["gpus.yaml", "scenarios"]  # no temporary either
    assert (cat / "gpus.yaml").read_text() == "a: 1\n" and (real / "scenarios" / "s.yaml").read_text() == "b: 1\n"
    (tmp_path / "alias").symlink_to(real)  # a link among the parents of the named folder alias/scenarios: followed
    named = tmp_path / "alias" / "scenarios"
    safe_write.write_all({named / "s.yaml": b"b: 2\n"}, inside=[named])
    assert (real / "scenarios" / "s.yaml").read_text() == "b: 2\n"


def test_backups_are_numbered_and_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "plan.xlsx"
    for n in (1, 2, 3):
        out.write_text(f"v{n}")
        assert safe_write.backup(out) == tmp_path / f"plan.backup-{n}.xlsx"
        assert not out.exists()
    assert (tmp_path / "plan.backup-2.xlsx").read_text() == "v2"


def test_build_log_keeps_every_entry_when_builds_record_at_once(tmp_path: Path) -> None:
    files = [tmp_path / f"wb{i}.xlsx" for i in range(16)]
    for f in files:
        f.write_bytes(f.name.encode())
    threads = [threading.Thread(target=guard.record, args=(f,)) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(guard.written_by_us(f) for f in files)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_scratch_folder_is_removed_on_failure(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        with safe_write.scratch_folder(str(tmp_path)) as scratch:
            (Path(scratch) / "sheet1.xml").write_text("<x/>")
            raise RuntimeError("disk full")
    assert list(tmp_path.iterdir()) == []
