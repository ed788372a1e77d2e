"""The Summary sheet: the answers a budget holder asks for first, one column per scenario, live.

Rows are links to the quantities (or inputs) where they are computed ("n/a" where the scenario's
purpose excludes them: training figures of a serving plan), and verdicts as text:
PASS / FAIL (hard checks) or PASS / WARN (warnings), "n/a" where the check does not apply to the
scenario's purpose. :func:`summary_values` gives every row's reference value (cached values here,
expected values in ``workbook verify``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer.charts import USD_LABEL
from workbook.writer.input_guard import INPUT_ERROR_TEXT  # what a figure shows when an input upstream is in error
from workbook.writer.layout import COL_KEY, COL_LABEL, COL_NOTES, COL_SOURCE, COL_UNIT, HEADER_ROW, quote_sheet, value_col
from workbook.writer.xlsx import Writer

SHEET = "Summary"


@dataclass(frozen=True)
class Row:
    key: str  # the quantity or input key it shows (verdicts: summary_<name>)
    label: str
    unit: str
    kind: str = "value"  # value | text | verdict | warning | status
    checks: tuple[str, ...] = ()
    applies: str = ""  # purpose_training_flag / purpose_serving_flag


_T, _S = "purpose_training_flag", "purpose_serving_flag"
BLOCKS: list[tuple[str, list[Row]]] = [
    ("The plan", [
        Row("model", "Model", "id", "text"),
        Row("gpu", "GPU", "id", "text"),
        Row("purpose", "Purpose (which checks apply)", "choice", "text"),
        Row("scenario_status", "Status", "text", "status"),
    ]),
    ("Training", [
        Row("training.num_gpus", "GPUs in the training job", "GPUs", applies=_T),
        Row("plan_gpus_to_buy", "GPUs to procure (whole nodes, spares included)", "GPUs", applies=_T),
        Row("plan_nodes_to_buy", "Nodes to procure", "nodes", applies=_T),
        Row("training.time_model", "Training time model (step = step-time model, mfu = MFU given, measured = "
            "measured TFLOP/s)", "choice", "text"),
        Row("train_days", "Training days (time model in use)", "days", applies=_T),
        Row("plan_train_days_with_overhead", "Training days at the MFU given", "days", applies=_T),
        Row("training.target_days", "Target days", "days", applies=_T),
        Row("train_mfu", "MFU over the stated peak (step model's, MFU given, or the measured rate's)", "fraction",
            applies=_T),
        Row("train_tokens_per_day", "Tokens per day", "tokens", applies=_T),
        Row("gpu_hour_usd", "Price per GPU-hour", "USD/GPU-h", applies=_T),
        Row("train_cost_usd", "Training cost", "USD", applies=_T),
        Row("budget_headroom_usd", "Budget headroom (0 = no budget)", "USD", applies=_T),
        Row("training.memory_model", "Training memory model (tensors or book)", "choice", "text"),
        Row("zero_total_per_gpu_GB", "Training memory per GPU (most loaded GPU)", "GB", applies=_T),
        Row("zero_hbm_headroom_GB", "Memory headroom per GPU, training", "GB", applies=_T),
    ]),
    ("Serving", [
        Row("inference.serving_model", "Serving model (engine = measured-engine models, book = spec 17.8)", "choice",
            "text"),
        Row("inference.engine", "Serving engine profile (engine model)", "id", "text"),
        Row("srv_gpus_in_use", "Serving GPUs", "GPUs", applies=_S),
        Row("srv_ttft_ms_in_use", "Time to first token (n/a: a saturated arrival rate, the queue grows)", "ms",
            applies="srv_ttft_defined_flag"),
        Row("srv_tpot_ms_in_use", "Time per output token", "ms", applies=_S),
        Row("srv_tokens_per_s_per_gpu_in_use", "Output tokens per second per GPU (measured when given)", "tokens/s",
            applies=_S),
        Row("srv_kv_tokens", "KV cache capacity per serving group, engine model", "tokens", applies=_S),
        Row("infer_tokens_per_s_used", "Output tokens per second", "tokens/s", applies=_S),
        Row("infer_usd_per_1M_tokens", "Cost per 1M output tokens", "USD/1M tokens", applies=_S),
        Row("infer_daily_cost_usd", "Serving cost per day", "USD/day", applies=_S),
        Row("infer_hbm_headroom_GB", "Memory headroom per GPU, serving", "GB", applies=_S),
    ]),
    ("Verdicts", [
        Row("summary_train_memory", "Training memory fits", "verdict", "verdict", ("check_train_memory_fits",), _T),
        Row("summary_target_days", "Finishes within the target days", "verdict", "verdict",
            ("check_meets_target_days",), _T),
        Row("summary_budget", "Within budget", "verdict", "verdict", ("check_within_budget",), _T),
        Row("summary_layout", "Layout consistent (TP x CP x PP x DP, EP, TP in a node, PP divides layers)", "verdict",
            "verdict", ("check_layout_gpus", "check_tp_in_node", "check_pp_divides_layers"), _T),
        Row("summary_gpu_count", "GPU count consistent (procured, priced)", "verdict", "verdict",
            ("check_gpu_count",), _T),
        Row("summary_serving_memory", "Serving memory fits", "verdict", "verdict", ("check_infer_memory_fits",), _S),
        Row("summary_serving_targets", "Serving load sustained, TTFT and TPOT targets met", "verdict", "verdict",
            ("check_serving_load_stable", "check_ttft_target", "check_tpot_target"), _S),
        Row("summary_comm_share", "Communication share under its limit", "verdict", "warning", ("warn_comm_share",),
            _T),
        Row("summary_ckpt_interval", "Checkpoint interval within the MTBF rule", "verdict", "warning",
            ("warn_ckpt_interval",), _T),
    ]),
]


def summary_values(results: list[dict[str, float]], scenarios: list, model_ids: list[str],
                   statuses: list[str]) -> dict[str, list]:
    """Reference value of every Summary row, per scenario (resolved scenarios for the inputs)."""
    out: dict[str, list] = {}
    for _, rows in BLOCKS:
        for r in rows:
            vals = []
            for i, (res, sc) in enumerate(zip(results, scenarios)):
                if r.kind == "status":
                    vals.append(statuses[i])
                elif r.kind == "text" and "." in r.key:
                    section, field = r.key.split(".")
                    vals.append(str(getattr(getattr(sc, section), field)))
                elif r.kind == "text":
                    vals.append({"model": model_ids[i], "gpu": sc.gpu, "purpose": sc.purpose,
                                 "training.memory_model": sc.training.memory_model}[r.key])
                elif r.kind in ("verdict", "warning"):
                    if not res[r.applies]:
                        vals.append("n/a")
                    else:
                        failed = any(res[c] for c in r.checks)
                        vals.append(("FAIL" if r.kind == "verdict" else "WARN") if failed else "PASS")
                elif r.applies and not res[r.applies]:
                    vals.append("n/a")
                elif "." in r.key:
                    section, field = r.key.split(".")
                    vals.append(float(getattr(getattr(sc, section), field)))
                else:
                    vals.append(res[r.key])
            out[r.key] = vals
    return out


def _ref(w: Writer, key: str, col: int) -> str:
    sheet, row = w.book.layout.rows[key]
    return f"{quote_sheet(sheet)}!{xl_rowcol_to_cell(row, col)}"


def _formula(w: Writer, r: Row, col: int) -> str:
    """A figure or verdict of a scenario with an input in error reads "input error" (its status row
    names the cell): a blank input would otherwise give a plausible 0 and a false PASS."""
    err = f"MIN(1,{_ref(w, 'input_errors_count', col)})"
    if r.kind in ("verdict", "warning"):
        flag = _ref(w, r.applies, col)
        k = f"{flag}+{flag}*MIN(1,{'+'.join(_ref(w, c, col) for c in r.checks)})"  # 0 n/a, 1 pass, 2 fail
        bad = "FAIL" if r.kind == "verdict" else "WARN"
        return (f'=IFERROR(CHOOSE(1+{k}+{err}*(c_two+1-({k})),"n/a","PASS","{bad}","{INPUT_ERROR_TEXT}"),'
                f'"{INPUT_ERROR_TEXT}")')
    if r.applies:  # a training (serving) figure of a scenario whose purpose excludes it reads "n/a"
        flag = _ref(w, r.applies, col)
        return (f'=IFERROR(CHOOSE(1+{flag}+{err}*(c_two-{flag}),"n/a",{_ref(w, r.key, col)},'
                f'"{INPUT_ERROR_TEXT}"),"{INPUT_ERROR_TEXT}")')
    return "=" + _ref(w, r.key, col)


def write_summary(w: Writer, names: list[str], results: list[dict[str, float]], scenarios: list,
                  model_ids: list[str], statuses: list[str]) -> None:
    from workbook.writer import styles

    w.title(SHEET, "Summary", "The answers per scenario, live from every sheet. Verdicts: PASS / FAIL (hard "
            "checks), PASS / WARN (planning guidelines), n/a (not this scenario's purpose).")
    w.calc_header(SHEET, names)
    w.ws[SHEET].write_url(2, 0, "internal:Plan!A1", w.fmt("link"), string="Change the inputs: Plan sheet")
    w.book.cells.add(SHEET, 2, 0, "label")
    values = summary_values(results, scenarios, model_ids, statuses)
    lay = w.book.layout
    ws = w.ws[SHEET]
    ok = w.wb.add_format({"bg_color": styles.PASS_FILL, "font_color": styles.PASS_FONT})
    bad = w.wb.add_format({"bg_color": styles.FAIL_FILL, "font_color": styles.FAIL_FONT})
    amber = w.wb.add_format({"bg_color": styles.WARN_FILL, "font_color": styles.WARN_FONT})
    for title, rows in BLOCKS:
        row = lay.place(SHEET, skip=0 if lay.next_row.get(SHEET) is None else 1)
        w.text(SHEET, row, COL_LABEL, title, "block", "label")
        for r in rows:
            row = lay.place(SHEET, f"summary:{r.key}")
            w.text(SHEET, row, COL_LABEL, r.label, "label", "label")
            w.text(SHEET, row, COL_UNIT, r.unit, "unit", "unit")
            w.text(SHEET, row, COL_NOTES, "", "note", "note")
            src = lay.rows[r.checks[0] if r.checks else r.key][0]
            w.text(SHEET, row, COL_SOURCE, src, "source", "source")
            w.text(SHEET, row, COL_KEY, r.key, "key", "key")
            nums = [v for v in values[r.key] if isinstance(v, float)]
            fmt = styles.number_format(r.unit, nums) if nums else None
            for i in range(len(names)):
                col = value_col(i)
                w.formula(SHEET, row, col, _formula(w, r, col), values[r.key][i], "link", key=r.key,
                          num_format=fmt, scenario=i)
            if r.kind in ("verdict", "warning", "status"):
                last = value_col(len(names) - 1)
                for word, fmt in (("PASS (", amber), ("PASS", ok), ("WARN", amber), ("FAIL", bad), ("INPUT", bad)):
                    ws.conditional_format(row, value_col(0), row, last, {"type": "text", "criteria": "begins with",
                                                                         "value": word, "format": fmt})
    _chart(w, names)
    w.finish_sheet(SHEET, value_col(len(names) - 1), lay.next_row[SHEET] + 22)


def _chart(w: Writer, names: list[str]) -> None:
    lay = w.book.layout
    n = len(names)
    chart = w.wb.add_chart({"type": "bar"})
    row = lay.rows["summary:train_cost_usd"][1]
    chart.add_series({
        "name": "Training cost",
        "categories": [SHEET, HEADER_ROW, value_col(0), HEADER_ROW, value_col(n - 1)],
        "values": [SHEET, row, value_col(0), row, value_col(n - 1)],
        "data_labels": {"value": True, "num_format": USD_LABEL},
    })
    # A linear axis from zero: a log axis over the "n/a" of a serving scenario (text plots as 0) makes Excel
    # stop with "Negative or zero values cannot be plotted correctly on log charts" (the Excel lint's log-chart)
    chart.set_title({"name": "Training cost per scenario"})
    chart.set_x_axis({"min": 0, "num_format": USD_LABEL, "name": "USD"})
    chart.set_legend({"none": True})
    chart.set_size({"width": 760, "height": 340})
    w.ws[SHEET].insert_chart(lay.next_row[SHEET] + 2, 0, chart)
