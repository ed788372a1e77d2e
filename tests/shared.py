"""Work done once per test session and shared by every module, every pytest-xdist worker and their subprocesses.

Both live in a folder under the session's common temporary directory (the parent of every worker's basetemp, as the
pytest-xdist docs recommend; tests/conftest.py names it in ``$WORKBOOK_TESTS_SHARED`` at the start of the session):

* :func:`shared`: an artifact (e.g. a plan written by ``workbook plan``: xlsx, PDF, Markdown) made under an exclusive
  file lock by the first worker that asks, named by a content hash, reused by the others. It is read-only for its
  users: the digest of every file is recorded when it is made and checked on every later use, so a test that changed
  a shared file fails the next one loudly (copy a file before editing it).
* :func:`recalculated`: ``recalculate_many`` for workbooks the tests only read, keyed by the workbook's content: a
  file whose content was recalculated by that engine before in this session (the unedited copy every behaviour module
  compares against, a plan read by several modules) is not recalculated again.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import pickle
import shutil
import zipfile
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENV = "WORKBOOK_TESTS_SHARED"
_DONE = "shared-done.json"


def set_root(tmp_path_factory) -> Path:
    """Name this session's shared folder in ``$WORKBOOK_TESTS_SHARED`` (the worker's subprocesses inherit it)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"
    root.mkdir(exist_ok=True)
    os.environ[ENV] = str(root)
    return root


def _root() -> Path:
    root = os.environ.get(ENV)
    assert root, f"${ENV} is not set: tests/conftest.py sets it for the test session"
    return Path(root)


@contextmanager
def _locked(path: Path, wait: bool = True):
    """Hold an exclusive lock on *path* (flock: released when the holder ends, even killed); yields whether it is
    held: with ``wait=False``, False at once when another process holds it."""
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != _DONE}


def key_of(*parts: str | bytes | Path) -> str:
    """A short content hash of *parts* (a Path stands for its bytes)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.read_bytes() if isinstance(part, Path) else part
        h.update(data.encode() if isinstance(data, str) else data)
        h.update(b"\0")
    return h.hexdigest()[:16]


@functools.cache
def code_key() -> str:
    """A hash of what a plan or a workbook is made from: every file of the package (workbook/) and of the catalogue
    (catalog/), by path and bytes. With it in its key an artifact is never reused for changed code or data."""
    files = sorted(p for d in ("workbook", "catalog") for p in (ROOT / d).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    return key_of(*(part for p in files for part in (str(p.relative_to(ROOT)), p)))


def shared(name: str, key: str, make: Callable[[Path], Any]) -> tuple[Path, Any]:
    """(folder, answer) of the artifact *name* / *key*: ``make(folder)`` writes it into an empty folder and returns a
    JSON-serialisable answer, once per session across workers; later calls check that no file of it changed."""
    root = _root()
    folder = root / f"{name}-{key}"
    done = folder / _DONE
    with _locked(root / f"{name}-{key}.lock"):
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a failed earlier attempt
            folder.mkdir()
            answer = make(folder)
            done.write_text(json.dumps({"answer": answer, "digests": _digests(folder)}))
    record = json.loads(done.read_text())
    changed = [f for f, d in _digests(folder).items() if record["digests"].get(f) != d]
    assert not changed, f"a test changed the shared artifact {folder}: {changed} (copy a file before editing it)"
    return folder, record["answer"]


#: the one part of a workbook that differs between two saves of the same content: the save time (no formula reads it;
#: the writer's workbooks use no volatile or file-dependent function, workbook/audit/rules.py ALLOWED_FUNCTIONS)
_SAVE_TIME = "docProps/core.xml"


def content_key(path: Path) -> str:
    """A hash of the workbook's parts except its save time: equal for two copies saved with the same content."""
    h = hashlib.sha256()
    with zipfile.ZipFile(path) as z:
        for name in sorted(n for n in z.namelist() if n != _SAVE_TIME):
            h.update(name.encode() + b"\0" + z.read(name) + b"\0")
    return h.hexdigest()[:24]


def recalculated(paths: Iterable[Path | str], engine: str,
                 formulas_of: Mapping[Path, Path] | None = None) -> dict[Path, dict]:
    """``workbook.engines.recalculate_many(paths, engine)`` (one batch: LibreOffice starts once), except for files
    whose content this engine recalculated before in the session: their values are read back from the shared folder.
    For workbooks the tests only read. *formulas_of* maps a file to the one it was copied from when no edit touched
    a formula (its formula cells, the cells whose values are read back, are the original's: found once).

    Each content has a lock file: a worker takes the locks of the contents no one has stored and that no one else
    is recalculating, and recalculates those in one batch; then it waits for the contents another worker holds and
    recalculates what that worker did not store (it failed). Locks are taken in name order, so no two wait on
    each other."""
    folder = _root() / "recalculated"
    folder.mkdir(exist_ok=True)
    stored = {Path(p): folder / f"{engine}-{content_key(Path(p))}.pickle" for p in paths}
    todo = {f: p for p, f in stored.items() if not f.is_file()}  # one file per content
    theirs: dict[Path, Path] = {}
    with ExitStack() as held:
        mine = {}
        for f, p in sorted(todo.items()):
            if not held.enter_context(_locked(f.with_suffix(".lock"), wait=False)):
                theirs[f] = p  # another worker is recalculating it
            elif not f.is_file():
                mine[f] = p
        _store(mine, engine, formulas_of)
    with ExitStack() as held:
        for f in sorted(theirs):
            held.enter_context(_locked(f.with_suffix(".lock")))
        _store({f: p for f, p in theirs.items() if not f.is_file()}, engine, formulas_of)
    return {p: pickle.loads(f.read_bytes()) for p, f in stored.items()}


def _store(todo: Mapping[Path, Path], engine: str, formulas_of: Mapping[Path, Path] | None) -> None:
    """Recalculate the files {pickle to write: workbook} in one batch and write each pickle whole."""
    if not todo:
        return
    values = _recalculate(list(todo.values()), engine, formulas_of or {})
    for f, p in todo.items():
        tmp = f.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(values[p]))
        tmp.replace(f)  # whole or absent, for a worker that reads it without the lock


def _recalculate(paths: list[Path], engine: str, formulas_of: Mapping[Path, Path]) -> dict[Path, dict]:
    """What recalculate_many does (engines/libreoffice.py, engines/gnumeric.py: convert, then read the values of
    the formula cells), with the formula cells of a file in *formulas_of* found in its original."""
    import tempfile

    from workbook.engines import gnumeric, libreoffice, recalculate_many
    from workbook.engines.values import formula_cells, read_values

    if engine not in ("libreoffice", "gnumeric") or not formulas_of:
        return recalculate_many(paths, engine)
    originals = {src: formula_cells(src) for src in {formulas_of[p] for p in paths if p in formulas_of}}
    wanted = {p: originals[formulas_of[p]] if p in formulas_of else formula_cells(p) for p in paths}
    with tempfile.TemporaryDirectory(prefix="recalculated-") as tmp:
        if engine == "libreoffice":
            outputs = libreoffice.convert_recalculated(paths, Path(tmp))
        else:
            outputs = [Path(tmp) / f"{i:04d}.xlsx" for i in range(len(paths))]
            for p, out in zip(paths, outputs):
                gnumeric.convert(p, out)
        return {p: read_values(out, wanted[p]) for p, out in zip(paths, outputs)}
