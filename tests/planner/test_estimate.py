"""The early estimate reproduces spec 17.9.4 exactly as the book states it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.planner.helpers import CATALOG, request
from workbook.planner.estimate import early_estimate
from workbook.planner.request import load_request

ROOT = Path(__file__).resolve().parents[2]


def test_17_9_4_from_a_parameter_count():
    req = request(model={"params_total": 70e9}, tokens=3e12, target_days=60, budget_usd=2e6,
                  candidate_gpus=["h800"], price_basis="reserved", early_estimate={"mfu": 0.40})
    e = early_estimate(req, CATALOG.gpu("h800"))
    assert (e["P_total"], e["D_tokens"], e["MFU"]) == (70e9, 3e12, 0.40)
    assert e["C_total_FLOPs"] == pytest.approx(1.26e24, rel=1e-12)
    assert (e["N_mem"], e["N_time"], e["N_chosen"], e["nodes"]) == (15, 615, 640, 80)
    assert (e["TP"], e["PP"], e["DP"]) == (8, 2, 40) and e["M_per_GPU_GB"] == 75.0
    assert round(e["T_actual_days"], 2) == 57.57
    assert e["T_actual_days"] == pytest.approx(1.26e24 / (640 * 989.5e12 * 0.40 * 86400), rel=1e-12)
    assert e["cost_target_USD"] == 1_843_200 and round(e["cost_target_USD"] / 1e6, 2) == 1.84
    assert e["within_budget"] == 1.0 and e["budget_headroom_USD"] == 156_800


def test_shipped_17_9_4_request_gives_the_book_estimate():
    req = load_request(ROOT / "catalog" / "requests" / "17.9.4-70b-h800.yaml", CATALOG)
    e = early_estimate(req, CATALOG.gpu("h800"), CATALOG.model("llama-3-70b"))
    assert (e["P_total"], e["N_chosen"], e["nodes"], e["MFU"]) == (70e9, 640, 80, 0.40)
    assert e["C_total_FLOPs"] == pytest.approx(1.26e24, rel=1e-12) and round(e["T_actual_days"], 2) == 57.57
    assert e["cost_target_USD"] == 1_843_200


def test_dp_multiple_one_gives_the_spec_rounding_to_tp_pp():
    req = request(model={"params_total": 70e9}, tokens=3e12, target_days=60, candidate_gpus=["h800"],
                  price_basis="reserved", early_estimate={"mfu": 0.40, "dp_multiple": 1})
    assert early_estimate(req, CATALOG.gpu("h800"))["N_chosen"] == 624


def test_mfu_from_the_book_lookup_when_not_given():
    req = request(model={"params_total": 70e9}, tokens=3e12, target_days=60, candidate_gpus=["h800"])
    assert early_estimate(req, CATALOG.gpu("h800"))["MFU"] == 0.35  # dense multi-node, low end
