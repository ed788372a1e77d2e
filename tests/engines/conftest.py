"""Fixtures for the engine tests: tiny workbooks with deliberately WRONG cached values."""

from __future__ import annotations

from pathlib import Path

import pytest

#: engine -> version line, filled by tests; printed at the end of the session
VERSIONS: dict[str, str] = {}

STALE = -999  # cached value written into every formula cell

# (sheet, cell) -> (formula, true value). Inputs: Inputs!A2:C4 GPU table,
# Inputs!B8 = GPUCount (workbook-scoped name) = 10.
TINY_FORMULAS: dict[tuple[str, str], tuple[str, object]] = {
    ("Plan Summary", "B1"): ('=INDEX(Inputs!$B$2:$B$4,MATCH("H200",Inputs!$A$2:$A$4,0))', 141.0),
    ("Plan Summary", "B2"): ("=ROUND(Inputs!C3*1.2345,2)", round(3.5 * 1.2345, 2)),  # 4.32
    ("Plan Summary", "B3"): ("=CEILING(GPUCount,8)", 16.0),
    ("Plan Summary", "B4"): ("=GPUCount*B1", 1410.0),
    ("Plan Summary", "B5"): ('="GPUs: "&GPUCount', "GPUs: 10"),
    ("Plan Summary", "B6"): ("=B4>1000", True),
    ("Plan Summary", "B7"): ("=B4<0", False),
    ("Plan Summary", "B8"): ("=B4/(GPUCount-10)", "#DIV/0!"),
    ("Inputs", "D2"): ("='Plan Summary'!B4*2", 2820.0),
    ("Inputs", "D3"): ("=SUM(Inputs!B2:B4)+'Plan Summary'!B3", 80.0 + 141 + 192 + 16),
}


def build_tiny(path: Path, *, count: int = 10, formulas=TINY_FORMULAS) -> Path:
    """Write the tiny two-sheet workbook with xlsxwriter; every formula caches STALE."""
    import xlsxwriter

    wb = xlsxwriter.Workbook(str(path))
    wb.use_future_functions = True
    inputs = wb.add_worksheet("Inputs")
    plan = wb.add_worksheet("Plan Summary")
    inputs.write_row(0, 0, ["GPU", "HBM_GB", "USD_per_h"])
    inputs.write_column(1, 0, ["H100", "H200", "B200"])
    inputs.write_column(1, 1, [80, 141, 192])
    inputs.write_column(1, 2, [2.5, 3.5, 5.0])
    inputs.write(7, 0, "GPU count")
    inputs.write(7, 1, count)
    wb.define_name("GPUCount", "=Inputs!$B$8")
    sheets = {"Inputs": inputs, "Plan Summary": plan}
    for (sheet, cell), (formula, _) in formulas.items():
        sheets[sheet].write_formula(cell, formula, None, STALE)
    wb.close()
    return path


@pytest.fixture(scope="session")
def tiny_xlsx(tmp_path_factory) -> Path:
    return build_tiny(tmp_path_factory.mktemp("tiny") / "tiny.xlsx")


def expected_tiny(count: int = 10) -> dict[tuple[str, str], object]:
    """True values of TINY_FORMULAS for another GPU count (count != 10: no #DIV/0!)."""
    hbm = 141.0
    total = count * hbm
    return {
        ("Plan Summary", "B1"): hbm,
        ("Plan Summary", "B2"): 4.32,
        ("Plan Summary", "B3"): float(-(-count // 8) * 8),
        ("Plan Summary", "B4"): total,
        ("Plan Summary", "B5"): f"GPUs: {count}",
        ("Plan Summary", "B6"): total > 1000,
        ("Plan Summary", "B7"): total < 0,
        ("Plan Summary", "B8"): "#DIV/0!" if count == 10 else total / (count - 10),
        ("Inputs", "D2"): total * 2,
        ("Inputs", "D3"): 413.0 + float(-(-count // 8) * 8),
    }


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: D103
    if VERSIONS:
        terminalreporter.section("recalculation engines")
        for engine, version in sorted(VERSIONS.items()):
            terminalreporter.write_line(f"{engine}: {version}")


# ---------------------------------------------------------------------------
# A workbook exercising what the fast formulas route must get right: formulas
# copied across "scenario" columns F:H (one compiled template per row), defined
# names over ranges, blanks, text, errors, cross-sheet references (also to a
# sheet with an apostrophe), a formula reading a LATER row, F3 vs $F$3 in one
# formula, a sheet-scoped name. Data!B5 and Data!E2 are blank.
FEATURE_COLS = "FGH"
FEATURE_GPUS = ("H200", "B200", "MI300X")  # Calc Sheet!F1:H1; MI300X has no HBM value
_HBM = {"H200": 141.0, "B200": 192.0, "MI300X": 0.0}

# row -> (formula written in column F, shifted to G and H; value per column)
FEATURE_ROWS: dict[int, tuple[str, tuple[object, ...]]] = {
    2: ("=INDEX(gpu_hbm,MATCH(F$1,gpu_id,0))", tuple(_HBM[g] for g in FEATURE_GPUS)),
    3: ("=F2*Count+$B$3", tuple(_HBM[g] * 10 + 1 for g in FEATURE_GPUS)),
    4: ("=ISBLANK(INDEX(gpu_hbm,MATCH(F$1,gpu_id,0)))", (False, False, True)),
    5: ("=ISBLANK(F2)", (False, False, False)),  # a formula cell is never blank
    6: ("=F2+Data!$E$2", tuple(_HBM[g] for g in FEATURE_GPUS)),
    7: ('=IF(F2>150,"big","small")&" "&F$1', ("small H200", "big B200", "small MI300X")),
    8: ("=1/(F2-141)", ("#DIV/0!", 1 / 51, -1 / 141)),
    9: ('=MATCH(F$1&"x",gpu_id,0)', ("#N/A",) * 3),
    10: ("=F$1+1", ("#VALUE!",) * 3),
    11: ("=nosuchname*2", ("#NAME?",) * 3),
    12: ("=F13*2", tuple((_HBM[g] * 10 + 2) * 2 for g in FEATURE_GPUS)),  # reads a later row
    13: ("=F3+1", tuple(_HBM[g] * 10 + 2 for g in FEATURE_GPUS)),
    14: ("=F3+$F$3", tuple(_HBM[g] * 10 + 1 + 1411.0 for g in FEATURE_GPUS)),
    15: ("=Rate*F3+BiggestHBM", tuple(0.05 * (_HBM[g] * 10 + 1) + 192 for g in FEATURE_GPUS)),
    16: ('=Data!$E$2&"-"&F$1', tuple(f"-{g}" for g in FEATURE_GPUS)),
    17: ("='Bob''s Sheet'!$B$1+F2", tuple(42 + _HBM[g] for g in FEATURE_GPUS)),
    18: ("=SUM(gpu_hbm)+COUNT(gpu_hbm)", (416.0, 416.0, 416.0)),
    19: ("=ISBLANK(Data!$E$2)", (True, True, True)),
    20: ("=Local*2", (7.0, 7.0, 7.0)),  # sheet-scoped name
}
# Rows where the fast route intentionally differs from formulas.ExcelModel,
# which gives #REF! for an unknown name (Excel: #NAME?), for sheet-scoped names
# and for references to a sheet with an apostrophe (also Bob's Sheet!B1).
MODEL_DIFFERS = {11, 17, 20}

# INDEX edge cases for the INDEX-by-value shortcut: compared between routes
# only (formulas and LibreOffice differ on some of them, e.g. INDEX(r,0)).
INDEX_CASES = [
    "=INDEX(Data!$B$2:$B$5,2)", "=INDEX(Data!$B$2:$B$5,4)", "=INDEX(Data!$B$2:$B$5,9)",
    "=INDEX(Data!$B$2:$B$5,0)", "=INDEX(Data!$B$2:$B$5,-1)", '=INDEX(Data!$B$2:$B$5,"x")',
    "=INDEX(Data!$B$2:$B$5,1/0)", "=INDEX(Data!$A$2:$C$5,2)", "=INDEX(Data!$A$2:$C$5,2,3)",
    "=INDEX(Data!$A$2:$C$5,4,2)", "=INDEX(Data!$A$2:$C$2,3)", "=INDEX(Data!$A$2:$C$2,1,2)",
    "=INDEX(gpu_hbm,2)+1", "=INDEX(gpu_hbm,4)&\"\"", "=INDEX('Calc Sheet'!$F$2:$H$2,3)",
    "=INDEX(Data!$B$2:$B$5,'Calc Sheet'!$B$3)", "=INDEX(Data!$B$2:$B$5,2,1,1)",
]


def build_features(path: Path) -> Path:
    """Write the feature workbook (sheets Data, Calc Sheet, Bob's Sheet, Index); caches STALE."""
    import xlsxwriter

    wb = xlsxwriter.Workbook(str(path))
    data = wb.add_worksheet("Data")
    calc = wb.add_worksheet("Calc Sheet")
    bob = wb.add_worksheet("Bob's Sheet")
    idx = wb.add_worksheet("Index")
    data.write_row(0, 0, ["GPU", "HBM_GB", "USD_per_h", None, 10])
    data.write_column(1, 0, ["H100", "H200", "B200", "MI300X"])
    data.write_column(1, 1, [80, 141, 192])  # B5 (MI300X) left blank
    data.write_column(1, 2, [2.5, 3.5, 5.0, 4.0])
    wb.define_name("gpu_id", "=Data!$A$2:$A$5")
    wb.define_name("gpu_hbm", "=Data!$B$2:$B$5")
    wb.define_name("Count", "=Data!$E$1")
    wb.define_name("Rate", "=0.05")
    wb.define_name("BiggestHBM", "=MAX(Data!$B$2:$B$5)")
    wb.define_name("'Calc Sheet'!Local", "=Data!$C$3")
    calc.write_row(0, 5, list(FEATURE_GPUS))
    calc.write(2, 1, 1)  # $B$3
    for row, (formula, _) in FEATURE_ROWS.items():
        for k, col in enumerate(FEATURE_COLS):
            calc.write_formula(f"{col}{row}", _shift(formula, k), None, STALE)
    bob.write("A1", 21)
    bob.write_formula("B1", "=A1*2", None, STALE)
    for i, f in enumerate(INDEX_CASES, start=1):
        idx.write_formula(f"A{i}", f, None, STALE)
    wb.close()
    return path


def _shift(formula: str, k: int) -> str:
    """Copy a column-F formula k columns to the right (relative column letters only)."""
    import re

    def move(m: "re.Match[str]") -> str:
        if m.group(1):  # $F: absolute column
            return m.group(0)
        return chr(ord(m.group(2)) + k) + m.group(3)

    # only the calc sheet's own relative column F refs (F2, F$1, F13): not $F$3, not Data!$E$2
    return re.sub(r"(?<![A-Za-z_!$'])(\$?)(F)(\$?[0-9]+)(?![0-9(])", move, formula)


def feature_expected() -> dict[tuple[str, str], object]:
    """{(sheet, cell): value} for Calc Sheet and Bob's Sheet (not the Index sheet)."""
    want: dict[tuple[str, str], object] = {("Bob's Sheet", "B1"): 42.0}
    for row, (_, values) in FEATURE_ROWS.items():
        for col, v in zip(FEATURE_COLS, values):
            want[("Calc Sheet", f"{col}{row}")] = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
    return want
