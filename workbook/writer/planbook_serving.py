"""The plan workbook's serving part (issue 9, serving search): on the Recommendation sheet the
recommended serving plan (GPUs, replicas, load carried, TTFT, TPOT, $/month, $/1M output tokens) as
links to the calculated rows of its scenario column (a disaggregated plan: its prefill and decode
pools from the Inference sheet's disaggregated block), the serving columns side by side (the best of
the other kind, co-located or disaggregated, second), and on the Rejected sheet the serving search's
rejections. ``PlanBook.data["serving"]`` names the columns.
"""

from __future__ import annotations

from typing import Any

from workbook.writer.xlsx import Writer

#: (label, row key, unit) of the serving plan; links to its column
SERVING_ROWS = [
    ("GPU", "gpu", "id"),
    ("Serving engine profile", "inference.engine", "id"),
    ("TP per group", "inference.tp", "GPUs"),
    ("EP per group", "inference.ep", "GPUs"),
    ("Replicas (serving groups)", "inference.replicas", "replicas"),
    ("GPUs (TP x EP x replicas)", "srv_gpus_in_use", "GPUs"),
    ("Load carried, all replicas", "inference.arrival_rate_rps", "requests/s"),
    ("Load per group", "srv_load_rate_rps", "requests/s"),
    ("Requests in decode per group (Little's law)", "srv_load_batch", "sequences"),
    ("KV capacity per group (tokens)", "srv_kv_tokens", "tokens"),
    ("Weights per GPU", "srv_weights_per_gpu_GiB", "GiB"),
    ("TTFT under the load", "srv_ttft_ms_in_use", "ms"),
    ("TTFT target", "inference.ttft_target_ms", "ms"),
    ("TPOT under the load", "srv_tpot_ms_in_use", "ms"),
    ("TPOT target", "inference.tpot_target_ms", "ms"),
    ("Output tokens/s served", "srv_tokens_per_s_total_in_use", "tokens/s"),
    ("GPU-hour price", "gpu_hour_usd", "USD/GPU-h"),
    ("Serving cost per hour", "infer_hourly_cost_usd", "USD/h"),
    ("Serving cost per 1M output tokens", "infer_usd_per_1M_tokens", "USD/1M tokens"),
    ("Serving checks failed (load, TTFT, TPOT, memory)", "hard_failures_count", "count"),
]
#: (label, row key, unit) of a disaggregated serving plan; links to its column (Inference, srv_dis_ rows)
DISAGG_ROWS = SERVING_ROWS[:2] + [
    ("Disaggregated serving (separate prefill and decode pools)", "inference.disaggregated", "choice"),
    ("TP per instance (both pools)", "inference.tp", "GPUs"),
    ("EP per decode instance", "inference.ep", "GPUs"),
    ("EP per prefill instance", "srv_dis_pf_ep", "GPUs"),
    ("Prefill instances", "srv_dis_pf_instances", "instances"),
    ("Prefill pool GPUs", "srv_dis_pf_gpus", "GPUs"),
    ("Prefill pool busy share", "srv_dis_pf_busy_frac", "fraction"),
    ("Prefill queue: mean wait before a prompt's step", "srv_dis_pf_wait_s", "s"),
    ("Prefill step (the prompts of one chunk)", "srv_dispf_prefill_s", "s"),
    ("Decode instances", "srv_dis_dec_instances", "instances"),
    ("Decode pool GPUs", "srv_dis_dec_gpus", "GPUs"),
    ("Decode batch per attention-DP rank at the TPOT target", "srv_dis_batch", "sequences"),
    ("GPUs (both pools)", "srv_gpus_in_use", "GPUs"),
    ("Load carried", "inference.arrival_rate_rps", "requests/s"),
    ("Requests decoding (Little's law)", "srv_dis_concurrency", "sequences"),
    ("KV capacity per decode GPU (tokens)", "srv_kv_tokens", "tokens"),
    ("Weights per decode GPU", "srv_weights_per_gpu_GiB", "GiB"),
    ("TTFT (prefill pool)", "srv_ttft_ms_in_use", "ms"),
    ("TTFT target", "inference.ttft_target_ms", "ms"),
    ("TPOT (decode pool)", "srv_tpot_ms_in_use", "ms"),
] + SERVING_ROWS[-6:]  # TPOT target, tokens/s, price, costs, checks
#: (label, row key, unit) of a serving plan for a static batch: the batch rows in place of the rate's
STATIC_ROWS = SERVING_ROWS[:6] + [
    ("Static batch per group (requests run together)", "inference.batch", "sequences"),
    ("Largest static batch per group within the targets", "srv_static_max_batch", "sequences"),
    ("Wall time of a group's batch (prefill, then decode)", "srv_static_wall_s", "s"),
] + SERVING_ROWS[9:]
#: the serving columns compared
SERVING_WHY = [("GPU", "gpu", "id"), ("Disaggregated", "inference.disaggregated", "choice"),
               ("GPUs", "srv_gpus_in_use", "GPUs"),
               ("Replicas (co-located groups; 1 when disaggregated)", "inference.replicas", "replicas"),
               ("TTFT (ms)", "srv_ttft_ms_in_use", "ms"), ("TPOT (ms)", "srv_tpot_ms_in_use", "ms"),
               ("Cost per hour (USD/h)", "infer_hourly_cost_usd", "USD/h"),
               ("Cost per 1M output tokens (USD)", "infer_usd_per_1M_tokens", "USD/1M tokens"),
               ("Hard checks failed", "hard_failures_count", "count")]
MONTH_LABEL = "Serving cost per month (per hour x hours per year / months per year)"
#: the serving fleet bought (its column's TCO sheet owns the serving GPUs in use, in whole servers)
BUY_TITLE = "The serving fleet bought (capex in year 1, opex every year)"
BUY_FIRST = [("GPUs owned (the serving GPUs in use)", "tco_gpus_owned", "GPUs"),
             ("Servers bought (GPUs owned in whole servers)", "tco_nodes", "nodes")]


def serving_columns(names: list[str], plan) -> list[int]:
    """Column indexes of the serving plans (recommended first); empty when the search found none."""
    sv = plan.data.get("serving") or {}
    rec = sv.get("recommended")
    if not rec:
        return []
    other = sv.get("other_kind")
    order = [rec["scenario"]] + ([other["scenario"]] if other else []) + \
        [a["scenario"] for a in (sv.get("alternatives") or {}).values() if a]
    return list(dict.fromkeys(names.index(n) for n in order if n in names))


def trains(plan) -> bool:
    return (plan.data.get("training") or {}).get("status") != "not requested"


def serves(plan) -> bool:
    return (plan.data.get("serving") or {}).get("status", "not requested") != "not requested"


def _month(w: Writer, sheet: str, row: int, col: int, results: list[dict], i: int) -> None:
    from workbook.planner.serving_search import HOURS_PER_MONTH
    from workbook.writer.planbook import USD_FORMAT, _ref, guarded

    v = results[i]["infer_hourly_cost_usd"] * HOURS_PER_MONTH
    month = f"{_ref(w, 'infer_hourly_cost_usd', i)}*c_hours_per_year/c_cost_months_per_year"
    w.formula(sheet, row, col, guarded(w, month, i), v, "link", key="infer_monthly_cost_usd",
              num_format=USD_FORMAT)


def write_serving_block(w: Writer, names: list[str], results: list[dict], plan, row: int,
                        beside: tuple[int, int] | None = None) -> int:
    """The serving plan and its comparison from ``row`` down (or, *beside* = (row, column), the comparison
    beside the plan); returns the last row written."""
    from workbook.writer.planbook import RECOMMENDATION, _cached, _link, unit_text

    cols = serving_columns(names, plan)
    sheet = RECOMMENDATION
    if not cols:
        sv = plan.data.get("serving") or {}
        if sv.get("status") not in (None, "not requested"):
            w.text(sheet, row, 0, f"Serving: {sv['status']} (no serving plan carries the load; see Rejected)",
                   "block", "label")
        return row
    i0 = cols[0]
    sv = plan.data["serving"]
    kind = sv["recommended"]["kind"]
    w.text(sheet, row, 0, f"The serving plan ({kind}): {names[i0]}", "block", "label")
    static = (sv.get("load") or {}).get("static_batch") is not None
    for label, name, unit in DISAGG_ROWS if kind == "disaggregated" else STATIC_ROWS if static else SERVING_ROWS:
        row += 1
        w.text(sheet, row, 0, label, "label", "label")
        _link(w, sheet, row, 1, name, results, i0, unit=unit, cached=_cached(name, results, plan, i0))
        w.text(sheet, row, 2, unit_text(unit), "unit", "unit")
        w.text(sheet, row, 3, w.book.layout.rows[name][0], "source", "source")
        if name == "infer_hourly_cost_usd":
            row += 1
            w.text(sheet, row, 0, MONTH_LABEL, "label", "label")
            _month(w, sheet, row, 1, results, i0)
            w.text(sheet, row, 2, "USD/month", "unit", "unit")
            w.text(sheet, row, 3, w.book.layout.rows[name][0], "source", "source")
    row = write_serving_buy(w, results, plan, i0, row + 1)
    if beside is not None:  # a serving-only plan: the comparison beside the plan, so the page holds both
        write_serving_compare(w, names, results, plan, beside[0], beside[1])
        return row
    return write_serving_compare(w, names, results, plan, row + 2, 0)


def write_serving_compare(w: Writer, names: list[str], results: list[dict], plan, row: int, col0: int) -> int:
    """The serving columns compared (recommended first, then the best of the other kind and per GPU), titled at
    ``row``, labels in column ``col0``; returns the last row written."""
    from workbook.writer.planbook import RECOMMENDATION, _cached, _link

    sheet, sv, cols = RECOMMENDATION, plan.data["serving"], serving_columns(names, plan)
    other = sv.get("other_kind")
    then = f"the best {other['kind']} plan, " if other else ""
    if col0:  # beside the plan, in the header row (as the training plan's alternatives)
        w.text(sheet, row, col0, "Why this option: the alternatives", "header", "header")
    else:
        w.text(sheet, row, col0, f"Serving plans compared (recommended first, then {then}the best per GPU)",
               "block", "label")
    for j, i in enumerate(cols[:3]):
        w.text(sheet, row, col0 + 1 + j, names[i], "header", "header")
    for label, name, unit in SERVING_WHY:
        row += 1
        w.text(sheet, row, col0, label, "label", "label")
        for j, i in enumerate(cols[:3]):
            _link(w, sheet, row, col0 + 1 + j, name, results, i, unit, cached=_cached(name, results, plan, i))
    row += 1
    w.text(sheet, row, col0, "Cost per month (USD)", "label", "label")
    for j, i in enumerate(cols[:3]):
        _month(w, sheet, row, col0 + 1 + j, results, i)
    return row


def buy_rows() -> list[tuple[str, str, str]]:
    """(label, row key, unit) of the serving fleet bought: GPUs and servers owned, then the training plan's buy
    lines (planbook._REC) less the owned cost of the training run (tco_report.TRAINING_ONLY)."""
    from workbook.planner.tco_report import TRAINING_ONLY
    from workbook.writer.planbook import _REC

    buy = next(rows for title, rows in _REC if title.startswith("The ask: buy"))
    return BUY_FIRST + [r for r in buy if r[1] not in TRAINING_ONLY]


def write_serving_buy(w: Writer, results: list[dict], plan, i: int, row: int) -> int:
    """The serving fleet's owned TCO (column ``i``) from ``row`` down; returns the last row. The years are the TCO
    sheet's and the Cash Flow's, as for a training plan: the Recommendation prints on one page."""
    from workbook.writer.planbook import RECOMMENDATION, line_rows

    row += 1
    w.text(RECOMMENDATION, row, 0, BUY_TITLE, "block", "label")
    return line_rows(w, RECOMMENDATION, row, buy_rows(), results, plan, i)


def write_serving_recommendation(w: Writer, names: list[str], results: list[dict], plan) -> None:
    """The Recommendation sheet of a serving-only request: the serving plan alone."""
    from workbook.writer.planbook import HEAD, RECOMMENDATION, _header

    sheet = RECOMMENDATION
    cols = serving_columns(names, plan)
    first = names[cols[0]] if cols else names[0]
    from workbook.writer.cover_ask import live_title

    live_title(w, sheet, results, plan, cols[0] if cols else 0, "srv_gpus_in_use", "srv_gpus_in_use")
    w.text(sheet, 1, 0, f"Request {plan.request_id}: the recommended serving plan (layout {first}), live from its "
           "scenario column's Inference, KV Cache and Cost rows; the best plan of every other GPU beside it.",
           "subtitle", "label")
    _header(w, sheet, ("Line item", "Value", "Unit", "Sheet"), (58, 18, 12, 16))
    compare = (HEAD, 5)
    row = write_serving_block(w, names, results, plan, HEAD + 2, beside=compare)
    last_col = 3
    if cols:
        w.ws[sheet].set_column(4, 4, 3)
        w.ws[sheet].set_column(compare[1], compare[1], 40)
        last_col = compare[1] + min(len(cols), 3)
    w.finish_sheet(sheet, last_col, row)


def write_serving_rejected(w: Writer, plan, row: int) -> int:
    """The serving search's rejections by check (text) below the training ones; returns the last row."""
    from workbook.writer.planbook import REJECTED, rejected_row

    rows: list[dict[str, Any]] = (plan.data.get("serving") or {}).get("rejected") or []
    for r in rows:
        row += 1
        rejected_row(w, REJECTED, row, f"Serving: {r['label']}", r)
    return row
