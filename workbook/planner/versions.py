"""Plan versions (issue 23): ``plan --force`` never destroys an earlier plan. The earlier workbook, PDF, Markdown and
record move to ``<id>.backup-N.<ext>`` (N the first number free for all of them, as ``build`` names its backups),
and the new plan is version N + 1. Each plan writes a small record beside it (``<id>.plan.json``: the request's
fields, the catalogue files' hashes, the results); a re-plan compares it with the earlier record and lists what
changed (inputs, catalogue, results) on the workbook's Changes sheet and in the Markdown.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from workbook.errors import InputError

#: the files of one plan, by suffix (the record last)
SUFFIXES = (".xlsx", ".pdf", ".md", ".plan.json")
#: result figures compared between versions: (label, section, key)
RESULTS = (("Training: GPU", "training", "gpu"), ("Training: GPUs", "training", "num_gpus"),
           ("Training: layout", "training", "layout"), ("Training: days", "training", "train_days"),
           ("Training: rent for the run (USD)", "training", "train_cost_usd"),
           ("Training: budget headroom (USD)", "training", "budget_headroom_usd"),
           ("Serving: GPU", "serving", "gpu"), ("Serving: GPUs", "serving", "num_gpus"),
           ("Serving: layout", "serving", "layout"), ("Serving: USD per month", "serving", "usd_per_month"))


def files(path: Path) -> list[Path]:
    """The plan's files beside the workbook *path*."""
    return [path.with_name(path.stem + s) for s in SUFFIXES]


def back_up(path: Path, moved: list[tuple[Path, Path]] | None = None) -> tuple[int, dict | None]:
    """Move the earlier plan's files to ``<id>.backup-N.<ext>`` (workbook/safe_write.py; each pair appended to
    *moved*); returns (the new plan's version, the earlier record or None). Version 1 when there is no earlier plan."""
    from workbook import safe_write

    if not any(p.exists() for p in files(path)):
        return 1, None
    record = read_record(path)
    n, pairs = safe_write.backup_files(path, SUFFIXES)
    if moved is not None:
        moved += pairs
    version = int(record.get("version", n)) + 1 if record else n + 1
    return version, record


#: a plan record is a few kilobytes; a larger one is not ours
MAX_RECORD_BYTES = 1 << 20


def read_record(path: Path) -> dict | None:
    from workbook.safe_write import read_bounded

    try:
        rec = json.loads(read_bounded(files(path)[-1], MAX_RECORD_BYTES, "a plan record"))
    except (InputError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: d if isinstance(d, (int, float, str, bool)) or d is None else json.dumps(d, default=str)}


def record(request_file: str | None, catalog_files: list[Path], data: dict, version: int) -> dict:
    """What a later plan compares with: the request's fields, the catalogue files' hashes (the whole catalogue's,
    then an overlay's: workbook/cli.py _catalog_files), the results."""
    from workbook.catalog.yamlio import load_yaml

    req = load_yaml(request_file)[0] if request_file else {}  # as the request was read: bounded, YAML 1.2
    cat: dict[str, str] = {}
    for p in catalog_files:  # an overlay's file of the same name as the catalogue's is named with its folder
        key = p.name if p.name not in cat else f"{p.parent.name}/{p.name}"
        cat[key] = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
    res = {}
    for label, section, key in RESULTS:
        rec = (data.get(section) or {}).get("recommended") or {}
        if key in rec:
            res[label] = rec[key]
    return {"version": version, "request": _flat(req or {}), "catalogue": cat, "results": res}


def changes(before: dict | None, after: dict) -> list[tuple[str, str, str, str]]:
    """(what, item, before, after) for every request field, catalogue file and result that differs."""
    if not before:
        return []
    out = []
    for what, key in (("input", "request"), ("catalogue", "catalogue"), ("result", "results")):
        a, b = before.get(key) or {}, after.get(key) or {}
        for item in sorted(set(a) | set(b), key=str):
            if a.get(item) != b.get(item):
                out.append((what, item, _show(a.get(item), item), _show(b.get(item), item)))
    return out


def _show(v: Any, item: str = "") -> str:
    """A value as the plan shows it: whole dollars, days to one decimal."""
    if v is None:
        return "-"
    if isinstance(v, float) and "USD" in item:
        return f"${v:,.0f}"
    if isinstance(v, float) and "days" in item:
        return f"{v:,.1f}"
    if isinstance(v, float):
        return f"{v:,.6g}"
    return str(v)


def write_record(path: Path, rec: dict) -> Path:
    from workbook import safe_write

    out = files(path)[-1]  # a unique temporary, never through a link (workbook/safe_write.py)
    return safe_write.write_text(out, json.dumps(rec, indent=1, sort_keys=True, default=str) + "\n")


def prepare(path: Path, force: bool, request_file: str | None, catalog_files: list[Path], data: dict,
            moved: list[tuple[Path, Path]] | None = None) -> dict:
    """Before a plan is written: back up an earlier one (with ``force``; without it the CLI has refused already;
    the moved files appended to *moved*), put the version and the changes since the earlier one into *data*;
    returns the record to write after it."""
    version, before = back_up(path, moved) if force else (1, None)
    rec = record(request_file, catalog_files, data, version)
    data["version"] = version
    data["changes"] = [list(c) for c in changes(before, rec)]
    return rec
