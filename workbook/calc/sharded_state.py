"""ZeRO sheet, tensor memory model: weights, gradients and optimizer state per GPU with dense and
expert parameters sharded separately, and the most loaded rank's training memory.

From ``workbook.reference.sharded_state`` (Megatron-LM ``theoretical_memory_usage.py``
``compute_weight_and_optimizer_memory`` and parallel folding; Rajbhandari et al. 2020, ZeRO):
attention, dense FFN, shared experts, embedding and head divide by TP; norms and routers are
replicated; routed experts divide by EP·ETP; a rank holds its stage's layers (the first also the
embedding, the last the final norm and head). ZeRO stage 1 shards the optimizer state, 2 also the
gradients, 3 also the weights: dense state over DP·CP, expert state over EDP = N/(ETP·EP·PP).
Bytes per parameter are the Training Memory sheet's (training precision, gradient precision,
optimizer with its FP32 master), so 18 B/param is BF16 weights, FP32 gradients and Adam.

At ZeRO-3 a rank also holds the largest layer it gathers (DeepSpeed stage3.py
``estimate_zero3_model_states_mem_needs``: 4 B/param of the largest layer, the gathered 16-bit
weights and their gradients): one transformer block of each kind its stage holds, the embedding on
the first stage, the LM head on the last, per GPU. Model states = state + that working set.

The rank's memory is its model states plus its activations (Activations sheet); the most loaded
rank is one of the four candidates there, ``state_total_per_gpu_GB`` the reference's maximum over
all ranks. Less the runtime overhead (CUDA context, NCCL buffers) that is what PyTorch's caching
allocator hands out (allocated); it reserves more from the device, allocated x (1 + the framework's
``allocator_reserve_frac``, catalog/frameworks.yaml; GMLake, ASPLOS 2024).
"""

from __future__ import annotations

from workbook.catalog.frameworks import shipped_frameworks
from workbook.calc.act_stages import CANDIDATES, candidate_stages, stage_activations
from workbook.calc.base import Context, Q
from workbook.reference import sharded_state as ss
from workbook.reference import zero as zr
from workbook.units import GB

_M = "Megatron theoretical_memory_usage.py"
_Z = "Rajbhandari 2020 (ZeRO)"
_D = "DeepSpeed stage3.py estimate_zero3_model_states_mem_needs"
_A = "GMLake (ASPLOS 2024, arXiv 2401.08156)"
_GROUPS = ("weights", "grads", "optimizer")

QUANTITIES = [
    Q("state_dense_layer_tp_params", "params", "Per dense layer, split over TP: attention + dense FFN", _M),
    Q("state_moe_layer_tp_params", "params", "Per MoE layer, split over TP: attention + shared experts", _M),
    Q("state_layer_replicated_params", "params", "Per layer, replicated: norms (+ MLA latent norms)", _M),
    Q("state_moe_layer_expert_params", "params", "Per MoE layer, split over EP x ETP: routed experts", _M),
    Q("state_embedding_params", "params", "Embedding on the first rank (split over TP)", _M),
    Q("state_head_params", "params", "LM head on the last rank, split over TP (tied: an embedding copy when PP > 1)", _M),
    Q("state_final_norm_params", "params", "Final norm on the last rank (replicated)", _M),
    *[Q(f"state_{kind}_{g}_bytes_per_param", "B/param",
        f"{kind.capitalize()} {g} bytes per parameter at the ZeRO stage (over {deg})", _Z)
      for kind, deg in (("dense", "DP x CP"), ("expert", "EDP")) for g in _GROUPS],
    Q("state_dense_block_gpu_params", "params", "One dense block per GPU, gathered: (attention + dense FFN) / TP + norms", _D),
    Q("state_moe_block_gpu_params", "params",
      "One MoE block per GPU, gathered: (attention + shared experts) / TP + norms + router + routed experts / (EP x ETP)", _D),
    Q("state_zero3_gather_bytes_per_param", "B/param",
      "ZeRO-3 working-set bytes per gathered parameter: weights + their gradients (0 below ZeRO-3)", _D),
    Q("state_zero3_kept_flag", "0/1", "ZeRO-3 keeping the gathered weights from forward to backward (reshard after "
      "forward off): the stage's weights are all gathered at the backward's start", "docs/step_time.md (ZeRO-3)"),
    Q("state_dense_bytes_per_param", "B/param", "Dense state bytes per parameter at the ZeRO stage", _Z),
    Q("state_expert_bytes_per_param", "B/param", "Expert state bytes per parameter at the ZeRO stage", _Z),
    *[q for x, name in CANDIDATES for q in (
        Q(f"state_st{x}_dense_params", "params", f"Stage {name}: dense parameters per GPU", _M),
        Q(f"state_st{x}_expert_params", "params", f"Stage {name}: expert parameters per GPU", _M),
        Q(f"state_st{x}_zero3_layer_params", "params",
          f"Stage {name}: largest layer gathered per GPU (a block, embedding on the first, head on the last)", _D))],
    *[Q(f"state_st{x}_total_GB", "GB", f"Stage {name}: model states + activations per GPU", _M) for x, name in CANDIDATES],
    Q("state_worst_pick", "count", "Most loaded candidate (1 = A ... 4 = D)", _M),
    Q("state_worst_stage", "stage", "Most loaded pipeline rank", _M),
    Q("state_dense_params_per_gpu", "params", "Dense parameters per GPU on the most loaded rank", _M),
    Q("state_expert_params_per_gpu", "params", "Expert parameters per GPU on the most loaded rank", _M),
    Q("state_weights_GB", "GB", "Weights per GPU on the most loaded rank (tensor model)", _M),
    Q("state_grads_GB", "GB", "Gradients per GPU on the most loaded rank (tensor model)", _M),
    Q("state_optimizer_GB", "GB", "Optimizer states per GPU on the most loaded rank (tensor model)", _M),
    Q("state_per_gpu_GB", "GB", "Weights + gradients + optimizer per GPU on the most loaded rank", _M),
    Q("state_zero3_layer_params", "params", "Largest layer gathered per GPU on the most loaded rank", _D),
    Q("state_zero3_working_set_GB", "GB", "ZeRO-3 working set per GPU: the gathered layer's weights + gradients "
      "(+ the stage's other weights, unsharded, when they are kept gathered)", _D),
    Q("state_model_states_per_gpu_GB", "GB",
      "Model states per GPU: weights + gradients + optimizer + ZeRO-3 working set (DeepSpeed's estimate)", _D),
    Q("state_act_per_gpu_GB", "GB", "Activations on the most loaded rank (or the per-GPU override)", _M),
    Q("state_total_per_gpu_GB", "GB", "Training memory per GPU, tensor model: model states + activations + overhead", _M),
    Q("state_allocator_reserve_frac", "fraction", "Framework's caching allocator: reserved / allocated - 1 at the peak "
      "(catalog/frameworks.yaml allocator_reserve_frac)", _A),
    Q("state_allocated_per_gpu_GB", "GB", "Tensors allocated per GPU at the peak, tensor model (allocated, as "
      "torch.cuda.max_memory_allocated: total - runtime overhead)", _M),
    Q("state_reserved_per_gpu_GB", "GB", "Memory the caching allocator reserves per GPU at the peak, tensor model "
      "(reserved, as torch.cuda.max_memory_reserved: allocated x (1 + reserve fraction))", _A),
]


def recipe(q: dict[str, float]) -> dict[str, float]:
    """The Training Memory sheet's bytes per parameter as a sharded_state recipe (all optimizer
    states, the FP32 master included, shard from ZeRO stage 1)."""
    master = q["train_master_bytes_per_param"]
    return {"weights": q["train_weight_bytes_per_param"], "grads": q["train_grad_bytes_per_param"],
            "master": master, "adam_m": q["train_optimizer_bytes_per_param"] - master}


def compute(ctx: Context) -> dict[str, float]:
    t, m, q = ctx.s.training, ctx.model, ctx.q
    etp = int(q["plan_etp"])
    rec = recipe(q)
    state = ss.model_state_per_gpu(m, num_gpus=t.num_gpus, tp=t.tp, pp=t.pp, cp=t.cp, ep=t.ep, etp=etp,
                                   zero_stage=t.zero_stage, recipe=rec,
                                   reshard_after_forward=t.reshard_after_forward == "on")
    acts = stage_activations(ctx)
    c = ss.sharding_param_counts(m)
    last = ss.stage_params(counts=c, first_layer=0, n_layers=0, first_stage=False, last_stage=True, pp=t.pp)
    out = {
        "state_dense_layer_tp_params": c["attention_per_layer"] + c["dense_ffn_per_dense_layer"],
        "state_moe_layer_tp_params": c["attention_per_layer"] + c["shared_experts_per_moe_layer"],
        "state_layer_replicated_params": c["norm_per_layer"] + c["attention_norm_per_layer"],
        "state_moe_layer_expert_params": c["routed_experts_per_moe_layer"],
        "state_embedding_params": c["embedding"],
        "state_head_params": last["tp_sharded"],
        "state_final_norm_params": c["final_norm"],
        "state_dense_block_gpu_params": ss.block_params_per_gpu(c, moe_layer=False, tp=t.tp, ep=t.ep, etp=etp),
        "state_moe_block_gpu_params": ss.block_params_per_gpu(c, moe_layer=True, tp=t.tp, ep=t.ep, etp=etp),
        "state_zero3_gather_bytes_per_param": zr.zero3_working_set_bytes(
            layer_params=1.0, weight_bytes=rec["weights"]) if t.zero_stage == 3 else 0.0,
    }
    for kind, degree in (("dense", state["dp"] * t.cp), ("expert", state["edp"])):
        b = ss.state_components_bytes_per_param(recipe=rec, zero_stage=t.zero_stage, shard_degree=degree)
        for g in _GROUPS:
            out[f"state_{kind}_{g}_bytes_per_param"] = b[f"{g}_group"]
        out[f"state_{kind}_bytes_per_param"] = b["total"]

    def act_GB(i: int) -> float:
        return acts["per_stage"][i]["peak_bytes"] / GB if t.act_GB is None else float(t.act_GB)

    first_moe = int(m.n_dense_layers or 0) if m.moe else int(m.layers)
    picks = candidate_stages(layers=int(m.layers), pp=t.pp, first_moe_layer=first_moe)
    totals = []
    for (x, _), i in zip(CANDIDATES, picks):
        row = state["per_stage"][i]
        out[f"state_st{x}_dense_params"] = row["dense_params"]
        out[f"state_st{x}_expert_params"] = row["expert_params"]
        out[f"state_st{x}_zero3_layer_params"] = row["zero3_layer_params"]
        totals.append(row["model_states_bytes"] / GB + act_GB(i))
        out[f"state_st{x}_total_GB"] = totals[-1]
    pick = totals.index(max(totals))
    worst = state["per_stage"][picks[pick]]
    ovh = q["train_overhead_GB"]
    out.update({
        "state_worst_pick": float(pick + 1),
        "state_worst_stage": float(picks[pick]),
        "state_dense_params_per_gpu": worst["dense_params"],
        "state_expert_params_per_gpu": worst["expert_params"],
        "state_weights_GB": worst["weights"] / GB,
        "state_grads_GB": worst["grads"] / GB,
        "state_optimizer_GB": worst["optimizer"] / GB,
        "state_per_gpu_GB": worst["total_bytes"] / GB,
        "state_zero3_kept_flag": t.zero_stage == 3 and t.reshard_after_forward == "off",
        "state_zero3_layer_params": worst["zero3_layer_params"],
        "state_zero3_working_set_GB": worst["zero3_working_bytes"] / GB,
        "state_model_states_per_gpu_GB": worst["model_states_bytes"] / GB,
        "state_act_per_gpu_GB": act_GB(picks[pick]),
        # the reference's maximum over every rank (the sheet's is over the four candidates)
        "state_total_per_gpu_GB": max(s["model_states_bytes"] / GB + act_GB(s["stage"])
                                      for s in state["per_stage"]) + ovh,
    })
    reserve = shipped_frameworks()[t.framework].allocator_reserve_frac
    allocated = out["state_total_per_gpu_GB"] - ovh
    out.update({"state_allocator_reserve_frac": reserve, "state_allocated_per_gpu_GB": allocated,
                "state_reserved_per_gpu_GB": allocated * (1 + reserve)})
    return out
