"""Prefill/decode disaggregation: separate prefill and decode pools sized from the load
(docs/serving.md "Disaggregated serving"; DeepSeek-V3/R1 inference system, deepseek-ai/open-infra-index
202502OpenSourceWeek day 6: prefill EP32 on 4 nodes, decode EP144 on 18 nodes).

A load is lambda requests/s of S_in prompt tokens (a share h of them hit a prefix cache) and O output
tokens, with TTFT and TPOT targets. An instance of a pool is one serving group of TP·EP GPUs whose EP
ranks are attention-DP ranks (workbook.reference.attention_dp).

Prefill pool (TP, EP_p): a DP rank prefills k = max(1, floor(C/S_new)) prompts of S_new = S_in·(1 − h)
new tokens after s_0 = S_in·h cached ones per step (prefill_time, chunk C = the engine's chunk):

    tok/s per GPU  = k·S_new / t_pf(k) / TP
    K              = k·DP_p                              prompts one instance step clears (DP ranks balanced)
    L              = lambda·S_new / (tok/s per GPU · TP·EP_p)      instances' worth of prefill work
    rho            = L / instances_p                     busy share of the pool
    wait           = rho·t_pf(k) / (2·K·(1 − rho))       Pollaczek–Khinchine (M/D/1) in prompt units
    TTFT           = t_pf(k) + wait                      the queue, then a full step
    instances_p    = max(floor(L) + 1, ceil(L / rho_max))        stable, and within the TTFT target T':
    rho_max        = 2·K·x / (1 + 2·K·x),  x = T'/t_pf(k) − 1    (1 without a target or when x <= 0)

The queue: Poisson arrivals at one instance whose steps clear up to K prompts in t_pf(k) each. As a
single server of K prompts per step it does the work of an M/D/1 queue with service t_pf(k)/K per
prompt, whose mean wait is rho·s/(2(1 − rho)) (Pollaczek–Khinchine; Kleinrock, Queueing Systems I,
1975, §5.7). K = 1 is exact. For K > 1, against a discrete-event simulation of the batched queue with
steps as long as their prompts (tests/reference/test_serving_disagg_queue.py), it is an upper estimate
at busy shares up to 0.9 (far above at low load, where a prompt rarely waits and its step is short) and
within 10 % at 0.98, where both grow as 1/(1 − rho). A prompt's own step is counted whole.

Decode pool (TP, EP_d): no prefill interference; the batch per DP rank is the largest whose TPOT meets
the target, capped by the rank's KV pool (closed form below; serving_load.max_decode_batch bisects):

    TPOT           = t_d(b)
    tok/s per GPU  = b / t_d(b) / TP
    concurrency    = lambda·(O − 1)·TPOT                 Little's law: requests decoding
    instances_d    = ceil( concurrency / (b·EP_d) )

Closed form of b: t_d is linearised on [b0, 2·b0], t_d ~ a + s·b, and b = (T − a)/s, clipped to
[1, cap]; b0 starts at cap/2 and is re-taken at max(1, b/2) a fixed number of times (``refinements``; no
convergence loop). The pool runs floor(b) requests, one fewer if that still misses the target. Total GPUs = both pools; cost per 1M output tokens = GPUs·price/(lambda·O·3600/1e6).

Per node in service (what DeepSeek's day-6 figures count: the day's tokens over the nodes serving, idle
or not; 608e9/86,400/73.7k + 168e9/86,400/14.8k = 226.9 nodes against its 226.75 average occupancy):

    prefill input tok/s per node in service = lambda·S_in / (prefill GPUs / GPUs per node)
    decode output tok/s per node in service = lambda·O / (decode GPUs / GPUs per node)
"""

from __future__ import annotations

import math
from typing import Any

from workbook.reference.args import nonnegative as _nonneg
from workbook.reference.args import positive as _pos
from workbook.reference.attention_dp import attention_dp_degree, group_gpus, group_nodes
from workbook.reference.decode_time import decode_step
from workbook.reference.prefill_time import prefill_time
from workbook.reference.serving import FLOOR_EPS
from workbook.reference.serving_load import running_context_tokens
from workbook.reference.serving_shape import ModelShape

DEFAULT_REFINEMENTS = 4


def prefill_wait_s(*, step_s: float, busy_frac: float, prompts_per_step: float) -> float:
    """Mean wait of a prompt at a prefill instance before its step: rho·T/(2·K·(1 − rho)) (module
    docstring); infinite at rho >= 1."""
    _pos(step_s=step_s, prompts_per_step=prompts_per_step)
    _nonneg(busy_frac=busy_frac)
    if busy_frac >= 1.0:
        return math.inf
    return busy_frac * step_s / (2.0 * prompts_per_step * (1.0 - busy_frac))


def ttft_slack(*, step_s: float, ttft_target_s: float | None) -> float:
    """x = T'/T − 1, the wait the TTFT target leaves per step of prefill; 0 without a target or when the step
    alone reaches it."""
    _pos(step_s=step_s)
    return 0.0 if ttft_target_s is None else max(0.0, ttft_target_s / step_s - 1.0)


def busy_limit(*, step_s: float, prompts_per_step: float, ttft_target_s: float | None) -> float:
    """Largest busy share whose TTFT (step + wait) meets the target: 2Kx/(1 + 2Kx), x = ttft_slack; 1 (no
    bound but stability) without a target or when the step alone misses it."""
    _pos(step_s=step_s, prompts_per_step=prompts_per_step)
    x = ttft_slack(step_s=step_s, ttft_target_s=ttft_target_s)
    if x <= 0:
        return 1.0
    y = 2.0 * prompts_per_step * x
    return y / (1.0 + y)


def prefill_instances(*, load_instances: float, busy_limit_frac: float) -> int:
    """Whole prefill instances: more than the work (floor(L) + 1, so rho < 1), and enough that the busy
    share stays within the limit (ceil(L / rho_max)); at least 1."""
    _nonneg(load_instances=load_instances)
    _pos(busy_limit_frac=busy_limit_frac)
    stable = math.floor(load_instances + FLOOR_EPS) + 1
    if busy_limit_frac >= 1.0:
        return max(1, stable)
    return max(1, stable, math.ceil(load_instances / busy_limit_frac - FLOOR_EPS))


def prefill_split(*, prompt_tokens: float, cache_hit_frac: float) -> tuple[float, float]:
    """(new, cached) prompt tokens of a request: S_in·(1 − h) and S_in·h."""
    _pos(prompt_tokens=prompt_tokens)
    if not 0 <= cache_hit_frac < 1:
        raise ValueError(f"cache_hit_frac must be in [0, 1), got {cache_hit_frac!r}")
    return prompt_tokens * (1.0 - cache_hit_frac), prompt_tokens * cache_hit_frac


def prefill_pool_rate(shape: ModelShape, *, hw: dict, engine: Any, prompt_tokens: float, cache_hit_frac: float = 0.0,
                      tp: int = 1, ep: int = 1, redundant_experts: int = 0, weight_precision: str = "bf16",
                      ep_overlap_frac: float = 0.0) -> dict:
    """One prefill step of a DP rank of a prefill instance: k prompts per chunk, its time, tokens/s per GPU.
    The instance spans ceil(TP·EP / GPUs per node) nodes for its all-to-all."""
    new, cached = prefill_split(prompt_tokens=prompt_tokens, cache_hit_frac=cache_hit_frac)
    C = float(engine.prefill_chunk_tokens)
    k = max(1.0, math.floor(C / new))
    nodes = group_nodes(tp=tp, ep=ep, gpus_per_node=int(hw["gpus_per_node"]))
    pf = prefill_time(shape, prompt_tokens=new, batch=k, cached_tokens=cached, hw=hw, engine=engine, tp=tp, ep=ep,
                      redundant_experts=redundant_experts, weight_precision=weight_precision, chunk_tokens=C,
                      ep_nodes=nodes, ep_overlap_frac=ep_overlap_frac, call_cpu_s=0.0)
    per_gpu = k * new / pf["prefill_s"] / tp  # the prompts' tokens, as the load counts them (not pf's whole tokens)
    return {"prompts_per_step": k, "new_tokens": new, "cached_tokens": cached, "prefill_s": pf["prefill_s"],
            "tokens_per_s_per_gpu": per_gpu, "input_tokens_per_s_per_gpu": per_gpu / (1.0 - cache_hit_frac)}


def decode_batch_at_tpot(shape: ModelShape, *, hw: dict, engine: Any, context_tokens: float, tpot_target_s: float,
                         batch_cap: float, refinements: int = DEFAULT_REFINEMENTS, **kw: Any) -> dict[str, float]:
    """Largest decode batch per DP rank with t_d(b) <= target, in closed form on the linearised step
    (module docstring). 0 when even one request misses; the cap when the cap meets it (KV-bound)."""
    _pos(tpot_target_s=tpot_target_s, batch_cap=batch_cap)

    def t(b: float) -> float:
        return decode_step(shape, batch=b, context_tokens=context_tokens, hw=hw, engine=engine, **kw)["tpot_s"]

    if t(1.0) > tpot_target_s:
        return {"batch": 0.0, "kv_bound": 0.0}
    if t(batch_cap) <= tpot_target_s:
        return {"batch": float(batch_cap), "kv_bound": 1.0}
    b = float(batch_cap)
    for _ in range(refinements):
        b0 = max(b / 2.0, 1.0)
        lo, hi = t(b0), t(2.0 * b0)
        s = (hi - lo) / b0
        a = lo - s * b0
        b = min(batch_cap, max(1.0, (tpot_target_s - a) / s)) if s > 0 else float(batch_cap)
    return {"batch": b, "kv_bound": 0.0}


def whole_batch(shape: ModelShape, *, batch: float, tpot_target_s: float, hw: dict, engine: Any,
                context_tokens: float, **kw: Any) -> float:
    """Whole requests from the closed-form batch: floor(b), one fewer when that still misses the target
    (the line can overshoot a concave step by a fraction of a request); 0 when one request misses."""
    b = max(1.0, math.floor(batch + FLOOR_EPS))
    t = decode_step(shape, batch=b, context_tokens=context_tokens, hw=hw, engine=engine, **kw)["tpot_s"]
    return b - float(t > tpot_target_s)


def size_pools(shape: ModelShape, *, hw: dict, engine: Any, arrival_rate_per_s: float | None, prompt_tokens: float,
               output_tokens: float, decode_batch_cap: float, tpot_target_s: float | None = None,
               ttft_target_s: float | None = None, cache_hit_frac: float = 0.0, tp: int = 1, ep: int = 1, prefill_ep: int | None = None,
               redundant_experts: int = 0, weight_precision: str = "bf16", kv_precision: str = "bf16",
               ep_overlap_frac: float = 0.0, gpu_hour_usd: float = 0.0, refinements: int = DEFAULT_REFINEMENTS,
               output_lengths: str = "exponential") -> dict[str, float]:
    """Prefill and decode pools for a load (module docstring). ``decode_batch_cap`` is one decode DP
    rank's KV pool in requests (serving_load.batch_capacity); a blank TPOT target (None) runs the decode
    ranks at that cap; a blank TTFT target (None) sizes the prefill pool for stability only. The decode context is the running requests' mean
    (serving_load.running_context_tokens of ``output_lengths``). A blank rate (None) is the rate one decode
    instance sustains, b·DP/(max(O − 1, 1)·TPOT). Returns both pools, the totals, tokens/s per node and
    the cost per 1M output tokens at ``gpu_hour_usd``."""
    _pos(output_tokens=output_tokens, decode_batch_cap=decode_batch_cap)
    if arrival_rate_per_s is not None:
        _pos(arrival_rate_per_s=arrival_rate_per_s)
    _nonneg(gpu_hour_usd=gpu_hour_usd)
    O = output_tokens
    ep_p = ep if prefill_ep is None else prefill_ep
    gpn = float(hw["gpus_per_node"])
    g_d = group_gpus(tp=tp, ep=ep)
    ctx = running_context_tokens(prompt_tokens=prompt_tokens, output_tokens=O, output_lengths=output_lengths)
    dkw = dict(tp=tp, ep=ep, redundant_experts=redundant_experts, weight_precision=weight_precision,
               kv_precision=kv_precision, ep_overlap_frac=ep_overlap_frac,
               ep_nodes=group_nodes(tp=tp, ep=ep, gpus_per_node=int(gpn)))
    if tpot_target_s is None:
        b = float(decode_batch_cap)
    else:
        b_cf = decode_batch_at_tpot(shape, hw=hw, engine=engine, context_tokens=ctx, tpot_target_s=tpot_target_s,
                                    batch_cap=decode_batch_cap, refinements=refinements, **dkw)["batch"]
        b = whole_batch(shape, batch=b_cf, tpot_target_s=tpot_target_s, hw=hw, engine=engine, context_tokens=ctx,
                        **dkw)
    d = decode_step(shape, batch=max(b, 1.0), context_tokens=ctx, hw=hw, engine=engine, **dkw)
    tpot = d["tpot_s"]
    per_gpu_d = b / tpot / tp
    per_instance = b * attention_dp_degree(ep=ep)
    lam = per_instance / (max(O - 1.0, 1.0) * tpot) if arrival_rate_per_s is None else arrival_rate_per_s
    pf = prefill_pool_rate(shape, hw=hw, engine=engine, prompt_tokens=prompt_tokens, cache_hit_frac=cache_hit_frac,
                           tp=tp, ep=ep_p, redundant_experts=redundant_experts, weight_precision=weight_precision,
                           ep_overlap_frac=ep_overlap_frac)
    g_p = group_gpus(tp=tp, ep=ep_p)
    load_p = lam * pf["new_tokens"] / (pf["tokens_per_s_per_gpu"] * g_p)
    K = pf["prompts_per_step"] * attention_dp_degree(ep=ep_p)
    limit = busy_limit(step_s=pf["prefill_s"], prompts_per_step=K, ttft_target_s=ttft_target_s)
    n_p = prefill_instances(load_instances=load_p, busy_limit_frac=limit)
    busy = load_p / n_p
    wait = prefill_wait_s(step_s=pf["prefill_s"], busy_frac=busy, prompts_per_step=K)

    concurrency = lam * max(O - 1.0, 0.0) * tpot
    n_d = max(1, math.ceil(concurrency / per_instance - 1e-9)) if per_instance > 0 else 0
    gpus = n_p * g_p + n_d * g_d
    out_tok = lam * O
    thr = out_tok if out_tok > 0 else math.inf
    return {
        "prefill_prompts_per_step": pf["prompts_per_step"],
        "prefill_s": pf["prefill_s"],
        "prefill_tokens_per_s_per_gpu": pf["tokens_per_s_per_gpu"],
        "prefill_input_tokens_per_s_per_node": pf["input_tokens_per_s_per_gpu"] * gpn,
        "prefill_gpus_per_instance": float(g_p),
        "prefill_instances": float(n_p),
        "prefill_gpus": float(n_p * g_p),
        "prefill_load_instances": load_p,
        "prefill_queue_prompts_per_step": K,
        "prefill_ttft_slack": ttft_slack(step_s=pf["prefill_s"], ttft_target_s=ttft_target_s),
        "prefill_busy_limit": limit,
        "prefill_busy_frac": busy,
        "prefill_wait_s": wait,
        "ttft_s": pf["prefill_s"] + wait,
        "decode_batch_per_rank": b,
        "tpot_s": tpot,
        "decode_tokens_per_s_per_gpu": per_gpu_d,
        "decode_tokens_per_s_per_node": per_gpu_d * gpn,
        "decode_requests_per_instance": per_instance,
        "decode_concurrency": concurrency,
        "decode_gpus_per_instance": float(g_d),
        "decode_instances": float(n_d),
        "decode_gpus": float(n_d * g_d),
        "total_gpus": float(gpus),
        "total_nodes": gpus / gpn,
        "arrival_rate_per_s": lam,
        "output_tokens_per_s": out_tok,
        "output_tokens_per_s_per_gpu": out_tok / gpus,
        "prefill_input_tokens_per_s_per_node_in_service": lam * prompt_tokens / (n_p * g_p / gpn),
        "decode_tokens_per_s_per_node_in_service": out_tok / (n_d * g_d / gpn) if n_d > 0 else 0.0,
        "cost_usd_per_1M_output_tokens": gpus * gpu_hour_usd / (thr * 3600.0 / 1e6),
    }
