"""KV Cache sheet, engine block: the serving-engine profile in use, the weights one GPU holds as
a serving engine stores them, the engine's memory reserve and its KV capacity in tokens and in
requests (docs/serving.md "Weights and KV per GPU", "Engine memory";
workbook.reference.serving_shape, engine_memory).

The profile is the scenario's ``inference.engine`` (Engines sheet, catalog/engines.yaml); a GPU
without a device record there is taken at its datasheet HBM (hbm_GB, decimal) as the CUDA total.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from workbook.calc.base import Context, Q
from workbook.reference import engine_memory as em
from workbook.reference import serving_shape as ss
from workbook.units import GB, GiB, field_unit

_S = "docs/serving.md"
#: engine-profile fields shown as numbers (flags 1/0), in catalogue order
ENGINE_FIELDS = ["memory_fraction", "max_num_seqs", "max_num_batched_tokens", "block_size_tokens", "profile_sampler",
                 "sampler_bytes_per_logit", "non_torch_GiB_tp1", "non_torch_GiB_tp_multi", "cuda_context_GiB",
                 "cuda_graph_GiB", "cuda_graph_in_budget", "cuda_graphs", "cuda_graph_max_batch", "graph_launch_us",
                 "eager_launch_us", "small_kernel_us", "allreduce_alpha_us", "allreduce_bus_efficiency",
                 "custom_allreduce_max_MB", "nccl_alpha_us", "cpu_overhead_frac", "cpu_per_seq_us", "scheduler_steps",
                 "decode_micro_batches", "ep_overlap_frac", "prefill_comm_sms",
                 "decode_comm_sm_frac", "moe_expert_us", "moe_layer_us", "prefill_chunk_tokens", "prefill_cuda_graphs", "request_overhead_ms"]
#: tolerance before rounding a token or request count down (binary noise just below an integer)
FLOOR_EPS = 1e-9


def _unit(field: str) -> str:
    from workbook.catalog.engines import EngineProfile

    return field_unit(field, EngineProfile.model_fields[field].annotation)


def engines_of(ctx: Context) -> Any:
    """The serving-engine catalogue of the context (catalog/engines.yaml when the context has none)."""
    if ctx.engines is not None:
        return ctx.engines
    from workbook.catalog.engines import load_engines

    return load_engines()


def engine_of(ctx: Context) -> Any:
    """The scenario's engine profile (InputError when the catalogue has no such id)."""
    return engines_of(ctx).profile(ctx.s.inference.engine)


def device_of(ctx: Context) -> Any:
    """The GPU's device record; without one, the datasheet HBM and the GPU's streaming efficiency."""
    for d in engines_of(ctx).devices:
        if d.gpu == ctx.gpu.id:
            return d
    hbm_eff = float(ctx.eff.hbm_efficiency) if ctx.eff is not None else 1.0
    return SimpleNamespace(gpu=ctx.gpu.id, cuda_total_GiB=float(ctx.gpu.hbm_GB) * GB / GiB,
                           decode_hbm_efficiency=hbm_eff)


def _scenario_or_engine(ctx: Context, name: str) -> float:
    """An inference input that a blank leaves to the engine profile's field of the same name."""
    v = getattr(ctx.s.inference, name)
    return float(getattr(engine_of(ctx), name) if v is None else v)


def ep_overlap_frac(ctx: Context) -> float:
    """The serving EP overlap: the scenario's, or (blank) the engine profile's."""
    return _scenario_or_engine(ctx, "ep_overlap_frac")


def memory_fraction(ctx: Context) -> float:
    """The engine memory fraction: the scenario's, or (blank) the engine profile's."""
    return _scenario_or_engine(ctx, "memory_fraction")


def capacity(ctx: Context) -> dict[str, float]:
    """engine_memory.kv_capacity of the scenario (full-context requests: prompt + output)."""
    inf = ctx.s.inference
    return em.kv_capacity(ss.model_shape(ctx.model), engine=engine_of(ctx), device_total_GiB=device_of(ctx).cuda_total_GiB,
                          tp=inf.tp, ep=inf.ep, redundant_experts=inf.redundant_experts,
                          weight_precision=inf.weight_precision, kv_precision=inf.kv_precision,
                          memory_fraction=memory_fraction(ctx), tokens_per_request=inf.prompt_tokens + inf.output_tokens)


QUANTITIES = [
    *[Q(f"srv_eng_{f}", _unit(f), f"Engine profile: {f}", "catalog/engines.yaml") for f in ENGINE_FIELDS],
    Q("srv_ep_overlap_frac", "fraction", "Serving EP overlap in use: the scenario's, blank = the engine profile's", _S),
    Q("srv_memory_rule_position", "count", "Engine memory rule: 1 total fraction (vLLM), 2 static (SGLang), 3 free (TRT-LLM)", _S),
    Q("srv_prefill_separate_flag", "0/1", "Engine prefills in separate steps (1) or in chunks mixed into decode (0)", _S),
    Q("srv_device_known_flag", "0/1", "The GPU has a device record on the Engines sheet (0 = datasheet HBM used)", _S),
    Q("srv_device_total_GiB", "GiB", "Device memory the CUDA runtime reports (no record: datasheet HBM)", _S),
    Q("srv_memory_fraction", "fraction", "Engine memory fraction in use (scenario, else the profile's)", _S),
    Q("srv_attn_replicated_per_layer", "count", "MLA down-projections per layer, replicated over TP (0 for GQA)", _S),
    Q("srv_attn_sharded_per_layer", "count", "Attention projections per layer split by TP", _S),
    Q("srv_linear_bytes_per_param", "B/param", "Linear-layer bytes per weight (FP8/INT8: one FP32 scale per 128x128 block)", _S),
    Q("srv_routed_slots", "count", "Routed-expert slots per GPU per MoE layer (EP > 1: (E + redundant)/EP; else all E)", _S),
    Q("srv_routed_shard", "GPUs", "GPUs one routed expert's weights are split over (EP > 1: whole experts, 1; else TP)", _S),
    Q("srv_w_attention_B", "B", "Attention weights per GPU", _S),
    Q("srv_w_dense_ffn_B", "B", "Dense-FFN weights per GPU", _S),
    Q("srv_w_shared_B", "B", "Shared-expert weights per GPU", _S),
    Q("srv_w_routed_B", "B", "Routed-expert weights per GPU", _S),
    Q("srv_w_router_norms_B", "B", "Router and norm weights per GPU (replicated, checkpoint precision)", _S),
    Q("srv_w_embedding_B", "B", "Embedding per GPU (vocab-parallel, checkpoint precision)", _S),
    Q("srv_w_head_B", "B", "LM head per GPU (vocab-parallel, checkpoint precision; 0 when tied)", _S),
    Q("srv_weights_per_gpu_GiB", "GiB", "Weights per GPU as the engine stores them", _S),
    Q("srv_qk_head_dim", "count", "Query/key head width of the serving model (MLA: no-RoPE + RoPE)", _S),
    Q("srv_v_head_dim", "count", "Value head width of the serving model", _S),
    Q("srv_dense_ffn_width", "count", "FFN width of the dense layers", _S),
    Q("srv_fwd_ffn_width", "count", "FFN activation width per token in the profiled forward (MoE: k·(d + 3·d_e/TP))", _S),
    Q("srv_fwd_act_B_per_token", "B/token", "Activation bytes per token of the profiled forward", _S),
    Q("srv_fwd_act_GiB", "GiB", "Activation peak of the profiled forward at the engine's token budget", _S),
    Q("srv_sampler_GiB", "GiB", "Sampler peak of the memory profile (max_num_seqs rows; 0 if not profiled)", _S),
    Q("srv_act_peak_GiB", "GiB", "Activation peak the engine reserves (total/free rules; 0 for the static rule)", _S),
    Q("srv_non_torch_GiB", "GiB", "Non-torch memory (NCCL, custom all-reduce) at the serving TP", _S),
    Q("srv_kv_budget_total_rule_GiB", "GiB", "KV budget by the total-fraction rule: u·M − W − A − N [− G]", _S),
    Q("srv_kv_budget_static_rule_GiB", "GiB", "KV budget by the static-fraction rule: f·(M − C − N) − W [− G]", _S),
    Q("srv_kv_budget_free_rule_GiB", "GiB", "KV budget by the free-fraction rule: f·(M − C − N − W − A) [− G]", _S),
    Q("srv_kv_budget_GiB", "GiB", "KV cache memory per GPU under the engine's rule (0 = does not fit)", _S),
    Q("srv_kv_bytes_per_token", "B/token", "KV bytes per token per GPU (GQA heads split over TP, at least one; MLA latent whole)", _S),
    Q("srv_kv_tokens", "tokens", "KV capacity in tokens (whole blocks)", _S),
    Q("srv_request_tokens", "tokens", "Tokens of one request at full context (prompt + output)", _S),
    Q("srv_request_block_tokens", "tokens", "Tokens one full request occupies, rounded up to whole blocks", _S),
    Q("srv_kv_requests", "sequences", "Full-context requests the KV pool holds (max_num_seqs cap)", _S),
    Q("srv_kv_fits_flag", "0/1", "The KV pool holds one full request (1 = yes)", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    inf, m, q = ctx.s.inference, ctx.model, ctx.q
    eng = engine_of(ctx)
    shape = ss.model_shape(m)
    cap = capacity(ctx)
    groups = ss.weight_groups_per_gpu_bytes(shape, weight_precision=inf.weight_precision, tp=inf.tp, ep=inf.ep,
                                            redundant_experts=inf.redundant_experts)
    tp = float(inf.tp)
    d = float(m.d_model)
    if shape.moe:
        ffn = max(shape.top_k * (d + em.FWD_PASSES_PER_FFN * shape.expert_ffn_width / tp),
                  em.FWD_PASSES_PER_FFN * shape.dense_ffn_width / tp if shape.dense_layers else 0.0)
    else:
        ffn = em.FWD_PASSES_PER_FFN * shape.dense_ffn_width / tp
    per_tok_fwd = em.forward_activation_bytes(shape, tokens=1.0, tp=inf.tp)
    sampler = em.sampler_profile_bytes(shape, rows=min(eng.max_num_seqs, eng.max_num_batched_tokens),
                                       bytes_per_logit=eng.sampler_bytes_per_logit) if eng.profile_sampler else 0.0
    frac = memory_fraction(ctx)
    M, W, A = cap["device_total_GiB"], cap["weights_GiB"], cap["activation_GiB"]
    N, C, G = cap["non_torch_GiB"], cap["context_GiB"], cap["graph_GiB"] * float(eng.cuda_graph_in_budget)
    block = float(eng.block_size_tokens)
    req = float(inf.prompt_tokens + inf.output_tokens)
    out = {f"srv_eng_{f}": float(getattr(eng, f)) for f in ENGINE_FIELDS}
    out.update({
        "srv_ep_overlap_frac": ep_overlap_frac(ctx),
        "srv_memory_rule_position": float(em.MEMORY_RULES.index(eng.memory_rule) + 1),
        "srv_prefill_separate_flag": float(eng.prefill_mode == "separate"),
        "srv_device_known_flag": float(any(dv.gpu == ctx.gpu.id for dv in engines_of(ctx).devices)),
        "srv_device_total_GiB": float(device_of(ctx).cuda_total_GiB),
        "srv_memory_fraction": frac,
        "srv_attn_replicated_per_layer": shape.attention_replicated_per_layer,
        "srv_attn_sharded_per_layer": shape.attention_per_layer,
        "srv_linear_bytes_per_param": ss.linear_bytes_per_param(inf.weight_precision),
        "srv_routed_slots": ss.experts_per_gpu(shape, ep=inf.ep, redundant_experts=inf.redundant_experts)
        if shape.moe else (inf.redundant_experts / inf.ep if inf.ep > 1 else 0.0),
        "srv_routed_shard": float(1 if inf.ep > 1 else inf.tp),
        "srv_w_attention_B": groups["attention"],
        "srv_w_dense_ffn_B": groups["dense_ffn"],
        "srv_w_shared_B": groups["shared"],
        "srv_w_routed_B": groups["routed"],
        "srv_w_router_norms_B": groups["router"] + groups["norms"],
        "srv_w_embedding_B": groups["embedding"],
        "srv_w_head_B": groups["head"],
        "srv_weights_per_gpu_GiB": W,
        "srv_qk_head_dim": shape.qk_head_dim,
        "srv_v_head_dim": shape.v_head_dim,
        "srv_dense_ffn_width": shape.dense_ffn_width,
        "srv_fwd_ffn_width": ffn,
        "srv_fwd_act_B_per_token": per_tok_fwd,
        "srv_fwd_act_GiB": em.forward_activation_bytes(shape, tokens=eng.max_num_batched_tokens, tp=inf.tp) / GiB,
        "srv_sampler_GiB": sampler / GiB,
        "srv_act_peak_GiB": A,
        "srv_non_torch_GiB": N,
        "srv_kv_budget_total_rule_GiB": frac * M - W - A - N - G,
        "srv_kv_budget_static_rule_GiB": frac * (M - C - N) - W - G,
        "srv_kv_budget_free_rule_GiB": frac * max(0.0, M - C - N - W - A) - G,
        "srv_kv_budget_GiB": cap["kv_budget_GiB"],
        "srv_kv_bytes_per_token": cap["kv_bytes_per_token"],
        "srv_kv_tokens": cap["kv_tokens"],
        "srv_request_tokens": req,
        "srv_request_block_tokens": math.ceil(req / block - FLOOR_EPS) * block,
        "srv_kv_requests": cap["concurrent_requests"],
        "srv_kv_fits_flag": float(cap["concurrent_requests"] >= 1),
    })
    return out
