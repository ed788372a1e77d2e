"""The build's speed-ups change nothing in the file: the memory-backed scratch folder, the paused garbage
collector, and the caches of the A1 names, the number formats and the text widths."""

from __future__ import annotations

import gc
import math

import pytest
from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer import build, gc_paused, xlsx
from workbook.writer.a1 import cell, quote_sheet


def test_scratch_dir_is_the_ram_folder_only_when_it_is_usable(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx, "RAM_DIR", tmp_path / "missing")
    assert xlsx.scratch_dir() is None
    monkeypatch.setattr(xlsx, "RAM_DIR", tmp_path)
    monkeypatch.setattr(xlsx, "RAM_DIR_MIN_FREE", 1 << 62)  # more than any disk has free
    assert xlsx.scratch_dir() is None
    monkeypatch.setattr(xlsx, "RAM_DIR_MIN_FREE", 0)
    assert xlsx.scratch_dir() == str(tmp_path)


def test_same_file_with_or_without_the_scratch_folder(tmp_path, monkeypatch, catalog):
    from workbook.scenario import load_scenarios
    from tests.writer.conftest import SHIPPED

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    a, b = tmp_path / "a" / "wb.xlsx", tmp_path / "b" / "wb.xlsx"  # same name: the footer shows it
    monkeypatch.setattr(xlsx, "scratch_dir", lambda: None)  # the system's temporary folder
    build(a, load_scenarios(SHIPPED), catalog, [("x", "y")])
    monkeypatch.setattr(xlsx, "scratch_dir", lambda: str(scratch))
    build(b, load_scenarios(SHIPPED), catalog, [("x", "y")])
    assert a.read_bytes() == b.read_bytes()
    assert list(scratch.iterdir()) == []  # xlsxwriter removed its part files


def test_gc_paused_restores_the_collector():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError):
        with gc_paused():
            1 / 0
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()


@pytest.mark.parametrize("row", [0, 1, 8, 99, 1_048_575])
def test_a1_names_match_xlsxwriter(row):
    for col in [*range(0, 800), 16_383]:
        for row_abs in (False, True):
            for col_abs in (False, True):
                assert cell(row, col, row_abs, col_abs) == xl_rowcol_to_cell(row, col, row_abs, col_abs)


def test_quote_sheet():
    assert quote_sheet("Plan") == "Plan"
    assert quote_sheet("Training Memory") == "'Training Memory'"
    assert quote_sheet("KV_Cache2") == "KV_Cache2"
    assert quote_sheet("Cost-2") == "'Cost-2'"


def test_render_keeps_the_sign_of_zero_apart():
    """The renderer's memo must not give -0.0 the text of 0.0 (they are equal keys)."""
    from workbook.writer.numfmt import render

    assert render("#,##0.0", 0.0) == "0.0"
    assert render("#,##0.0", -0.0) == "-0.0"
    assert render("#,##0.0", -0.0) == "-0.0"
    assert render("#,##0.0", 0.0) == "0.0"
    assert render("#,##0", math.nan) == "NaN"


def _gc_calls(monkeypatch, frozen_count: int) -> list[str]:
    """Record gc.freeze / gc.unfreeze calls while get_freeze_count reports *frozen_count*. Counting the real
    permanent generation is not a test: a frozen object that dies (another thread's) lowers the count."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "get_freeze_count", lambda: frozen_count)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    return calls


def test_gc_paused_leaves_frozen_objects_alone(monkeypatch):
    calls = _gc_calls(monkeypatch, frozen_count=657_414)
    with gc_paused():
        assert not gc.isenabled()
    assert calls == []  # someone else's frozen objects are not thawed
    assert gc.isenabled()


def test_gc_paused_ages_the_build_s_objects_when_nothing_is_frozen(monkeypatch):
    calls = _gc_calls(monkeypatch, frozen_count=0)
    with gc_paused():
        pass
    assert calls == ["freeze", "unfreeze"]
    assert gc.isenabled()


def test_gc_paused_keeps_a_disabled_collector_disabled(monkeypatch):
    calls = _gc_calls(monkeypatch, frozen_count=0)
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled() and calls == []
    finally:
        gc.enable()


def _layout():
    from workbook.writer.layout import Layout

    lay = Layout()
    for sheet, name in (("Plan", "a"), ("Plan", "b"), ("Training Memory", "c"), ("Training Memory", "d"),
                        ("Inference", "e")):
        lay.place(sheet, name)
    return lay  # a, b: Plan rows 5, 6; c, d: Training Memory rows 5, 6; e: Inference row 5 (1-based)


@pytest.mark.parametrize("template,index,want", [
    ("={a}+{b}", 0, "=F5+F6"),
    ("=MAX({c},{a})*{d}", 1, "=MAX('Training Memory'!G5,Plan!G5)*'Training Memory'!G6"),
    ("=SUM({c}:{d})", 21, "=SUM('Training Memory'!AA5:'Training Memory'!AA6)"),
    ("=IF({b}>0,\"{}\",{a})", 2, "=IF(Plan!H6>0,\"{}\",Plan!H5)"),
    ("=1", 3, "=1"),
])
def test_render_places_each_column(template, index, want):
    lay = _layout()
    sheet = "Plan" if template == "={a}+{b}" else "Inference"
    assert lay.render(template, index, sheet, 9) == want
    assert lay.render(template, index, sheet, 9) == want  # from the row's chunks


@pytest.mark.parametrize("template,sheet,row,message", [
    ("={x}", "Inference", 9, "unknown name {x}"),
    ("={a}+{x}", "Inference", 9, "unknown name {x}"),
    ("={d}", "Training Memory", 5, "{d} is at or below row 6 of Training Memory"),
    ("={e}", "Training Memory", 9, "{e} on Inference comes after Training Memory"),
    ("A1", "Plan", 9, "template must start with '='"),
])
def test_render_refuses_as_before(template, sheet, row, message):
    from workbook.writer.layout import LayoutError

    lay = _layout()
    for index in (0, 1):
        with pytest.raises(LayoutError, match=message.replace("{", r"\{").replace("}", r"\}")):
            lay.render(template, index, sheet, row)
