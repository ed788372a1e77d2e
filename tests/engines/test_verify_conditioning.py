"""verify's conditioning class: a numeric difference amplified by a subtraction, at a cell whose every input agrees,
is listed apart from the mismatches; an error value, a large difference or a wrong input never is."""

from __future__ import annotations

from pathlib import Path

from workbook.verify import Mismatch, Report, _classify_conditioning, precedents


def _report(*ms: Mismatch) -> Report:
    r = Report(path=Path("x.xlsx"), engines=["gnumeric"])
    r.mismatches = list(ms)
    return r


def _m(cell: str, formula: str, got, want, sheet: str = "Inference") -> Mismatch:
    return Mismatch("gnumeric", sheet, cell, "", formula, got, want)


def test_precedents_reads_cells_not_names_or_strings():
    assert precedents("Inference", "=MIN('KV Cache'!G62,G999-(G1000-1)*c_two)&\"A1\"+Plan!$F$4") == [
        ("KV Cache", "G62"), ("Inference", "G999"), ("Inference", "G1000"), ("Plan", "F4")]


def test_amplified_difference_and_what_reads_it_are_conditioning():
    a = _m("G985", "=MIN('KV Cache'!G62,G983-(G984-1)*'KV Cache'!G62)", 755.1223, 755.1209)
    b = _m("G993", "=G985*G70", 1.510301, 1.510300)
    r = _report(b, a)
    _classify_conditioning("gnumeric", r)
    assert r.mismatches == [] and {m.cell for m in r.conditioned} == {"G985", "G993"}


def test_error_value_large_difference_or_a_bad_input_stay_mismatches():
    err = _m("F105", "=F79*(F80-1)", "#NUM!", 0.0)
    big = _m("F106", "=F79*2", 2.0, 1.0)
    reads_bad = _m("F107", "=F106-F1", 1.00000001, 1.0)
    r = _report(err, big, reads_bad)
    _classify_conditioning("gnumeric", r)
    assert r.conditioned == [] and len(r.mismatches) == 3
