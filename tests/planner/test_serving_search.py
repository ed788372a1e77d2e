"""The serving search (workbook.planner.serving_search): constructed loads whose answer is known
(k groups' capacity needs k replicas, 2 % more k + 1), rejected reasons, infeasible targets with the
advice confirmed by searching again, a model that needs TP >= 2, the search = the full calculation of
its workbook columns, and a deterministic answer."""

from __future__ import annotations

import json
import math

import pytest

from tests.planner.helpers import CATALOG, assert_column_is_serving_plan
from workbook.calc import compute
from workbook.planner.plan import plan_request
from workbook.planner.request import PlanRequest, load_request
from workbook.planner.serving_search import (HOURS_PER_MONTH, ServingLayout, ServingPlan, ServingRejection, evaluate, layouts,
                                             plan_scenario, search_serving)

CHAT = "catalog/requests/serve-70b-chat.yaml"


def serving_request(model: str = "llama-3-8b", gpus=("h100",), basis: str = "on_demand", max_gpus: int = 16384,
                    **serving) -> PlanRequest:
    sv = {"requests_per_s": 10.0, "prompt_tokens": 1024, "output_tokens": 256, "ttft_ms": 2000, "tpot_ms": 50,
          **serving}
    if "concurrency" in serving or "static_batch" in serving:
        sv.pop("requests_per_s")
    return PlanRequest.model_validate({"title": "serving test", "request_id": "srv-t", "requester": "tests",
                                       "cost_centre": "cc", "model": model, "candidate_gpus": list(gpus),
                                       "price_basis": basis, "serving": sv, "constraints": {"max_gpus": max_gpus}})


def _one(req: PlanRequest, tp: int = 1, gpu: str = "h100"):
    return evaluate(req, ServingLayout(gpu, tp, 1, "vllm-0.10"), CATALOG, {"model": req.model})


def test_the_chat_request_recommends_eight_h800_tp4_groups():
    out = plan_request(load_request(CHAT, CATALOG), CATALOG)
    sv = out.data["serving"]
    rec = sv["recommended"]
    assert sv["status"] == "feasible" and (rec["gpu"], rec["tp"], rec["ep"], rec["replicas"]) == ("h800", 4, 1, 8)
    assert rec["num_gpus"] == 32 and rec["usd_per_month"] == pytest.approx(32 * 2.0 * HOURS_PER_MONTH, rel=1e-12)
    assert rec["ttft_ms"] <= 2000 and rec["tpot_ms"] <= 50 and rec["load_rps"] == pytest.approx(20)
    alt = sv["alternatives"]["h20"]
    assert alt["usd_per_month"] > rec["usd_per_month"] and alt["tpot_ms"] <= 50
    assert [r["check"] for r in sv["rejected"]] == ["serving_weights_fit"] and sv["rejected"][0]["count"] == 3
    assert [sc.name for sc in out.scenarios] == [rec["scenario"], alt["scenario"]]


def test_search_equals_the_full_calculation_of_its_columns():
    req = load_request(CHAT, CATALOG)
    res = search_serving(req, CATALOG)
    for p in res.plans:
        q = compute(plan_scenario(req, p, {"model": req.model}), CATALOG)
        assert_column_is_serving_plan(q, p)
        assert q["srv_load_rate_rps"] == pytest.approx(p.group_rate_rps, rel=1e-12)


def test_plans_rank_by_cost_per_month_then_per_token():
    res = search_serving(load_request(CHAT, CATALOG), CATALOG)
    keys = [(p.usd_per_month, p.usd_per_1M_tokens) for p in res.plans]
    assert keys == sorted(keys) and len(keys) == 5


@pytest.mark.parametrize("k", [1, 3])
def test_k_groups_capacity_needs_k_replicas_and_two_percent_more_one_more(k):
    one = _one(serving_request())
    assert isinstance(one, ServingPlan)
    r = one.max_group_rate_rps
    exact = _one(serving_request(requests_per_s=k * r))
    more = _one(serving_request(requests_per_s=1.02 * k * r))
    assert exact.replicas == k and more.replicas == k + 1
    assert exact.ttft_ms <= 2000 and exact.tpot_ms <= 50 and more.tpot_ms < exact.tpot_ms


def test_concurrency_load_by_littles_law():
    one = _one(serving_request())
    b = one.max_group_batch
    n = int(math.floor(3 * b))
    p = _one(serving_request(concurrency=n))
    assert p.replicas == 3 and p.group_batch == pytest.approx(n / 3, rel=1e-6)
    q = _one(serving_request(concurrency=int(math.ceil(3.02 * b))))
    assert q.replicas == 4
    # the column carries the rate that holds the concurrency; its batch is the same
    req = serving_request(concurrency=n)
    calc = compute(plan_scenario(req, p, {"model": req.model}), CATALOG)
    assert calc["srv_load_batch"] == pytest.approx(n / 3, rel=1e-6) and calc["hard_failures_count"] == 0


def test_a_model_that_needs_tp2_to_fit():
    req = serving_request(model="llama-3-70b", gpus=("h20",), requests_per_s=2)
    res = search_serving(req, CATALOG)
    by_tp = {r.layout: r for r in res.rejections}
    tp1 = by_tp["h20 TP1 (vllm-0.10)"]
    assert tp1.check == "serving_weights_fit" and tp1.value > tp1.limit and tp1.unit == "GiB"
    assert min(p.layout.tp for p in res.plans) == 2


def test_rejected_reasons_name_the_check_and_by_how_much():
    kv = evaluate(serving_request(model="llama-3-70b", gpus=("h800",), prompt_tokens=8192, output_tokens=128),
                  ServingLayout("h800", 2, 1, "sglang-0.4"), CATALOG, {"model": "llama-3-70b"})
    assert isinstance(kv, ServingRejection) and kv.check == "serving_kv_holds_request"
    assert kv.value == 8320 and kv.limit < kv.value
    tpot = _one(serving_request(tpot_ms=2))
    assert tpot.check == "serving_tpot_target" and tpot.value > 2 and tpot.limit == 2 and tpot.excess_frac > 0
    ttft = _one(serving_request(ttft_ms=1))
    assert ttft.check == "serving_ttft_target" and ttft.value > 1 and ttft.tpot_ms <= 50
    big = _one(serving_request(requests_per_s=1e5, max_gpus=64))
    assert big.check == "serving_max_gpus" and big.value > 64 and big.limit == 64


def test_unmet_targets_are_infeasible_with_confirmed_advice():
    req = serving_request(ttft_ms=1)
    out = plan_request(req, CATALOG)
    sv = out.data["serving"]
    assert sv["status"] == "infeasible" and out.scenarios == [] and "no serving plan" in out.data["no_workbook"]
    change = {c["field"]: c for c in sv["infeasible"]["changes"]}["serving.ttft_ms"]
    looser = req.model_copy(update={"serving": req.serving.model_copy(update={"ttft_ms": change["to"]})})
    got = search_serving(looser, CATALOG)
    assert got.plans and got.plans[0].num_gpus == change["num_gpus"]
    # below the floor (the smallest TTFT of any layout that meets the TPOT target) nothing carries the load
    floor = min(r.ttft_ms for r in search_serving(req, CATALOG).rejections if r.ttft_ms is not None)
    tighter = req.model_copy(update={"serving": req.serving.model_copy(update={"ttft_ms": floor * 0.999})})
    assert not search_serving(tighter, CATALOG).plans and change["to"] >= floor
    assert sv["infeasible"]["why"][0]["check"] == "serving_ttft_target"


def test_tpot_advice_and_another_gpu():
    req = serving_request(model="llama-3-70b", gpus=("l40s",), tpot_ms=20, requests_per_s=2)
    sv = plan_request(req, CATALOG).data["serving"]
    assert sv["status"] == "infeasible" and sv["rejected"][0]["check"] == "serving_tpot_target"
    change = {c["field"]: c for c in sv["infeasible"]["changes"]}["serving.tpot_ms"]
    looser = req.model_copy(update={"serving": req.serving.model_copy(update={"tpot_ms": change["to"]})})
    assert search_serving(looser, CATALOG).plans[0].num_gpus == change["num_gpus"] and change["to"] == 27.2
    others = {o["gpu"] for o in sv["infeasible"]["other_gpus"]}
    assert {"h100", "h800"} <= others
    for o in sv["infeasible"]["other_gpus"][:2]:
        alt = req.model_copy(update={"candidate_gpus": [o["gpu"]]})
        assert search_serving(alt, CATALOG).plans[0].num_gpus == o["num_gpus"]


def test_moe_layouts_take_ep_inside_a_node():
    req = serving_request(model="mixtral-8x7b", gpus=("h100",), requests_per_s=5)
    removed: dict = {}
    lays = layouts(req, CATALOG.model("mixtral-8x7b"), CATALOG.gpu("h100"), removed)
    pairs = {(x.tp, x.ep) for x in lays}
    assert pairs == {(tp, ep) for tp in (1, 2, 4, 8) for ep in (1, 2, 4, 8) if tp * ep <= 8}
    assert removed["tp_ep_outside_node"][0] == 16 - len(pairs)
    res = search_serving(req, CATALOG)
    assert res.layouts == len(pairs) and any(p.layout.ep > 1 for p in res.plans)
    for p in [res.plans[0], next(p for p in res.plans if p.layout.ep > 1)]:
        q = compute(plan_scenario(req, p, {"model": req.model}), CATALOG)
        assert q["hard_failures_count"] == 0 and q["srv_gpus_in_use"] == p.num_gpus
        assert q["infer_usd_per_1M_tokens"] == pytest.approx(p.usd_per_1M_tokens, rel=1e-12)


def test_the_answer_is_deterministic():
    req = load_request(CHAT, CATALOG)
    a = json.dumps(plan_request(req, CATALOG).data, sort_keys=True)
    b = json.dumps(plan_request(req, CATALOG).data, sort_keys=True)
    assert a == b


def test_the_requests_engine_profile_is_searched_and_written():
    req = serving_request(engine="sglang-0.4")
    res = search_serving(req, CATALOG)
    assert {p.layout.engine for p in res.plans} == {"sglang-0.4"}
    sc = plan_scenario(req, res.plans[0], {"model": req.model})
    assert sc.inference.engine == "sglang-0.4" and sc.inference.replicas == res.plans[0].replicas
    default = search_serving(serving_request(), CATALOG)
    assert {p.layout.engine for p in default.plans} == {"vllm-0.10"}


def test_a_static_batch_takes_the_groups_whose_largest_static_batch_runs_it():
    """Per layout the largest static batch one group runs within both targets (srv_static_max_batch of the
    column); B of k such batches needs k groups, one request more k + 1, each running ceil(B / k)."""
    one = _one(serving_request(static_batch=1))
    assert isinstance(one, ServingPlan) and one.replicas == 1 and one.group_batch == 1
    bmax = int(one.max_group_batch)
    assert bmax > 1
    exact = _one(serving_request(static_batch=3 * bmax))
    more = _one(serving_request(static_batch=3 * bmax + 1))
    assert (exact.replicas, exact.group_batch) == (3, bmax)
    assert (more.replicas, more.group_batch) == (4, math.ceil((3 * bmax + 1) / 4))
    assert exact.ttft_ms <= 2000 and exact.tpot_ms <= 50 and exact.static_wall_s > exact.ttft_ms / 1000
    # a bigger batch per group takes longer to its first token and steps slower
    assert exact.ttft_ms > one.ttft_ms and exact.tpot_ms > one.tpot_ms


def test_a_static_plan_column_is_the_search_and_runs_the_static_load():
    req = serving_request(static_batch=1000)
    p = _one(req)
    q = compute(plan_scenario(req, p, {"model": req.model}), CATALOG)
    assert_column_is_serving_plan(q, p)
    assert q["srv_load_model_position"] == 3 and q["srv_arrival_given_flag"] == 0 and q["srv_static_fits_flag"] == 1
    assert q["srv_st_batch"] == p.group_batch == math.ceil(1000 / p.replicas)
    assert q["srv_static_max_batch"] == p.max_group_batch and q["srv_static_wall_s"] == p.static_wall_s
    assert p.tokens_per_s == pytest.approx(p.replicas * p.group_batch * 256 / p.static_wall_s, rel=1e-12)


def test_a_static_batch_that_batch_one_misses_is_rejected_with_that_batch_figures():
    tpot = _one(serving_request(static_batch=64, tpot_ms=2))
    assert isinstance(tpot, ServingRejection) and tpot.check == "serving_tpot_target" and tpot.limit == 2
    idle = _one(serving_request(static_batch=1))
    assert tpot.value == pytest.approx(idle.tpot_ms, rel=1e-12) and "static batch of 1" in tpot.detail
    ttft = _one(serving_request(static_batch=64, ttft_ms=1))
    assert ttft.check == "serving_ttft_target" and ttft.value == pytest.approx(idle.ttft_ms, rel=1e-12)
    big = _one(serving_request(static_batch=1_000_000, max_gpus=8))
    assert big.check == "serving_max_gpus" and big.value > 8
