"""The shipped factors of catalog/efficiency.yaml named in catalog/calibration/shipped.yaml are the output of
`workbook calibrate` on the shipped fit points (scripts/calibrate_shipped.py rewrites them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.calibrate.factors import Factor
from workbook.calibrate.shipped import AGREEMENT_RTOL, factor_of, rewrite_efficiency, run_shipped
from workbook.catalog import load_catalog
from workbook.catalog.efficiency import load_efficiency
from workbook.errors import InputError


@pytest.fixture(scope="module")
def shipped():
    return run_shipped()


def test_shipped_factors_equal_the_calibration_of_the_shipped_fit_points(shipped):
    spec, cal = shipped
    cat = load_catalog()
    assert not cal.selection.unconstrained and not cal.selection.undetermined
    for sf in spec.factors:
        f = factor_of(sf)
        fitted = cal.fit.values[f]
        assert f.value(cat) == pytest.approx(fitted, rel=AGREEMENT_RTOL), (
            f"{f.label}: shipped {f.value(cat)}, calibration {fitted:.4g}: run scripts/calibrate_shipped.py")
        assert "calibrated from" in cat.efficiency[f.record].field_sources[f.spec.field]


def test_the_fit_uses_the_spec_priors_not_the_shipped_values(shipped):
    """The prior lives in the spec, so re-running the calibration on its own output does not drift."""
    spec, cal = shipped
    for sf in spec.factors:
        assert cal.prior[factor_of(sf)] == sf.prior


def test_the_fit_points_are_the_spec_files_points_without_holdout(shipped):
    spec, cal = shipped
    files = {Path(p.case.file).name for p in cal.ev.points}
    assert files == set(spec.files)
    assert all(not cal.ev.points[i].case.point.holdout for i in cal.fit_idx)
    assert any(p.case.point.holdout for p in cal.ev.points)


def test_rewrite_keeps_comments_and_loads(tmp_path):
    src = Path(__file__).resolve().parents[2] / "catalog" / "efficiency.yaml"
    f = Factor("efficiency.gemm_efficiency", "a100-80gb")
    text = rewrite_efficiency(src, {f: 0.61234}, {f: "calibrated from x.yaml: test"}, {f: ["a100-40gb", "a800"]})
    out = tmp_path / "efficiency.yaml"
    out.write_text(text)
    recs = load_efficiency(out)
    assert recs["a100-80gb"].gemm_efficiency == 0.6123
    assert recs["a100-80gb"].field_sources["gemm_efficiency"] == "calibrated from x.yaml: test"
    # the GPUs on the same compute die (compute_as) take the value; their source still names the record they follow
    assert recs["a100-40gb"].gemm_efficiency == recs["a800"].gemm_efficiency == 0.6123
    assert "a100-80gb's value" in recs["a800"].field_sources["gemm_efficiency"]
    assert text.splitlines()[0] == src.read_text().splitlines()[0]


def test_a_tied_record_rewritten_alone_is_refused_by_the_loader(tmp_path):
    src = Path(__file__).resolve().parents[2] / "catalog" / "efficiency.yaml"
    f = Factor("efficiency.gemm_efficiency", "a100-80gb")
    out = tmp_path / "efficiency.yaml"
    out.write_text(rewrite_efficiency(src, {f: 0.61234}, {f: "calibrated from x.yaml: test"}))
    with pytest.raises(InputError, match=r"a100-40gb.gemm_efficiency is [0-9.]+ but a100-40gb has compute_as: "
                                         r"a100-80gb .*whose gemm_efficiency is 0.6123") as err:
        load_efficiency(out)
    assert err.value.line is not None and err.value.field == "a100-40gb.gemm_efficiency"
