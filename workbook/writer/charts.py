"""Native Excel charts that update with the inputs (they plot the calculation rows)."""

from __future__ import annotations

from workbook.writer.layout import HEADER_ROW, value_col
from workbook.writer.xlsx import Writer

#: (title, y-axis title, chart type, [quantity names as series], sheet the chart sits on, anchor column offset)
CHARTS = [
    ("Training memory per GPU by component", "GB per GPU", "column_stacked",
     ["zero_weights_GB", "zero_grads_GB", "zero_optimizer_GB", "zero_activations_GB", "zero_overhead_GB"], "ZeRO"),
    ("Training cost per scenario", "USD", "column", ["train_cost_usd"], "Cost"),
    ("Decode step time: compute vs memory", "ms per step", "column",
     ["decode_compute_ms", "decode_memory_ms"], "Inference"),
]


def add_charts(w: Writer, scenario_names: list[str]) -> None:
    lay = w.book.layout
    n = len(scenario_names)
    for title, y_title, kind, series, sheet in CHARTS:
        ctype, subtype = (kind.split("_") + [None])[:2]
        opts = {"type": ctype}
        if subtype:
            opts["subtype"] = subtype
        chart = w.wb.add_chart(opts)
        for name in series:
            s_sheet, row = lay.rows[name]
            chart.add_series({
                "name": [s_sheet, row, 0],
                "categories": [s_sheet, HEADER_ROW, value_col(0), HEADER_ROW, value_col(n - 1)],
                "values": [s_sheet, row, value_col(0), row, value_col(n - 1)],
            })
        chart.set_title({"name": title})
        chart.set_y_axis({"name": y_title})
        chart.set_legend({"position": "bottom"})
        chart.set_size({"width": 720, "height": 360})
        anchor_row = lay.next_row.get(sheet, 5) + 2
        w.ws[sheet].insert_chart(anchor_row, 0, chart)
        lay.next_row[sheet] = anchor_row + 20
