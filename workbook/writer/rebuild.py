"""Regenerate without losing anything: the previous build's record (for the Changelog) and ``--keep-edits``,
which carries a person's edited inputs from their workbook into a build against the current catalogue."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from workbook.errors import InputError
from workbook.writer.changelog import LogRow


def previous_record(path: Path) -> tuple[str, dict] | None:
    """(label, Manifest record) of the workbook at *path*, or None when there is none we can read."""
    if not Path(path).is_file():
        return None  # a first build: no need to import the reader

    from workbook.audit.edits import read_record
    from workbook.safe_xlsx import check_xlsx, load_checked

    try:
        check_xlsx(path)
        wb = load_checked(path, read_only=True)  # the Manifest rows only: no need to load every sheet
        try:
            return f"previous build {Path(path).name}", read_record(wb)
        finally:
            wb.close()
    except (InputError, ValueError, OSError, KeyError):
        return None


def with_kept_edits(old: Path, catalog_dir: Path, scenario_files: list[Path]):
    """(catalogue, scenarios, changelog rows, previous record) with *old*'s edited inputs applied on top of the
    current catalogue and scenario files (in a temporary copy: the YAML files are not changed)."""
    from workbook.audit.importer import apply_changes, plan_changes
    from workbook.catalog import load_catalog
    from workbook.scenario import load_scenarios

    from workbook.safe_xlsx import check_xlsx

    check_xlsx(old)  # a hostile or damaged file is refused with its own reason
    previous = previous_record(old)
    if previous is None:
        raise InputError("cannot read the edited workbook's Manifest", file=str(old),
                         expected="a workbook written by `workbook build`")
    with tempfile.TemporaryDirectory() as tmp:
        cat = Path(tmp) / "catalog"
        shutil.copytree(catalog_dir, cat, ignore=shutil.ignore_patterns("scenarios", "validation", "requests"))
        scen = Path(tmp) / "scenarios"
        scen.mkdir()
        for f in scenario_files:
            shutil.copy(f, scen / Path(f).name)
        changes = apply_changes(plan_changes(old, cat, scen), cat, write=True)
        catalog = load_catalog(cat)
        scenarios = load_scenarios(sorted(scen / Path(f).name for f in scenario_files))
    return catalog, scenarios, [_row(ch) for ch in changes], previous


def _row(ch) -> LogRow:
    """A kept edit as a changelog row: scenario file and dotted field, or catalogue record and field."""
    sheet = ch.cell.split("!")[0]
    if sheet == "Plan":
        record, field = ch.file.name, ".".join(str(p) for p in ch.path)
    else:
        record, field = str(ch.path[0]), ".".join(str(p) for p in ch.path[1:])
    new = "(new record)" if isinstance(ch.new, dict) else ("" if ch.new is None else str(ch.new))
    return LogRow("kept edit", sheet, record, field, "" if ch.old is None else str(ch.old), new)
