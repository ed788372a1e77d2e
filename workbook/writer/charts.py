"""Native Excel charts that update with the inputs (they plot the calculation rows).

Horizontal bars, so the scenario names read in full; value axes formatted in the rows' unit, a
logarithmic axis where the scenarios span orders of magnitude, data labels where they help.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbook.writer.layout import HEADER_ROW, value_col
from workbook.writer.xlsx import Writer

#: a cost in dollars, short: $119K, $34.6 M
USD_LABEL = '[>=1000000]$#,##0.0,," M";[>=1000]$#,##0," K";$#,##0'
ROW_PX = 20  # a default row (15 pt) in pixels
LOG_SPAN = 100.0  # a series whose largest value is this many times its smallest gets a log axis


@dataclass(frozen=True)
class ChartSpec:
    """One chart: which rows it plots, on which sheet, and how its value axis reads."""

    title: str
    axis_title: str
    series: tuple[tuple[str, str], ...]  # (quantity, legend name)
    sheet: str
    axis_format: str
    stacked: bool = False
    label_format: str | None = None  # data labels in this format (None: no labels)
    log_when_spread: bool = True  # a logarithmic axis when the values span orders of magnitude


CHARTS = [
    ChartSpec("Training memory per GPU by component", "GB per GPU",
              (("zero_weights_GB", "Weights"), ("zero_grads_GB", "Gradients"), ("zero_optimizer_GB", "Optimizer states"),
               ("zero_activations_GB", "Activations"), ("zero_gathered_layer_GB", "ZeRO-3 gathered layer"),
               ("zero_overhead_GB", "Runtime overhead")),
              "ZeRO", "#,##0", stacked=True),
    ChartSpec("Training cost per scenario (cloud, actual duration)", "USD", (("train_cost_usd", "Training cost"),),
              "Cost", USD_LABEL, label_format=USD_LABEL),  # short axis labels: they stay level in a narrow chart
    ChartSpec("Decode step time: compute vs memory", "ms per decode step",
              (("decode_compute_ms", "Compute time"), ("decode_memory_ms", "Memory time")),
              "Inference", "#,##0", label_format="#,##0.0#", log_when_spread=False),
]


def needs_log_axis(values: list[float]) -> bool:
    """True when the positive values span LOG_SPAN or more (one bar would flatten the rest)."""
    pos = [v for v in values if v > 0]
    return len(pos) == len(values) and len(pos) > 1 and max(pos) / min(pos) >= LOG_SPAN


def add_charts(w: Writer, scenario_names: list[str]) -> None:
    """Insert every chart below its sheet's rows; the rows' cached values choose the axis scale."""
    lay = w.book.layout
    n = len(scenario_names)
    breaks: dict[str, list[int]] = {}
    for spec in CHARTS:
        chart = w.wb.add_chart({"type": "bar", **({"subtype": "stacked"} if spec.stacked else {})})
        values: list[float] = []
        for name, legend in spec.series:
            s_sheet, row = lay.rows[name]
            series = {
                "name": legend,
                "categories": [s_sheet, HEADER_ROW, value_col(0), HEADER_ROW, value_col(n - 1)],
                "values": [s_sheet, row, value_col(0), row, value_col(n - 1)],
                "gap": 60,
            }
            if spec.label_format:
                series["data_labels"] = {"value": True, "num_format": spec.label_format, "position": "outside_end",
                                         "font": {"size": 9}}
            chart.add_series(series)
            values += list(w.cached.get(name, {}).values())
        value_axis = {"name": spec.axis_title, "num_format": spec.axis_format, "num_font": {"size": 9},
                      "name_font": {"size": 10, "bold": False}, "major_gridlines": {"visible": True,
                                                                                  "line": {"color": "#D9D9D9"}}}
        if spec.log_when_spread and not spec.stacked and needs_log_axis(values):
            value_axis["log_base"] = 10
            value_axis["name"] = f"{spec.axis_title} (logarithmic scale)"
            value_axis["min"] = 10 ** math.floor(math.log10(min(values)))
            value_axis["max"] = 10 ** math.ceil(math.log10(max(values)) + 0.3)  # room for the labels
        elif values and min(values) >= 0:
            value_axis["min"] = 0  # a linear axis from zero: a 20 % difference looks like 20 % (issue 23)
        chart.set_x_axis(value_axis)
        # first scenario on top; the value axis stays at the bottom
        chart.set_y_axis({"reverse": True, "crossing": "max", "num_font": {"size": 9}})
        chart.set_title({"name": spec.title, "name_font": {"size": 12}})
        chart.set_legend({"position": "bottom"} if len(spec.series) > 1 else {"none": True})
        height = 110 + n * (28 + 10 * len(spec.series)) + (30 if len(spec.series) > 1 else 0)
        chart.set_size({"width": 900, "height": height})
        anchor_row = lay.next_row.get(spec.sheet, 5) + 2
        w.ws[spec.sheet].insert_chart(anchor_row, 0, chart, {"x_offset": 4, "y_offset": 4})
        breaks.setdefault(spec.sheet, []).append(anchor_row)  # a chart prints whole, on a page of its own
        lay.next_row[spec.sheet] = anchor_row + math.ceil(height / ROW_PX) + 1
    for sheet, rows in breaks.items():
        w.ws[sheet].set_h_pagebreaks(rows)
