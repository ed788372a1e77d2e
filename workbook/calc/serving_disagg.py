"""Inference sheet, disaggregated block: prefill and decode pools sized from the load
(docs/serving.md "Disaggregated serving"; workbook.reference.serving_disagg.size_pools).

The decode pool is the scenario's serving group (TP x EP, attention DP = EP). Its batch per DP rank
at the TPOT target has no closed form in the reference's bisection (serving_load.max_decode_batch), so
the sheet holds the closed form of serving_disagg.decode_batch_at_tpot: the decode step linearised on
[b0, 2·b0] a fixed number of times (REFINEMENTS row blocks), b = (T − a)/s clipped to the KV cap. The
prefill pool has its own EP (blank = the serving EP) and prefills the uncached part of each prompt
after the cached part. The rows are computed whatever the layout; the in-use block picks them when
``inference.disaggregated`` is on with the engine model.
"""

from __future__ import annotations

import math

from workbook.calc.base import Context, Q
from workbook.calc.serving_memory import engine_of, ep_overlap_frac
from workbook.calc.serving_prefill import prefill_quantities, prefill_values
from workbook.calc.serving_step import decode, decode_kwargs, decode_quantities, decode_values, ep_nodes
from workbook.reference import serving_disagg as sd
from workbook.reference.serving_shape import model_shape
from workbook.units import MS_PER_S

_S = "docs/serving.md"
REFINEMENTS = sd.DEFAULT_REFINEMENTS


def _refinement_quantities(r: int) -> list[Q]:
    p, w = f"srv_disr{r}", f"refinement {r}"
    return [
        Q(f"{p}_b0", "sequences", f"Decode pool, {w}: batch the step is linearised at (half the last, at least 1)", _S),
        Q(f"{p}_b2", "sequences", f"Decode pool, {w}: twice that batch", _S),
        *decode_quantities(f"{p}_lo", f"(decode pool, {w}) at the batch"),
        *decode_quantities(f"{p}_hi", f"(decode pool, {w}) at twice the batch"),
        Q(f"{p}_slope", "s", f"Decode pool, {w}: decode step per extra request", _S),
        Q(f"{p}_intercept", "s", f"Decode pool, {w}: decode step at batch 0 (linear fit)", _S),
        Q(f"{p}_batch", "sequences", f"Decode pool, {w}: batch meeting the TPOT target on the line (1 to the cap)", _S),
    ]


QUANTITIES = [
    Q("srv_dis_flag", "0/1", "Disaggregated serving: separate prefill and decode pools (engine model)", _S),
    Q("srv_dis_target_given_flag", "0/1", "A TPOT target sets the decode batch (0 = the KV cap)", _S),
    Q("srv_dis_tpot_target_s", "s", "TPOT target of the decode pool (0 = none)", _S),
    Q("srv_dis_one", "sequences", "One request (the decode step at batch 1)", _S),
    *decode_quantities("srv_dis1", "(decode pool) of one request"),
    *[q for r in range(1, REFINEMENTS + 1) for q in _refinement_quantities(r)],
    Q("srv_dis_kv_bound_flag", "0/1", "Decode batch is the KV cap (no target, or the cap meets it)", _S),
    Q("srv_dis_miss_flag", "0/1", "Even one request misses the TPOT target (decode batch 0)", _S),
    Q("srv_dis_batch_line", "sequences", "Decode batch per DP rank on the line (the KV cap when it meets the target)", _S),
    Q("srv_dis_batch_whole", "sequences", "That batch in whole requests (at least 1)", _S),
    *decode_quantities("srv_disc", "(decode pool) at the whole batch"),
    Q("srv_dis_over_flag", "0/1", "The whole batch still misses the TPOT target (one fewer is taken)", _S),
    Q("srv_dis_batch", "sequences", "Decode batch per attention-DP rank at the TPOT target (0 = one request misses)", _S),
    Q("srv_dis_b", "sequences", "Decode batch the pool's step runs at (at least 1)", _S),
    *decode_quantities("srv_disd", "(decode pool) at its batch"),
    Q("srv_dis_tpot_ms", "ms", "Decode pool TPOT (no prefill interference)", _S),
    Q("srv_dis_dec_tokens_per_s_per_gpu", "tokens/s", "Decode pool output tokens/s per GPU", _S),
    Q("srv_dis_dec_tokens_per_s_per_node", "tokens/s", "Decode pool output tokens/s per node", _S),
    Q("srv_dis_dec_gpus_per_instance", "GPUs", "GPUs of one decode instance (TP x EP)", _S),
    Q("srv_dis_dec_requests_per_instance", "sequences", "Requests one decode instance holds (batch x DP ranks)", _S),
    Q("srv_dis_rate_rps", "requests/s", "Arrival rate the pools are sized for (blank = what one decode instance sustains)", _S),
    Q("srv_dis_pf_ep", "GPUs", "Expert-parallel degree of one prefill instance (blank = serving EP)", _S),
    Q("srv_dis_pf_routed_slots", "count", "Routed experts per GPU of the prefill pool", _S),
    Q("srv_dis_pf_routed_B", "B", "Routed-expert bytes per GPU of the prefill pool", _S),
    Q("srv_dis_pf_FLOP_per_token", "FLOP", "Linear FLOPs per prompt token on one prefill-pool GPU", _S),
    Q("srv_dis_pf_act_B_per_token", "B/token", "Activation bytes per token per layer pass, prefill pool", _S),
    Q("srv_dis_pf_ep_flag", "0/1", "Prefill pool runs MoE with EP > 1 (all-to-all per MoE layer)", _S),
    Q("srv_dis_pf_nodes", "nodes", "Nodes one prefill instance spans (TP x prefill EP / GPUs per node, rounded up)", _S),
    Q("srv_dis_pf_alpha_s", "s", "Prefill pool all-to-all latency (network across nodes, else the NVLink kernel)", _S),
    Q("srv_dis_pf_ep_fixed_s", "s", "Prefill pool all-to-all fixed time per chunk (dispatch and combine per MoE layer)", _S),
    Q("srv_dis_pf_remote_nodes", "nodes", "Prefill pool all-to-all: remote nodes one token reaches", _S),
    Q("srv_dis_pf_other_gpus", "GPUs", "Prefill pool all-to-all: other GPUs one token reaches", _S),
    Q("srv_dis_pf_ep_s_per_token", "s", "Prefill pool all-to-all time per token, all MoE layers", _S),
    Q("srv_dis_pf_moe_layout_B_per_token", "B/token", "Prefill pool MoE dispatch layout: HBM bytes per prompt token, "
      "all MoE layers", _S),
    Q("srv_dis_new_tokens", "tokens", "Prompt tokens computed per request (not in the prefix cache)", _S),
    Q("srv_dis_cached_tokens", "tokens", "Prompt tokens found in the prefix cache per request", _S),
    *prefill_quantities("srv_dispf", "(prefill pool) of the prompts of one chunk"),
    Q("srv_dis_pf_tokens_per_s_per_gpu", "tokens/s", "Prefill pool computed (uncached) tokens/s per GPU", _S),
    Q("srv_dis_pf_input_tokens_per_s_per_node", "tokens/s", "Prefill pool input tokens/s per node (cache hits counted)", _S),
    Q("srv_dis_pf_gpus_per_instance", "GPUs", "GPUs of one prefill instance (TP x prefill EP)", _S),
    Q("srv_dis_pf_load_instances", "instances", "Prefill instances' worth of work at the load (rate x new tokens / "
      "one instance's tokens/s)", _S),
    Q("srv_dis_pf_queue_prompts", "sequences", "Prompts one prefill instance step clears (per DP rank x DP ranks)", _S),
    Q("srv_dis_ttft_target_s", "s", "TTFT target of the prefill pool (0 = none)", _S),
    Q("srv_dis_pf_ttft_slack", "fraction", "TTFT target over the prefill step, minus 1 (0 = no target, or the "
      "step alone misses it)", _S),
    Q("srv_dis_pf_busy_limit", "fraction", "Largest prefill busy share meeting the TTFT target, 2Kx/(1 + 2Kx) "
      "(1 = none, or the step alone misses it)", _S),
    Q("srv_dis_pf_instances", "instances", "Prefill instances: more than the work, within the busy limit (whole "
      "instances)", _S),
    Q("srv_dis_pf_gpus", "GPUs", "Prefill pool GPUs", _S),
    Q("srv_dis_pf_busy_frac", "fraction", "Prefill pool busy share at the load", _S),
    Q("srv_dis_pf_wait_s", "s", "Prefill queue: mean wait before a prompt's step, busy x step / (2K(1 − busy)) "
      "(Pollaczek–Khinchine)", _S),
    Q("srv_dis_ttft_ms", "ms", "TTFT: the prefill queue's wait plus the step", _S),
    Q("srv_dis_concurrency", "sequences", "Requests decoding at the load (Little's law: rate x (O − 1) x TPOT)", _S),
    Q("srv_dis_dec_instances", "instances", "Decode instances for the load (whole instances)", _S),
    Q("srv_dis_dec_gpus", "GPUs", "Decode pool GPUs", _S),
    Q("srv_dis_gpus", "GPUs", "GPUs of both pools", _S),
    Q("srv_dis_nodes", "nodes", "Nodes of both pools", _S),
    Q("srv_dis_tokens_per_s", "tokens/s", "Output tokens/s the pools serve (rate x O)", _S),
    Q("srv_dis_tokens_per_s_per_gpu", "tokens/s", "Output tokens/s per GPU over both pools", _S),
    Q("srv_dis_pf_input_tokens_per_s_per_node_in_service", "tokens/s", "Prefill pool input tokens/s per node in "
      "service at the load (rate x prompt tokens / prefill nodes; idle time counted)", _S),
    Q("srv_dis_dec_tokens_per_s_per_node_in_service", "tokens/s", "Decode pool output tokens/s per node in "
      "service at the load (rate x output tokens / decode nodes; idle time counted)", _S),
]


def _pool_alltoall(ctx: Context, shape, eng, ep_p: int) -> dict[str, float]:
    """The prefill pool's all-to-all rows (prefill_time.prefill_alltoall at the pool's EP and nodes)."""
    from workbook.calc.serving_step import hardware
    from workbook.reference.prefill_time import prefill_alltoall

    nodes = ep_nodes(ctx, ep_p)
    a2a = prefill_alltoall(shape, hw=hardware(ctx), engine=eng, ep=ep_p, ep_nodes=nodes)
    on = float(shape.moe and ep_p > 1)
    return {"srv_dis_pf_ep_flag": on, "srv_dis_pf_nodes": float(nodes), "srv_dis_pf_alpha_s": a2a["alpha_s"],
            "srv_dis_pf_ep_fixed_s": a2a["fixed_s"], "srv_dis_pf_remote_nodes": a2a["remote_nodes"],
            "srv_dis_pf_other_gpus": a2a["other_gpus"], "srv_dis_pf_ep_s_per_token": a2a["s_per_token"]}

def compute(ctx: Context) -> dict[str, float]:
    inf, q = ctx.s.inference, ctx.q
    eng = engine_of(ctx)
    shape = model_shape(ctx.model)
    kw = decode_kwargs(ctx)
    hw = kw.pop("hw")
    ctx_tok = float(q["srv_running_context_tokens"])
    cap = float(q["srv_load_batch_cap_used"])
    target = None if inf.tpot_target_ms is None else inf.tpot_target_ms / MS_PER_S
    ttft_target = None if inf.ttft_target_ms is None else inf.ttft_target_ms / MS_PER_S
    p, O, h, tp = float(inf.prompt_tokens), float(inf.output_tokens), float(inf.cache_hit_frac), inf.tp
    ep_p = inf.ep if inf.prefill_ep is None else inf.prefill_ep
    res = sd.size_pools(shape, hw=hw, engine=eng, arrival_rate_per_s=inf.arrival_rate_rps, prompt_tokens=p,
                        output_tokens=O, decode_batch_cap=cap, tpot_target_s=target, ttft_target_s=ttft_target,
                        cache_hit_frac=h, tp=tp,
                        ep=inf.ep, prefill_ep=ep_p, redundant_experts=inf.redundant_experts,
                        weight_precision=inf.weight_precision, kv_precision=inf.kv_precision,
                        ep_overlap_frac=ep_overlap_frac(ctx), refinements=REFINEMENTS,
                        output_lengths=inf.output_lengths)
    t1 = decode(ctx, 1.0, ctx_tok)
    t_cap = float(q["srv_off_step_s"])
    out: dict[str, float] = {
        "srv_dis_flag": float(inf.disaggregated == "on"),
        "srv_dis_target_given_flag": float(target is not None),
        "srv_dis_tpot_target_s": 0.0 if target is None else target,
        "srv_dis_one": 1.0,
        **decode_values("srv_dis1", t1),
    }
    b = cap
    for r in range(1, REFINEMENTS + 1):
        pre = f"srv_disr{r}"
        b0 = max(b / 2.0, 1.0)
        lo, hi = decode(ctx, b0, ctx_tok), decode(ctx, 2 * b0, ctx_tok)
        s = (hi["step_s"] - lo["step_s"]) / b0
        a = lo["step_s"] - s * b0
        b = min(cap, max(1.0, ((0.0 if target is None else target) - a) / s)) if s > 0 else cap
        out.update({f"{pre}_b0": b0, f"{pre}_b2": 2 * b0, **decode_values(f"{pre}_lo", lo),
                    **decode_values(f"{pre}_hi", hi), f"{pre}_slope": s, f"{pre}_intercept": a, f"{pre}_batch": b})
    kv_bound = float(target is None or t_cap <= target)
    miss = float(target is not None and t1["step_s"] > target)
    b_cf = cap if kv_bound else b
    b_int = max(1.0, math.floor(b_cf + 1e-9))
    whole = decode(ctx, b_int, ctx_tok)
    over = float(target is not None and whole["step_s"] > target)
    batch = res["decode_batch_per_rank"]
    assert batch == (1 - miss) * (b_int - over)
    fin = decode(ctx, max(batch, 1.0), ctx_tok)
    new, cached = sd.prefill_split(prompt_tokens=p, cache_hit_frac=h)
    k = max(1.0, math.floor(eng.prefill_chunk_tokens / new))
    pf = prefill_values(ctx, "srv_dispf", k, float(eng.prefill_chunk_tokens), prompt_tokens=new, cached_tokens=cached,
                        ep=ep_p, call_cpu_s=0.0)
    slots = (shape.n_experts + inf.redundant_experts) / ep_p if ep_p > 1 else float(shape.n_experts)
    from workbook.reference.decode_time import ACT_PASSES_D, ACT_PASSES_FFN
    from workbook.reference.prefill_time import linear_FLOPs_per_token, moe_layout_bytes_per_token
    from workbook.reference.serving_shape import linear_bytes_per_param

    ffn_local = (shape.top_k * shape.expert_ffn_width if shape.moe else shape.dense_ffn_width) / (1 if ep_p > 1 else tp)
    gpn = float(ctx.gpu.gpus_per_node)
    out.update({
        "srv_dis_kv_bound_flag": kv_bound,
        "srv_dis_miss_flag": miss,
        "srv_dis_batch_line": b_cf,
        "srv_dis_batch_whole": b_int,
        **decode_values("srv_disc", whole),
        "srv_dis_over_flag": over,
        "srv_dis_batch": batch,
        "srv_dis_b": max(batch, 1.0),
        **decode_values("srv_disd", fin),
        "srv_dis_tpot_ms": res["tpot_s"] * MS_PER_S,
        "srv_dis_dec_tokens_per_s_per_gpu": res["decode_tokens_per_s_per_gpu"],
        "srv_dis_dec_tokens_per_s_per_node": res["decode_tokens_per_s_per_node"],
        "srv_dis_dec_gpus_per_instance": res["decode_gpus_per_instance"],
        "srv_dis_dec_requests_per_instance": res["decode_requests_per_instance"],
        "srv_dis_rate_rps": res["arrival_rate_per_s"],
        "srv_dis_pf_ep": float(ep_p),
        "srv_dis_pf_routed_slots": slots,
        "srv_dis_pf_routed_B": (shape.moe_layers * slots * shape.expert_params / (1 if ep_p > 1 else tp)
                                * linear_bytes_per_param(inf.weight_precision)),
        "srv_dis_pf_FLOP_per_token": linear_FLOPs_per_token(shape, tp=tp, ep=ep_p),
        "srv_dis_pf_act_B_per_token": shape.layers * (ACT_PASSES_D * shape.d_model + ACT_PASSES_FFN * ffn_local) * 2.0,
        **_pool_alltoall(ctx, shape, eng, ep_p),
        "srv_dis_pf_moe_layout_B_per_token": moe_layout_bytes_per_token(shape, ep=ep_p),
        "srv_dis_new_tokens": new,
        "srv_dis_cached_tokens": cached,
        **pf,
        "srv_dis_pf_tokens_per_s_per_gpu": res["prefill_tokens_per_s_per_gpu"],
        "srv_dis_pf_input_tokens_per_s_per_node": res["prefill_input_tokens_per_s_per_node"],
        "srv_dis_pf_gpus_per_instance": res["prefill_gpus_per_instance"],
        "srv_dis_pf_load_instances": res["prefill_load_instances"],
        "srv_dis_pf_queue_prompts": res["prefill_queue_prompts_per_step"],
        "srv_dis_ttft_target_s": 0.0 if ttft_target is None else ttft_target,
        "srv_dis_pf_ttft_slack": res["prefill_ttft_slack"],
        "srv_dis_pf_busy_limit": res["prefill_busy_limit"],
        "srv_dis_pf_instances": res["prefill_instances"],
        "srv_dis_pf_gpus": res["prefill_gpus"],
        "srv_dis_pf_busy_frac": res["prefill_busy_frac"],
        "srv_dis_pf_wait_s": res["prefill_wait_s"],
        "srv_dis_ttft_ms": res["ttft_s"] * MS_PER_S,
        "srv_dis_concurrency": res["decode_concurrency"],
        "srv_dis_dec_instances": res["decode_instances"],
        "srv_dis_dec_gpus": res["decode_gpus"],
        "srv_dis_gpus": res["total_gpus"],
        "srv_dis_nodes": res["total_gpus"] / gpn,
        "srv_dis_tokens_per_s": res["output_tokens_per_s"],
        "srv_dis_tokens_per_s_per_gpu": res["output_tokens_per_s_per_gpu"],
        "srv_dis_pf_input_tokens_per_s_per_node_in_service": res["prefill_input_tokens_per_s_per_node_in_service"],
        "srv_dis_dec_tokens_per_s_per_node_in_service": res["decode_tokens_per_s_per_node_in_service"],
    })
    return out
