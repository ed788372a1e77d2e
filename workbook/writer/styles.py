"""The one table of named cell styles, and the colour legend shown on the Cover.

Legend (workbook-rules.md): inputs blue font on pale-yellow fill; calculations black; links to
other sheets green; checks red/green by conditional formatting.
"""

from __future__ import annotations

from workbook.units import UNITS
from workbook.writer.numfmt import Decimals, General, Magnitude, Rule, Scientific

INPUT_FONT = "#0000FF"
INPUT_FILL = "#FFFFCC"
LINK_FONT = "#008000"
CONST_FILL = "#F2F2F2"
HEADER_FILL = "#D9E1F2"
PASS_FILL = "#C6EFCE"
PASS_FONT = "#006100"
FAIL_FILL = "#FFC7CE"
FAIL_FONT = "#9C0006"
MUTED_FONT = "#595959"
WARN_FILL = "#FFEB9C"
WARN_FONT = "#9C5700"

BASE = {"font_name": "Calibri", "font_size": 10, "valign": "top"}

#: style name -> xlsxwriter format properties (merged over BASE)
STYLES: dict[str, dict] = {
    "title": {"bold": True, "font_size": 14},
    "subtitle": {"italic": True, "font_color": MUTED_FONT},
    "subtitle_wrap": {"italic": True, "font_color": MUTED_FONT, "text_wrap": True},  # wider than the printed page
    "header": {"bold": True, "bg_color": HEADER_FILL, "bottom": 1, "text_wrap": True},
    "block": {"bold": True, "font_size": 11, "top": 1},
    "block_wrap": {"bold": True, "font_size": 11, "top": 1, "text_wrap": True},  # a block title with cells beside it
    "label": {"text_wrap": True},
    "unit": {"italic": True, "font_color": MUTED_FONT, "text_wrap": True},
    "source": {"font_color": MUTED_FONT, "font_size": 9, "text_wrap": True},
    "note": {"font_color": MUTED_FONT, "font_size": 9, "text_wrap": True},
    "key": {"font_color": MUTED_FONT, "font_size": 9},
    "text": {"text_wrap": True},
    "input": {"font_color": INPUT_FONT, "bg_color": INPUT_FILL, "locked": False},
    "input_text": {"font_color": INPUT_FONT, "bg_color": INPUT_FILL, "locked": False},
    "input_header": {"bold": True, "font_color": INPUT_FONT, "bg_color": INPUT_FILL, "locked": False, "bottom": 1,
                     "text_wrap": True},
    "input_flag": {"font_color": INPUT_FONT, "bg_color": INPUT_FILL, "locked": False, "align": "center"},
    "input_wrap": {"font_color": INPUT_FONT, "bg_color": INPUT_FILL, "locked": False, "text_wrap": True},
    "constant": {"font_color": INPUT_FONT, "bg_color": CONST_FILL},
    "calc": {"font_color": "#000000"},
    "link": {"font_color": LINK_FONT},
    "check": {"bold": True},
}

#: rows of the colour legend on the Cover: (style name, what it means)
LEGEND = [
    ("input", "Input: type here (blue on pale yellow, unlocked, validated)"),
    ("constant", "Constant: unit factor or spec table (locked)"),
    ("calc", "Calculation on this sheet (black, locked)"),
    ("link", "Link to another sheet (green, locked)"),
    ("check", "Check: green when it passes, red when it fails, amber for a warning (a planning guideline)"),
]


_MONEY_TOTAL = Decimals(prefix="$", min_dec=2, max_dec=4, whole_from=100)
_MONEY_RATE = Decimals(prefix="$", min_dec=2, max_dec=4)
_WHOLE_DOLLARS = "$#,##0"
_COUNT = Magnitude(Decimals(sig=2, max_dec=3))
_SIZE = Decimals(sig=3, max_dec=3)
_RATE = Decimals(sig=3, max_dec=3)
_TIME = Decimals(sig=3, max_dec=3)
_RATIO = Decimals(sig=2, max_dec=3)

#: unit -> Excel number format, or a rule that picks one from the row's values (workbook.units.UNITS)
UNIT_FORMATS: dict[str, str | Rule] = {
    # money: whole dollars for totals, cents (or finer) for prices per hour, token or request
    "USD": _MONEY_TOTAL,
    "USD/GPU": _WHOLE_DOLLARS,
    "USD/server": _WHOLE_DOLLARS,
    "USD/switch": _WHOLE_DOLLARS,
    "USD/link": _WHOLE_DOLLARS,
    "USD/FTE-year": _WHOLE_DOLLARS,
    "USD/day": _WHOLE_DOLLARS,
    "USD/month": _WHOLE_DOLLARS,
    "USD/year": _WHOLE_DOLLARS,
    "USD/GPU-h": _MONEY_RATE,
    "USD/h": _MONEY_RATE,
    "USD/1M tokens": _MONEY_RATE,
    "USD/kWh": _MONEY_RATE,
    "USD/GB": _MONEY_RATE,
    "USD/TB-month": _MONEY_RATE,
    "USD/kW-month": _MONEY_RATE,
    "USD/request": Decimals(prefix="$", min_dec=4, max_dec=6),
    # shares, ratios, flags
    "fraction": Decimals(percent=True, min_dec=1, max_dec=3),
    "x": _RATIO,
    "0/1": "0",
    "code": "0",
    "exponent": Decimals(sig=3, max_dec=2),
    # counts: thousands separators; magnitudes (T, B, M) from a million up
    **{u: _COUNT for u in ("count", "tokens", "sequences", "requests", "replicas", "instances", "params", "stage", "GPUs", "FTE", "GPUs/FTE", "nodes", "layers", "heads", "ranks", "rails",
                            "steps", "chunks", "cores", "checkpoints", "failures", "tensors", "ops", "digits",
                            "forward-equivalents", "tokens/s", "tokens/param", "series/GPU", "elements")},
    "passes": Decimals(sig=3, max_dec=2),
    "gen": '"Gen "0',
    "B params": Decimals(sig=3, max_dec=2),
    # data sizes and rates (bytes exact; GB/TB with the decimals the row needs)
    "B": "#,##0",
    **{u: _SIZE for u in ("MB", "GB", "TB", "GiB", "MiB", "B/param", "B/element", "B/token", "B/sample", "MB/GPU-day")},
    **{u: _RATE for u in ("KB/s", "MB/s", "GB/s", "Gbit/s", "Tbit/s", "requests/s", "M tokens/day")},
    # compute
    "FLOP": Scientific(),
    "FLOP/s": Scientific(),
    "B/s": Scientific(),
    "s/GB": Decimals(sig=3, max_dec=6),
    "s/(requests/s)": Decimals(sig=3, max_dec=6),
    "FLOP/B": Decimals(sig=3, max_dec=2),
    "B/kFLOP": Decimals(sig=3, max_dec=3),
    "TFLOPS": "#,##0.0",
    "TOPS": "#,##0.0",
    "PFLOP/s": "#,##0.0",
    "W": "#,##0",
    "kW": "#,##0.0",
    # time: seconds down to the microsecond, GPU-hours whole
    "s": Decimals(sig=2, max_dec=6),
    "ms": _TIME,
    "us": _TIME,
    "min": Decimals(sig=2, max_dec=2),
    "h": Decimals(sig=2, max_dec=2),
    "days": Decimals(sig=2, max_dec=2),
    "months": Decimals(sig=2, max_dec=2),
    "years": Decimals(sig=2, max_dec=2),
    "date": "mmm yyyy",
    "year": "0",
    "month": "0",
    "quarter": '"Q"0',
    "GPU-h": "#,##0",
    "GPU-days": "#,##0",
    # unit factors (Constants block)
    **{u: "#,##0" for u in ("B/KB", "B/MB", "B/GB", "B/TB", "B/GiB", "B/MiB", "bit/B", "1/k", "1/M", "1/G", "1/T",
                            "ms/s", "us/s", "s/min", "s/h", "s/day", "h/day", "day/yr", "h/yr", "month/yr",
                            "month/quarter")},
}
#: the rule for a unit outside the vocabulary (free-text units of inputs)
FALLBACK = General()


def number_format(unit: str, values: list[float]) -> str:
    """The Excel number format of a row (or catalogue column) of *unit* holding *values*."""
    rule = UNIT_FORMATS.get(unit, FALLBACK)
    return rule if isinstance(rule, str) else rule.pick(values)


def unknown_units() -> set[str]:
    """Vocabulary units without a format, and formats for units outside the vocabulary (tests)."""
    return set(UNITS) ^ set(UNIT_FORMATS)
