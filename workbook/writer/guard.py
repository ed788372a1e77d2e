"""Never overwrite somebody's work: a build replaces an existing workbook only if it is byte for byte the file
an earlier build wrote there (its SHA-256 is in the folder's build log). A file edited after it was generated,
or one this tool did not write, is kept: the build stops with a clear error, or with ``force`` the old file is
first moved to a numbered backup beside it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from workbook.errors import InputError

#: the build log of an output folder: {file name: sha256 of the bytes the last build wrote}
BUILD_LOG = ".workbook-builds.json"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _log_path(path: Path) -> Path:
    return path.parent / BUILD_LOG


def _read_log(path: Path) -> dict[str, str]:
    try:
        data = json.loads(_log_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def written_by_us(path: Path) -> bool:
    """True when *path* holds exactly the bytes a build recorded for it."""
    return _read_log(path).get(path.name) == sha256_of(path)


def backup_path(path: Path) -> Path:
    """The first free ``<stem>.backup-N<suffix>`` beside *path*."""
    n = 1
    while True:
        candidate = path.with_name(f"{path.stem}.backup-{n}{path.suffix}")
        if not candidate.exists():
            return candidate
        n += 1


def make_room(path: Path, *, force: bool = False) -> Path | None:
    """Check that a build may write *path*; with ``force`` move an edited file to a backup (returned)."""
    path = Path(path)
    if not path.exists():
        return None
    if path.is_dir():
        raise InputError("the output path is a directory", file=str(path), expected="a file path ending in .xlsx")
    if written_by_us(path):
        return None
    if not force:
        raise InputError("exists and was changed after it was generated (or was not written by this tool); "
                         "it is kept", file=str(path),
                         expected="another output path, or --force to move the old file to a backup first")
    backup = backup_path(path)
    os.replace(path, backup)
    return backup


def record(path: Path) -> None:
    """Note the bytes just written to *path* in its folder's build log (atomically)."""
    path = Path(path)
    log = _read_log(path)
    log[path.name] = sha256_of(path)
    fd, tmp = tempfile.mkstemp(prefix=".workbook-builds-", suffix=".json", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(dict(sorted(log.items())), f, indent=1)
    os.replace(tmp, _log_path(path))
