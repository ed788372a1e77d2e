"""The Manifest sheet: what the build wrote, so that ``workbook audit`` can tell what people changed.

The record: one entry per cell the build wrote (inputs, constants, formulas, links, checks, keys, labels) with sheet, cell, role, key, what was written (the formula or the value) and, for a formula, the value
cached at build time; and the sheets in order. It is stored as JSON, zlib-compressed and base64-encoded, in a
few text cells (a cell holds at most 32,767 characters), so that it costs the file about 100 kB and a reader
nothing; above it, a readable count of the cells recorded per sheet. The sheet is visible and protected.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections import Counter

from workbook.writer.layout import HEADER_ROW, MANIFEST_SHEET

#: the roles of the cells that hold what the calculation uses (the rest are labels, units, notes, headers)
LIVE_ROLES = ("input", "constant", "calc", "link", "check", "output", "key")
HEADERS = ("Sheet", "Inputs", "Formulas", "Other cells", "Record")
FORMAT = "workbook-manifest/1"
#: characters per record cell (Excel's limit is 32,767)
PART_CHARS = 30_000
WIDTHS = (18, 10, 10, 12, 60)


def manifest_record(cells, sheets: list[str], structure: dict | None = None) -> dict:
    """The record as a dict: format, sheets, and [sheet, cell, role, key, written, cached] per cell; with
    *structure* also the defined names, data validations and protected sheets (structure_of)."""
    rows = [[c.sheet, c.coord, c.role, c.key, c.content, c.cached] for c in cells if c.sheet != MANIFEST_SHEET]
    return {"format": FORMAT, "sheets": list(sheets), "cells": rows, **(structure or {})}


def structure_of(w) -> dict:
    """What audit compares besides cells: {"names": {defined name: reference}, "validations": {sheet: sorted
    [range, type]}, "protected": [sheets]}, and "inputs": {"folder/file.yaml": sha256} of the YAML files the build read (every sheet is
    protected when finished; the Manifest is last)."""
    from xlsxwriter.utility import xl_range

    validations = {}
    for title, ws in w.ws.items():
        rows = sorted([" ".join(xl_range(*c) for c in v["cells"]), VALIDATION_TYPES.get(v["validate"], v["validate"])]
                      for v in ws.validations)
        if rows:
            validations[title] = rows
    protected = [t for t, ws in w.ws.items() if ws.protect_options or t == MANIFEST_SHEET]
    out = {"names": dict(sorted(w.book.names.items())), "validations": validations, "protected": protected}
    if w.book.input_hashes:
        out["inputs"] = dict(sorted(w.book.input_hashes.items()))
    return out


#: xlsxwriter's validation types as the file (and openpyxl) names them
VALIDATION_TYPES = {"integer": "whole", "length": "textLength", "any": "none"}


def encode(record: dict) -> list[str]:
    blob = base64.b64encode(zlib.compress(json.dumps(record, separators=(",", ":")).encode(), 9)).decode()
    return [blob[i:i + PART_CHARS] for i in range(0, len(blob), PART_CHARS)] or [""]


def decode(parts: list[str]) -> dict:
    """The record from the record cells' texts (ValueError when they are not one)."""
    try:
        record = json.loads(zlib.decompress(base64.b64decode("".join(parts), validate=True), bufsize=1 << 20))
    except (ValueError, zlib.error) as exc:
        raise ValueError(f"the Manifest record is damaged ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError("the Manifest record is not a " + FORMAT)
    return record


def write_manifest(w) -> int:
    """Write the Manifest sheet from the cell registry; return the last row (0-based) it prints: the counts.
    The record cells below are left out of the print area: one line of 30,000 characters each, a page would
    cut them at its edge, and they are for ``workbook audit``, not for a reader."""
    ws = w.ws[MANIFEST_SHEET]
    w.title(MANIFEST_SHEET, "Manifest", "What the build wrote, cell by cell: `workbook audit` compares the file with "
            "it. Protected; nothing here is an input.")
    for col, (head, width) in enumerate(zip(HEADERS, WIDTHS)):
        w.text(MANIFEST_SHEET, HEADER_ROW, col, head, "header", "header")
        ws.set_column(col, col, width)
    w.set_table_header(MANIFEST_SHEET, HEADER_ROW, 0)
    record = manifest_record(w.book.cells.cells, list(w.ws), structure_of(w))
    counts = Counter((r[0], "Inputs" if r[2] == "input" else "Formulas" if r[4].startswith("=") else "Other cells")
                     for r in record["cells"])
    row = HEADER_ROW + 1
    for sheet in w.ws:
        if sheet == MANIFEST_SHEET:
            continue
        w.text(MANIFEST_SHEET, row, 0, sheet, "text", "text")
        for col, head in enumerate(HEADERS[1:4], start=1):
            w.text(MANIFEST_SHEET, row, col, f"{counts[(sheet, head)]:,}", "text", "text")  # a record, not a number
        row += 1
    printed = row - 1
    for i, part in enumerate(encode(record)):
        w.text(MANIFEST_SHEET, row, 0, f"record {i + 1}", "text", "text")
        ws.write_string(row, len(HEADERS) - 1, part, w.fmt("key"))  # no wrap: one line, not a tall row
        row += 1
    return printed
