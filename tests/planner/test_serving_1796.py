"""Spec 17.9.6 (Table 17-137) H800 vs H20 with the serving search. Both choices come from the
engine model (docs/serving.md, vLLM 0.10 profile), the only model the search sizes loads with (the
book's 17.8 roofline has no queueing model, so it is not searched):

- short prompt, long output (256 / 1024 tokens), on-demand prices ($4.00 H800, $1.00 H20): the H20,
  cheaper per month and per 1M output tokens (memory-bound decode; little prefill for its 148 TFLOPS);
  at reserved prices ($2.00 / $0.80) the H800 wins the same load: the book's verdict needs the 4x price gap;
- long prompt, short output (4096 / 128) with TTFT <= 500 ms: the H800, the only GPU that meets the
  TTFT (the H20's prefill of a 4K prompt takes about 0.8 s even at TP8); with TTFT <= 5 s the H20
  carries it for less at on-demand prices, so it is the TTFT target that decides.
"""

from __future__ import annotations

from tests.planner.helpers import CATALOG
from tests.planner.test_serving_search import serving_request
from workbook.planner.plan import plan_request
from workbook.planner.request import load_request
from workbook.planner.serving_search import search_serving

SHORT = dict(model="llama-3-70b", gpus=("h800", "h20"), requests_per_s=20, prompt_tokens=256, output_tokens=1024,
             ttft_ms=2000, tpot_ms=50)
LONG = dict(model="llama-3-70b", gpus=("h800", "h20"), requests_per_s=20, prompt_tokens=4096, output_tokens=128,
            ttft_ms=500, tpot_ms=50)


def test_short_prompt_long_output_picks_the_h20_on_cost_per_token():
    req = load_request("catalog/requests/serve-70b-h20-short-prompt.yaml", CATALOG)
    sv = plan_request(req, CATALOG).data["serving"]
    rec, h800 = sv["recommended"], sv["alternatives"]["h800"]
    assert rec["gpu"] == "h20" and rec["usd_per_1M_tokens"] < h800["usd_per_1M_tokens"]
    assert rec["usd_per_month"] < h800["usd_per_month"]
    assert (rec["tp"], rec["replicas"], rec["num_gpus"]) == (2, 22, 44)
    assert (h800["tp"], h800["replicas"], h800["num_gpus"]) == (4, 4, 16)


def test_at_reserved_prices_the_h800_wins_the_short_prompt_load():
    best = search_serving(serving_request(basis="reserved", **SHORT), CATALOG).plans[0]
    assert best.layout.gpu == "h800"


def test_long_prompt_short_output_with_a_tight_ttft_picks_the_h800():
    for basis in ("on_demand", "reserved", "spot"):
        res = search_serving(serving_request(basis=basis, **LONG), CATALOG)
        assert {p.layout.gpu for p in res.plans} == {"h800"}
        h20 = [r for r in res.rejections if r.gpu == "h20" and r.check != "serving_weights_fit"]
        assert h20 and all(r.check == "serving_ttft_target" and r.value > 500 for r in h20)
    # with a loose TTFT the H20 carries it too, and at on-demand prices for less: the TTFT decides
    loose = search_serving(serving_request(basis="on_demand", **{**LONG, "ttft_ms": 5000}), CATALOG)
    best = loose.best_per_gpu()
    assert best["h20"].usd_per_month < best["h800"].usd_per_month and loose.plans[0].layout.gpu == "h20"
