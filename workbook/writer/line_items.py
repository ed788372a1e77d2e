"""Lay out the calculation modules' line items: one row per quantity, one formula per row.

The label, unit and section come from the quantity registry (workbook.calc); the formula template
comes from workbook.sheets.<module>.ITEMS; the cached value is the reference result.
"""

from __future__ import annotations

import importlib
import re

from workbook.writer import styles
from workbook.writer.input_guard import guard_flags, guard_template, guarded_value
from workbook.writer.layout import COL_KEY, COL_LABEL, COL_NOTES, COL_SOURCE, COL_UNIT, MODULE_SHEET, LayoutError, value_col
from workbook.writer.xlsx import Writer

BLOCK_TITLES = {
    "selection": "Selected GPU and model (looked up in the catalogue)",
    "hardware": "Hardware of the selected GPU (17.1)",
    "models": "Parameters and FLOPs of the selected model (17.2, 17.3)",
    "price": "GPU-hour price in use (17.5.9) and the price check; the count of all input errors",
    "plan": "Training plan: time, GPU count, batch and layout (17.5, 17.9.4)",
    "train_memory": "Training memory ledger (17.4.1-17.4.7)",
    "activations": "Activations per layer and micro-batch by saved tensor, tensor model (Korthikanti 2022, Megatron)",
    "act_stages": "Activations per pipeline rank: four candidate ranks and the most loaded (Korthikanti 2022 §4.2.3)",
    "sharded_state": "Sharded state per GPU, tensor model: dense over TP x PP, experts over EP x ETP x PP (Megatron)",
    "zero": "ZeRO sharding per GPU, book model (17.4.8), and the memory model in use",
    "kv_cache": "KV cache and inference memory (17.4.9-17.4.12)",
    "serving_memory": "Serving engine: weights per GPU, memory reserve and KV capacity (docs/serving.md)",
    "serving_step": "Serving engine: decode step at the batch and context (docs/serving.md)",
    "serving_prefill": "Serving engine: prefill and time to first token (docs/serving.md)",
    "serving_load": "Serving engine under load: steady state by Little's law, unrolled (docs/serving.md)",
    "serving_offline_run": "Offline run of N requests to its last token: full batch, then the drain (docs/serving.md)",
    "serving_disagg": "Disaggregated serving: prefill and decode pools sized from the load (docs/serving.md)",
    "serving_load_models": "Serving engine: static batch and closed-loop concurrency, the other two load models "
    "(docs/serving.md)",
    "serving_use": "Serving figures in use: engine or book model, or the measured throughput",
    "serving_max_load": "Serving engine: largest load meeting the TTFT and TPOT targets, closed form (docs/serving.md)",
    "comm": "Network communication (17.6), against the step time in use",
    "step_inputs": "Step-time model: factors of the GPU, layout, choices, model per layer (docs/step_time.md)",
    "step_time": "One micro-batch on the busiest pipeline stage, per GPU: compute and exposed communication",
    "step_total": "The step: pipeline bubble, exposed DP reduction, optimizer; rates, MFU, HFU, training days",
    "step_gpus": "GPUs the target days need at the step model (advisory; the layout's per-GPU throughput held)",
    "step_measured": "Training time at a measured hardware TFLOP/s per GPU (recompute counted; blank = the step model's)",
    "train_time": "Training time in use (the scenario's time model: step model, MFU given, or measured)",
    "storage": "Storage IO (17.7)",
    "inference": "Inference latency and throughput (17.8)",
    "cost": "Cost (17.5.9, 17.8.11, 17.9)",
    "sensitivity": "Sensitivity: one-way, -/+ the step; switching values at the budget and the deadline (issue 9)",
    "serving_sensitivity": "Serving sensitivity: cost per month and per 1M output tokens, -/+ the step (17.8.11)",
    "tco": "Owned cluster over the horizon: servers, network, power, space, storage, staff, support; rent (17.9.3)",
    "tco_years": "Year by year: share in service, opex lines, depreciation, cash out and cumulative; rent beside",
    "tco_npv": "Rent vs buy like for like: discount rate, residual value, present values by year, NPV of each",
    "cash_flow": "Month by month from the start month: rent path, buy path (capex, opex, residual value) apart, "
    "cumulative",
    "cash_flow_periods": "Over the window, by fiscal quarter and by fiscal year: the months summed (SUMIFS over the "
    "fiscal year and quarter rows)",
    "input_checks": "Input checks (0 = allowed; Notes: the input's key; 1 makes the column read input error)",
    "checks": "Checks (0 = pass; Notes: hard = fails the plan, warning = a planning guideline)",
    "status": "Status of each scenario (input errors first, then hard checks)",
}
_LITERAL = re.compile(r"(?<![A-Za-z_$.0-9])(\d+\.?\d*(?:[eE][+-]?\d+)?)(?![A-Za-z_(0-9])")


def items_of(module: str) -> dict[str, str]:
    return importlib.import_module(f"workbook.sheets.{module}").ITEMS


def check_template(name: str, template: str) -> None:
    """No literals but 0, 1 and -1 (rule 1); names and strings are skipped."""
    stripped = re.sub(r'"[^"]*"', '""', template)
    stripped = re.sub(r"\{[^}]*\}", "X", stripped)
    for m in _LITERAL.finditer(stripped):
        if m.group(1) not in ("0", "1"):
            raise LayoutError(f"{name}: literal {m.group(1)} in formula {template!r}; use a c_ constant")


def write_module(w: Writer, module: str, quantities: list, results: list[dict[str, float]],
                 title: str | None = None) -> None:
    """The module's block: its title (BLOCK_TITLES, or *title*), then one row per quantity."""
    sheet = MODULE_SHEET[module]
    items = items_of(module)
    missing = [q.name for q in quantities if q.name not in items]
    if missing:
        raise LayoutError(f"workbook.sheets.{module}: no formula for {missing}")
    lay = w.book.layout
    row = lay.place(sheet, skip=0 if lay.next_row.get(sheet) is None else 1)
    w.text(sheet, row, COL_LABEL, title or BLOCK_TITLES[module], "block", "label")
    flags = guard_flags()
    for q in quantities:
        check_template(q.name, items[q.name])
        link = _is_link_template(items[q.name], lay, sheet)
        flag = flags[q.name]
        template = guard_template(items[q.name], flag)  # "input error" while an input of the column is in error
        row = lay.place(sheet, q.name)
        w.text(sheet, row, COL_LABEL, q.label, "label", "label")
        w.text(sheet, row, COL_UNIT, q.unit, "unit", "unit")
        w.text(sheet, row, COL_NOTES, q.note, "note", "note")
        w.text(sheet, row, COL_SOURCE, q.section, "source", "source")
        w.text(sheet, row, COL_KEY, q.name, "key", "key")
        values = [r[q.name] for r in results]
        num_format = styles.number_format(q.unit, values)
        role = "check" if module == "checks" else ("link" if link else "calc")
        for i, value in enumerate(values):
            formula = lay.render(template, i, sheet, row)
            w.formula(sheet, row, value_col(i), formula, guarded_value(value, flag, results[i]), role, key=q.name,
                      num_format=num_format, scenario=i)


def _is_link_template(template: str, lay, sheet: str) -> bool:
    """The line item is one reference to a cell on another sheet (a link, styled as one)."""
    m = re.fullmatch(r"=\{([A-Za-z_][A-Za-z0-9_.]*)\}", template)
    return m is not None and m.group(1) in lay.rows and lay.rows[m.group(1)][0] != sheet
