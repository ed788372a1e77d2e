"""Bounded reading: check a workbook file before any XML parser sees it.

Every command that reads a workbook a person sent (verify, and later audit / import / keep-edits) calls
``check_xlsx`` first. It refuses, with one clear line, what is not a plain .xlsx or would cost unbounded time or
memory: not a zip, truncated or corrupt, encrypted (an OLE container), macro-enabled, too many entries, an entry
or the whole too large once decompressed, a compression ratio of a zip bomb, XML with a DOCTYPE (entity expansion,
external entities), and sheets with absurd dimensions. The scan streams each entry with a byte budget, so a lying
header cannot make it read more than the limits.
"""

from __future__ import annotations

import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

from workbook.errors import InputError

#: the first bytes of an OLE compound file: encrypted OOXML (and legacy .xls) are stored in one
OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
CHUNK_BYTES = 1 << 20
_DIMENSION = re.compile(rb'<(?:\w+:)?dimension\s+ref="[A-Z]+\d+(?::([A-Z]+)(\d+))?"')
_DOCTYPE = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_ROW = re.compile(rb"<(?:\w+:)?row[\s>]")
#: a cell's reference (the column letters and row number of ``<c r="XFD1048576"``)
_CELL_REF = re.compile(rb'<(?:\w+:)?c\s[^>]*?\br="([A-Z]{1,3})([0-9]{1,7})"')
#: a row's number (``<row r="1048576"``)
_ROW_REF = re.compile(rb'<(?:\w+:)?row\s[^>]*?\br="([0-9]{1,7})"')


@dataclass(frozen=True)
class Limits:
    """What a workbook may be. Our own workbooks are about 1 MB with 40 entries and under 2,000 rows a sheet."""

    file_bytes: int = 100 * 1024 * 1024
    entries: int = 2_000
    entry_bytes: int = 200 * 1024 * 1024
    total_bytes: int = 500 * 1024 * 1024
    ratio: float = 200.0
    rows: int = 100_000
    columns: int = 2_000
    #: cells a sheet holds, counted while streaming (our tenfold workbook's largest sheet holds about 60,000)
    cells: int = 1_000_000
    #: the sheet's used range, last row x last column actually referenced: what a reader iterating the grid
    #: visits (one cell at XFD1048576 makes that 17 billion)
    grid: int = 20_000_000


DEFAULT_LIMITS = Limits()


def _col_number(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + (ch - 64)
    return n


def _refuse(path: Path, message: str, expected: str) -> InputError:
    return InputError(message, file=str(path), expected=expected)


def _open(path: Path, limits: Limits) -> zipfile.ZipFile:
    try:
        st = path.stat()
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):  # a FIFO would block the read below
            raise _refuse(path, "not a regular file (a device, pipe or socket)", "an .xlsx workbook")
        size = st.st_size
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from None
    if size > limits.file_bytes:
        raise _refuse(path, f"file too large: {size:,} bytes", f"a workbook of at most {limits.file_bytes:,} bytes")
    if head.startswith(OLE_SIGNATURE):
        raise _refuse(path, "password-protected (encrypted) or legacy .xls workbook", "an unencrypted .xlsx file")
    if not head.startswith(b"PK"):
        raise _refuse(path, "not an .xlsx file (not a zip archive)", "an .xlsx workbook")
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise _refuse(path, f"truncated or corrupt .xlsx ({exc})", "a complete .xlsx workbook") from None


def _scan_entry(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, limits: Limits, budget: list[int]) -> None:
    """Stream one entry within its byte budget; check XML for DOCTYPE and sheets for their size."""
    is_xml = info.filename.endswith((".xml", ".rels", ".vml"))
    is_sheet = info.filename.startswith("xl/worksheets/") and is_xml
    where = f"entry {info.filename}"
    seen, rows, tail, first = 0, 0, b"", True
    extent = _Extent()
    try:
        with zf.open(info) as f:
            while True:
                chunk = f.read(CHUNK_BYTES)
                if not chunk:
                    break
                seen += len(chunk)
                budget[0] += len(chunk)
                if seen > limits.entry_bytes:
                    raise _refuse(path, f"{where} exceeds {limits.entry_bytes:,} bytes uncompressed",
                                  "entries within the limit")
                if budget[0] > limits.total_bytes:
                    raise _refuse(path, f"more than {limits.total_bytes:,} bytes uncompressed",
                                  "a workbook within the limit")
                if info.compress_size and seen / info.compress_size > limits.ratio and seen > CHUNK_BYTES:
                    raise _refuse(path, f"{where} decompresses more than {limits.ratio:.0f} times (a zip bomb)",
                                  f"a compression ratio of at most {limits.ratio:.0f}")
                if is_xml:
                    window = tail + chunk
                    if _DOCTYPE.search(window):
                        raise _refuse(path, f"{where} declares a DOCTYPE or ENTITY (entity expansion or "
                                      "external entities)", "XML without DOCTYPE")
                    if is_sheet:
                        if first:
                            _check_dimension(path, where, window, limits)
                        rows += len(_ROW.findall(chunk))
                        if rows > limits.rows:
                            raise _refuse(path, f"{where} has more than {limits.rows:,} rows",
                                          f"sheets of at most {limits.rows:,} rows")
                        extent.add(window, len(tail))
                        extent.check(path, where, limits)
                    tail, first = window[-256:], False
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise _refuse(path, f"truncated or corrupt .xlsx ({where}: {exc})", "a complete .xlsx workbook") from None
    except NotImplementedError as exc:
        raise _refuse(path, f"{where}: unsupported compression ({exc})", "a standard .xlsx workbook") from None


class _Extent:
    """What a sheet actually holds, counted while streaming: cells, the last row and the last column referenced."""

    def __init__(self) -> None:
        self.cells = self.last_row = self.last_col = 0

    def add(self, window: bytes, tail_len: int) -> None:
        """Count the references in *window* (the previous chunk's last bytes + this chunk); a match lying wholly
        in those last bytes was counted with the previous chunk."""
        for m in _CELL_REF.finditer(window):
            if m.end() <= tail_len:
                continue
            self.cells += 1
            self.last_col = max(self.last_col, _col_number(m.group(1)))
            self.last_row = max(self.last_row, int(m.group(2)))
        for m in _ROW_REF.finditer(window):
            if m.end() > tail_len:
                self.last_row = max(self.last_row, int(m.group(1)))

    def check(self, path: Path, where: str, limits: Limits) -> None:
        if self.last_col > limits.columns or self.last_row > limits.rows:
            raise _refuse(path, f"{where} holds a cell at row {self.last_row:,}, column {self.last_col:,}",
                          f"sheets of at most {limits.rows:,} rows and {limits.columns:,} columns")
        if self.cells > limits.cells:
            raise _refuse(path, f"{where} holds more than {limits.cells:,} cells", f"at most {limits.cells:,}")
        if self.last_row * self.last_col > limits.grid:
            raise _refuse(path, f"{where} spans {self.last_row:,} rows x {self.last_col:,} columns",
                          f"a used range of at most {limits.grid:,} cells")


def _check_dimension(path: Path, where: str, head: bytes, limits: Limits) -> None:
    m = _DIMENSION.search(head[:8192])
    if not m or not m.group(1):
        return
    cols, rows = _col_number(m.group(1)), int(m.group(2))
    if rows > limits.rows or cols > limits.columns:
        raise _refuse(path, f"{where} claims {rows:,} rows x {cols:,} columns",
                      f"sheets of at most {limits.rows:,} rows and {limits.columns:,} columns")


def load_checked(path: str | Path, **options):
    """``openpyxl.load_workbook(path, **options)`` of a file check_xlsx passed; whatever the XML parser or
    openpyxl raises on a damaged part (malformed XML, a missing relationship) becomes one InputError line."""
    import openpyxl

    try:
        return openpyxl.load_workbook(path, **options)
    except Exception as exc:  # openpyxl raises many types on damaged parts
        raise InputError(f"cannot read the workbook ({type(exc).__name__}: {exc})", file=str(path)) from None


def check_xlsx(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise InputError (one line: file, what is wrong, what is allowed) unless *path* is a plain, bounded .xlsx."""
    path = Path(path)
    zf = _open(path, limits)
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.entries:
            raise _refuse(path, f"{len(infos):,} zip entries", f"at most {limits.entries:,}")
        names = {i.filename for i in infos}
        if "[Content_Types].xml" not in names:
            raise _refuse(path, "not an .xlsx workbook (no [Content_Types].xml)", "an .xlsx workbook")
        if any(n.lower().endswith("vbaproject.bin") for n in names):
            raise _refuse(path, "macro-enabled workbook (contains a VBA project)", "an .xlsx workbook without macros")
        declared = sum(i.file_size for i in infos)
        if declared > limits.total_bytes:
            raise _refuse(path, f"declares {declared:,} bytes uncompressed", f"at most {limits.total_bytes:,}")
        budget = [0]
        for info in infos:
            if info.flag_bits & 0x1:
                raise _refuse(path, f"entry {info.filename} is encrypted", "an unencrypted .xlsx file")
            _scan_entry(path, zf, info, limits, budget)
        content_types = zf.read("[Content_Types].xml")
        if b"macroEnabled" in content_types:
            raise _refuse(path, "macro-enabled workbook (.xlsm content type)", "an .xlsx workbook without macros")
