"""Safe writing: the one path by which the tool writes a file (workbook, PDF, Markdown, JSON, YAML, build log),
and the bounded read of a small input file.

- A temporary with a unique random name is created beside the destination with ``O_CREAT|O_EXCL|O_NOFOLLOW``
  (never through a symbolic link, never over an existing file) and renamed over the destination only when it is
  complete; on any failure every temporary is removed.
- The destination itself must not be a symbolic link, a directory, one of the command's inputs, or outside the
  folder the command was asked to write into.
- Nor may the output folder the user named (``-o DIR``, or the folder of an output FILE) be a symbolic link, or
  any folder below it on the way to the file (:func:`check_folder`); links among that folder's parents
  (``/home -> /data/home``) are the user's environment and are followed. Checked before anything is written
  and again right before the rename.
- What is replaced can first be moved to a numbered backup ``NAME.backup-N.ext`` (created with a hard link, which
  fails rather than overwrite an existing backup).
- What is read is bounded (:func:`read_bounded`): a regular file of at most a given size, never more read.
- Operating-system errors (disk full, permission denied, read-only file system, name too long, a path under a
  file) become one InputError line: the CLI prints it and exits 2.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from workbook.errors import InputError

_REASONS = {
    errno.ENOSPC: "no space left on the device (disk full)",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENAMETOOLONG: "file name too long",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "is a directory",
    errno.ELOOP: "is a symbolic link (refused)",
    errno.EEXIST: "already exists",
    errno.ENOENT: "no such file or folder",
}
#: the longest file name most file systems take (bytes); checked before anything is created
NAME_MAX = 255


def os_error(exc: OSError, path: str | Path | None = None, doing: str = "cannot write") -> InputError:
    """One line for an operating-system error: file, what failed and why."""
    reason = _REASONS.get(exc.errno or 0) or exc.strerror or str(exc)
    return InputError(f"{doing}: {reason}", file=str(path or exc.filename or ""))


def _umask_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def read_bounded(path: Path, limit: int, what: str) -> bytes:
    """The bytes of the regular file *path*, at most *limit* of them (never more is read: ``/dev/zero``, a
    FIFO or a file growing while read is refused, not read until memory runs out)."""
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "Is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise InputError("not a regular file (a device, pipe or socket)", file=str(path), expected=what)
        if st.st_size > limit:
            raise InputError(f"file too large: {st.st_size:,} bytes", file=str(path),
                             expected=f"{what} of at most {limit:,} bytes")
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from None
    if len(raw) > limit:
        raise InputError(f"file too large: more than {limit:,} bytes", file=str(path),
                         expected=f"{what} of at most {limit:,} bytes")
    return raw


def check_destination(path: str | Path, *, inputs: Iterable[str | Path] = (), inside: str | Path | None = None,
                      what: str = "output") -> Path:
    """Refuse a destination that cannot be written safely (InputError); returns it as a Path.

    Refused: a name longer than NAME_MAX bytes, a symbolic link, a directory, a path under a file, the same file as
    one of *inputs*, a path whose folder is not *inside* (after resolving links and ``..``), and a path whose output
    folder, or a folder below it, is a symbolic link (:func:`check_folder`).
    """
    path = Path(path)
    if not path.name or path.name in (".", ".."):
        raise InputError(f"the {what} path names no file", file=str(path), expected="a file path")
    if len(os.fsencode(path.name)) > NAME_MAX:
        raise InputError(f"the {what} file name is {len(os.fsencode(path.name))} bytes long", file=str(path)[:80] + "...",
                         expected=f"a file name of at most {NAME_MAX} bytes")
    for parent in reversed(path.parents):
        if parent.is_symlink() and not parent.resolve().is_dir():
            raise InputError(f"a folder of the {what} path is a link to a file", file=str(parent))
        if parent.exists() and not parent.is_dir():
            raise InputError(f"the {what} path is under a file, not a folder", file=str(parent),
                             expected="an output path in a folder")
    check_folder(path, inside=inside, what=what)
    if path.is_symlink():
        raise InputError(f"the {what} path is a symbolic link; it is not followed", file=str(path),
                         expected="a plain file path (remove the link)")
    if path.is_dir():
        raise InputError(f"the {what} path is a directory", file=str(path), expected="a file path")
    if path.exists():
        for src in inputs:
            try:
                if Path(src).exists() and os.path.samefile(src, path):
                    raise InputError(f"the {what} is one of the inputs ({src}); it would be overwritten",
                                     file=str(path), expected="an output path different from every input")
            except OSError:
                continue
    else:
        for src in inputs:
            if Path(src).resolve() == path.resolve():
                raise InputError(f"the {what} is one of the inputs", file=str(path))
    if inside is not None:
        folder = Path(inside).resolve()
        if not path.parent.resolve().is_relative_to(folder) or path.name in ("..", "."):
            raise InputError(f"the {what} would be written outside the folder {inside}", file=str(path),
                             expected=f"a file inside {inside}")
    return path


def check_folder(path: str | Path, *, inside: str | Path | None = None, what: str = "output") -> None:
    """Refuse (InputError) a symbolic link at the output folder the user named, *inside* (default: the folder of
    *path*), or at any folder below it on the way to *path*: a folder planted as a link (``out/plans -> /etc``)
    would send the output elsewhere. Links among the named folder's parents are the user's environment
    (``/home -> /data/home``, macOS ``/tmp -> /private/tmp``) and are followed. The one line names the link and
    where it points, so a user who means that folder can name it."""
    path = Path(path)
    named = Path(inside) if inside is not None else path.parent
    if named.is_symlink():
        target = os.path.realpath(named)
        real = target if inside is not None else os.path.join(target, path.name)
        raise InputError(f"the {what} folder is a symbolic link to {target}; it is not followed", file=str(named),
                         expected=f"a folder that is not a link; to write there, name the real path: {real}")
    below = path.parent.relative_to(named).parts if path.parent.is_relative_to(named) else ()  # else: not inside
    folder = named
    for part in below:
        folder = folder / part
        if folder.is_symlink():
            raise InputError(f"a folder below the {what} folder {named} is a symbolic link to "
                             f"{os.path.realpath(folder)}; it is not followed", file=str(folder),
                             expected="a real folder there (remove the link)")


def make_folder(folder: str | Path) -> Path:
    """``mkdir -p`` with errors as one line."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError("the output folder is a file", file=str(folder), expected="a folder") from None
    except OSError as exc:
        raise os_error(exc, folder, "cannot create the folder") from None
    return folder


def _create_temp(dest: Path) -> tuple[int, Path]:
    """A new file beside *dest*: unique random name, O_EXCL|O_NOFOLLOW, mode rw for the user only."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = dest.with_name(f".{dest.name[:80]}.{secrets.token_hex(8)}.part")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise os_error(exc, dest) from None
    raise InputError("cannot create a temporary file", file=str(dest))


@contextlib.contextmanager
def atomic_file(dest: str | Path, *, mode: int | None = None, **checks) -> Iterator:
    """``with atomic_file(dest) as f:`` write to the binary file *f*; on success it replaces *dest*, on failure
    nothing changes and the temporary is removed. *checks* go to :func:`check_destination`."""
    dest = check_destination(dest, **checks)
    make_folder(dest.parent)
    fd, tmp = _create_temp(dest)
    try:
        with os.fdopen(fd, "w+b") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
            os.fchmod(f.fileno(), _umask_mode() if mode is None else mode)  # by descriptor: never via a path
        _recheck(dest, checks)
        os.replace(tmp, dest)
    except OSError as exc:
        _remove(tmp)
        raise os_error(exc, dest) from None
    except BaseException:
        _remove(tmp)
        raise


def _recheck(dest: Path, checks: dict) -> None:
    """Right before the rename: a link planted while we wrote, at the file or a folder on its way, is refused
    (rename would replace a link at the file, but say so rather than guess; a folder link would be followed)."""
    check_folder(dest, inside=checks.get("inside"), what=checks.get("what", "output"))
    if dest.is_symlink():
        raise InputError("the output path became a symbolic link while writing", file=str(dest))


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def write_bytes(dest: str | Path, data: bytes, **checks) -> Path:
    with atomic_file(dest, **checks) as f:
        f.write(data)
    return Path(dest)


def write_text(dest: str | Path, text: str, **checks) -> Path:
    return write_bytes(dest, text.encode("utf-8"), **checks)


def copy_file(src: str | Path, dest: str | Path, **checks) -> Path:
    with open(src, "rb") as fin, atomic_file(dest, **checks) as f:
        shutil.copyfileobj(fin, f, 1 << 20)
    return Path(dest)


def write_all(files: dict[Path, bytes], mode_of=None, inside: Iterable[str | Path] = ()) -> None:
    """All or nothing: every file to a temporary first, then all renamed; on any failure none is replaced.

    *mode_of*: path -> permission bits (default: the existing file's, else the umask's). *inside*: the folders the
    user named (``--catalog``, ``--scenarios``); a file below one of them is checked from the outermost that holds
    it (:func:`check_folder`: no link there or below), any other from its own folder."""
    def named(dest: Path) -> Path | None:
        holders = [Path(f) for f in inside if Path(dest).parent.is_relative_to(f)]
        return min(holders, key=lambda f: len(f.parts)) if holders else None

    files = {check_destination(dest, inside=named(dest)): data for dest, data in files.items()}  # all, first
    temps: list[tuple[Path, Path]] = []
    try:
        for dest, data in files.items():
            fd, tmp = _create_temp(dest)
            temps.append((tmp, dest))
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
                mode = mode_of(dest) if mode_of else (os.stat(dest).st_mode & 0o777 if dest.exists() else _umask_mode())
                os.fchmod(f.fileno(), mode)
        for tmp, dest in temps:
            _recheck(dest, {"inside": named(dest)})
        for tmp, dest in temps:
            os.replace(tmp, dest)
    except OSError as exc:
        for tmp, _ in temps:
            _remove(tmp)
        raise os_error(exc, exc.filename) from None
    except BaseException:
        for tmp, _ in temps:
            _remove(tmp)
        raise


def backup(path: str | Path) -> Path:
    """Move *path* to the first free ``<stem>.backup-N<suffix>`` beside it (never over an existing file)."""
    path = Path(path)
    return backup_files(path, (path.suffix,))[1][0][1]


#: errors of os.link where the file system has no hard links
_NO_LINKS = (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP)


def backup_files(path: str | Path, suffixes: Iterable[str]) -> tuple[int, list[tuple[Path, Path]]]:
    """Move the files ``<stem><s>`` beside *path* (s in *suffixes*, those that exist) to ``<stem>.backup-N<s>``, N the
    first number free for every suffix; returns (N, the (file, backup) pairs moved).

    Never over an existing file and never a symbolic link: every backup is first made as a hard link (which fails
    rather than overwrite; a name taken meanwhile tries the next N) and the originals are removed only when all are
    made; where the file system has no hard links, each file is renamed onto its free name."""
    path, suffixes = Path(path), tuple(suffixes)
    files = [(path.with_name(path.stem + s), s) for s in suffixes]
    files = [(p, s) for p, s in files if p.exists() or p.is_symlink()]
    for p, _ in files:
        if p.is_symlink():
            raise InputError("refusing to move a symbolic link to a backup", file=str(p), expected="a plain file")
    n = 1
    while True:
        if any(_backup_name(path, n, s).exists() or _backup_name(path, n, s).is_symlink() for s in suffixes):
            n += 1
            continue
        moved = [(p, _backup_name(path, n, s)) for p, s in files]
        made: list[Path] = []
        try:
            for src, dst in moved:
                os.link(src, dst, follow_symlinks=False)
                made.append(dst)
        except FileExistsError:  # taken meanwhile
            for dst in made:
                _remove(dst)
            n += 1
            continue
        except OSError as exc:
            for dst in made:
                _remove(dst)
            if exc.errno not in _NO_LINKS:
                raise os_error(exc, src, "cannot move to a backup") from None
            return n, _rename_all(moved)
        for i, (src, _) in enumerate(moved):
            try:
                os.unlink(src)
            except OSError as exc:
                for _, dst in moved[i:]:  # their originals are still in place
                    _remove(dst)
                raise os_error(exc, src, "cannot move to a backup") from None
        return n, moved


def _backup_name(path: Path, n: int, suffix: str) -> Path:
    return path.with_name(f"{path.stem}.backup-{n}{suffix}")


def _rename_all(moved: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    for src, dst in moved:
        if dst.exists() or dst.is_symlink():
            raise InputError("the backup name was taken while moving", file=str(dst), expected="a free backup name")
        try:
            os.rename(src, dst)
        except OSError as exc:
            raise os_error(exc, src, "cannot move to a backup") from None
    return moved


@contextlib.contextmanager
def locked_folder(folder: str | Path) -> Iterator[None]:
    """An exclusive advisory lock (fcntl.flock) on *folder* itself: no lock file is left behind, and a second
    process waits until the first releases it (e.g. two builds updating one folder's build log)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise os_error(exc, folder, "cannot lock the folder") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def scratch_folder(parent: str | None) -> Iterator[str | None]:
    """A private temporary folder under *parent* (e.g. /dev/shm) removed with everything in it afterwards, also
    on failure; None when *parent* is None (the system's temporary folder is used)."""
    if parent is None:
        yield None
        return
    try:
        folder = tempfile.mkdtemp(prefix="workbook-", dir=parent)
    except OSError:
        yield None
        return
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
