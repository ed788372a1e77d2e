"""The Cover's chart of cost against the budget (issue 23): the ask's rent as columns (the run, the rent committed,
the run with its contingency) and the budget as a line across them, on a value axis from zero, so a 20 % gap
looks like 20 %. The chart plots a small table of links below the printed page; the chart itself sits on the
printed page, under the risks.
"""

from __future__ import annotations

from workbook.writer.input_guard import shown
from workbook.writer.planbook import USD_FORMAT
from workbook.writer.planbook import _ref as ref
from workbook.writer.xlsx import Writer

SHEET = "Cover"
TITLE = "Rent against the budget (USD)"
WIDTH_PX, HEIGHT_PX = 620, 250
ROW_PX = 20
#: dollars short, with two decimals of a million: $1.49 M and $1.52 M read apart
USD_LABEL = '[>=1000000]$#,##0.00,," M";[>=1000]$#,##0," K";$#,##0'
#: rows the chart covers on the page (it starts one row below its anchor)
CHART_ROWS = -(-HEIGHT_PX // ROW_PX) + 1
#: the table's rows below its title: the header, then one per column of the chart
TABLE_ROWS = 4


def write_cost_chart(w: Writer, anchor_row: int, table_row: int, cell, r: dict) -> int:
    """The table from ``table_row`` (below the printed page) and the chart anchored at ``anchor_row``; *cell*: the
    Cover cell of an ask figure (cover_ask.Ask.cell). Returns the last row the chart covers."""
    w.text(SHEET, table_row, 0, "Chart: rent against the budget (links to the figures above)", "block", "label")
    for col, head in enumerate(("Rent", "USD", "Budget (USD; 0 = none given)"), start=0):
        w.text(SHEET, table_row + 1, col, head, "header", "header")
    committed = max(r["train_cost_usd"], r["train_cost_target_usd"])
    bars = (("Rent for the run", f"={cell('run_cost')}", r["train_cost_usd"]),
            ("Rent committed (the ask)", f"={cell('committed')}", committed),
            ("Rent for the run with contingency", f"={ref(w, 'sens_cost_with_contingency_usd')}",
             r["sens_cost_with_contingency_usd"]))
    first = table_row + 2
    for k, (label, formula, cached) in enumerate(bars):
        row = first + k
        w.text(SHEET, row, 0, label, "label", "label")
        w.formula(SHEET, row, 1, shown(formula), float(cached), "link", key=f"cover_chart_rent_{k + 1}",
                  num_format=USD_FORMAT)
        w.formula(SHEET, row, 2, shown(f"={cell('budget')}"), float(r["sens_budget_usd"]), "link",
                  key=f"cover_chart_budget_{k + 1}", num_format=USD_FORMAT)
    last = first + len(bars) - 1
    cols = w.wb.add_chart({"type": "column"})
    cols.add_series({"name": "Rent", "categories": [SHEET, first, 0, last, 0], "values": [SHEET, first, 1, last, 1],
                     "gap": 80, "fill": {"color": "#4472C4"},
                     "data_labels": {"value": True, "num_format": USD_LABEL, "position": "outside_end",
                                     "font": {"size": 9}}})
    budget = w.wb.add_chart({"type": "line"})
    budget.add_series({"name": "Budget", "categories": [SHEET, first, 0, last, 0],
                       "values": [SHEET, first, 2, last, 2], "line": {"color": "#C00000", "width": 2.25},
                       "marker": {"type": "none"}})
    cols.combine(budget)
    cols.set_y_axis({"min": 0, "num_format": USD_LABEL,
                     "num_font": {"size": 9}, "major_gridlines": {"visible": True, "line": {"color": "#D9D9D9"}}})
    cols.set_x_axis({"num_font": {"size": 9}})
    cols.set_title({"name": TITLE, "name_font": {"size": 11}})
    cols.set_legend({"position": "right", "font": {"size": 9}})
    cols.set_size({"width": WIDTH_PX, "height": HEIGHT_PX})
    w.ws[SHEET].insert_chart(anchor_row + 1, 0, cols, {"x_offset": 4, "y_offset": 4})
    return anchor_row + CHART_ROWS
