"""Inference sheet, the other two load models: a static batch run to the output length and closed-loop
concurrency, each with TTFT, TPOT and output tokens/s, and the largest static batch meeting the targets
(docs/serving.md "Three load models"; workbook.reference.serving_closed_loop). The scenario's
``inference.load`` picks which of the three (with the arrival-rate block) the in-use rows follow.
"""

from __future__ import annotations

import math
from typing import get_args

from workbook.calc.base import Context, Q
from workbook.calc.serving_memory import engine_of
from workbook.calc.serving_prefill import prefill_quantities, prefill_values
from workbook.calc.serving_step import decode, decode_quantities, decode_values
from workbook.reference import serving_closed_loop as cl
from workbook.reference.prefill_time import request_overhead_s
from workbook.reference.serving_load import sched_wait_steps
from workbook.scenario.model import LoadModel
from workbook.units import MS_PER_S

_S = "docs/serving.md"
LOADS = get_args(LoadModel)

QUANTITIES = [
    Q("srv_load_model_position", "count", "Load model in use: 1 arrival rate, 2 closed-loop concurrency, 3 static batch", _S),
    Q("srv_request_overhead_s", "s", "Fixed time per request on its way to the first token (engine profile)", _S),
    # static batch
    Q("srv_st_batch", "sequences", "Static batch: requests run together to the output length (inference.batch)", _S),
    Q("srv_st_rank_batch", "sequences", "Static batch per attention-DP rank (at least 1)", _S),
    *decode_quantities("srv_st", "of the static batch"),
    *prefill_quantities("srv_stpf", "of the static batch's prompts"),
    Q("srv_static_fits_flag", "0/1", "The static batch fits the KV pool and max_num_seqs (1 = fits)", _S),
    Q("srv_static_ttft_ms", "ms", "Static batch: time to first token (the batch's prefill + the fixed time)", _S),
    Q("srv_static_tpot_ms", "ms", "Static batch: time per output token (decode step at the batch)", _S),
    Q("srv_static_wall_s", "s", "Static batch: wall time to the last token (prefill, then O − 1 steps)", _S),
    Q("srv_static_tokens_per_s", "tokens/s", "Static batch: output tokens/s of one serving group (B x O / wall)", _S),
    Q("srv_static_tokens_per_s_per_gpu", "tokens/s", "Static batch: output tokens/s per GPU", _S),
    *prefill_quantities("srv_stcpf", "of a static batch at the batch cap"),
    Q("srv_static_tpot_batch", "sequences", "Largest static batch per rank meeting the TPOT target (chord from batch 1 "
      "to the cap; no target: the cap)", _S),
    Q("srv_static_ttft_batch", "sequences", "Largest static batch per rank meeting the TTFT target (chord; no target: "
      "the cap)", _S),
    Q("srv_static_max_batch", "sequences", "Largest static batch meeting the TTFT and TPOT targets, one serving group "
      "(whole requests; 0 = batch 1 misses)", _S),
    # closed loop
    Q("srv_cl_clients", "requests", "Closed loop: clients per attention-DP rank (concurrency, blank = the decode "
      "batch, over replicas and DP)", _S),
    Q("srv_cl_engine_clients", "requests", "Closed loop: clients the engine holds (at most the batch cap)", _S),
    Q("srv_cl_b", "sequences", "Closed loop: decode batch (at least 1)", _S),
    *decode_quantities("srv_cl", "of the closed loop's batch"),
    Q("srv_cl_r", "s", "Closed loop: prefill busy time per request (offline prefill cost per token x prompt)", _S),
    Q("srv_cl_sched_wait_s", "s", "Closed loop: wait for the scheduler on an idle engine (half a cycle)", _S),
    Q("srv_cl_fixed_s", "s", "Closed loop: fixed part of TTFT (scheduler wait, idle prefill, fixed time)", _S),
    Q("srv_cl_q1", "s", "Closed loop, step 1: linear coefficient of the rate's quadratic (no queue wait)", _S),
    Q("srv_cl_rate1", "requests/s", "Closed loop, step 1: rate per rank (smaller root)", _S),
    Q("srv_cl_wait1", "s", "Closed loop, step 1: queue's wait at that rate (gated cycles)", _S),
    Q("srv_cl_q2", "s", "Closed loop, step 2: linear coefficient with that wait", _S),
    Q("srv_cl_rate", "requests/s", "Closed loop: rate per rank (Little's law, think time 0)", _S),
    Q("srv_cl_rho", "fraction", "Closed loop: prefill busy share", _S),
    Q("srv_cl_queue_wait_s", "s", "Closed loop: the queue's wait (gated cycles)", _S),
    Q("srv_cl_admission_wait_s", "s", "Closed loop: wait of the clients beyond the batch cap to be admitted", _S),
    Q("srv_conc_ttft_ms", "ms", "Closed loop: time to first token", _S),
    Q("srv_conc_tpot_ms", "ms", "Closed loop: time per output token", _S),
    Q("srv_conc_tokens_per_s", "tokens/s", "Closed loop: output tokens/s of one serving group", _S),
    Q("srv_conc_tokens_per_s_per_gpu", "tokens/s", "Closed loop: output tokens/s per GPU", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    inf, q = ctx.s.inference, ctx.q
    eng = engine_of(ctx)
    ctx_tok = float(q["decode_context_tokens"])  # a static batch runs every request to O together: S_in + O/2
    run_tok = float(q["srv_running_context_tokens"])  # closed-loop clients: the running requests' mean
    S, O = float(inf.prompt_tokens), float(inf.output_tokens)
    dp, gpus = q["srv_attention_dp"], float(inf.tp * inf.ep)
    cap, chunk = q["srv_load_batch_cap_used"], float(eng.prefill_chunk_tokens)
    ov = request_overhead_s(eng)
    out: dict[str, float] = {"srv_load_model_position": float(LOADS.index(inf.load) + 1), "srv_request_overhead_s": ov}
    # static batch
    rank_b = max(inf.batch / dp, 1.0)
    st_step = decode(ctx, rank_b, ctx_tok)
    stpf = prefill_values(ctx, "srv_stpf", rank_b, chunk)
    st = cl.static_batch(batch=float(inf.batch), prefill_s=stpf["srv_stpf_prefill_s"], decode_step_s=st_step["step_s"],
                         overhead_s=ov, output_tokens=O, tp=inf.tp, ep=inf.ep)
    stc = prefill_values(ctx, "srv_stcpf", cap, chunk)
    inf_t = math.inf
    tpot_t = inf_t if inf.tpot_target_ms is None else inf.tpot_target_ms / MS_PER_S
    ttft_t = inf_t if inf.ttft_target_ms is None else inf.ttft_target_ms / MS_PER_S
    one, at_cap = q["srv_ss1_lo_step_s"], q["srv_off_step_s"]
    largest = cl.largest_static_batch(cap=cap, step_one_s=one, step_cap_s=at_cap, prefill_one_s=q["srv_pf1_prefill_s"],
                                      prefill_cap_s=stc["srv_stcpf_prefill_s"], overhead_s=ov, ttft_target_s=ttft_t,
                                      tpot_target_s=tpot_t)
    out.update({
        "srv_st_batch": float(inf.batch), "srv_st_rank_batch": rank_b, **decode_values("srv_st", st_step), **stpf,
        "srv_static_fits_flag": float(rank_b <= q["srv_load_batch_cap"]),
        "srv_static_ttft_ms": st["ttft_s"] * MS_PER_S, "srv_static_tpot_ms": st["tpot_s"] * MS_PER_S,
        "srv_static_wall_s": st["wall_s"], "srv_static_tokens_per_s": st["throughput_tok_per_s"],
        "srv_static_tokens_per_s_per_gpu": st["per_gpu_tok_per_s"], **stc,
        "srv_static_tpot_batch": cl.chord_batch(target=tpot_t, at_one=one, at_cap=at_cap, cap=cap),
        "srv_static_ttft_batch": cl.chord_batch(target=ttft_t - ov, at_one=q["srv_pf1_prefill_s"],
                                                at_cap=stc["srv_stcpf_prefill_s"], cap=cap),
        "srv_static_max_batch": dp * largest,
    })
    # closed loop
    n = cl.engine_clients(concurrency=inf.concurrency, batch=inf.batch, replicas=inf.replicas, dp=int(dp))
    b = min(n, cap)
    step = decode(ctx, max(b, 1.0), run_tok)
    r = S * q["srv_off_pf_s_per_token"]
    w0 = sched_wait_steps(eng, eng.scheduler_steps / 2.0)
    res = cl.closed_loop(concurrency=n, cap=cap, decode_step_s=step["step_s"], prefill_per_request_s=r,
                         idle_prefill_s=q["srv_pf1_prefill_s"], sched_wait_steps=w0, overhead_s=ov, output_tokens=O,
                         dp=int(dp), tp=inf.tp, ep=inf.ep)
    m = O
    t0, td = res["fixed_s"], step["step_s"]
    out.update({
        "srv_cl_clients": n, "srv_cl_engine_clients": b, "srv_cl_b": max(b, 1.0), **decode_values("srv_cl", step),
        "srv_cl_r": r, "srv_cl_sched_wait_s": w0 * td, "srv_cl_fixed_s": t0, "srv_cl_q1": t0 + m * td + b * r, "srv_cl_rate1": res["first_rate_per_s"],
        "srv_cl_wait1": res["first_wait_s"], "srv_cl_q2": t0 + res["first_wait_s"] + m * td + b * r,
        "srv_cl_rate": res["rate_per_s"], "srv_cl_rho": res["rho"], "srv_cl_queue_wait_s": res["queue_wait_s"],
        "srv_cl_admission_wait_s": res["admission_wait_s"], "srv_conc_ttft_ms": res["ttft_s"] * MS_PER_S,
        "srv_conc_tpot_ms": res["tpot_s"] * MS_PER_S, "srv_conc_tokens_per_s": res["throughput_tok_per_s"],
        "srv_conc_tokens_per_s_per_gpu": res["throughput_tok_per_s"] / gpus,
    })
    return out
