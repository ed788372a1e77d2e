"""Tornado charts on the Sensitivity sheet: the change of cost (and days) at -/+ the step for each driver of
the first scenario column (in a plan workbook: the recommended plan), drivers sorted by swing, widest on top.
Which columns: without a plan the first column's purpose picks them (training the training cost and days,
serving the serving cost per month and per 1M output tokens, both all four); a plan workbook charts the
recommended training column when the plan trains and the recommended serving column when it serves.

The bars plot the live calculation rows (they move with the inputs); the order is the build's (the first
column's swings when written): the chart's series are non-contiguous cell lists in that order.
"""

from __future__ import annotations

import math

from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.calc.sensitivity import DAY_DRIVERS, DRIVERS
from workbook.calc.serving_sensitivity import MONTH_DRIVERS, PER_1M_DRIVERS
from workbook.writer.charts import ROW_PX, USD_LABEL
from workbook.writer.layout import COL_LABEL, quote_sheet, value_col
from workbook.writer.xlsx import Writer

SHEET = "Sensitivity"
#: data label positions (-step, +step). Changes of cost lie either side of 0: each label inside its bar at 0, so that
#: none reaches past the plot over the driver names. Days start at the base value: each label outside its bar's end,
#: on its own side, so that two near values (57.8 and 59.5 days) do not print over each other.
LABELS_EITHER_SIDE = ("inside_base", "inside_base")
LABELS_OVERLAID = ("outside_end", "outside_end")
#: the base value of a tornado of absolute values (row template of its -step bars -> the base row): its bars start
#: there (the value axis crosses the driver axis at the base, as built), so each bar shows its own side
BASES = {"sens_{d}_days_low": "sens_days"}
#: a change of the cost per 1M output tokens: cents matter ($0.152)
PER_1M_LABEL = "$#,##0.000"


def _cells(w: Writer, names: list[str], col: int) -> str:
    lay = w.book.layout
    refs = [f"{quote_sheet(SHEET)}!{xl_rowcol_to_cell(lay.rows[n][1], col, True, True)}" for n in names]
    return "=(" + ",".join(refs) + ")"


def _chart(w: Writer, title: str, axis: str, fmt: str, drivers: list[str], low: str, high: str, swing: str,
           where: tuple[str, str], col: int = 0):
    """A tornado of scenario column *col*; *where*: the data labels' positions of the -step and +step bars."""
    first = w.cached
    drivers = sorted(drivers, key=lambda d: -first.get(swing.format(d=d), {}).get(col, 0.0))
    chart = w.wb.add_chart({"type": "bar"})
    for legend, tmpl, color, pos in (("Driver -step", low, "#4F81BD", where[0]),
                                     ("Driver +step", high, "#C0504D", where[1])):
        chart.add_series({
            "name": legend, "categories": _cells(w, [tmpl.format(d=d) for d in drivers], COL_LABEL),
            "values": _cells(w, [tmpl.format(d=d) for d in drivers], value_col(col)),
            "fill": {"color": color}, "overlap": 100, "gap": 40,
            "data_labels": {"value": True, "num_format": fmt, "font": {"size": 8}, "position": pos},
        })
    x_axis = {"name": axis, "num_format": fmt, "num_font": {"size": 9}, "name_font": {"size": 10},
              "major_gridlines": {"visible": True, "line": {"color": "#D9D9D9"}}}
    base = first.get(BASES.get(low, ""), {}).get(col)
    if base:  # absolute values (days): the bars start at the base value and run to each side
        x_axis["crossing"] = base
    chart.set_x_axis(x_axis)
    chart.set_y_axis({"reverse": True, "num_font": {"size": 9}, "label_position": "low"})
    chart.set_title({"name": title, "name_font": {"size": 12}})
    chart.set_legend({"position": "bottom"})
    height = 120 + 45 * len(drivers)
    chart.set_size({"width": 900, "height": height})
    return chart, height


def specs(training: str | None, serving: str | None) -> list[tuple]:
    """The tornado charts (_chart's arguments but the column): the training cost and days of the column named
    *training*, the serving cost per month and per 1M output tokens of the column named *serving* (None: none)."""
    out = [] if training is None else _training_specs(training)
    if serving is not None:
        out += [(f"Tornado: serving cost per month of {serving} at -/+ the step (widest swing on top)",
                 "USD per month change", USD_LABEL, [d for d, _ in MONTH_DRIVERS], "srv_sens_{d}_dmonth_low_usd",
                 "srv_sens_{d}_dmonth_high_usd", "srv_sens_{d}_swing_month_usd", LABELS_EITHER_SIDE),
                (f"Tornado: serving cost per 1M output tokens of {serving} at -/+ the step", "USD per 1M output "
                 "tokens change", PER_1M_LABEL, [d for d, _ in PER_1M_DRIVERS], "srv_sens_{d}_d1M_low_usd",
                 "srv_sens_{d}_d1M_high_usd", "srv_sens_{d}_swing_1M_usd", LABELS_EITHER_SIDE)]
    return out


def columns(purpose: str, serving_plan: int | None = None, plan_trains: bool | None = None) -> tuple:
    """(training column, serving column) the tornados chart, None for none: without a plan, the first column by
    its *purpose* (training, serving or both); in a plan workbook the recommended training column (the first)
    when the plan trains, and the recommended serving column *serving_plan* when it has one."""
    if plan_trains is None:
        return (0 if purpose != "serving" else None), (0 if purpose != "training" else None)
    return (0 if plan_trains else None), serving_plan


def _training_specs(first_name: str) -> list[tuple]:
    return [(f"Tornado: cost change of {first_name} at -/+ the step (widest swing on top)", "USD change",
              USD_LABEL, [d for d, _ in DRIVERS], "sens_{d}_dcost_low_usd", "sens_{d}_dcost_high_usd",
              "sens_{d}_swing_usd", LABELS_EITHER_SIDE),
             (f"Tornado: training days of {first_name} at -/+ the step", "training days", "#,##0.0",
              DAY_DRIVERS, "sens_{d}_days_low", "sens_{d}_days_high", "sens_{d}_swing_days", LABELS_OVERLAID)]


def add_tornado(w: Writer, names: list[str], cols: tuple[int | None, int | None]) -> None:
    """Insert the tornado charts of the (training, serving) columns *cols* (columns.) below the Sensitivity rows."""
    lay = w.book.layout
    train, serve = cols
    n_train = 0 if train is None else 2
    breaks = []
    for k, spec in enumerate(specs(None if train is None else names[train], None if serve is None else names[serve])):
        chart, height = _chart(w, *spec, col=train if k < n_train else serve)
        anchor = lay.next_row.get(SHEET, 5) + 2
        # a caption above each chart: its page is never empty (LibreOffice leaves out a print range's pages with
        # no cell content, charts or not)
        w.text(SHEET, anchor, 0, spec[0].split(" (")[0], "block", "label")
        w.ws[SHEET].insert_chart(anchor + 1, 0, chart, {"x_offset": 4, "y_offset": 4})
        breaks.append(anchor)
        lay.next_row[SHEET] = anchor + 1 + math.ceil(height / ROW_PX) + 1
    w.ws[SHEET].set_h_pagebreaks(breaks)
