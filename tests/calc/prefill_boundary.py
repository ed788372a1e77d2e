"""A serving scenario whose first load refinement prefills a fractional batch of prompts (srv_ss1_pf) whose
prompt tokens, batch x prompt, sit ``delta`` above ``k`` chunks (docs/serving.md "Prefill", whole tokens).

The refinement starts from a batch of 1, so its prefill batch is the arrival rate x scheduler steps x the
one-request decode step, linear in the rate: the rate that puts batch x prompt at k C + delta is solved
from one calc run and checked on a second."""

from __future__ import annotations

from workbook.calc import compute
from workbook.scenario.model import Scenario

PROMPT = 1000  # tokens: a chunk (4,096 for vllm-0.6.0) is never a whole number of prompts


def _scenario(name: str, rate: float) -> Scenario:
    return Scenario(name=name, model="llama-3-70b", gpu="h100", purpose="serving",
                    inference=dict(serving_model="engine", engine="vllm-0.6.0", tp=4, prompt_tokens=PROMPT,
                                   output_tokens=200, batch=32, arrival_rate_rps=rate))


def boundary_scenario(catalog, delta: float, *, k: int = 2, name: str = "prefill-boundary") -> tuple[Scenario, float]:
    """(scenario, k C): the srv_ss1_pf batch's prompt tokens are k C + delta (within delta / 10, a few ulps)."""
    one = compute(_scenario(name, 1.0), catalog)
    C = one["srv_eng_prefill_chunk_tokens"]
    per_rate = one["srv_eng_scheduler_steps"] * one["srv_ss1_lo_step_s"]  # batch per request/s (DP 1, 1 replica)
    sc = _scenario(name, (k * C + delta) / PROMPT / per_rate)
    raw = compute(sc, catalog)["srv_ss1_pf_batch"] * PROMPT
    assert abs(raw - (k * C + delta)) < delta / 10, (raw, k * C + delta)
    return sc, k * C
