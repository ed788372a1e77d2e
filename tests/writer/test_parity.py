"""Engine parity, determinism, live edits and a negative test of `workbook verify`."""

from __future__ import annotations

import shutil

import openpyxl
import pytest

from workbook.writer import build
from workbook.writer.layout import value_col
from workbook.engines import available_engines
from workbook.readback import read_workbook
from workbook.scenario.sample import random_scenarios
from workbook.verify import verify

HAVE_LO = "libreoffice" in available_engines()
needs_lo = pytest.mark.skipif(not HAVE_LO, reason="LibreOffice not installed (CI installs it)")
HAVE_GN = "gnumeric" in available_engines()
needs_gn = pytest.mark.skipif(not HAVE_GN, reason="Gnumeric not installed (CI installs it)")


def _assert_ok(report):
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:20])


def _verify_keeping_values(path, engine: str, monkeypatch):
    """``verify(path, [engine])`` and the values the engine computed for it on the way (what a second
    ``recalculate(path, engine)`` would give, without recalculating the workbook again)."""
    import workbook.engines

    real, kept = workbook.engines.recalculate, {}

    def keep(p, e):
        kept[e] = real(p, e)
        return kept[e]

    monkeypatch.setattr(workbook.engines, "recalculate", keep)  # verify looks it up when it runs the engine
    report = verify(path, [engine])
    monkeypatch.setattr(workbook.engines, "recalculate", real)
    return report, kept[engine]


@pytest.mark.slow
def test_verify_default_with_formulas_engine(built):
    _assert_ok(verify(built[0], ["formulas"]))


@pytest.mark.slow
@needs_lo
def test_verify_default_with_libreoffice(built):
    report = verify(built[0], ["libreoffice"])
    _assert_ok(report)
    assert report.cells_checked > 1000


@pytest.mark.slow
@needs_gn
def test_verify_default_with_gnumeric_the_engine_that_follows_excel(built):
    """Every cell equal to the reference and no error value in the engine whose 0^0 is #NUM! as in Excel."""
    report = verify(built[0], ["gnumeric"])
    _assert_ok(report)
    assert report.cells_checked > 1000


def test_default_workbook_passes_the_excel_lint(built):
    from workbook.lint.excel import lint_xlsx

    assert [str(f) for f in lint_xlsx(built[0])] == []


@pytest.mark.slow
def test_default_workbook_is_valid_office_2010_open_xml(built):
    """The Open XML SDK's schema and semantic rules (openxml-audit, a pure-Python port), Office 2010 level."""
    audit = pytest.importorskip("openxml_audit")
    result = audit.OpenXmlValidator(file_format=audit.FileFormat.OFFICE_2010).validate(str(built[0]))
    assert result.is_valid, [str(e) for e in result.errors[:10]]


@pytest.fixture(scope="module")
def random_book(tmp_path_factory, catalog):
    path = tmp_path_factory.mktemp("rnd") / "random.xlsx"
    scenarios = random_scenarios(catalog, 25, seed=2026)
    build(path, scenarios, catalog, [("Scenarios", "25 random, seed 2026")])
    return path, scenarios


def test_random_scenarios_cover_the_space(random_book, catalog):
    _, scs = random_book
    assert {s.gpu for s in scs} == set(catalog.gpus)
    assert {s.training.zero_stage for s in scs} == {0, 1, 2, 3}
    assert {s.training.recompute for s in scs} == {"none", "selective", "full", "op_selective"}
    assert {catalog.models[s.model].moe for s in scs} == {True, False}
    t = [s.training for s in scs]
    assert {(x.memory_model, x.zero_stage) for x in t} == {(m, z) for m in ("tensors", "book") for z in range(4)}
    assert {x.cp for x in t} >= {1, 2} and {x.etp for x in t} >= {None, 1}
    assert {x.pipeline_schedule for x in t} == {"1f1b", "interleaved", "zero_bubble"} and max(x.virtual_stages for x in t) > 1
    for flag in ("sequence_parallel", "flash_attention", "dropout"):
        assert {getattr(x, flag) for x in t} == {"on", "off"}, flag
    assert {x.time_model for x in t} == {"step", "mfu", "measured"}
    assert {x.mfu_peak for x in t} == {"bf16", "precision"}
    assert any(x.mfu_peak == "precision" and x.precision == "fp8" for x in t)  # the FP8 peak as the MFU basis
    assert any(x.measured_TFLOPS_per_gpu and x.time_model != "measured" for x in t)  # typed, not in use
    assert any(x.last_stage_layers for x in t)
    assert any(catalog.models[s.model].moe and s.training.ep > 1 and s.training.time_model == "step" for s in scs)
    # the serving-engine inputs (issue 8): both serving models, every engine profile, serving EP, load
    i = [s.inference for s in scs]
    assert {x.serving_model for x in i} == {"engine", "book"}
    assert {x.engine for x in i} == {p.id for p in catalog.engines.profiles}
    assert any(catalog.models[s.model].moe and s.inference.ep > 1 for s in scs)
    assert {x.disaggregated for x in i} == {"on", "off"}
    # both output-length mixes of an offline run, the fixed one with a run size (its waves are in use)
    assert {x.output_lengths for x in i} == {"exponential", "fixed"}
    assert any(x.output_lengths == "fixed" and x.offline_requests and x.serving_model == "engine" for x in i)
    assert any(x.disaggregated == "on" and x.serving_model == "engine" and x.cache_hit_frac > 0 for x in i)
    for field in ("memory_fraction", "arrival_rate_rps", "ttft_target_ms", "tpot_target_ms",
                  "measured_tokens_per_s_per_gpu", "prefill_ep"):
        assert {getattr(x, field) is None for x in i} == {True, False}, field


@pytest.mark.slow
@needs_lo
def test_verify_random_with_libreoffice(random_book):
    _assert_ok(verify(random_book[0], ["libreoffice"]))


@pytest.mark.slow
@needs_gn
def test_verify_random_with_gnumeric(random_book):
    _assert_ok(verify(random_book[0], ["gnumeric"]))


def test_random_workbook_passes_the_excel_lint(random_book):
    from workbook.lint.excel import lint_xlsx

    assert [str(f) for f in lint_xlsx(random_book[0])] == []


@pytest.mark.slow
def test_verify_random_with_formulas_engine(random_book):
    _assert_ok(verify(random_book[0], ["formulas"]))


def test_build_is_deterministic(tmp_path, catalog):
    from workbook.scenario import load_scenarios
    from tests.writer.conftest import SHIPPED

    a, b = tmp_path / "a" / "wb.xlsx", tmp_path / "b" / "wb.xlsx"  # same name: the footer shows it
    build(a, load_scenarios(SHIPPED), catalog, [("x", "y")])
    build(b, load_scenarios(SHIPPED), catalog, [("x", "y")])
    assert a.read_bytes() == b.read_bytes()


def _cell(wb, sheet, key, col_index):
    from workbook.readback import key_rows

    row = key_rows(wb[sheet])[key]
    return wb[sheet].cell(row + 1, value_col(col_index) + 1)


@pytest.mark.slow
@needs_lo
def test_live_edits_recompute_in_libreoffice(built, tmp_path, monkeypatch):
    """Change a price, the GPU and the token count; LibreOffice must give the edited scenario's values."""
    path = tmp_path / "edited.xlsx"
    shutil.copy(built[0], path)
    wb = openpyxl.load_workbook(path)
    before = openpyxl.load_workbook(path, data_only=True)
    _cell(wb, "Plan", "cost.gpu_hour_usd", 0).value = 9.5
    _cell(wb, "Plan", "gpu", 0).value = "h100"
    _cell(wb, "Plan", "training.tokens", 0).value = 3.0e12
    wb.save(path)
    report, values = _verify_keeping_values(path, "libreoffice", monkeypatch)
    _assert_ok(report)
    cost = _cell(wb, "Cost", "train_cost_usd", 0)
    old = _cell(before, "Cost", "train_cost_usd", 0).value
    new = values[("Cost", cost.coordinate)]
    assert new != pytest.approx(old)
    rb = read_workbook(path)
    assert rb.scenarios[0].gpu == "h100" and rb.scenarios[0].cost.gpu_hour_usd == 9.5


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["formulas"] + (["libreoffice"] if HAVE_LO else []) + (["gnumeric"] if HAVE_GN else []))
def test_altered_formula_fails_verify_and_names_the_cell(built, tmp_path, engine):
    path = tmp_path / "tampered.xlsx"
    wb = openpyxl.load_workbook(built[0])
    target = _cell(wb, "ZeRO", "zero_total_per_gpu_GB", 1)
    target.value = "=(" + target.value[1:] + ")*2"
    const = _cell(wb, "Cost", "train_cost_usd", 0)
    const.value = 123.0
    wb.save(path)
    report = verify(path, [engine])
    assert not report.ok
    cells = {(m.sheet, m.cell) for m in report.mismatches}
    assert ("ZeRO", target.coordinate) in cells
    assert ("Cost", const.coordinate) in cells


@pytest.mark.slow
def test_verify_reads_the_files_own_efficiency_factors(built, tmp_path, monkeypatch):
    """An edited factor on the Efficiency sheet is read back and the reference runs on it: verify
    still agrees, and the step model of that GPU moved."""
    from tests.writer.edits import EditBook

    path = tmp_path / "factors.xlsx"
    shutil.copy(built[0], path)
    b = EditBook(path)
    old = b.efficiency("h800", "attention_efficiency", 0.3)
    b.plan("training.time_model", 0, "step")
    b.save()
    rb = read_workbook(path)
    assert rb.catalog.efficiency["h800"].attention_efficiency == 0.3 != old
    assert rb.scenarios[0].training.time_model == "step"
    report, values = _verify_keeping_values(path, "formulas", monkeypatch)
    _assert_ok(report)
    wb = openpyxl.load_workbook(built[0], data_only=True)  # the cached (unedited) values
    cell = _cell(wb, "Step Time", "st_attention_mb_s", 0)
    assert values[("Step Time", cell.coordinate)] == pytest.approx(cell.value * old / 0.3, rel=1e-6)  # time / efficiency
