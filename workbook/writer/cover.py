"""The Cover sheet: title, master-check status naming what fails, each scenario with its status,
provenance, colour legend, how to use."""

from __future__ import annotations

from xlsxwriter.utility import xl_rowcol_to_cell

from workbook import __version__
from workbook.writer.layout import HEADER_ROW, value_col
from workbook.writer import styles
from workbook.writer.styles import LEGEND
from workbook.writer.xlsx import Writer

SHEET = "Cover"
PASS_TEXT = "ALL CHECKS PASS"


def _row_range(sheet: str, row: int, n: int) -> str:
    a = xl_rowcol_to_cell(row, value_col(0), True, True)
    b = xl_rowcol_to_cell(row, value_col(n - 1), True, True)
    return f"{sheet}!{a}:{b}"


def _worst_status(names: list[str]) -> str:
    """The longest master-check text an edit can bring (a scenario's input error or first failing hard check)."""
    from workbook.calc.checks import HARD
    from workbook.writer.inputs import input_rows

    causes = [f"INPUT ERROR: Plan!K1000 {r.title}" for r in input_rows()] + [f"FAIL: {label}" for _, label, *_ in HARD]
    return f"CHECKS FAIL: {max(names, key=len)}: {max(causes, key=len)}"


def overall_text(names: list[str], statuses: list[str], failed: list[float]) -> str:
    """Reference value of the Cover's master-check line."""
    if not any(failed):
        return PASS_TEXT
    i = next(i for i, f in enumerate(failed) if f)
    return f"CHECKS FAIL: {names[i]}: {statuses[i]}"


def write_cover(w: Writer, provenance: list[tuple[str, str]], names: list[str], statuses: list[str],
                results: list[dict[str, float]], plan=None) -> None:
    """The Cover. A plan's Cover opens with the one-page ask (workbook.writer.cover_ask), which alone is printed;
    the workbook's status, provenance, legend and how-to follow below it."""
    ws = w.ws[SHEET]
    lay = w.book.layout
    n = len(names)
    top, printed = 0, None
    if plan is not None:
        from workbook.writer.cover_ask import ABOUT_ROW, write_ask

        printed = write_ask(w, names, results, plan)
        top = ABOUT_ROW
        w.text(SHEET, top, 0, "About this workbook (on screen; the printed Cover is the ask above)", "block", "label")
        top += 1
    else:
        ws.set_column(0, 0, 30)
        ws.set_column(1, 1, 34)
        ws.set_column(2, 2, 100)
    w.text(SHEET, top, 0, "AI-infrastructure planning workbook", "title" if plan is None else "block", "label")
    w.text(SHEET, top + 1, 0, "Every number is a live formula; change the blue inputs on Plan, Hardware, Efficiency, "
           "Models and Defaults. The Summary sheet has the answers.", "subtitle" if plan is None else "text", "label")
    flags = _row_range("Checks", lay.rows["scenario_failed_flag"][1], n)
    status = _row_range("Checks", lay.rows["scenario_status"][1], n)
    heads = _row_range("Plan", HEADER_ROW, n)
    row = top + 3
    w.text(SHEET, row, 0, "Master check", "block", "label")
    overall = (f'=IF(master_check_cell=0,"{PASS_TEXT}","CHECKS FAIL: "&INDEX({heads},1,MATCH(1,{flags},0))'
               f'&": "&INDEX({status},1,MATCH(1,{flags},0)))')
    if n == 1:  # one scenario: its cells themselves (Gnumeric's INDEX of a one-cell range is #REF!)
        overall = f'=IF(master_check_cell=0,"{PASS_TEXT}","CHECKS FAIL: "&{heads.split(":")[0]}&": "&' \
                  f'{status.split(":")[0]})'

    failed = [r["scenario_failed_flag"] for r in results]
    w.formula(SHEET, row, 1, overall, overall_text(names, statuses, failed), "output", key="master_check_status",
              room=_worst_status(names))
    ok = w.wb.add_format({"bg_color": styles.PASS_FILL, "font_color": styles.PASS_FONT, "bold": True})
    bad = w.wb.add_format({"bg_color": styles.FAIL_FILL, "font_color": styles.FAIL_FONT, "bold": True})
    amber = w.wb.add_format({"bg_color": styles.WARN_FILL, "font_color": styles.WARN_FONT, "bold": True})
    ws.conditional_format(row, 1, row, 1, {"type": "text", "criteria": "begins with", "value": "ALL", "format": ok})
    ws.conditional_format(row, 1, row, 1, {"type": "text", "criteria": "begins with", "value": "CHECKS", "format": bad})
    row += 1
    warn = _row_range("Checks", lay.rows["warnings_count"][1], n)
    w.text(SHEET, row, 0, "Warnings", "label", "label")
    n_warn = sum(int(r["warnings_count"]) for r in results)
    w.formula(SHEET, row, 1, f'=SUM({warn})&" warning(s): planning guidelines a plan may break (see Checks)"',
              f"{n_warn} warning(s): planning guidelines a plan may break (see Checks)", "output", key="warnings_status")
    row += 2
    w.text(SHEET, row, 0, "Scenarios (one column each on every sheet)", "block", "label")
    w.text(SHEET, row, 1, "Name (Plan header row)", "header", "header")
    w.text(SHEET, row, 2, "Status (Checks sheet)", "header", "header")
    st_row = lay.rows["scenario_status"][1]
    for i, name in enumerate(names):
        row += 1
        col = value_col(i)
        w.text(SHEET, row, 0, f"Scenario {i + 1}", "label", "label")
        w.formula(SHEET, row, 1, f"=Plan!{xl_rowcol_to_cell(HEADER_ROW, col)}", name, "link", key="scenario_name")
        w.formula(SHEET, row, 2, f"=Checks!{xl_rowcol_to_cell(st_row, col)}", statuses[i], "link", key="scenario_status")
        ws.conditional_format(row, 2, row, 2, {"type": "text", "criteria": "begins with", "value": "PASS (",
                                                "format": amber})
        ws.conditional_format(row, 2, row, 2, {"type": "text", "criteria": "begins with", "value": "PASS", "format": ok})
        ws.conditional_format(row, 2, row, 2, {"type": "text", "criteria": "not containing", "value": "PASS",
                                                "format": bad})
    row += 2
    w.text(SHEET, row, 0, "Provenance", "block", "label")
    for k, v in [("Tool version", __version__)] + provenance:
        row += 1
        w.text(SHEET, row, 0, k, "label", "label")
        w.text(SHEET, row, 1, v, "text", "text")
    row += 2
    w.text(SHEET, row, 0, "Colour legend", "block", "label")
    for style, meaning in LEGEND:
        row += 1
        w.text(SHEET, row, 0, style.capitalize(), style if style != "input" else "input_text", "label")
        w.text(SHEET, row, 1, meaning, "text", "text")
    row += 2
    w.text(SHEET, row, 0, "How to use", "block", "label")
    for line in (
        "Summary: the answers per scenario (GPUs, days, cost, serving), each verdict as PASS or FAIL.",
        "Plan: one column per scenario; pick the model and GPU from the dropdowns, edit the blue inputs. A blank "
        "optional input takes the catalogue: the Defaults sheet, or the GPU's price for the price basis.",
        "Hardware / Models: the catalogue (prices, bandwidths, architectures); type a new GPU or model into the "
        "next empty row and it appears in the dropdowns.",
        "Training time: the Time model input picks the Step Time sheet's step-time model (step), 6PD / (N x peak "
        "x MFU) at the MFU typed on Plan (mfu, 'MFU given'), or a measured hardware TFLOP/s per GPU (measured); "
        "MFU is over the dense BF16 peak unless 'MFU peak basis' says precision; the step model's factors per GPU "
        "are on Efficiency (a new GPU needs a row there too).",
        "Checks: hard checks fail the plan (memory, deadline, budget, layout); warnings flag planning guidelines.",
        "Sheets are protected against accidental edits (no password): inputs are unlocked.",
        "Verify an edited file: workbook verify FILE.xlsx (recalculates and compares with the reference).",
    ):
        row += 1
        w.text(SHEET, row, 1, line, "text", "text")
    w.finish_sheet(SHEET, 5 if printed is not None else 2, printed if printed is not None else row, landscape=True)
