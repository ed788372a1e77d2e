"""Line items: look up the selected GPU's and model's fields in the catalogue tables (INDEX/MATCH)."""

from __future__ import annotations

from workbook.calc.selection import QUANTITIES


def _item(name: str) -> str:
    kind, field = name.split("_", 1)
    return f"=INDEX(cat_{kind}_{field},MATCH({{{kind}}},cat_{kind}_id,0))"


ITEMS = {q.name: _item(q.name) for q in QUANTITIES}
