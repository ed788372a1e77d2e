"""Never overwrite somebody's work: a build replaces an existing workbook only if it is byte for byte the file
an earlier build wrote there (its SHA-256 is in the folder's build log). A file edited after it was generated,
or one this tool did not write, is kept: the build stops with a clear error, or with ``force`` the old file is
first moved to a numbered backup beside it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from workbook import safe_write
from workbook.errors import InputError

#: the build log of an output folder: {file name: sha256 of the bytes the last build wrote}
BUILD_LOG = ".workbook-builds.json"


#: a build log is a few hundred bytes a file; a larger one is not ours
MAX_LOG_BYTES = 1 << 20


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _log_path(path: Path) -> Path:
    return path.parent / BUILD_LOG


def _read_log(path: Path) -> dict[str, str]:
    log = _log_path(path)
    if log.is_symlink():
        return {}
    try:
        data = json.loads(safe_write.read_bounded(log, MAX_LOG_BYTES, "a build log"))
    except (InputError, ValueError):  # missing, not a regular file, too large, not JSON: not ours
        return {}
    return data if isinstance(data, dict) else {}


def written_by_us(path: Path) -> bool:
    """True when *path* holds exactly the bytes a build recorded for it."""
    return _read_log(path).get(path.name) == sha256_of(path)


def make_room(path: Path, *, force: bool = False, inputs=()) -> Path | None:
    """Check that a build may write *path*; with ``force`` move an edited file to a backup (returned)."""
    path = safe_write.check_destination(path, inputs=inputs)
    if not path.exists():
        return None
    if written_by_us(path):
        return None
    if not force:
        raise InputError("exists and was changed after it was generated (or was not written by this tool); "
                         "it is kept", file=str(path),
                         expected="another output path, or --force to move the old file to a backup first")
    return safe_write.backup(path)


def record(path: Path) -> None:
    """Note the bytes just written to *path* in its folder's build log (locked, so two builds recording into
    one folder at once both keep their entry; written atomically)."""
    path = Path(path)
    with safe_write.locked_folder(path.parent):
        log = _read_log(path)
        log[path.name] = sha256_of(path)
        safe_write.write_text(_log_path(path), json.dumps(dict(sorted(log.items())), indent=1))
