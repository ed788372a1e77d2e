"""run.calibrate by domain (``validate --cv``): the training points fit the training factors, the serving
points only the serving models' own factors, as serving copies; a serving point never moves a training one."""

from __future__ import annotations

import numpy as np
import pytest

from workbook.calibrate.factors import DOMAINS, KINDS, Factor, domain_of
from workbook.calibrate.run import calibrate, cross_validate_stages
from workbook.catalog import load_catalog
from workbook.validation import DEFAULT_DIR

TRAIN = [DEFAULT_DIR / "llama3-405b-h100.yaml", DEFAULT_DIR / "nemo-24.07-h100-fp8.yaml"]
SERVE = [DEFAULT_DIR / "serving-llama3-70b-h100.yaml"]


@pytest.fixture(scope="module")
def both():
    return calibrate(TRAIN + SERVE, load_catalog(), cv="publication", require_factors=False, by_domain=True)


def test_every_kind_has_one_domain():
    assert sorted(k for kinds in DOMAINS.values() for k in kinds) == sorted(KINDS)
    assert domain_of("step_time") == "training" and domain_of("tpot") == "serving"


def test_serving_points_do_not_move_the_training_fit(both):
    alone = calibrate(TRAIN, load_catalog(), cv="publication", require_factors=False)
    train = [i for i, p in enumerate(both.ev.points) if domain_of(p.kind) == "training"]
    assert np.allclose(both.ours_fit[train], alone.ours_fit)
    assert np.allclose(both.ours_cv[train], alone.ours_cv)
    gemm = Factor("efficiency.gemm_efficiency", "h100")
    assert both.fit.values[gemm] == pytest.approx(alone.fit.values[gemm])


def test_serving_fits_only_its_own_factors_as_serving_copies(both):
    serving = both.stages[1]
    assert serving.candidates and all(f.domain == "serving" for f in serving.candidates)
    shared = {(f.spec_name, f.record) for f in both.stages[0].candidates}
    assert not shared & {(f.spec_name, f.record) for f in serving.candidates}
    assert all(f.label.endswith(" (serving)") for f in serving.candidates)


def test_a_serving_copy_moves_serving_scenarios_only(both):
    ev = both.ev
    hbm = Factor("efficiency.hbm_efficiency", "h100", "serving")
    touched = {domain_of(p.kind) for p in ev.points if ev.touches(p.scenario, hbm)}
    assert touched == {"serving"}


def test_staged_cross_validation_exact_agrees_with_one_step(both):
    exact = cross_validate_stages(both.ev, both.stages, "publication", exact=True)
    pub = both.ev.published
    assert np.allclose(exact / pub, both.ours_cv / pub, atol=0.01)
