"""What an audit finds: one Finding per edit or problem, and the report that prints them."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

#: finding kind -> (is it a problem that makes the file unsound, heading)
KINDS: dict[str, tuple[bool, str]] = {
    "input_changed": (False, "Inputs changed since the build"),
    "input_invalid": (True, "Inputs outside their validation"),
    "catalogue_row_added": (False, "Catalogue rows added"),
    "formula_overwritten": (True, "Formulas overwritten by a constant"),
    "formula_altered": (True, "Formulas altered"),
    "formula_deleted": (True, "Formulas deleted"),
    "constant_changed": (True, "Constants changed"),
    "cell_added": (True, "Cells typed into calculation areas"),
    "rows_moved": (True, "Rows or columns inserted or deleted in calculation areas"),
    "sheet_renamed": (True, "Sheets renamed"),
    "sheet_removed": (True, "Sheets removed"),
    "sheet_added": (False, "Sheets added"),
    "name_changed": (True, "Defined names redirected, removed or added"),
    "validation_changed": (True, "Data validation removed or changed"),
    "protection_removed": (True, "Sheet protection removed"),
    "error_value": (True, "Error values"),
    "stale_value": (True, "Stored values not recalculated since an edit"),
    "value_disagrees": (True, "Stored values that disagree with the reference"),
}


@dataclass(frozen=True)
class Finding:
    kind: str
    sheet: str
    cell: str
    label: str = ""
    old: str = ""
    new: str = ""

    @property
    def problem(self) -> bool:
        return KINDS[self.kind][0]


@dataclass
class AuditReport:
    path: str
    findings: list[Finding] = field(default_factory=list)
    recomputed: bool = False
    cells_compared: int = 0

    @property
    def sound(self) -> bool:
        return not any(f.problem for f in self.findings)

    def of(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def as_json(self) -> str:
        return json.dumps({"path": self.path, "sound": self.sound, "recomputed": self.recomputed,
                           "cells_compared": self.cells_compared,
                           "findings": [asdict(f) | {"problem": f.problem} for f in self.findings]}, indent=1)

    def text(self, limit: int = 40) -> str:
        lines = [f"audit {self.path}"]
        for kind, (_, heading) in KINDS.items():
            found = self.of(kind)
            if not found:
                continue
            lines.append(f"\n{heading} ({len(found)}):")
            for f in found[:limit]:
                what = f"  {f.sheet}!{f.cell}" if f.cell else f"  {f.sheet}"
                if f.label:
                    what += f"  {f.label}"
                if f.old or f.new:
                    what += f": {f.old or '(blank)'} -> {f.new or '(blank)'}"
                lines.append(what)
            if len(found) > limit:
                lines.append(f"  ... and {len(found) - limit} more")
        if self.recomputed:
            lines.append(f"\nReference recomputed from the file's own inputs: {self.cells_compared} stored values compared.")
        lines.append("\nSOUND: no problem found." if self.sound else
                     f"\nNOT SOUND: {sum(f.problem for f in self.findings)} problem(s).")
        return "\n".join(lines)
