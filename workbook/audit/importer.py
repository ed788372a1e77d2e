"""``workbook import FILE.xlsx``: carry a person's edited inputs back into the catalogue and scenario files.

The edits are the audit's (inputs changed since the build, catalogue rows added). Each becomes a change of one
YAML field: a Plan input of scenario *name* -> that scenario's file; a Hardware / Models / Efficiency / Defaults
cell -> the record of that id in gpus.yaml / models.yaml / efficiency.yaml / defaults.yaml; an added catalogue row
-> a new record. The files are edited with ruamel.yaml (comments and order kept), validated exactly as the loaders
validate them (a copy of the folder is loaded), and written only with ``write=True``, atomically.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.utils.cell import column_index_from_string, coordinate_from_string
from ruamel.yaml import YAML

from workbook.audit.edits import compare_with_record, read_record
from workbook.catalog.yamlio import load_yaml, parse_yaml
from workbook.errors import InputError
from workbook.safe_xlsx import check_xlsx

#: catalogue sheet -> (file, id field, key prefix of its cells)
TABLES = {"Hardware": ("gpus.yaml", "id", "gpu_"), "Models": ("models.yaml", "id", "model_"),
          "Efficiency": ("efficiency.yaml", "gpu", "eff_"), "Defaults": ("defaults.yaml", "key", "d_")}


@dataclass(frozen=True)
class Change:
    """One field of one YAML file: ``path`` inside the document, old and new value, and the cell it came from."""

    file: Path
    path: tuple
    old: Any
    new: Any
    cell: str
    line: int | None = None

    def describe(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else str(self.file)
        dotted = ".".join(str(p) for p in self.path)
        return f"{where} {dotted}: {_show(self.old)} -> {_show(self.new)} (from {self.cell})"


def _show(v: Any) -> str:
    return "(blank)" if v is None else ("(new record)" if isinstance(v, dict) else repr(v))


def _value(v: Any) -> Any:
    """A cell value as YAML wants it: whole floats as ints, empty text as blank."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    if isinstance(v, str) and not v.strip():
        return None
    return v


def _yaml() -> YAML:
    y = YAML()
    y.preserve_quotes = True
    y.width = 4096
    y.representer.add_representer(type(None), lambda r, _: r.represent_scalar("tag:yaml.org,2002:null", "null"))
    return y


def _record_index(doc: list, id_field: str, rid: Any) -> int:
    for i, rec in enumerate(doc):
        if isinstance(rec, dict) and rec.get(id_field) == rid:
            return i
    raise InputError(f"record {rid!r} not found", expected=f"a record with {id_field}: {rid}")


def _scenario_files(folder: Path) -> dict[str, Path]:
    out = {}
    for p in sorted(folder.glob("*.yaml")):
        data, _ = load_yaml(p)
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            out[data["name"]] = p
    return out


def plan_changes(xlsx: Path, catalog_dir: Path, scenario_dir: Path) -> list[Change]:
    """The YAML changes the edited workbook asks for (nothing is written)."""
    check_xlsx(xlsx)
    wb = openpyxl.load_workbook(xlsx, data_only=False)
    record = read_record(wb)
    rec_cells = {(s, c): (role, key, content) for s, c, role, key, content, _ in record["cells"]}
    names = {c: content for (s, c), (role, key, content) in rec_cells.items() if s == "Plan" and key == "name"}
    by_name = _scenario_files(scenario_dir)
    changes: list[Change] = []
    for f in compare_with_record(wb, wb, record):
        sheet = f.sheet
        letters, row = coordinate_from_string(f.cell) if f.cell else ("A", 0)
        if f.kind == "input_changed" and sheet == "Plan":
            _role, key, old = rec_cells[(sheet, f.cell)]
            scenario = names.get(f"{letters}4")
            if scenario not in by_name:
                raise InputError(f"no scenario file named {scenario!r}", file=str(scenario_dir),
                                 expected="the scenario files the workbook was built from")
            new = _value(wb[sheet][f.cell].value)
            changes.append(Change(by_name[scenario], tuple(key.split(".")), _value(_typed(old)), new, f"Plan!{f.cell}"))
        elif f.kind == "input_changed" and sheet in TABLES:
            fname, id_field, prefix = TABLES[sheet]
            _role, key, old = rec_cells[(sheet, f.cell)]
            rid = _row_id(rec_cells, sheet, row, id_field, prefix)
            field = key[len(prefix):] if sheet != "Defaults" else "value"
            rid = key[len(prefix):] if sheet == "Defaults" else rid
            changes.append(Change(catalog_dir / fname, (rid, field), _value(_typed(old)),
                                  _value(wb[sheet][f.cell].value), f"{sheet}!{f.cell}"))
        elif f.kind == "catalogue_row_added" and sheet in TABLES:
            fname, id_field, prefix = TABLES[sheet]
            new = _row_record(wb[sheet], row, rec_cells, sheet)
            changes.append(Change(catalog_dir / fname, (new.get(id_field),), None, new, f"{sheet}!A{row}"))
        elif f.kind in ("input_changed", "catalogue_row_added"):
            raise InputError(f"cannot carry an edit on sheet {sheet!r} back", file=str(xlsx), field=f.cell,
                             expected="edits on Plan, Hardware, Models, Efficiency or Defaults")
    return changes


def _typed(text: str) -> Any:
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _row_id(rec_cells: dict, sheet: str, row: int, id_field: str, prefix: str) -> Any:
    for (s, c), (role, key, content) in rec_cells.items():
        if s == sheet and coordinate_from_string(c)[1] == row and column_index_from_string(coordinate_from_string(c)[0]) == 1:
            return content
    raise InputError(f"{sheet} row {row}: no record id", expected=f"the {id_field} in column A")


def _row_record(ws, row: int, rec_cells: dict, sheet: str) -> dict:
    """An added table row as a record: the header of each column above it names the field."""
    headers = {column_index_from_string(coordinate_from_string(c)[0]): (coordinate_from_string(c)[1], content)
               for (s, c), (role, _k, content) in rec_cells.items() if s == sheet and role == "header"}
    out = {}
    for col, (hrow, field) in sorted(headers.items()):
        if hrow < row:
            v = _value(ws.cell(row, col).value)
            if v is not None:
                out[field] = v
    return out


def apply_changes(changes: list[Change], catalog_dir: Path, write: bool) -> list[Change]:
    """Edit the files in memory, validate them as the loaders do, write them if *write*; the changes with lines."""
    from workbook.catalog import load_catalog
    from workbook.scenario import load_scenario

    y = _yaml()
    docs: dict[Path, Any] = {}
    for ch in changes:
        if ch.file not in docs:
            docs[ch.file] = y.load(ch.file.read_text(encoding="utf-8"))
        _apply(docs[ch.file], ch, catalog_dir)
    texts = {}
    for path, doc in docs.items():
        buf = io.StringIO()
        y.dump(doc, buf)
        texts[path] = buf.getvalue()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "catalog"
        shutil.copytree(catalog_dir, copy, ignore=shutil.ignore_patterns("scenarios", "validation", "requests"))
        for path, text in texts.items():
            target = copy / path.name if path.parent == catalog_dir else Path(tmp) / path.name
            target.write_text(text, encoding="utf-8")
            if path.parent != catalog_dir:
                try:
                    load_scenario(target)
                except InputError as err:
                    raise InputError(err.message, file=str(path), line=err.line, field=err.field,
                                     expected=err.expected) from None
        try:
            load_catalog(copy)
        except InputError as err:
            raise InputError(err.message, file=str(catalog_dir / Path(err.file or "").name), line=err.line,
                             field=err.field, expected=err.expected) from None
    located = [_with_line(ch, texts[ch.file]) for ch in changes]
    if write:
        for path, text in texts.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".yaml", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
            os.replace(tmp, path)
    return located


def _apply(doc: Any, ch: Change, catalog_dir: Path) -> None:
    if ch.file.parent != catalog_dir:  # a scenario: a nested mapping
        node = doc
        for p in ch.path[:-1]:
            if node.get(p) is None:
                node[p] = {}
            node = node[p]
        if ch.new is None:
            node.pop(ch.path[-1], None)
        else:
            node[ch.path[-1]] = ch.new
        return
    fname = ch.file.name
    id_field = next(t[1] for t in TABLES.values() if t[0] == fname)
    if isinstance(ch.new, dict):
        doc.append(ch.new)
        return
    rec = doc[_record_index(doc, id_field, ch.path[0])]
    if ch.new is None:
        rec.pop(ch.path[1], None)
    else:
        rec[ch.path[1]] = ch.new


def _with_line(ch: Change, text: str) -> Change:
    """*ch* with the line of its field in the edited *text* of its file."""
    data, lines = parse_yaml(text, str(ch.file))
    loc = ch.path
    if ch.file.name in {t[0] for t in TABLES.values()} and isinstance(data, list):
        id_field = next(t[1] for t in TABLES.values() if t[0] == ch.file.name)
        idx = next((i for i, r in enumerate(data) if isinstance(r, dict) and r.get(id_field) == ch.path[0]), None)
        loc = (idx,) + tuple(ch.path[1:]) if idx is not None else ()
    line = lines.get(loc) or lines.get(loc[:-1]) if loc else None
    return Change(ch.file, ch.path, ch.old, ch.new, ch.cell, line)
