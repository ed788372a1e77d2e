"""The Cover sheet: title, provenance, colour legend, scenarios, master-check status."""

from __future__ import annotations

from workbook import __version__
from workbook.writer.styles import LEGEND
from workbook.writer.xlsx import Writer

SHEET = "Cover"


def write_cover(w: Writer, provenance: list[tuple[str, str]], master_ref: str, master_ok: bool,
                scenario_names: list[str]) -> None:
    ws = w.ws[SHEET]
    ws.set_column(0, 0, 34)
    ws.set_column(1, 1, 90)
    w.text(SHEET, 0, 0, "AI-infrastructure planning workbook", "title", "label")
    w.text(SHEET, 1, 0, "Every number is a live formula; change the blue inputs on Plan, Hardware and Models.",
           "subtitle", "label")
    row = 3
    w.text(SHEET, row, 0, "Master check", "block", "label")
    w.formula(SHEET, row, 1, f'=IF({master_ref}=0,"ALL CHECKS PASS","CHECKS FAIL: see Checks")',
              "ALL CHECKS PASS" if master_ok else "CHECKS FAIL: see Checks", "output", key="master_check_status")
    ws.conditional_format(row, 1, row, 1, {"type": "text", "criteria": "begins with", "value": "ALL",
                                            "format": w.wb.add_format({"bg_color": "#C6EFCE", "font_color": "#006100", "bold": True})})
    ws.conditional_format(row, 1, row, 1, {"type": "text", "criteria": "begins with", "value": "CHECKS",
                                            "format": w.wb.add_format({"bg_color": "#FFC7CE", "font_color": "#9C0006", "bold": True})})
    row += 2
    w.text(SHEET, row, 0, "Provenance", "block", "label")
    for k, v in [("Tool version", __version__)] + provenance:
        row += 1
        w.text(SHEET, row, 0, k, "label", "label")
        w.text(SHEET, row, 1, v, "text", "text")
    row += 2
    w.text(SHEET, row, 0, "Scenarios (columns of every calculation sheet)", "block", "label")
    for i, name in enumerate(scenario_names):
        row += 1
        w.text(SHEET, row, 0, f"Scenario {i + 1}", "label", "label")
        w.text(SHEET, row, 1, name, "text", "text")
    row += 2
    w.text(SHEET, row, 0, "Colour legend", "block", "label")
    for style, meaning in LEGEND:
        row += 1
        w.text(SHEET, row, 0, style.capitalize(), style if style != "input" else "input_text", "label")
        w.text(SHEET, row, 1, meaning, "text", "text")
    row += 2
    w.text(SHEET, row, 0, "How to use", "block", "label")
    for line in (
        "Plan: one column per scenario; pick the model and GPU from the dropdowns, edit blue inputs.",
        "Hardware / Models: the catalogue (prices, bandwidths, architectures); edits flow to every sheet.",
        "Sheets are protected against accidental edits (no password): inputs are unlocked.",
        "Verify an edited file: workbook verify FILE.xlsx (recalculates and compares with the reference).",
    ):
        row += 1
        w.text(SHEET, row, 1, line, "text", "text")
    w.finish_sheet(SHEET, 1, row, landscape=False)
