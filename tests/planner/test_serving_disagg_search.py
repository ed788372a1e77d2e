"""Disaggregated candidates of the serving search (workbook.planner.serving_disagg_search): the shipped
DeepSeek-V3 request recommends disaggregated pools over co-located groups, every disaggregated option
is sized as reference.serving_disagg.size_pools sizes it and as the full calculation of its workbook
column gives it, the switch serving.disaggregation (off, auto, only), concurrency loads, rejected
reasons with their margins, and the request field's validation."""

from __future__ import annotations

import math

import pytest

from tests.planner.helpers import CATALOG, assert_column_is_serving_plan
from tests.planner.test_serving_search import serving_request
from workbook.calc import compute
from workbook.errors import InputError
from workbook.planner.plan import plan_request
from workbook.planner.request import load_request
from workbook.planner.serving_search import HOURS_PER_MONTH, ServingRejection, context, plan_scenario, search_serving
from workbook.reference import serving_disagg as sd
from workbook.reference import serving_load as sl
from workbook.units import MS_PER_S

DEEPSEEK = "catalog/requests/serve-deepseek-v3-h800.yaml"


@pytest.fixture(scope="module")
def deepseek():
    req = load_request(DEEPSEEK, CATALOG)
    return req, search_serving(req, CATALOG)


def _size_pools_of_column(req, plan) -> dict:
    """size_pools called afresh from the plan's workbook column (its scenario resolved by the calc layer)."""
    from workbook.calc.serving_memory import capacity, engine_of
    from workbook.calc.serving_memory import ep_overlap_frac
    from workbook.calc.serving_step import decode_kwargs
    from workbook.reference.serving_shape import model_shape

    sc = plan_scenario(req, plan, {"model": req.model})
    ctx = context(sc, CATALOG)
    inf, eng = ctx.s.inference, engine_of(ctx)
    assert inf.disaggregated == "on" and inf.prefill_ep == plan.layout.prefill_ep and inf.ep == plan.layout.ep
    assert inf.ep_overlap_frac is None and ep_overlap_frac(ctx) == eng.ep_overlap_frac == 1.0  # blank: the engine's
    cap = sl.batch_capacity(engine=eng, kv_tokens=capacity(ctx)["kv_tokens"], prompt_tokens=inf.prompt_tokens,
                            output_tokens=inf.output_tokens)
    kw = decode_kwargs(ctx)
    return sd.size_pools(model_shape(ctx.model), hw=kw["hw"], engine=eng, arrival_rate_per_s=inf.arrival_rate_rps,
                         prompt_tokens=inf.prompt_tokens, output_tokens=inf.output_tokens,
                         decode_batch_cap=max(cap, 1.0), tpot_target_s=inf.tpot_target_ms / MS_PER_S,
                         ttft_target_s=inf.ttft_target_ms / MS_PER_S, cache_hit_frac=inf.cache_hit_frac, tp=inf.tp, ep=inf.ep, prefill_ep=inf.prefill_ep,
                         redundant_experts=inf.redundant_experts, weight_precision=inf.weight_precision,
                         kv_precision=inf.kv_precision, ep_overlap_frac=ep_overlap_frac(ctx),
                         gpu_hour_usd=ctx.s.cost.gpu_hour_usd)


def test_the_deepseek_request_recommends_disaggregated_pools(deepseek):
    req, _ = deepseek
    out = plan_request(req, CATALOG)
    sv = out.data["serving"]
    rec, other = sv["recommended"], sv["other_kind"]
    assert sv["status"] == "feasible" and sv["disaggregation"] == "auto"
    assert rec["kind"] == "disaggregated" and other["kind"] == "co-located"
    assert (rec["tp"], rec["prefill_ep"], rec["ep"]) == (1, 16, 256)
    assert rec["num_gpus"] == rec["prefill_gpus"] + rec["decode_gpus"] == 1776
    assert rec["prefill_gpus"] == rec["prefill_instances"] * 16 and rec["decode_gpus"] == rec["decode_instances"] * 256
    assert rec["usd_per_month"] == pytest.approx(1776 * 2.0 * HOURS_PER_MONTH, rel=1e-12)
    assert rec["ttft_ms"] <= 2000 and rec["tpot_ms"] <= 50 and rec["load_rps"] == 1800.2
    assert other["usd_per_month"] > rec["usd_per_month"] and other["num_gpus"] == 3328 and other["tpot_ms"] <= 50
    assert [sc.name for sc in out.scenarios] == [rec["scenario"], other["scenario"]]
    assert out.scenarios[0].inference.disaggregated == "on" and out.scenarios[1].inference.disaggregated == "off"
    assert {sc.inference.weight_precision for sc in out.scenarios} == {"fp8"}  # serving.weight_precision


def test_ep_spans_whole_nodes_only_with_allow_cross_node_ep(deepseek):
    from workbook.planner.serving_search import layouts

    req, _ = deepseek
    model, gpu = CATALOG.model("deepseek-v3"), CATALOG.gpu("h800")
    inside: dict = {}
    near = req.model_copy(update={"constraints": req.constraints.model_copy(update={"allow_cross_node_ep": False})})
    assert {(x.tp, x.ep) for x in layouts(near, model, gpu, inside)} == {
        (tp, ep) for tp in (1, 2, 4, 8) for ep in (1, 2, 4, 8) if tp * ep <= 8}
    assert inside["tp_ep_outside_node"][0] == 6  # EP 8 at TP 2-8, EP 4 at TP 4-8, EP 2 at TP 8
    across = layouts(req, model, gpu)
    assert len(across) == 36 and max(x.ep for x in across) == 256
    assert all(x.tp * x.ep <= 8 or x.tp * x.ep % 8 == 0 for x in across)


def test_the_other_kind_on_another_gpu_is_one_column():
    # disaggregated H800 pools win; the best co-located plan is the H20's best: one column for both roles (a 4 s TTFT
    # target: since TTFT under load counts the prefill queue, the H20 misses 2 s at this load)
    req = serving_request(model="llama-3-70b", gpus=("h800", "h20"), disaggregation="auto", prompt_tokens=4096,
                          output_tokens=128, ttft_ms=4000, requests_per_s=20)
    out = plan_request(req, CATALOG)
    sv = out.data["serving"]
    rec, other = sv["recommended"], sv["other_kind"]
    assert (rec["gpu"], rec["kind"], other["gpu"], other["kind"]) == ("h800", "disaggregated", "h20", "co-located")
    assert sv["alternatives"]["h20"]["scenario"] == other["scenario"]
    assert [sc.name for sc in out.scenarios] == [rec["scenario"], other["scenario"]]


def test_every_disaggregated_option_is_sized_as_size_pools_sizes_it(deepseek):
    req, res = deepseek
    dis = [p for p in res.plans if p.kind == "disaggregated"]
    assert len(dis) >= 10 and res.disaggregated == 324
    for p in dis[:3] + dis[-2:]:
        want = _size_pools_of_column(req, p)
        assert p.pools == want
        assert p.num_gpus == want["total_gpus"] == want["prefill_gpus"] + want["decode_gpus"]
        assert p.ttft_ms == pytest.approx(want["ttft_s"] * MS_PER_S, rel=1e-12)
        assert p.tpot_ms == pytest.approx(want["tpot_s"] * MS_PER_S, rel=1e-12) and p.tpot_ms <= req.serving.tpot_ms
        assert p.usd_per_1M_tokens == pytest.approx(want["cost_usd_per_1M_output_tokens"], rel=1e-12)
        # one decode request more per rank misses the TPOT target, or the rank's KV pool holds no more
        assert want["decode_batch_per_rank"] >= 1


def test_the_column_of_a_disaggregated_plan_is_the_search(deepseek):
    req, res = deepseek
    rec = res.plans[0]
    worst = [p for p in res.plans if p.kind == "disaggregated"][-1]
    for p in (rec, worst):
        q = compute(plan_scenario(req, p, {"model": req.model}), CATALOG)
        assert q["srv_dis_flag"] == 1 and q["srv_dis_gpus"] == p.num_gpus
        assert (q["srv_dis_pf_gpus"], q["srv_dis_dec_gpus"]) == (p.pools["prefill_gpus"], p.pools["decode_gpus"])
        assert q["srv_dis_batch"] == p.pools["decode_batch_per_rank"]
        assert_column_is_serving_plan(q, p)


def test_the_switch_off_auto_only():
    base = dict(model="llama-3-8b", requests_per_s=40)
    off = search_serving(serving_request(**base), CATALOG)
    auto = search_serving(serving_request(disaggregation="auto", **base), CATALOG)
    only = search_serving(serving_request(disaggregation="only", **base), CATALOG)
    assert off.disaggregated == 0 and {p.kind for p in off.plans} == {"co-located"}
    assert only.layouts == 0 and only.plans and {p.kind for p in only.plans} == {"disaggregated"}
    assert auto.layouts == off.layouts and auto.disaggregated == only.disaggregated == 4  # TP 1, 2, 4, 8
    assert len(auto.plans) == len(off.plans) + len(only.plans)
    assert [p.key() for p in auto.plans] == sorted(p.key() for p in off.plans + only.plans)
    # the request's own figures: a dense model's prefill pool has EP 1
    assert {p.layout.prefill_ep for p in only.plans} == {1}
    data = plan_request(serving_request(disaggregation="auto", **base), CATALOG).data["serving"]
    assert data["other_kind"]["kind"] != data["recommended"]["kind"]
    assert plan_request(serving_request(**base), CATALOG).data["serving"]["other_kind"] is None


def test_a_concurrency_load_keeps_that_many_requests_decoding():
    req = serving_request(disaggregation="only", concurrency=3000)
    p = search_serving(req, CATALOG).plans[0]
    assert p.pools["decode_concurrency"] == pytest.approx(3000, rel=1e-12)
    assert p.pools["decode_instances"] == math.ceil(3000 / p.pools["decode_requests_per_instance"] - 1e-9)
    q = compute(plan_scenario(req, p, {"model": req.model}), CATALOG)
    assert q["srv_dis_concurrency"] == pytest.approx(3000, rel=1e-12) and q["srv_gpus_in_use"] == p.num_gpus


def test_rejected_disaggregated_options_name_the_check_and_by_how_much():
    tpot = search_serving(serving_request(disaggregation="only", tpot_ms=2), CATALOG)
    assert not tpot.plans
    dec = [r for r in tpot.rejections if "decode" in r.layout]
    assert dec and all(r.check == "serving_tpot_target" and r.value > 2 == r.limit and r.excess_frac > 0 for r in dec)
    ttft = search_serving(serving_request(disaggregation="only", ttft_ms=1), CATALOG)
    pf = [r for r in ttft.rejections if "prefill" in r.layout]
    assert len(pf) == 4 and all(r.check == "serving_ttft_target" and r.value > 1 for r in pf)
    big = search_serving(serving_request(disaggregation="only", requests_per_s=1e5, max_gpus=64), CATALOG)
    assert {r.check for r in big.rejections} == {"serving_max_gpus"}
    assert all(isinstance(r, ServingRejection) and r.value > 64 == r.limit for r in big.rejections)
    fit = search_serving(serving_request(model="llama-3-70b", gpus=("h20",), disaggregation="only",
                                         requests_per_s=2), CATALOG)
    pf_fit = [r for r in fit.rejections if r.check == "serving_prefill_weights_fit"]
    assert pf_fit and all(r.value > r.limit and r.unit == "GiB" and "TP1" in r.layout for r in pf_fit)


def test_infeasible_advice_searches_the_disaggregated_options_again():
    req = serving_request(disaggregation="only", ttft_ms=1)
    sv = plan_request(req, CATALOG).data["serving"]
    assert sv["status"] == "infeasible"
    change = {c["field"]: c for c in sv["infeasible"]["changes"]}["serving.ttft_ms"]
    looser = req.model_copy(update={"serving": req.serving.model_copy(update={"ttft_ms": change["to"]})})
    got = search_serving(looser, CATALOG).plans[0]
    assert got.kind == "disaggregated" and got.num_gpus == change["num_gpus"]


def test_the_request_field_is_validated(tmp_path):
    from tests.planner.test_request import GOOD, _write

    serving = ("serving:\n  requests_per_s: 1\n  prompt_tokens: 10\n  output_tokens: 10\n  ttft_ms: 100\n"
               "  tpot_ms: 10\n  disaggregation: sometimes\n")
    with pytest.raises(InputError) as exc:
        load_request(_write(tmp_path, GOOD + serving), CATALOG)
    err = exc.value
    assert err.field == "serving.disaggregation" and err.line == 15
    assert all(v in str(err) for v in ("'auto'", "'off'", "'only'"))
    ok = load_request(_write(tmp_path, GOOD + serving.replace("sometimes", "only")), CATALOG)
    assert ok.serving.disaggregation == "only"
    assert load_request(_write(tmp_path, GOOD + serving.replace("  disaggregation: sometimes\n", "")),
                        CATALOG).serving.disaggregation == "off"
