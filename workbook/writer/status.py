"""The status rows of the Checks sheet (text per scenario: first failing check, first warning,
first input in error, the status line) and the master check. Reference texts come from
:func:`status_texts`, used for the cached values here and by ``workbook verify``.
"""

from __future__ import annotations

from xlsxwriter.utility import xl_col_to_name, xl_rowcol_to_cell

from workbook.calc.checks import HARD, WARNINGS
from workbook.writer.layout import COL_KEY, COL_LABEL, COL_NOTES, COL_SOURCE, COL_UNIT, value_col
from workbook.writer.xlsx import Writer

SHEET = "Checks"
#: key -> label of the text rows, in order
TEXT_ROWS = {
    "scenario_column": "Column of this scenario on every sheet",
    "first_failure": "First failing hard check",
    "first_warning": "First warning",
    "price_error_where": "GPU-hour price in error (cell and input; blank while it is not)",
    "input_error_where": "First input in error (cell and input)",
    "scenario_status": "Status of the scenario",
}


def _labels() -> dict[str, str]:
    from workbook.calc import registry

    reg = registry()
    return {n: reg[n].q.label for n in reg}


def status_texts(results: list[dict[str, float]], columns: list[int]) -> dict[str, list[str]]:
    """The reference value of every text row, per scenario (the inputs are valid: no input error)."""
    labels = _labels()
    out: dict[str, list[str]] = {k: [] for k in TEXT_ROWS}
    for r, col in zip(results, columns):
        fail = next((labels[n] for n, *_ in HARD if r[n] == 1), "")
        warn = next((labels[n] for n, *_ in WARNINGS if r[n] == 1), "")
        n_warn = int(r["warnings_count"])
        out["scenario_column"].append(xl_col_to_name(col))
        out["first_failure"].append(fail)
        out["first_warning"].append(warn)
        out["price_error_where"].append("")
        out["input_error_where"].append("")
        if r["status_code"] == 1:
            out["scenario_status"].append("PASS" + (f" ({n_warn} warning(s); first: {warn})" if n_warn else ""))
        else:
            out["scenario_status"].append(f"FAIL: {fail}")
    return out


def _abs_col(col: int, r0: int, r1: int) -> str:
    return f"{xl_rowcol_to_cell(r0, col, True, True)}:{xl_rowcol_to_cell(r1, col, True, True)}"


def _col_range(col: int, r0: int, r1: int) -> str:
    return f"{xl_rowcol_to_cell(r0, col, row_abs=True)}:{xl_rowcol_to_cell(r1, col, row_abs=True)}"


def write_status(w: Writer, results: list[dict[str, float]]) -> None:
    """Write the text rows and the master check below the Checks sheet's line items."""
    lay = w.book.layout
    # the Key column of Plan down to its last input row (a bounded range: MATCH over a whole column is slow)
    last_input = max(r for k, (s, r) in lay.rows.items() if s == "Plan" and "." in k)
    plan_keys = f"Plan!{_abs_col(COL_KEY, 0, last_input)}"
    rows = {k: lay.rows[k][1] for k in lay.rows if lay.rows[k][0] == SHEET}
    h0, h1 = rows[HARD[0][0]], rows[HARD[-1][0]]
    w0, w1 = rows[WARNINGS[0][0]], rows[WARNINGS[-1][0]]
    # the input checks (Plan, below the inputs) and the price check (Plan, after the price)
    i0, i1 = lay.rows["input_error_name"][1], lay.rows["input_error_efficiency"][1]
    inputs = (i0, i1, lay.rows["input_error_price"][1])
    n = len(results)
    texts = status_texts(results, [value_col(i) for i in range(n)])
    first = lay.place(SHEET, skip=1)
    w.text(SHEET, first, COL_LABEL, "Status (text; links from the Cover and the Summary)", "block", "label")
    for key, label in TEXT_ROWS.items():
        row = lay.place(SHEET, key)
        w.text(SHEET, row, COL_LABEL, label, "label", "label")
        w.text(SHEET, row, COL_UNIT, "text", "unit", "unit")
        w.text(SHEET, row, COL_NOTES, "", "note", "note")
        w.text(SHEET, row, COL_SOURCE, "rules §11", "source", "source")
        w.text(SHEET, row, COL_KEY, key, "key", "key")
        for i in range(n):
            col = value_col(i)
            if key == "scenario_column":
                w.text(SHEET, row, col, texts[key][i], "text", "label")
                continue
            rows = {k: r for k, (s, r) in lay.rows.items() if s == SHEET}
            w.formula(SHEET, row, col, _formula(key, col, rows, (h0, h1), (w0, w1), inputs, plan_keys),
                      texts[key][i], "check", key=key, scenario=i)
    master(w, results)


def _formula(key: str, col: int, rows: dict, hard: tuple, warn: tuple, inputs: tuple, plan_keys: str) -> str:
    cell = lambda k: xl_rowcol_to_cell(rows[k], col, row_abs=True)  # noqa: E731
    if key == "first_failure":
        return f'=IFERROR(INDEX({_abs_col(COL_LABEL, *hard)},MATCH(1,{_col_range(col, *hard)},0)),"")'
    if key == "first_warning":
        return f'=IFERROR(INDEX({_abs_col(COL_LABEL, *warn)},MATCH(1,{_col_range(col, *warn)},0)),"")'
    def where(notes: str, label: str) -> str:  # "Plan!<cell> <input>" of an input check's row (notes: its key)
        return (f'"Plan!"&{cell("scenario_column")}&MATCH({notes},{plan_keys},0)&" "&'
                f'SUBSTITUTE({label},"Input: ","")')

    i0, i1, price = inputs
    if key == "input_error_where":  # the first Plan input check at 1, else the price check's text
        k = f"MATCH(1,Plan!{_col_range(col, i0, i1)},0)"
        first = where(f"INDEX(Plan!{_abs_col(COL_NOTES, i0, i1)},{k})", f"INDEX(Plan!{_abs_col(COL_LABEL, i0, i1)},{k})")
        return f'=IFERROR({first},{cell("price_error_where")})'
    if key == "price_error_where":  # the price check's cell and input, REPT: 0 or 1 times
        text = where(f"Plan!{xl_rowcol_to_cell(price, COL_NOTES, True, True)}",
                     f"Plan!{xl_rowcol_to_cell(price, COL_LABEL, True, True)}")
        return f'=IFERROR(REPT({text},Plan!{xl_rowcol_to_cell(price, col, row_abs=True)}),"")'
    return (f'=CHOOSE({cell("status_code")},"PASS"&IF({cell("warnings_count")}>0," ("&{cell("warnings_count")}'
            f'&" warning(s); first: "&{cell("first_warning")}&")",""),"FAIL: "&{cell("first_failure")},'
            f'"INPUT ERROR: "&{cell("input_error_where")})')


def master(w: Writer, results: list[dict[str, float]]) -> None:
    """Master check: the failed checks (hard checks and input errors) of every scenario; 0 = all pass."""
    lay = w.book.layout
    src = lay.rows["scenario_failures_count"][1]
    n = len(results)
    rng = f"{xl_rowcol_to_cell(src, value_col(0))}:{xl_rowcol_to_cell(src, value_col(n - 1))}"
    row = lay.place(SHEET, "master_check", skip=1)
    total = sum(r["scenario_failures_count"] for r in results)
    w.text(SHEET, row, COL_LABEL, "Master check: failed checks over all scenarios (0 = all pass)", "block", "label")
    w.text(SHEET, row, COL_UNIT, "count", "unit", "unit")
    w.text(SHEET, row, COL_NOTES, "hard checks and input errors; warnings are not counted", "note", "note")
    w.text(SHEET, row, COL_SOURCE, "rules §11", "source", "source")
    w.text(SHEET, row, COL_KEY, "master_check", "key", "key")
    w.formula(SHEET, row, value_col(0), f"=SUM({rng})", total, "check", key="master_check", num_format="0")
    w.define("master_check_cell", SHEET, row, value_col(0))
