"""`workbook validate --cv`: leave-one-publication-out, never splitting a publication; per kind; JSON; speed."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from workbook.calibrate.run import calibrate
from workbook.catalog import load_catalog
from workbook.cli import main
from workbook.validation import DEFAULT_DIR

FILES = ["llama1-a100.yaml", "korthikanti-gpt3-175b.yaml"]


def _copies(tmp_path, pubs: list[str]) -> list:
    out = []
    for name, pub in zip(FILES, pubs):
        p = tmp_path / name
        p.write_text(f"publication: {pub}\n" + (DEFAULT_DIR / name).read_text().replace("\npublication: ", "\n# was: "))
        out.append(p)
    return out


def test_a_publication_is_never_split_between_fit_and_test(tmp_path):
    """Two files of one publication hold every point that constrains the A100's factor: left out together,
    nothing is fitted, so their prediction is the catalogue's."""
    cal = calibrate(_copies(tmp_path, ["same", "same"]), load_catalog(), cv="publication")
    assert cal.selection.fitted
    assert np.allclose(cal.ours_cv, cal.ours_catalog)


def test_separate_publications_predict_each_other(tmp_path):
    cal = calibrate(_copies(tmp_path, ["one", "two"]), load_catalog(), cv="publication")
    moved = ~np.isclose(cal.ours_cv, cal.ours_catalog)
    assert moved.any()


@pytest.mark.slow
def test_validate_cv_json_reports_kinds_and_is_fast(capsys):
    t0 = time.perf_counter()
    assert main(["validate", "--cv", "--json"]) == 0
    seconds = time.perf_counter() - t0
    data = json.loads(capsys.readouterr().out)
    assert data["cv_grouping"] == "publication"
    kinds = data["by_kind"]
    assert {"step_time", "gpu_hours", "memory", "tpot", "serving_throughput", "kv_capacity", "all"} <= set(kinds)
    for s in kinds.values():
        assert set(s) == {"catalog", "in_sample", "cross_validated"}
        assert s["cross_validated"]["count"] == s["catalog"]["count"]
    pubs = {p["publication"] for p in data["points"]}
    assert "narayanan2021-ptdp" in pubs
    assert all(p["cross_validated"] is not None for p in data["points"])
    assert seconds < 120, seconds


def test_validate_cv_text(capsys):
    assert main(["validate", "--cv", str(DEFAULT_DIR / "llama1-a100.yaml"), str(DEFAULT_DIR / "params.yaml")]) == 0
    out = capsys.readouterr().out
    assert "leave-one-publication-out" in out and "cross-validated" in out


@pytest.mark.parametrize("flag", ["--cv"])
def test_validate_cv_bad_file_exit_2(tmp_path, flag, capsys):
    bad = tmp_path / "b.yaml"
    bad.write_text((DEFAULT_DIR / "llama1-a100.yaml").read_text().replace("key: train_job_gpu_hours",
                                                                          "key: nope", 1))
    assert main(["validate", flag, str(bad)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_validate_cv_of_points_without_factors_reports_the_catalogue_values(capsys):
    assert main(["validate", "--cv", "--json", str(DEFAULT_DIR / "params.yaml")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {p["file"] for p in data["points"]} == {"params.yaml"}  # the shipped files are fitted, not shown
    assert all(p["cross_validated"] == p["catalog"] for p in data["points"])


@pytest.fixture(scope="module")
def shipped_cv():
    from workbook.validation.cv import cross_validation
    from workbook.validation import default_files

    return cross_validation(default_files(), load_catalog())


def test_validate_cv_redoes_the_shipped_calibration_from_its_priors_on_its_files(shipped_cv):
    """What `validate --cv` measures is the catalogue as shipped: the spec's factors, from the spec's priors (the
    catalogue holds values fitted on every point), fitted on the spec's files only; the full refit is the catalogue."""
    from pathlib import Path

    from workbook.calibrate.shipped import factor_of, load_spec

    spec = load_spec()
    cal = shipped_cv
    assert {f.label for f in cal.selection.fitted} == {factor_of(sf).label for sf in spec.factors}
    assert {factor_of(sf): sf.prior for sf in spec.factors} == {f: cal.prior[f] for f in cal.selection.fitted}
    assert {Path(cal.ev.points[i].case.file).name for i in cal.fit_idx} <= set(spec.files)
    pub = cal.ev.published
    assert np.allclose(cal.ours_fit / pub, cal.ours_catalog / pub, atol=2e-3)  # 4 significant digits


def test_a_value_derived_from_a_publication_is_taken_without_it_when_that_publication_is_left_out(shipped_cv):
    """SGLang 0.3.0's 107 us per sequence comes from the SGLang benchmark's own TPOT points (shipped.yaml
    `derived`): predicting that benchmark, the value is 0, the catalogue's value for an engine with no measurement."""
    from workbook.calibrate.factors import Factor

    cal = shipped_cv
    idx = [i for i, p in enumerate(cal.ev.points) if p.case.point.point.startswith("tpot-sglang")]
    assert len(idx) == 4
    without = cal.ev.predict({**cal.fit.values, Factor("engine.cpu_per_seq_us", "sglang-0.3.0"): 0.0}, idx)
    assert np.allclose(cal.ours_cv[idx], without, rtol=1e-3)
    assert np.all(cal.ours_cv[idx] < cal.ours_catalog[idx])  # less CPU time per step: a shorter TPOT


def test_the_one_step_refit_agrees_with_the_exact_refit(tmp_path):
    """validate --cv takes one Gauss-Newton step per fold; solving each fold's least squares gives the same
    left-out predictions to within a percentage point (scripts/accuracy_table.py --exact-check: all files)."""
    from workbook.calibrate.run import cross_validate

    cal = calibrate(_copies(tmp_path, ["one", "two"]), load_catalog(), cv="publication")
    fit_all = [i for i, p in enumerate(cal.ev.points) if not p.case.point.holdout]
    exact = cross_validate(cal.ev, fit_all, cal.candidates, cal.prior, cal.fit, "publication", exact=True)
    pub = cal.ev.published
    assert not np.allclose(cal.ours_cv, cal.ours_catalog)  # the folds did refit
    assert np.allclose(exact / pub, cal.ours_cv / pub, atol=0.01)


def test_error_by_publication_adds_up_to_the_domain_error(shipped_cv):
    """`validate --cv` names where the error sits: one row per publication and domain, whose points add up to the
    domain's, whose point-weighted mean is the domain's mean, and whose shares of the domain's error sum to 1."""
    from workbook.calibrate.report import by_kind, by_publication

    rows = by_publication(shipped_cv)
    kinds = by_kind(shipped_cv)
    for dom in ("training", "serving"):
        mine = [r for r in rows if r["domain"] == dom]
        assert len({r["publication"] for r in mine}) == len(mine)
        whole = kinds[dom]["cross_validated"]
        assert sum(r["count"] for r in mine) == whole["count"]
        assert sum(r["passed"] for r in mine) == whole["passed"]
        mean = sum(r["mean_abs_error_frac"] * r["count"] for r in mine) / whole["count"]
        assert mean == pytest.approx(whole["mean_abs_error_frac"], rel=1e-9)
        assert sum(r["share_of_domain_error"] for r in mine) == pytest.approx(1.0)
        shares = [r["share_of_domain_error"] for r in mine]
        assert shares == sorted(shares, reverse=True)


def test_validate_cv_prints_and_writes_the_error_by_publication(capsys):
    assert main(["validate", "--cv", "--json", str(DEFAULT_DIR / "llama1-a100.yaml")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(r["domain"], r["publication"]) for r in data["by_publication"]] == [("training", "touvron2023-llama")]
    assert main(["validate", "--cv", str(DEFAULT_DIR / "llama1-a100.yaml")]) == 0
    out = capsys.readouterr().out
    assert "error by publication" in out and "touvron2023-llama" in out
