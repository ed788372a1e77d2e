"""A PDF of chosen sheets of a workbook, through LibreOffice headless, recalculated on load.

In a copy, the print area of every other sheet is pointed at one empty cell (LibreOffice skips empty pages; it
exports hidden sheets, so hiding them is not enough) and their repeated titles are dropped; nothing else in the
file changes, so charts, print setup (A4 landscape, fit to width, repeated titles) and the footer (file, sheet,
page x of y) are the ones the build wrote. The delivered .xlsx is not touched.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape as xml_escape
import tempfile
import zipfile
from pathlib import Path

from workbook import safe_write
from workbook.errors import InputError
from workbook.safe_xlsx import check_xlsx

_SHEET = re.compile(rb'<sheet\b[^>]*?/>')
_NAME = re.compile(rb'name="([^"]*)"')
_STATE = re.compile(rb'\sstate="[^"]*"')
_ACTIVE = re.compile(rb'activeTab="\d+"')
_PRINT = re.compile(rb'<definedName name="_xlnm\.(Print_Area|Print_Titles)" localSheetId="(\d+)"[^>]*>[^<]*</definedName>')


def _unescape(name: bytes) -> str:
    return (name.decode("utf-8").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
            .replace("&quot;", '"').replace("&apos;", "'"))


def sheet_names(xlsx: Path) -> list[str]:
    """The sheet names of *xlsx*, in tab order (xl/workbook.xml)."""
    with zipfile.ZipFile(xlsx) as z:
        return [_unescape(_NAME.search(t).group(1)) for t in _SHEET.findall(z.read("xl/workbook.xml"))]


def only_sheets(src: Path, dst: Path, sheets: list[str]) -> None:
    """Copy *src* to *dst* with every sheet not in *sheets* hidden and the first of *sheets* active."""
    with zipfile.ZipFile(src) as zin:
        try:
            xml = zin.read("xl/workbook.xml")
            tags = _SHEET.findall(xml)
            names = [_unescape(_NAME.search(t).group(1)) for t in tags]
        except (KeyError, AttributeError, UnicodeDecodeError):
            raise InputError("no readable sheet list (xl/workbook.xml)", file=str(src),
                             expected="a workbook written by `workbook build`") from None
        missing = [s for s in sheets if s not in names]
        if missing:
            raise InputError(f"no sheet {missing[0]!r} in the workbook", file=str(src), expected=", ".join(names))
        for tag, name in zip(tags, names):
            clean = _STATE.sub(b"", tag)
            new = clean if name in sheets else clean.replace(b"<sheet ", b'<sheet state="hidden" ', 1)
            xml = xml.replace(tag, new, 1)
        keep = {i for i, n in enumerate(names) if n in sheets}

        def _print(m: re.Match) -> bytes:
            i = int(m.group(2))
            if i in keep:
                return m.group(0)
            if m.group(1) == b"Print_Titles":
                return b""
            quoted = xml_escape(names[i].replace("'", "''"), {'"': "&quot;"}).encode()  # e.g. a sheet named R&D
            return (b'<definedName name="_xlnm.Print_Area" localSheetId="%d">\'%s\'!$XFD$1048576</definedName>'
                    % (i, quoted))
        xml = _PRINT.sub(_print, xml)
        xml = _reorder(xml, names, sheets)
        xml = _ACTIVE.sub(b'activeTab="0"', xml) if _ACTIVE.search(xml) else xml
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                data = xml if info.filename == "xl/workbook.xml" else zin.read(info.filename)
                zout.writestr(info, data)


_LOCAL = re.compile(rb'localSheetId="(\d+)"')


def _reorder(xml: bytes, names: list[str], sheets: list[str]) -> bytes:
    """The chosen *sheets* first, in the order given (LibreOffice prints in tab order), the others after them;
    the sheet-local defined names (print areas, titles) follow their sheets."""
    tags = _SHEET.findall(xml)
    order = [names.index(s) for s in sheets] + [i for i, n in enumerate(names) if n not in sheets]
    new_index = {old: new for new, old in enumerate(order)}
    start, end = xml.index(tags[0]), xml.index(tags[-1]) + len(tags[-1])
    xml = xml[:start] + b"".join(tags[i] for i in order) + xml[end:]
    return _LOCAL.sub(lambda m: b'localSheetId="%d"' % new_index[int(m.group(1))], xml)


def export_pdf(xlsx: str | Path, out_pdf: str | Path, sheets: list[str]) -> Path:
    """Write *out_pdf*: the *sheets* of *xlsx*, recalculated, as LibreOffice prints them."""
    from workbook.engines.libreoffice import convert_recalculated

    xlsx, out_pdf = Path(xlsx), Path(out_pdf)
    if not sheets:
        raise InputError("no sheet named", field="--sheets", expected="comma-separated sheet names, e.g. Cover,Summary")
    safe_write.check_destination(out_pdf, inputs=(xlsx,), what="PDF")
    check_xlsx(xlsx)
    with tempfile.TemporaryDirectory(prefix="pdf-") as tmp:
        staged = Path(tmp) / xlsx.name
        only_sheets(xlsx, staged, sheets)
        (pdf,) = convert_recalculated([staged], Path(tmp) / "out", target="pdf:calc_pdf_Export", suffix=".pdf")
        safe_write.copy_file(pdf, out_pdf, inputs=(xlsx,), what="PDF")
    return out_pdf
