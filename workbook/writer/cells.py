"""A registry of every cell the builder writes, with its role, so tests can compare file and intent."""

from __future__ import annotations

from dataclasses import dataclass, field

from workbook.writer.a1 import cell

ROLES = ("input", "constant", "calc", "link", "check", "label", "unit", "note", "source", "key", "header", "output", "text")


@dataclass(frozen=True)
class CellRecord:
    sheet: str
    row: int
    col: int
    role: str
    key: str = ""
    scenario: int | None = None
    #: what was written: the formula, the text, the number's repr, "" for a blank (the Manifest sheet keeps it)
    content: str = ""
    #: the value cached with a formula at build time (the Manifest sheet keeps it for the audit)
    cached: str = ""

    @property
    def coord(self) -> str:
        return cell(self.row, self.col)


@dataclass
class CellRegistry:
    cells: list[CellRecord] = field(default_factory=list)

    def add(self, sheet: str, row: int, col: int, role: str, key: str = "", scenario: int | None = None,
            content: str = "", cached: str = "") -> None:
        assert role in ROLES, role
        self.cells.append(CellRecord(sheet, row, col, role, key, scenario, content, cached))

    def by_role(self, *roles: str) -> list[CellRecord]:
        return [c for c in self.cells if c.role in roles]
