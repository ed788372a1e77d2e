"""planner.tco_report and plan.plan_request's TCOs without LibreOffice: a request that trains and serves gives the
training plan's TCO as ``tco`` and the serving plan's as ``serving_tco`` (its GPUs owned = the serving plan's GPUs,
the calculation of its column), and the Markdown prints one section for each."""

from __future__ import annotations

import pytest

from tests.planner.helpers import CATALOG, request
from workbook.calc import compute
from workbook.planner.outputs import markdown
from workbook.planner.plan import plan_request
from workbook.planner.tco_report import KEYS, TRAINING_ONLY, keys

SERVING = {"requests_per_s": 2, "prompt_tokens": 1024, "output_tokens": 256, "ttft_ms": 2000, "tpot_ms": 50}


@pytest.fixture(scope="module")
def both():
    return plan_request(request(serving=SERVING), CATALOG)


def test_keys_of_a_serving_tco_leave_out_the_training_runs_owned_cost():
    assert keys("training") == keys("both") == KEYS
    assert set(KEYS) - set(keys("serving")) == set(TRAINING_ONLY) == {"self_build_total_usd"}
    assert "tco_gpus_owned" in keys("serving")


def test_a_request_that_trains_and_serves_gets_both_tcos(both):
    data = both.data
    train, serve = data["tco"], data["serving_tco"]
    rec = data["serving"]["recommended"]
    assert train["purpose"] == "training" and train["scenario"] == data["training"]["recommended"]["scenario"]
    assert train["tco_gpus_owned"] == data["training"]["recommended"]["gpus_billed"]
    assert serve["purpose"] == "serving" and serve["scenario"] == rec["scenario"]
    assert serve["tco_gpus_owned"] == rec["num_gpus"] and "self_build_total_usd" not in serve
    q = compute(next(s for s in both.scenarios if s.name == rec["scenario"]), CATALOG)
    assert {k: serve[k] for k in keys("serving")} == {k: q[k] for k in keys("serving")}
    assert serve["tco_nodes"] == -(-rec["num_gpus"] // CATALOG.gpu(rec["gpu"]).gpus_per_node)
    md = markdown(data, "Draft", None)
    assert md.count("## Owned cluster (buy): TCO of") == 2
    assert f"## Owned cluster (buy): TCO of {serve['scenario']}\nBuying the serving fleet" in md


def test_a_serving_only_request_gets_the_serving_tco_as_tco(both):
    data = plan_request(request(serving=SERVING, tokens=None, target_days=None), CATALOG).data
    assert data["training"] == {"status": "not requested"} and data["serving_tco"] is None
    assert data["tco"] == both.data["serving_tco"]  # the same serving search, the same column
