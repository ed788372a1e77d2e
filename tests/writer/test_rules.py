"""workbook-rules.md over the built file; each rule also shown to fail on a file that breaks it."""

from __future__ import annotations

import math

import openpyxl
import pytest

from workbook import __version__
from workbook.audit import rules
from workbook.calc import registry
from workbook.writer.layout import value_col


@pytest.fixture(scope="module")
def wb(built):
    return openpyxl.load_workbook(built[0])


@pytest.mark.parametrize("rule", rules.ALL_RULES, ids=lambda r: r.__name__)
def test_rule_holds_on_built_file(wb, rule):
    assert rule(wb) == []


def test_inputs_styled_unlocked_validated(wb, built):
    inputs = [(c.sheet, c.coord) for c in built[1].cells.by_role("input")]
    assert len(inputs) > 100
    assert rules.inputs_styled_validated(wb, inputs) == []


def test_numbers_typed_only_into_input_or_constant_cells(wb, built):
    roles = {(c.sheet, c.coord): c.role for c in built[1].cells.cells}
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, (int, float)) and not isinstance(c.value, bool):
                    assert roles.get((ws.title, c.coordinate)) in ("input", "constant"), f"{ws.title}!{c.coordinate}"
    # and the registry's formula cells are formulas in the file
    for rec in built[1].cells.by_role("calc", "link", "check"):
        v = wb[rec.sheet][rec.coord].value
        assert isinstance(v, str) and v.startswith("="), f"{rec.sheet}!{rec.coord}"


def test_every_quantity_is_a_formula_row(built):
    placed = built[1].layout.rows
    missing = [n for n in registry() if n not in placed]
    assert not missing


def test_cached_values_are_the_reference_values(built, catalog):
    from workbook.engines.values import normalize
    from workbook.writer import plan_scenarios
    from workbook.scenario import load_scenarios
    from tests.writer.conftest import SHIPPED

    path, book = built
    results = [p.results for p in plan_scenarios(load_scenarios(SHIPPED), catalog)]
    wbv = openpyxl.load_workbook(path, data_only=True)
    for rec in book.cells.by_role("calc", "link", "check"):
        if rec.key not in results[0] or rec.sheet == "Summary":  # Summary: text where n/a (verify checks it)
            continue
        got = normalize(wbv[rec.sheet][rec.coord].value)  # a date cell reads as a datetime: its serial
        want = results[rec.scenario][rec.key]
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (rec.sheet, rec.coord, got, want)


def test_checks_master_counts_every_scenario_and_cover_shows_it(wb, built):
    """The master check sums each scenario's failed checks (hard checks and input errors), and that
    row sums every hard check and every input check; the Cover shows the master check."""
    from workbook.calc.checks import HARD

    lay = built[1].layout
    sheet, master_row = lay.rows["master_check"]
    formula = wb[sheet].cell(master_row + 1, value_col(0) + 1).value
    src = lay.rows["scenario_failures_count"][1] + 1
    assert formula == f"=SUM(F{src}:K{src})"
    hard = wb[sheet].cell(lay.rows["hard_failures_count"][1] + 1, value_col(0) + 1).value
    rows = [lay.rows[n][1] + 1 for n, *_ in HARD]
    assert hard == f"=SUM(F{min(rows)}:F{max(rows)})" and max(rows) - min(rows) + 1 == len(HARD)
    # the input checks (Plan, below the inputs) and their count, then the price check; the count of all of them
    inputs = [n for n, e in registry().items() if e.module == "input_checks" and n != "plan_input_errors_count"]
    rows = [lay.rows[n][1] + 1 for n in inputs]
    plan = lay.rows["plan_input_errors_count"][1] + 1
    assert wb["Plan"].cell(plan, value_col(0) + 1).value == f"=SUM(F{min(rows)}:F{max(rows)})"
    assert max(rows) - min(rows) + 1 == len(inputs) and plan == max(rows) + 1
    count = wb["Plan"].cell(lay.rows["input_errors_count"][1] + 1, value_col(0) + 1).value
    assert count == f"=F{plan}+F{lay.rows['input_error_price'][1] + 1}"
    wbv = openpyxl.load_workbook(built[0], data_only=True)
    cover = [c.value for row in wbv["Cover"].iter_rows() for c in row if isinstance(c.value, str)]
    assert "ALL CHECKS PASS" in cover
    assert any("master_check_cell" in str(c.value) for row in wb["Cover"].iter_rows() for c in row)


def test_provenance_on_cover_and_in_document_properties(wb):
    texts = [c.value for row in wb["Cover"].iter_rows() for c in row if isinstance(c.value, str)]
    assert "Tool version" in texts and __version__ in texts and "Catalogue hash" in texts
    props = {p.name: p.value for p in wb.custom_doc_props.props}
    assert props["tool_version"] == __version__ and "Catalogue hash" in props


def test_sheet_titles_and_order(wb):
    assert wb.sheetnames == ["Cover", "Summary", "Hardware", "Efficiency", "Engines", "Models", "Defaults",
                             "Constants", "Plan", "Training Memory", "Activations", "ZeRO", "KV Cache", "Step Time",
                             "Comm", "Storage",
                             "Inference", "Cost", "TCO", "Sensitivity",
                             "Cash Flow", "Checks",
                             "Manifest"]  # Changelog only after a catalogue change (test_changelog)
    assert all(len(t) <= 31 for t in wb.sheetnames)



def test_charts_in_file(built):
    import zipfile

    names = zipfile.ZipFile(built[0]).namelist()
    assert len([n for n in names if n.startswith("xl/charts/chart")]) >= 3


# -- each rule fails on a file that breaks it -------------------------------------------------
def _first_formula(wb, sheet="ZeRO"):
    for row in wb[sheet].iter_rows(min_row=6, min_col=value_col(0) + 1, max_col=value_col(0) + 1):
        if isinstance(row[0].value, str) and row[0].value.startswith("="):
            return row[0]
    raise AssertionError("no formula")


def _break_literal(wb):
    c = _first_formula(wb)
    c.value = c.value + "*1000"


def _break_function(wb):
    c = _first_formula(wb)
    c.value = "=OFFSET(" + c.value[1:] + ",0,0)"


def _break_nested_if(wb):
    c = _first_formula(wb)
    c.value = "=IF(1,IF(0,1,0),0)"


def _break_lock(wb):
    from openpyxl.styles import Protection

    _first_formula(wb).protection = Protection(locked=False)


def _break_shift(wb):
    c = _first_formula(wb)
    wb[c.parent.title].cell(c.row, c.column + 1).value = "=1"


def _break_forward(wb):
    c = _first_formula(wb, "Plan")
    c.value = "=Cost!F6"


def _break_hidden(wb):
    wb["Models"].sheet_state = "hidden"


def _break_label(wb):
    ws = wb["ZeRO"]
    c = _first_formula(wb)
    ws.cell(c.row, 2).value = None


def _break_protection(wb):
    wb["Cost"].protection.sheet = False


def _break_typed_default(wb):
    """Type the Defaults value into a blank catalogue-backed input (the copy the old build wrote)."""
    from workbook.readback import key_rows

    row = key_rows(wb["Plan"])["network.nic_Gbps"] + 1
    default = next(wb["Defaults"].cell(r, 5).value for r in range(1, 200) if wb["Defaults"].cell(r, 4).value == "nic_Gbps")
    wb["Plan"].cell(row, value_col(0) + 1).value = default


def _break_typed_price(wb):
    """Type the GPU's catalogue price for the basis into the override cell."""
    from workbook.readback import key_rows

    rows = key_rows(wb["Plan"])
    gpu = wb["Plan"].cell(rows["gpu"] + 1, value_col(0) + 1).value
    basis = wb["Plan"].cell(rows["cost.price_basis"] + 1, value_col(0) + 1).value
    wb["Plan"].cell(rows["cost.gpu_hour_usd"] + 1, value_col(0) + 1).value = rules._gpu_prices(wb)[(gpu, basis)]


def _set_by_scenario() -> set[tuple[int, str]]:
    """{(scenario index, input key)} that the shipped scenario files set themselves."""
    from workbook.scenario import load_scenarios
    from workbook.writer.inputs import input_values
    from tests.writer.conftest import SHIPPED

    return {(i, k) for i, sc in enumerate(load_scenarios(SHIPPED))
            for k, v in input_values(sc, sc.model or "inline").items() if v is not None}


def test_no_typed_catalogue_copies(wb):
    assert rules.no_typed_catalogue_copies(wb, _set_by_scenario()) == []


@pytest.mark.parametrize("breaker", [_break_typed_default, _break_typed_price], ids=lambda x: x.__name__)
def test_typed_catalogue_copy_is_found(built, tmp_path, breaker):
    wb = openpyxl.load_workbook(built[0])
    breaker(wb)
    path = tmp_path / "broken.xlsx"
    wb.save(path)
    assert rules.no_typed_catalogue_copies(openpyxl.load_workbook(path), _set_by_scenario()) != []


def _break_footer(wb):
    wb["Cost"].oddFooter.center.text = "ai-infra-workbook.xlsx"  # a typed file name instead of &F


def _break_fit_width(wb):
    wb["Cost"].page_setup.fitToWidth = 3


def _break_portrait(wb):
    wb["ZeRO"].page_setup.orientation = "portrait"


def _break_print_titles(wb):
    wb["Plan"].print_title_rows = "4:4"


def _break_currency_header(wb):
    wb["TCO"].oddHeader.center.text = ""


def _break_freeze_rows(wb):
    wb["Models"].freeze_panes = "B40"  # 39 rows frozen: the window shows nothing else


def _break_freeze_calc(wb):
    wb["Cost"].freeze_panes = None


BREAKERS = [
    (_break_literal, rules.no_literals),
    (_break_function, rules.allowed_functions),
    (_break_nested_if, rules.allowed_functions),
    (_break_lock, rules.formulas_locked_sheets_protected),
    (_break_protection, rules.formulas_locked_sheets_protected),
    (_break_shift, rules.one_formula_per_row),
    (_break_forward, rules.references_flow_forward),
    (_break_hidden, rules.nothing_hidden),
    (_break_label, rules.labels_units_sources),
    (_break_footer, rules.print_setup),
    (_break_fit_width, rules.print_setup),
    (_break_portrait, rules.print_setup),
    (_break_print_titles, rules.print_setup),
    (_break_currency_header, rules.print_setup),
    (_break_freeze_rows, rules.freeze_panes),
    (_break_freeze_calc, rules.freeze_panes),
]


@pytest.mark.parametrize("formula, ok", [
    ('=IF(Plan!F275>0,"input error",F12/F13)', True),  # the input-error guard
    ('=IF(Plan!F275>0,"input error",IF(F12>0,F13/F12,0))', True),  # the guard around a formula with one IF
    ('=IF(F275>0,"input error",IF(F12>0,IF(F13>0,1,0),0))', False),  # nested IF inside the guard
    ('=IF(Plan!F275>0,"input error",1)+IF(F1,IF(F2,1,0),0)', False),  # not one guard around the whole formula
    ('=IF(Plan!F275>0,"other",IF(F12>0,1,0))', False),  # not the guard's text
])
def test_nested_if_rule_exempts_exactly_the_input_error_guard(formula, ok):
    wb = openpyxl.Workbook()
    wb.active["F20"] = formula
    assert (rules.allowed_functions(wb) == []) == ok


@pytest.mark.parametrize("breaker,rule", BREAKERS, ids=lambda x: x.__name__)
def test_rule_fails_on_broken_file(built, tmp_path, breaker, rule):
    wb = openpyxl.load_workbook(built[0])
    breaker(wb)
    path = tmp_path / "broken.xlsx"
    wb.save(path)
    assert rule(openpyxl.load_workbook(path)) != []


def test_text_stays_text(tmp_path, catalog):
    """Rule 15: a catalogue name or description that looks like a formula is written as text."""
    from workbook.writer import build
    from workbook.scenario import load_scenarios
    from tests.writer.conftest import SHIPPED

    gpu = catalog.gpus["h800"].model_copy(update={"name": "=HYPERLINK(\"http://x\")"})
    evil = catalog.model_copy(update={"gpus": {**catalog.gpus, "h800": gpu}})
    path = tmp_path / "evil.xlsx"
    build(path, load_scenarios(SHIPPED[:1]), evil, [])
    ws = openpyxl.load_workbook(path)["Hardware"]
    cells = [c for row in ws.iter_rows() for c in row if c.value == "=HYPERLINK(\"http://x\")"]
    assert cells and all(c.data_type == "s" for c in cells)


@pytest.mark.parametrize("formula, ok", [
    ("=DATE(YEAR(F12),MONTH(F12)+1,1)", True),  # the Cash Flow sheet's next month
    ("=EDATE(F12,1)", False),  # not on the list (pycel computes it wrong)
    ("=TODAY()", False),  # volatile
])
def test_date_functions_of_the_cash_flow_are_allowed(formula, ok):
    wb = openpyxl.Workbook()
    wb.active["F20"] = formula
    assert (rules.allowed_functions(wb) == []) == ok
