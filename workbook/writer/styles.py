"""The one table of named cell styles, and the colour legend shown on the Cover.

Legend (workbook-rules.md): inputs blue font on pale-yellow fill; calculations black; links to
other sheets green; checks red/green by conditional formatting.
"""

from __future__ import annotations

INPUT_FONT = "#0000FF"
INPUT_FILL = "#FFFFCC"
LINK_FONT = "#008000"
CONST_FILL = "#F2F2F2"
HEADER_FILL = "#D9E1F2"
PASS_FILL = "#C6EFCE"
PASS_FONT = "#006100"
FAIL_FILL = "#FFC7CE"
FAIL_FONT = "#9C0006"
MUTED_FONT = "#595959"
WARN_FILL = "#FFEB9C"
WARN_FONT = "#9C5700"

BASE = {"font_name": "Calibri", "font_size": 10, "valign": "top"}

#: style name -> xlsxwriter format properties (merged over BASE)
STYLES: dict[str, dict] = {
    "title": {"bold": True, "font_size": 14},
    "subtitle": {"italic": True, "font_color": MUTED_FONT},
    "header": {"bold": True, "bg_color": HEADER_FILL, "bottom": 1, "text_wrap": True},
    "block": {"bold": True, "font_size": 11, "top": 1},
    "label": {},
    "unit": {"italic": True, "font_color": MUTED_FONT},
    "source": {"font_color": MUTED_FONT, "font_size": 9},
    "note": {"font_color": MUTED_FONT, "font_size": 9, "text_wrap": True},
    "key": {"font_color": MUTED_FONT, "font_size": 9},
    "text": {},
    "input": {"font_color": INPUT_FONT, "bg_color": INPUT_FILL, "locked": False},
    "input_text": {"font_color": INPUT_FONT, "bg_color": INPUT_FILL, "locked": False},
    "input_header": {"bold": True, "font_color": INPUT_FONT, "bg_color": INPUT_FILL, "locked": False, "bottom": 1,
                     "text_wrap": True},
    "constant": {"font_color": INPUT_FONT, "bg_color": CONST_FILL},
    "calc": {"font_color": "#000000"},
    "link": {"font_color": LINK_FONT},
    "check": {"bold": True},
}

#: number formats by kind (chosen per row from the magnitude of its values)
NUMBER_FORMATS = {
    "int": "#,##0",
    "dec": "#,##0.000",
    "sci": "0.000E+00",
    "text": "@",
}

#: rows of the colour legend on the Cover: (style name, what it means)
LEGEND = [
    ("input", "Input: type here (blue on pale yellow, unlocked, validated)"),
    ("constant", "Constant: unit factor or spec table (locked)"),
    ("calc", "Calculation on this sheet (black, locked)"),
    ("link", "Link to another sheet (green, locked)"),
    ("check", "Check: green when it passes, red when it fails"),
]


def number_format(values: list[float]) -> str:
    """Pick a number format for a row from its values."""
    finite = [abs(v) for v in values if isinstance(v, (int, float))]
    if not finite:
        return NUMBER_FORMATS["dec"]
    big = max(finite)
    if big >= 1e12 or (0 < big < 1e-3):
        return NUMBER_FORMATS["sci"]
    if all(float(v).is_integer() for v in values):
        return NUMBER_FORMATS["int"]
    return NUMBER_FORMATS["dec"]


def input_format(unit: str, values: list[float]) -> str:
    """Number format of an input row (placeholder until the per-unit table lands)."""
    return number_format(values) if values else NUMBER_FORMATS["dec"]
