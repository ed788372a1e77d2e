"""Inference sheet, engine prefill block: a batch of prompts cut into chunks, with causal attention
and TP all-reduces, and the time to first token on an idle engine (docs/serving.md "Prefill";
workbook.reference.prefill_time.prefill_time).

One prefill is laid out as sixteen rows (:func:`prefill_quantities`): the chunks of the engine's
token budget are all full but the last, so the total is (chunks − 1) full chunks + the last one.
The batch's prompt tokens are counted in whole tokens (batch x prompt rounded up, at least 1, noise
under FLOOR_EPS ignored), so the chunk count and the last chunk are exact in every engine.
The load block reuses the rows for the prompts prefilled together under load.
"""

from __future__ import annotations

import math

from workbook.calc.base import Context, Q
from workbook.calc.serving_memory import engine_of, ep_overlap_frac
from workbook.calc.serving_step import decode, decode_quantities, decode_values, ep_nodes, hardware
from workbook.reference import prefill_time as pt
from workbook.reference.serving_shape import model_shape
from workbook.units import MS_PER_S

_S = "docs/serving.md"
PREFILL_ROWS = [
    ("batch", "sequences", "prompts prefilled together"),
    ("tokens", "tokens", "prompt tokens of the batch in whole tokens (prompts x prompt rounded up, at least 1)"),
    ("chunks", "chunks", "chunks of at most the chunk size"),
    ("last_tokens", "tokens", "tokens of the last chunk"),
    ("prompt_chunks", "chunks", "chunks of one prompt (at least 1)"),
    ("up_FLOP", "FLOP", "MLA re-expansion of cached context: prompts x (chunks x cached + chunk x chunks(chunks - 1)/2) tokens"),
    ("attn_s", "s", "causal attention of all prompts (MLA non-absorbed)"),
    ("full_lin_s", "s", "full chunk: smooth roofline of the weight read and the linear FLOPs"),
    ("full_ar_s", "s", "full chunk: TP all-reduces"),
    ("full_gpu_s", "s", "full chunk: GPU time (linear + attention + all-reduce + small kernels + launches)"),
    ("full_s", "s", "full chunk: time (GPU, or the eager CPU launch when longer, + the EP all-to-all not hidden)"),
    ("last_lin_s", "s", "last chunk: smooth roofline of the weight read and the linear FLOPs"),
    ("last_ar_s", "s", "last chunk: TP all-reduces"),
    ("last_gpu_s", "s", "last chunk: GPU time"),
    ("last_s", "s", "last chunk: time"),
    ("prefill_s", "s", "prefill time: (chunks − 1) full chunks + the last, + a scheduler call's CPU per chunk"),
]


def prefill_quantities(prefix: str, what: str) -> list[Q]:
    return [Q(f"{prefix}_{suf}", unit, f"Prefill {what}: {label}", _S) for suf, unit, label in PREFILL_ROWS]


def prefill_values(ctx: Context, prefix: str, batch: float, chunk_tokens: float, *, prompt_tokens: float | None = None,
                   cached_tokens: float = 0.0, ep: int | None = None,
                   call_cpu_s: float | None = None) -> dict[str, float]:
    """The rows of prefill_time for ``batch`` prompts of the scenario's prompt length (or
    ``prompt_tokens`` new tokens after ``cached_tokens`` cached ones, at EP ``ep``: the disaggregated
    prefill pool); the reference gives the total and the full and last chunks' terms. Each chunk's
    scheduler call costs ``call_cpu_s``, by default the row srv_prefill_call_cpu_s, as on the sheet."""
    inf = ctx.s.inference
    shape = model_shape(ctx.model)
    ep_used = inf.ep if ep is None else ep
    kw = dict(hw=hardware(ctx), engine=engine_of(ctx), tp=inf.tp, ep=ep_used,
              weight_precision=inf.weight_precision, redundant_experts=inf.redundant_experts,
              ep_nodes=ep_nodes(ctx, ep_used), ep_overlap_frac=ep_overlap_frac(ctx))
    S = float(inf.prompt_tokens if prompt_tokens is None else prompt_tokens)
    total = pt.prefill_time(shape, prompt_tokens=S, batch=batch, chunk_tokens=chunk_tokens, cached_tokens=cached_tokens,
                            call_cpu_s=ctx.q["srv_prefill_call_cpu_s"] if call_cpu_s is None else call_cpu_s,
                            **kw)
    T, n = total["tokens"], total["chunks"]  # whole tokens (prefill_tokens): T, the chunks and the last are exact
    last = min(chunk_tokens, T - (n - 1) * chunk_tokens)
    return {
        f"{prefix}_batch": batch, f"{prefix}_tokens": T, f"{prefix}_chunks": n, f"{prefix}_last_tokens": last,
        f"{prefix}_prompt_chunks": float(max(1, math.ceil(S / chunk_tokens - 1e-9))),
        f"{prefix}_up_FLOP": total["kv_up_FLOPs"], f"{prefix}_attn_s": total["attention_s"],
        **{f"{prefix}_{part}_{k}_s": total[f"{part}_{k}_s"] for part in ("full", "last") for k in ("lin", "ar", "gpu")},
        f"{prefix}_full_s": total["full_chunk_s"], f"{prefix}_last_s": total["last_chunk_s"],
        f"{prefix}_prefill_s": total["prefill_s"],
    }


QUANTITIES = [
    Q("srv_prefill_kernels", "count", "Kernels per prefill chunk (layers x per layer)", _S),
    Q("srv_prefill_launch_s", "s", "Kernel boundaries of one prefill chunk", _S),
    Q("srv_prefill_cpu_s", "s", "CPU launch time of one eager prefill chunk (0 with prefill CUDA graphs)", _S),
    Q("srv_prefill_small_floor_s", "s", "Small kernels of one prefill chunk (latency floor)", _S),
    Q("srv_prefill_attn_FLOP_per_ctx_token", "FLOP",
      "Prefill attention FLOPs per query token per context token on one GPU (MLA non-absorbed: d_qk + d_v)", _S),
    Q("srv_kv_up_FLOP_per_token", "FLOP",
      "MLA up-projection (kv_b_proj) FLOPs per re-expanded cached token on one GPU (0 for GQA)", _S),
    Q("srv_head_FLOP_per_prompt", "FLOP", "LM-head FLOPs per prompt on one GPU (last token only)", _S),
    Q("srv_pf_ep_remote_nodes", "nodes", "Prefill EP all-to-all: remote nodes one token reaches, (N-1)(1-(1-1/N)^k)", _S),
    Q("srv_pf_ep_other_gpus", "GPUs", "Prefill EP all-to-all: other GPUs one token reaches, (EP-1)(1-(1-1/EP)^k)", _S),
    Q("srv_pf_ep_s_per_token", "s", "Prefill EP all-to-all time per token, all MoE layers (the slower of RDMA and NVLink)", _S),
    Q("srv_pf_comm_sm_frac", "fraction", "Prefill EP all-to-all: share of the GPU's SMs its kernels hold while they "
      "overlap GPU work (engine SMs / GPU SMs, at most 1)", _S),
    Q("srv_pf_moe_layout_B_per_token", "B/token", "Prefill MoE dispatch layout: HBM bytes per prompt token, all MoE "
      "layers (EP > 1: routed rows scattered, gathered, GEMM outputs)", _S),
    Q("srv_marginal_prefill_s_per_token", "s", "Marginal prefill time per prompt token riding in a decode step", _S),
    Q("srv_call_batch", "sequences", "Prefill call CPU: requests of the decode step it is sized by (one)", _S),
    Q("srv_call_context_tokens", "tokens", "Prefill call CPU: context of that decode step (one token)", _S),
    *decode_quantities("srv_call", "of one request at a one-token context (sizes a scheduler call's CPU time)"),
    Q("srv_prefill_call_cpu_s", "s", "CPU time of the scheduler call of a separate prefill step: CPU overhead x "
      "scheduler steps x that step's GPU time (0 for mixed prefill)", _S),
    *prefill_quantities("srv_pf1", "of one prompt at the engine's chunk size"),
    Q("srv_prefill_ms", "ms", "Prefill of one prompt (engine model)", _S),
    Q("srv_ttft_idle_ms", "ms", "Time to first token on an idle engine (no queue: the prompt's prefill and the "
      "engine's fixed time per request)", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    inf = ctx.s.inference
    shape = model_shape(ctx.model)
    eng = engine_of(ctx)
    hw = hardware(ctx)
    from workbook.reference import decode_time as dt

    kind = dt.layer_kind(shape)
    n_ar = dt.ALLREDUCES_PER_LAYER if inf.tp > 1 else 0
    kernels = shape.layers * (dt.GEMMS_PER_LAYER[kind] + dt.SMALL_KERNELS_PER_LAYER[kind] + 1 + n_ar)
    call = decode(ctx, 1.0, 1.0)
    call_cpu = pt.call_cpu_from_step_s(eng, one_request_gpu_s=call["gpu_s"])
    pf1 = prefill_values(ctx, "srv_pf1", 1.0, float(eng.prefill_chunk_tokens), call_cpu_s=call_cpu)
    a2a = pt.prefill_alltoall(shape, hw=hw, engine=eng, ep=inf.ep, ep_nodes=ep_nodes(ctx))
    t = pt.ttft_s(wait_s=0.0, prefill_s=pf1["srv_pf1_prefill_s"], overhead_s=pt.request_overhead_s(eng))
    return {
        "srv_prefill_kernels": float(kernels),
        "srv_prefill_launch_s": kernels * eng.graph_launch_us * 1e-6,
        "srv_prefill_cpu_s": 0.0 if eng.prefill_cuda_graphs else kernels * eng.eager_launch_us * 1e-6,
        "srv_prefill_small_floor_s": shape.layers * dt.SMALL_KERNELS_PER_LAYER[kind] * eng.small_kernel_us * 1e-6,
        "srv_prefill_attn_FLOP_per_ctx_token": pt.prefill_attention_FLOPs_per_query(shape, context_tokens=1.0,
                                                                                    tp=inf.tp),
        "srv_kv_up_FLOP_per_token": pt.kv_up_FLOPs_per_token(shape, tp=inf.tp),
        "srv_head_FLOP_per_prompt": 2.0 * shape.d_model * shape.vocab / inf.tp,
        "srv_pf_ep_remote_nodes": a2a["remote_nodes"],
        "srv_pf_ep_other_gpus": a2a["other_gpus"],
        "srv_pf_ep_s_per_token": a2a["s_per_token"],
        "srv_pf_comm_sm_frac": a2a["comm_sm_frac"],
        "srv_pf_moe_layout_B_per_token": pt.moe_layout_bytes_per_token(shape, ep=inf.ep),
        "srv_marginal_prefill_s_per_token": pt.marginal_prefill_s_per_token(
            shape, prompt_tokens=inf.prompt_tokens, hw=hw, engine=eng, tp=inf.tp, ep=inf.ep,
            weight_precision=inf.weight_precision, ep_nodes=ep_nodes(ctx),
            ep_overlap_frac=ep_overlap_frac(ctx)),
        "srv_call_batch": 1.0,
        "srv_call_context_tokens": 1.0,
        **decode_values("srv_call", call),
        "srv_prefill_call_cpu_s": call_cpu,
        **pf1,
        "srv_prefill_ms": pf1["srv_pf1_prefill_s"] * MS_PER_S,
        "srv_ttft_idle_ms": t * MS_PER_S,
    }
