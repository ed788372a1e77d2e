"""The fast formulas route: same results as Excel/LibreOffice and as formulas' own ExcelModel."""

from __future__ import annotations

import pytest

from workbook.engines import formulas_engine, libreoffice, recalculate
from workbook.engines.formulas_book import load_book
from workbook.engines.formulas_eval import Evaluator
from workbook.engines.formulas_refs import scan, single_reference

from .conftest import (
    FEATURE_COLS,
    FEATURE_ROWS,
    INDEX_CASES,
    MODEL_DIFFERS,
    STALE,
    build_features,
    feature_expected,
)
from .test_engines import ENGINE_PARAMS, assert_values

pytestmark = pytest.mark.skipif(not formulas_engine.available(), reason="formulas not installed")


@pytest.fixture(scope="module")
def features(tmp_path_factory):
    return build_features(tmp_path_factory.mktemp("features") / "features.xlsx")


@pytest.mark.parametrize("engine", ENGINE_PARAMS)
def test_features(features, engine):
    """Blanks, names over ranges, text, errors, later rows, cross-sheet: both engines, exact types."""
    got = recalculate(features, engine)
    want = feature_expected()
    if engine == "gnumeric":  # its own deviation: a reference to a sheet named with an apostrophe is not parsed
        unparsed = {k for k, v in got.items() if isinstance(v, str) and "''s Sheet'!" in v}
        assert unparsed  # and only those: every other feature is compared below
        want = {k: v for k, v in want.items() if k not in unparsed}
    assert_values({k: got[k] for k in want}, want)


def test_feature_values_are_not_the_cache(features):
    assert STALE not in recalculate(features, "formulas").values()


def test_replay_equals_schedula_pipe(features):
    """The plain replay of each compiled pipe (and INDEX by value) changes nothing."""
    fast = formulas_engine.recalculate(features)
    slow = formulas_engine.recalculate(features, flat=False)
    assert list(fast) == list(slow)
    for key in fast:
        assert type(fast[key]) is type(slow[key]) and fast[key] == slow[key], key


def test_same_as_excelmodel(features):
    """Cell by cell identical to formulas.ExcelModel, except the documented improvements."""
    fast = formulas_engine.recalculate(features)
    model = formulas_engine.recalculate_model(features)
    assert set(fast) == set(model)
    differ = {("Calc Sheet", f"{c}{r}") for r in MODEL_DIFFERS for c in FEATURE_COLS}
    differ.add(("Bob's Sheet", "B1"))
    for key in fast:
        if key in differ:
            assert model[key] == "#REF!" and fast[key] != "#REF!", key
        else:
            assert type(fast[key]) is type(model[key]) and fast[key] == model[key], key
    assert len([k for k in fast if k[0] == "Index"]) == len(INDEX_CASES)


def test_shifted_copies_share_one_compile(features):
    ev = Evaluator(load_book(features))
    ev.bind_all()
    # at most one template per Calc Sheet row (rows of the same structure share one), except
    # F3+$F$3 whose G and H copies need their own; Bob's Sheet B1 and the INDEX cases add one each
    assert ev.stats["templates"] <= len(FEATURE_ROWS) + 1 + len(INDEX_CASES)
    assert ev.stats["single"] <= 2
    assert ev.stats["cells"] == len(FEATURE_ROWS) * len(FEATURE_COLS) + 1 + len(INDEX_CASES)


def test_scan_keys_and_references():
    key_f, occ_f = scan("=Plan!F21*$B$2+'My Sheet'!F$1&\"F9\"+LOG10(F3)", 9, 6)
    key_g, occ_g = scan("=Plan!G21*$B$2+'My Sheet'!G$1&\"F9\"+LOG10(G3)", 9, 7)
    assert key_f == key_g
    assert [o.text for o in occ_g] == ["Plan!G21", "$B$2", "'My Sheet'!G$1", "G3"]
    assert [o.sheet for o in occ_g] == ["Plan", None, "My Sheet", None]
    assert occ_g[0].rect == (21, 7, 21, 7)
    assert scan("=SUM(A1:B3)", 5, 5)[1][0].rect == (1, 1, 3, 2)
    assert scan("=F8", 9, 6)[0] != scan("=$F8", 9, 6)[0]
    assert scan("=1E9+A1B", 1, 1)[1] == []  # neither a number nor a name is a reference
    assert [o.sheet for o in scan("=Übersicht!A1+Sheet2.x!B2+[1]Ext!C3", 1, 1)[1]] == ["Übersicht", "Sheet2.x"]
    ref = single_reference("='Bob''s Sheet'!$A$1:$A$3")
    assert ref is not None and ref.sheet == "Bob's Sheet" and ref.rect == (1, 1, 3, 1)
    assert single_reference("=MAX(Data!A1:A3)") is None


def _book(tmp_path, name, write):
    import xlsxwriter

    path = tmp_path / name
    wb = xlsxwriter.Workbook(str(path))
    write(wb, wb.add_worksheet("S"))
    wb.close()
    return path


def test_cycle_cells_are_none(tmp_path):
    def write(wb, ws):
        ws.write("A1", 1)
        ws.write_formula("B1", "=C1+1", None, STALE)
        ws.write_formula("C1", "=B1+1", None, STALE)
        ws.write_formula("D1", "=A1+1", None, STALE)
        ws.write_formula("E1", "=B1*2", None, STALE)

    got = recalculate(_book(tmp_path, "cycle.xlsx", write), "formulas")
    assert got == {("S", "B1"): None, ("S", "C1"): None, ("S", "D1"): 2.0, ("S", "E1"): None}


def test_row_column_use_their_own_cell(tmp_path):
    """ROW()/COLUMN() depend on the cell: such copies are compiled one by one."""

    def write(wb, ws):
        for col in "ABC":
            ws.write_formula(f"{col}2", "=ROW()*10+COLUMN()", None, STALE)

    got = recalculate(_book(tmp_path, "rowcol.xlsx", write), "formulas")
    assert got == {("S", "A2"): 21.0, ("S", "B2"): 22.0, ("S", "C2"): 23.0}


def test_unsupported_falls_back_to_excelmodel(tmp_path, monkeypatch):
    def write(wb, ws):
        ws.write("A1", 5)
        ws.write_formula("B1", "=A1*2", None, STALE)
        ws.write_formula("C1", "=ISFORMULA(B1)", None, STALE)

    calls = []
    real = formulas_engine.recalculate_model
    monkeypatch.setattr(formulas_engine, "recalculate_model", lambda p: calls.append(p) or real(p))
    path = _book(tmp_path, "isformula.xlsx", write)
    got = recalculate(path, "formulas")
    assert calls == [path]
    assert got[("S", "B1")] == 10.0


@pytest.mark.skipif(not libreoffice.available(), reason="soffice not found")
def test_engines_agree_on_features(features):
    fast = recalculate(features, "formulas")
    lo = recalculate(features, "libreoffice")
    want = feature_expected()
    assert_values({k: lo[k] for k in want}, {k: fast[k] for k in want})


def test_array_formulas_and_formula_like_text(tmp_path):
    """Array and dynamic-array formulas fill their range; the cells reported are formula_cells'."""
    from workbook.engines import formula_cells

    def write(wb, ws):
        ws.write_column("A1", [1, 2, 3])
        ws.write_array_formula("B1:B3", "{=A1:A3*2}", None, STALE)
        ws.write_dynamic_array_formula("C1:C3", "=A1:A3+1", None, STALE)
        ws.write_formula("D1", "=B2+C3", None, STALE)  # reads inside both arrays
        ws.write_string("E1", "=not a formula")

    path = _book(tmp_path, "arrays.xlsx", write)
    got = recalculate(path, "formulas")
    assert set(got) == {("S", c) for c in formula_cells(path)["S"]}
    assert [got[("S", c)] for c in ("B1", "B2", "B3", "C1", "C2", "C3", "D1")] == [2.0, 4.0, 6.0, 2.0, 3.0, 4.0, 8.0]
    assert got[("S", "E1")] == "=not a formula"
    assert got == formulas_engine.recalculate_model(path)


def test_replay_needs_no_fallback(features):
    """Every compiled formula of the feature book replays without falling back to schedula."""
    ev = Evaluator(load_book(features))
    ev.bind_all()
    ev.run()
    fns = {id(n.fn): n.fn for n in ev.nodes}.values()
    assert all(f.plan is not None for f in fns)
    assert sum(f.fallbacks for f in fns) == 0


def test_rows_of_one_structure_share_one_compile(tmp_path):
    """Formulas that differ only in what they refer to (cells on other sheets, defined names)
    share one compiled function, and each copy still reads its own references."""
    import xlsxwriter

    from workbook.engines import formulas_engine

    path = tmp_path / "structure.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    data, calc = wb.add_worksheet("Data"), wb.add_worksheet("Calc")
    data.write_column(0, 0, ["a", "b", "c"])
    data.write_column(0, 1, [1, 2, 3])
    data.write_column(0, 2, [10, 20, 30])
    data.write(5, 0, 7)
    wb.define_name("ids", "=Data!$A$1:$A$3")
    wb.define_name("ones", "=Data!$B$1:$B$3")
    wb.define_name("tens", "=Data!$C$1:$C$3")
    wb.define_name("seven", "=Data!$A$6")
    calc.write(0, 0, "b")
    calc.write_formula(1, 0, '=INDEX(ones,MATCH(A1,ids,0))*seven', None, -1)
    calc.write_formula(2, 0, '=INDEX(tens,MATCH(A1,ids,0))*seven', None, -1)
    calc.write_formula(3, 0, "=Data!B3*A2", None, -1)
    calc.write_formula(4, 0, "=Data!C1*A3", None, -1)
    wb.close()
    ev = Evaluator(load_book(path))
    ev.bind_all()
    assert ev.stats["templates"] == 2 and ev.stats["single"] == 0
    got = formulas_engine.recalculate(path)
    assert [got[("Calc", c)] for c in ("A2", "A3", "A4", "A5")] == [14.0, 140.0, 42.0, 1400.0]
