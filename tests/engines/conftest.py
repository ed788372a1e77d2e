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
