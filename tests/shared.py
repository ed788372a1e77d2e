"""Artifacts made once per test session and shared by every module and every pytest-xdist worker.

A plan written by ``workbook plan`` (xlsx, PDF, Markdown) costs a search and a LibreOffice export; several modules
only read the same plan. :func:`shared` makes such an artifact once: in a folder under the session's common
temporary directory (the parent of every worker's basetemp, as the pytest-xdist docs recommend), named by a hash of
what goes into it, under an exclusive file lock, so the first worker to ask makes it and the others wait and reuse it.

The artifact is read-only for its users: the digest of every file is recorded when it is made and checked on every
later use, so a test that changed a shared file fails the next one loudly (copy a file before editing it).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_DONE = "shared-done.json"


def _root(tmp_path_factory) -> Path:
    """The folder every worker of this session sees: the basetemp's parent under xdist, else the basetemp."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"
    root.mkdir(exist_ok=True)
    return root


@contextmanager
def _locked(path: Path):
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
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


def shared(tmp_path_factory, name: str, key: str, make: Callable[[Path], Any]) -> tuple[Path, Any]:
    """(folder, answer) of the artifact *name* / *key*: ``make(folder)`` writes it into an empty folder and returns a
    JSON-serialisable answer, once per session across workers; later calls check that no file of it changed."""
    root = _root(tmp_path_factory)
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
