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
    assert data["factors"] == [] and all(p["cross_validated"] == p["catalog"] for p in data["points"])


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
