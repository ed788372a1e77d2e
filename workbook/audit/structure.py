"""Compare a workbook's defined names, data validations and sheet protection with its Manifest record: a name
redirected to another cell, a validation removed or moved, a sheet unprotected are findings, not silence.

The record holds them only for workbooks built since the record carries them ("names", "validations",
"protected"); an older record is compared on cells only.
"""

from __future__ import annotations

from workbook.audit.edits import normal_formula
from workbook.audit.findings import Finding


def compare_structure(wb, record: dict, where: dict[str, str]) -> list[Finding]:
    """Findings for names, validations and protection of *wb* (openpyxl, formulas) against *record*; *where*
    maps recorded sheet names to the names in the file (renamed sheets are reported elsewhere)."""
    out: list[Finding] = []
    if "names" in record:
        out += _names(wb, record["names"])
    if "validations" in record:
        out += _validations(wb, record["validations"], where)
    if "protected" in record:
        for sheet in record["protected"]:
            if sheet in where and not wb[where[sheet]].protection.sheet:
                out.append(Finding("protection_removed", where[sheet], "", label="sheet protection removed"))
    return out


def _names(wb, recorded: dict[str, str]) -> list[Finding]:
    have = {name: dn.attr_text or "" for name, dn in wb.defined_names.items()}
    out = []
    for name, ref in recorded.items():
        if name not in have:
            out.append(Finding("name_changed", "", "", label=f"defined name {name}", old=ref, new="(removed)"))
        elif normal_formula(have[name]) != normal_formula(ref):
            out.append(Finding("name_changed", "", "", label=f"defined name {name}", old=ref, new=have[name]))
    for name in sorted(set(have) - set(recorded)):
        if not name.startswith("_xlnm."):
            out.append(Finding("name_changed", "", "", label=f"defined name {name}", old="(none)", new=have[name]))
    return out


def _validations(wb, recorded: dict[str, list], where: dict[str, str]) -> list[Finding]:
    out = []
    for sheet, rows in recorded.items():
        if sheet not in where:
            continue
        ws = wb[where[sheet]]
        have = sorted([str(dv.sqref), dv.type or "none"] for dv in ws.data_validations.dataValidation)
        want = sorted([r, t] for r, t in rows)
        if have != want:
            gone = [r for r in want if r not in have]
            new = [r for r in have if r not in want]
            out.append(Finding("validation_changed", where[sheet], "", label="data validation changed",
                               old="; ".join(f"{r} {t}" for r, t in gone) or "(none)",
                               new="; ".join(f"{r} {t}" for r, t in new) or "(none)"))
    return out
