"""``workbook import FILE.xlsx``: carry a person's edited inputs back into the catalogue and scenario files.

The edits are the audit's (inputs changed since the build, catalogue rows added). Each becomes a change of one
YAML field: a Plan input of scenario *name* -> that scenario's file; a Hardware / Models / Efficiency / Defaults
cell -> the record of that id in gpus.yaml / models.yaml / efficiency.yaml / defaults.yaml; an added catalogue row
-> a new record. The files are edited with ruamel.yaml (comments and order kept), validated exactly as the loaders
validate them (a copy of the folder is loaded), and written only with ``write=True``, atomically.
"""

from __future__ import annotations

import dataclasses
import io
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl.utils.cell import column_index_from_string, coordinate_from_string
from ruamel.yaml import YAML

from workbook.audit.edits import compare_with_record, read_record, same_value
from workbook.catalog.yamlio import MAX_YAML_BYTES, check_text, load_yaml, parse_yaml, read_text
from workbook.errors import InputError
from workbook.safe_write import read_bounded, write_all
from workbook.writer import input_key
from workbook.safe_xlsx import check_xlsx, load_checked

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
    #: sha256 of the file when the build read it (the Manifest record), None when not recorded
    built_hash: str | None = None

    def describe(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else str(self.file)
        dotted = ".".join(str(p) for p in self.path)
        return f"{where} {dotted}: {_show(self.old)} -> {_show(self.new)} (from {self.cell})"


def changed_since_build(changes: list[Change]) -> list[Path]:
    """The files the changes touch whose bytes differ from what the build read (hash per file): their edited
    fields were compared value by value (_conflict) and none conflicts, else import stopped."""
    import hashlib

    out = []
    for f, h in {c.file: c.built_hash for c in changes if c.built_hash}.items():
        if hashlib.sha256(read_bounded(f, MAX_YAML_BYTES, "a YAML file")).hexdigest() != h:
            out.append(f)
    return out


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


def _load(xlsx: Path):
    """The workbook (formulas) and its Manifest record; one line for a file that is not one of ours."""
    check_xlsx(xlsx)
    wb = load_checked(xlsx, data_only=False)
    try:
        return wb, read_record(wb)
    except ValueError as exc:
        raise InputError(str(exc), file=str(xlsx), expected="a workbook written by `workbook build`") from None


def plan_changes(xlsx: Path, catalog_dir: Path, scenario_dir: Path) -> list[Change]:
    """The YAML changes the edited workbook asks for (nothing is written)."""
    wb, record = _load(xlsx)
    rec_cells = {(s, c): (role, key, content) for s, c, role, key, content, _ in record["cells"]}
    names = {c: content for (s, c), (role, key, content) in rec_cells.items() if s == "Plan" and key == "name"}
    by_name = _scenario_files(scenario_dir)
    changes: list[Change] = []
    findings = compare_with_record(wb, wb, record)
    _refuse_structure(findings, xlsx)
    if any(f.kind == "rows_moved" and f.sheet == "Plan" for f in findings):
        plan_edits = moved_plan_edits(wb, record, xlsx)  # rows moved: found by key and scenario name
    else:
        plan_edits = [(rec_cells[("Plan", f.cell)][1], names.get(f"{coordinate_from_string(f.cell)[0]}4"),
                       rec_cells[("Plan", f.cell)][2], f.cell)
                      for f in findings if f.kind == "input_changed" and f.sheet == "Plan"]
    for key, scenario, old, coord in plan_edits:
        if scenario not in by_name:
            raise InputError(f"no scenario file named {scenario!r}", file=str(scenario_dir),
                             expected="the scenario files the workbook was built from")
        new = _cell_value(wb["Plan"][coord], xlsx)
        changes.append(Change(by_name[scenario], tuple(key.split(".")), _value(_typed(old)), new, f"Plan!{coord}"))
    for f in findings:
        sheet = f.sheet
        letters, row = coordinate_from_string(f.cell) if f.cell else ("A", 0)
        if f.kind == "input_changed" and sheet == "Plan":
            continue
        elif f.kind == "input_changed" and sheet in TABLES:
            fname, id_field, prefix = TABLES[sheet]
            _role, key, old = rec_cells[(sheet, f.cell)]
            rid = _row_id(rec_cells, sheet, row, id_field, prefix)
            field = key[len(prefix):] if sheet != "Defaults" else "value"
            rid = key[len(prefix):] if sheet == "Defaults" else rid
            changes.append(Change(catalog_dir / fname, (rid, field), _value(_typed(old)),
                                  _cell_value(wb[sheet][f.cell], xlsx), f"{sheet}!{f.cell}"))
        elif f.kind == "catalogue_row_added" and sheet in TABLES:
            fname, id_field, prefix = TABLES[sheet]
            new = _row_record(wb[sheet], row, rec_cells, sheet, xlsx)
            changes.append(Change(catalog_dir / fname, (new.get(id_field),), None, new, f"{sheet}!A{row}"))
        elif f.kind in ("input_changed", "catalogue_row_added"):
            raise InputError(f"cannot carry an edit on sheet {sheet!r} back", file=str(xlsx), field=f.cell,
                             expected="edits on Plan, Hardware, Models, Efficiency or Defaults")
    hashes = record.get("inputs") or {}
    return [dataclasses.replace(c, built_hash=hashes.get(input_key(c.file))) for c in changes]


def _refuse_structure(findings: list, xlsx: Path) -> None:
    """Edits cannot be mapped when a sheet they come from was removed, renamed, or had rows or columns moved (the
    Plan sheet excepted: its rows are found by key, moved_plan_edits)."""
    for f in findings:
        if f.kind in ("sheet_removed", "sheet_renamed") and (f.sheet == "Plan" or f.sheet in TABLES):
            raise InputError(f"sheet {f.sheet!r} was {f.kind.split('_')[1]}: its edits cannot be mapped to the "
                             "YAML files", file=str(xlsx), expected="the sheets as the build wrote them")
        if f.kind == "rows_moved" and f.sheet in TABLES:
            raise InputError(f"{f.sheet}: {f.label}; its edits cannot be mapped by address", file=str(xlsx),
                             expected="rows and columns as the build wrote them (undo the insertion or deletion)")


def moved_plan_edits(wb, record: dict, xlsx: Path) -> list[tuple[str, str, str, str]]:
    """(input key, scenario name, value at build, cell now) of every Plan input whose value changed, each found
    by its row's key (the Key column) and its column's scenario name, wherever rows or columns moved."""
    ws = wb["Plan"]
    keys_at, names_at = {}, {}
    for sheet, coord, role, key, content, _ in record["cells"]:
        if sheet != "Plan":
            continue
        if role == "key":
            keys_at[content] = coord
        elif role == "input" and key == "name":
            names_at[content] = coord
    found: dict[str, list] = {}
    for row in ws.iter_rows():
        for c in row:
            if isinstance(c.value, str) and (c.value in keys_at or c.value in names_at):
                found.setdefault(c.value, []).append(c)
    # a key also stands in the Notes column of its input check (below the inputs): the Key column's copy wins
    key_col = {coordinate_from_string(coord)[0] for coord in keys_at.values()}
    where: dict[str, tuple[int, int]] = {}
    for value, cells in found.items():
        if len(cells) > 1 and value in keys_at:
            in_key_col = [c for c in cells if c.column_letter in key_col]
            cells = in_key_col if len(in_key_col) == 1 else cells
        if len(cells) > 1:
            raise InputError(f"Plan: {value!r} appears twice ({cells[0].coordinate} and {cells[1].coordinate}): the "
                             "edits cannot be mapped", file=str(xlsx), expected="each key and name once")
        where[value] = (cells[0].row, cells[0].column)
    out = []
    for sheet, coord, role, key, content, _ in record["cells"]:
        if sheet != "Plan" or role != "input" or key == "name":
            continue
        letters, row = coordinate_from_string(coord)
        name = next((n for n, nc in names_at.items() if coordinate_from_string(nc)[0] == letters), None)
        key_coord = keys_at.get(key)
        if name is None or key_coord is None:
            continue
        if key not in where or name not in where:
            missing = key if key not in where else name
            raise InputError(f"Plan: rows or columns were moved and {missing!r} is no longer on the sheet: the "
                             "edits cannot be mapped", file=str(xlsx), expected="every input row and scenario column kept")
        cell = ws.cell(where[key][0], where[name][1])
        if not same_value(content, cell.value):
            out.append((key, name, content, cell.coordinate))
    return out


def _cell_value(cell, xlsx: Path) -> Any:
    """An input cell's value for YAML: a number, text or blank; a formula or formula-like text is refused (an
    input is a value; ``=WEBSERVICE(...)`` typed into it must not travel into the YAML and the next build)."""
    v = cell.value
    where = f"{cell.parent.title}!{cell.coordinate}"
    if v is not None and not isinstance(v, (int, float, str, bool)):
        raise InputError(f"holds an array or data-table formula ({type(v).__name__}), not a value",
                         file=str(xlsx), field=where, expected="a number or text typed into the input cell")
    if isinstance(v, str):
        if v.startswith("=") or cell.data_type == "f":
            raise InputError(f"holds a formula ({v[:40]!r}), not a value", file=str(xlsx), field=where,
                             expected="a number or text typed into the input cell")
        check_text(v, str(xlsx), field=where)
    if isinstance(v, float) and not math.isfinite(v):
        raise InputError("holds NaN or infinity", file=str(xlsx), field=where, expected="a finite number")
    return _value(v)


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


def _row_record(ws, row: int, rec_cells: dict, sheet: str, xlsx: Path) -> dict:
    """An added table row as a record: the header of each column above it names the field."""
    headers = {column_index_from_string(coordinate_from_string(c)[0]): (coordinate_from_string(c)[1], content)
               for (s, c), (role, _k, content) in rec_cells.items() if s == sheet and role == "header"}
    out = {}
    for col, (hrow, field) in sorted(headers.items()):
        if hrow < row:
            v = _cell_value(ws.cell(row, col), xlsx)
            if v is not None:
                out[field] = v
    return out


def apply_changes(changes: list[Change], catalog_dir: Path, write: bool,
                  scenario_dir: Path | None = None) -> list[Change]:
    """Edit the files in memory, validate them as the loaders do, write them if *write* (never into a catalogue or
    scenario folder that is a symbolic link, or through one below it); the changes with lines."""
    from workbook.catalog import load_catalog
    from workbook.scenario import load_scenario

    y = _yaml()
    docs: dict[Path, Any] = {}
    for ch in changes:
        if ch.file not in docs:
            text = read_text(ch.file)
            parse_yaml(text, str(ch.file))  # checked as the loader checks it before ruamel parses it
            docs[ch.file] = y.load(text)
        _conflict(docs[ch.file], ch, catalog_dir)
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
    if write:  # all or nothing: every file to a temporary beside it, then all renamed
        write_all({path: text.encode("utf-8") for path, text in texts.items()},
                  inside=(catalog_dir, scenario_dir or catalog_dir))
    return located


def _current(doc: Any, ch: Change, catalog_dir: Path) -> tuple[bool, Any]:
    """(found, value) of the field *ch* changes, as the file holds it now."""
    if ch.file.parent != catalog_dir:
        node = doc
        for p in ch.path:
            if not isinstance(node, dict) or p not in node:
                return False, None
            node = node[p]
        return True, node
    id_field = next(t[1] for t in TABLES.values() if t[0] == ch.file.name)
    recs = [r for r in doc if isinstance(r, dict) and r.get(id_field) == ch.path[0]] if isinstance(doc, list) else []
    if isinstance(ch.new, dict):
        return bool(recs), recs[0] if recs else None
    if not recs or ch.path[1] not in recs[0]:
        return False, None
    return True, recs[0][ch.path[1]]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return a == b or str(a) == str(b)


def _conflict(doc: Any, ch: Change, catalog_dir: Path) -> None:
    """Three-way compare: the workbook's edit (old -> new) against the file now. A value set in the file that is
    neither what the build wrote nor the edit means somebody changed the file since: a conflict, not overwritten."""
    found, now = _current(doc, ch, catalog_dir)
    if isinstance(ch.new, dict):
        if found:
            raise InputError(f"conflict: record {ch.path[0]!r} was added to the file since the build as well as in "
                             f"the workbook ({ch.cell})", file=str(ch.file),
                             expected="resolve by hand: remove one of the two records")
        return
    if not found or now is None or _same(now, ch.old) or _same(now, ch.new):
        return
    dotted = ".".join(str(p) for p in ch.path)
    raise InputError(f"conflict: the file now says {now!r}, the workbook was built with {_show(ch.old)} and "
                     f"{ch.cell} says {_show(ch.new)} (the file changed since the build)", file=str(ch.file),
                     field=dotted, expected="resolve by hand: edit the file or the workbook so they agree, then import")


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
    return dataclasses.replace(ch, line=line)
