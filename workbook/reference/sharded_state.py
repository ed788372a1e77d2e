"""Weights, gradients and optimizer state per GPU under TP, PP, CP, DP, EP and ZeRO / the
distributed optimizer, with dense and expert parameters sharded separately.

Sources:

* Megatron-LM ``megatron/training/theoretical_memory_usage.py`` (``compute_weight_and_optimizer_
  memory``): dense parameters split over TP and PP (norms, routers replicated), routed experts
  over EP × expert-TP and PP; the most loaded rank holds its share of the layers plus the embedding;
  bytes per parameter 18 without the distributed optimizer, 6 + 12/d with it, d being the
  data-parallel size for dense and the expert-data-parallel size for expert parameters.
* Megatron-LM ``docs/user-guide/features/dist_optimizer.md``: bytes per parameter by precision —
  fp16 params/fp16 grads 20 (4 + 16/d distributed), bf16 params/fp32 grads 18 (6 + 12/d), fp32
  16 (8 + 8/d).
* Rajbhandari et al. 2020 (ZeRO, arXiv 1910.02054): stage 1 shards optimizer state, stage 2 also
  gradients, stage 3 also the weights, over the data-parallel group.
* DeepSeek-V3 technical report (arXiv 2412.19437) §3.2.2 (DualPipe keeps two copies of the
  parameters), §3.3.2 (BF16 AdamW moments, FP32 master weights and gradients).
* DeepSpeed ``deepspeed/runtime/zero/stage3.py`` ``estimate_zero3_model_states_mem_needs`` and
  ``docs/code-docs/source/memory.rst``: under ZeRO-3 a GPU also holds the layer being run, gathered
  (16-bit weights + the 16-bit gradients computed before the reduce-scatter, 4 B/param):
  ``largest_layer_memory + 18 * params / total_gpus`` per GPU without offload.

Layout (Megatron's parallel folding): the world N = TP·PP·CP·DP for dense parameters; experts use
N = ETP·EP·PP·EDP, so EP lives inside DP·CP and the expert-data-parallel size is
EDP = N/(ETP·EP·PP) (= DP·CP/EP when ETP = TP). The distributed optimizer / ZeRO shards dense state
over DP·CP (Megatron's dp_cp group) and expert state over EDP.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import Any

from workbook.reference.activations import stage_layer_counts
from workbook.reference.params import attention_params, expert_params, ffn_params, mla_attention_params
from workbook.reference.zero import zero3_working_set_bytes
from workbook.units import GB, GiB

#: bytes per parameter of each state component by training recipe (name -> component -> bytes)
PRECISION_RECIPES: dict[str, dict[str, float]] = {
    # Megatron default mixed precision: bf16 params, fp32 main grads, fp32 master + Adam m, v: 18
    "bf16_fp32_grads": {"weights": 2.0, "grads": 4.0, "master": 4.0, "adam_m": 4.0, "adam_v": 4.0},
    # bf16 grads reduced in bf16 (the book's 16-byte ledger, spec 17.4.1): 16
    "bf16_bf16_grads": {"weights": 2.0, "grads": 2.0, "master": 4.0, "adam_m": 4.0, "adam_v": 4.0},
    # fp16 params and grads; the optimizer keeps an fp32 copy of the grads: 20
    "fp16_fp16_grads": {"weights": 2.0, "grads": 2.0, "main_grads": 4.0, "master": 4.0,
                        "adam_m": 4.0, "adam_v": 4.0},
    # fp32 training: the params are the master copy: 16
    "fp32": {"weights": 4.0, "grads": 4.0, "adam_m": 4.0, "adam_v": 4.0},
    # DeepSeek-V3 §3.3.2: bf16 weights, fp32 grads and master, bf16 AdamW moments: 14
    "deepseek_v3": {"weights": 2.0, "grads": 4.0, "master": 4.0, "adam_m": 2.0, "adam_v": 2.0},
}

#: which ZeRO stage first shards each component (1 optimizer state, 2 gradients, 3 weights)
COMPONENT_ZERO_STAGE: dict[str, int] = {"weights": 3, "grads": 2, "main_grads": 1, "master": 1,
                                        "adam_m": 1, "adam_v": 1}
ZERO_STAGES = (0, 1, 2, 3)


def _pos(**values: float) -> None:
    for k, v in values.items():
        if v is None or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{k} must be a finite positive number, got {v!r}")


def _recipe(recipe: str | dict[str, float]) -> dict[str, float]:
    if isinstance(recipe, dict):
        unknown = set(recipe) - set(COMPONENT_ZERO_STAGE)
        if unknown:
            raise ValueError(f"unknown state components {sorted(unknown)}")
        return dict(recipe)
    try:
        return PRECISION_RECIPES[recipe]
    except KeyError:
        raise ValueError(f"unknown recipe {recipe!r}; expected one of {sorted(PRECISION_RECIPES)}") from None


# --------------------------------------------------------------------------- bytes per parameter
def state_components_bytes_per_param(*, recipe: str | dict[str, float] = "bf16_fp32_grads",
                                     zero_stage: int = 0, shard_degree: float = 1) -> dict[str, float]:
    """Bytes per parameter of each state component on one rank (ZeRO, Rajbhandari et al. 2020):
    a component is divided by ``shard_degree`` once ``zero_stage`` reaches its stage (optimizer
    state incl. the fp32 master at 1, gradients at 2, weights at 3). Megatron's distributed
    optimizer is stage 1 here: 6 + 12/d for ``bf16_fp32_grads`` (dist_optimizer.md).
    Returns each component plus ``weights``/``grads``/``optimizer`` groups and ``total``."""
    if isinstance(recipe, dict):
        return dict(_components(None, tuple(recipe.items()), zero_stage, shard_degree))
    return dict(_components(recipe, None, zero_stage, shard_degree))


@functools.lru_cache(maxsize=8192, typed=True)
def _components(name: Any, items: tuple | None, zero_stage: int, shard_degree: float) -> dict[str, float]:
    """state_components_bytes_per_param memoised on all its inputs (a recipe by ``name`` or as its
    ``items``); callers get a copy."""
    recipe = name if items is None else dict(items)
    if zero_stage not in ZERO_STAGES:
        raise ValueError(f"zero_stage must be 0-3, got {zero_stage}")
    _pos(shard_degree=shard_degree)
    comps = _recipe(recipe)
    out = {k: (b / shard_degree if zero_stage >= COMPONENT_ZERO_STAGE[k] else b) for k, b in comps.items()}
    out_groups = {"weights_group": out.get("weights", 0.0), "grads_group": out.get("grads", 0.0),
                  "optimizer_group": sum(v for k, v in out.items() if k not in ("weights", "grads"))}
    out.update(out_groups)
    out["total"] = sum(v for k, v in out.items() if k in comps)
    return out


def state_bytes_per_param(*, recipe: str | dict[str, float] = "bf16_fp32_grads", zero_stage: int = 0,
                          shard_degree: float = 1) -> float:
    """Total state bytes per parameter on one rank (see ``state_components_bytes_per_param``):
    bf16_fp32_grads 18 → 6 + 12/d at stage 1; bf16_bf16_grads 16 → 4 + 12/d; fp16 20 → 4 + 16/d;
    fp32 16 → 8 + 8/d; deepseek_v3 14 → 6 + 8/d."""
    return state_components_bytes_per_param(recipe=recipe, zero_stage=zero_stage,
                                            shard_degree=shard_degree)["total"]


# --------------------------------------------------------------------------- parallel group sizes
def dense_data_parallel(*, num_gpus: int, tp: int, pp: int, cp: int = 1) -> int:
    """DP = N/(TP·PP·CP) (Megatron); raises if not a whole number."""
    _pos(num_gpus=num_gpus, tp=tp, pp=pp, cp=cp)
    dp, rem = divmod(int(num_gpus), int(tp * pp * cp))
    if rem or dp < 1:
        raise ValueError(f"num_gpus={num_gpus} is not a multiple of TP·PP·CP={tp * pp * cp}")
    return dp


def expert_data_parallel(*, num_gpus: int, pp: int, ep: int, etp: int = 1) -> int:
    """Expert-data-parallel size EDP = N/(ETP·EP·PP) (Megatron parallel folding; = DP·CP/EP when
    ETP = TP); raises if not a whole number."""
    _pos(num_gpus=num_gpus, pp=pp, ep=ep, etp=etp)
    edp, rem = divmod(int(num_gpus), int(etp * ep * pp))
    if rem or edp < 1:
        raise ValueError(f"num_gpus={num_gpus} is not a multiple of ETP·EP·PP={etp * ep * pp}")
    return edp


# --------------------------------------------------------------------------- parameters by sharding class
def _get(m: Any, name: str, default: Any = None) -> Any:
    v = getattr(m, name, default)
    return default if v is None else v


def sharding_param_counts(m: Any) -> dict[str, float]:
    """Parameter counts of a catalogue Model split by how they shard (spec 17.2 counts via
    workbook.reference.params; the parts sum to ``model_param_counts(m)["params_total"]``).

    Per layer: ``attention_per_layer`` (TP-sharded linear weights, QKV bias included),
    ``attention_norm_per_layer`` (MLA latent norms, replicated), ``norm_per_layer`` (replicated),
    ``dense_ffn_per_dense_layer`` (TP), ``shared_experts_per_moe_layer`` (TP),
    ``router_per_moe_layer`` (replicated), ``routed_experts_per_moe_layer`` (EP × ETP). Global:
    ``embedding`` (TP), ``output_head`` (TP; 0 when tied), ``final_norm`` (replicated), the layer
    counts ``layers``, ``n_dense_layers``, ``n_moe_layers`` and ``tied``.
    """
    d = float(m.d_model)
    L = int(m.layers)
    attention = str(_get(m, "attention", "mha")).lower()
    if attention == "mla":
        mla = mla_attention_params(
            d_model=d, n_heads=m.n_heads, q_lora_rank=_get(m, "q_lora_rank"), kv_lora_rank=m.kv_lora_rank,
            qk_rope_head_dim=m.qk_rope_head_dim, qk_nope_head_dim=m.qk_nope_head_dim, v_head_dim=m.v_head_dim)
        attn, attn_norm = mla["linear"], mla["norm"]
    else:
        n_heads = float(m.n_heads)
        attn = attention_params(d_model=d, n_heads=n_heads, n_kv_heads=float(_get(m, "n_kv_heads", n_heads)),
                                head_dim=float(_get(m, "head_dim", d / n_heads)),
                                qkv_bias=bool(_get(m, "qkv_bias", False)))["total"]
        attn_norm = 0.0
    norm_kind = str(_get(m, "norm", "rmsnorm")).lower()
    per_norm = 2.0 if norm_kind == "layernorm" else 1.0
    norm_layer = float(_get(m, "norm_params_per_layer", 2 * d * per_norm))
    ffn = str(_get(m, "ffn", "swiglu"))
    is_moe = bool(_get(m, "moe", False))
    if is_moe:
        n_dense = int(_get(m, "n_dense_layers", 0))
        dense_d_ff = float(_get(m, "dense_d_ff", m.d_ff))
        e = expert_params(d_model=d, expert_d_ff=float(_get(m, "expert_d_ff", m.d_ff)), ffn=ffn)
        n_experts = float(m.n_routed_experts)
        shared = float(_get(m, "n_shared_experts", 0)) * e
        router = n_experts * d
        routed = n_experts * e
    else:
        n_dense, dense_d_ff, shared, router, routed = L, float(m.d_ff), 0.0, 0.0, 0.0
    tied = bool(_get(m, "tied_embeddings", False))
    emb = float(m.vocab) * d
    return {
        "attention_per_layer": attn, "attention_norm_per_layer": attn_norm, "norm_per_layer": norm_layer,
        "dense_ffn_per_dense_layer": ffn_params(d_model=d, d_ff=dense_d_ff, ffn=ffn),
        "shared_experts_per_moe_layer": shared, "router_per_moe_layer": router,
        "routed_experts_per_moe_layer": routed, "embedding": emb, "output_head": 0.0 if tied else emb,
        "final_norm": per_norm * d, "layers": L, "n_dense_layers": n_dense, "n_moe_layers": L - n_dense,
        "tied": tied,
    }


def sharding_params_total(counts: dict[str, float]) -> float:
    """All parameters once (the sum that must equal params.model_param_counts' params_total)."""
    c = counts
    return (c["layers"] * (c["attention_per_layer"] + c["attention_norm_per_layer"] + c["norm_per_layer"])
            + c["n_dense_layers"] * c["dense_ffn_per_dense_layer"]
            + c["n_moe_layers"] * (c["shared_experts_per_moe_layer"] + c["router_per_moe_layer"]
                                   + c["routed_experts_per_moe_layer"])
            + c["embedding"] + c["output_head"] + c["final_norm"])


def stage_params(*, counts: dict[str, float], first_layer: int, n_layers: int, first_stage: bool,
                 last_stage: bool, pp: int) -> dict[str, float]:
    """Parameters a pipeline stage owns, before TP/EP division: ``tp_sharded``, ``replicated``,
    ``expert`` (layers ``first_layer`` .. + n_layers, dense layers first as in the catalogue).
    The first stage holds the embedding; the last the final norm and the output head — with tied
    embeddings and pp > 1 a copy of the embedding for the head (Megatron)."""
    c = counts
    idx = range(first_layer, first_layer + n_layers)
    n_moe = sum(1 for j in idx if j >= c["n_dense_layers"])
    n_dense = n_layers - n_moe
    tp_sh = (n_layers * c["attention_per_layer"] + n_dense * c["dense_ffn_per_dense_layer"]
             + n_moe * c["shared_experts_per_moe_layer"])
    repl = n_layers * (c["attention_norm_per_layer"] + c["norm_per_layer"]) + n_moe * c["router_per_moe_layer"]
    expert = n_moe * c["routed_experts_per_moe_layer"]
    if first_stage:
        tp_sh += c["embedding"]
    if last_stage:
        repl += c["final_norm"]
        if c["tied"]:
            tp_sh += c["embedding"] if pp > 1 else 0.0
        else:
            tp_sh += c["output_head"]
    return {"tp_sharded": tp_sh, "replicated": repl, "expert": expert}


# --------------------------------------------------------------------------- ZeRO-3 gathered layer
def block_params_per_gpu(counts: dict[str, float], *, moe_layer: bool, tp: int = 1, ep: int = 1,
                         etp: int | None = None) -> float:
    """One transformer block's parameters on one GPU once ZeRO-3 has gathered it over DP: the
    TP-sharded linear weights / TP, the replicated norms (and router), routed experts / (EP·ETP)."""
    _pos(tp=tp, ep=ep)
    c, etp = counts, tp if etp is None else etp
    repl = c["attention_norm_per_layer"] + c["norm_per_layer"]
    if moe_layer:
        return ((c["attention_per_layer"] + c["shared_experts_per_moe_layer"]) / tp + repl
                + c["router_per_moe_layer"] + c["routed_experts_per_moe_layer"] / (ep * etp))
    return (c["attention_per_layer"] + c["dense_ffn_per_dense_layer"]) / tp + repl


def gathered_layer_params(counts: dict[str, float], *, first_layer: int, n_layers: int, first_stage: bool,
                          last_stage: bool, pp: int, tp: int = 1, ep: int = 1, etp: int | None = None) -> float:
    """The largest unit ZeRO-3 gathers at once on a GPU of a pipeline stage: one transformer block
    of each kind the stage holds, the embedding on the first stage, the LM head on the last (both
    split over TP; with tied embeddings the head is the embedding, a copy of it when PP > 1).

    DeepSpeed's estimator takes the largest single module (``model_to_params``: each module's own
    parameters, non-recursive), for a Llama the embedding or the head; FSDP gathers one wrapped
    transformer block at a time. The block is taken whole here (the larger of the two readings
    when a block outweighs the embedding, as in Llama 3 405B)."""
    c = counts
    idx = range(first_layer, first_layer + n_layers)
    n_moe = sum(1 for j in idx if j >= c["n_dense_layers"])
    cands = [0.0]
    if n_layers - n_moe > 0:
        cands.append(block_params_per_gpu(c, moe_layer=False, tp=tp, ep=ep, etp=etp))
    if n_moe:
        cands.append(block_params_per_gpu(c, moe_layer=True, tp=tp, ep=ep, etp=etp))
    if first_stage:
        cands.append(c["embedding"] / tp)
    if last_stage:
        head = c["embedding"] if c["tied"] and pp > 1 else c["output_head"]
        cands.append(head / tp)
    return max(cands)


# --------------------------------------------------------------------------- per GPU
def sharded_state_per_gpu_bytes(*, dense_params: float, expert_params: float, dense_shard_degree: float,
                                expert_shard_degree: float, zero_stage: int = 0,
                                recipe: str | dict[str, float] = "bf16_fp32_grads",
                                expert_recipe: str | dict[str, float] | None = None) -> dict[str, float]:
    """State bytes on one GPU: dense params (already divided by TP·PP) × bytes/param sharded over
    DP·CP, expert params (already divided by EP·ETP·PP) × bytes/param sharded over EDP
    (Megatron compute_weight_and_optimizer_memory). Returns weights, grads, optimizer, dense, expert
    and total bytes."""
    if dense_params < 0 or expert_params < 0:
        raise ValueError("parameter counts must be non-negative")
    dense = state_components_bytes_per_param(recipe=recipe, zero_stage=zero_stage, shard_degree=dense_shard_degree)
    exp = state_components_bytes_per_param(recipe=recipe if expert_recipe is None else expert_recipe,
                                           zero_stage=zero_stage, shard_degree=expert_shard_degree)
    out = {g: dense_params * dense[f"{g}_group"] + expert_params * exp[f"{g}_group"]
           for g in ("weights", "grads", "optimizer")}
    out["dense_bytes"] = dense_params * dense["total"]
    out["expert_bytes"] = expert_params * exp["total"]
    out["total_bytes"] = out["dense_bytes"] + out["expert_bytes"]
    return out


def stage_holdings(m: Any, *, tp: int = 1, pp: int = 1, ep: int = 1, etp: int | None = None,
                   stage_layers: Sequence[int] | None = None, dualpipe: bool = False) -> list[dict[str, Any]]:
    """What each pipeline rank holds, before any DP or ZeRO sharding (see ``model_state_per_gpu``):
    ``stage``, ``stages_held``, ``dense_params`` (TP-sharded / TP + replicated), ``expert_params``
    (/ (EP·ETP)) and ``zero3_layer_params`` (its largest gathered unit). Independent of the GPU count,
    so a search over DP computes it once per (TP, PP, EP, ETP)."""
    etp = tp if etp is None else etp
    c = sharding_param_counts(m)
    if c["n_moe_layers"]:
        n_exp = float(m.n_routed_experts)
        if n_exp % ep:
            raise ValueError(f"ep={ep} must divide the {int(n_exp)} routed experts")
    L = int(c["layers"])
    counts = list(stage_layers) if stage_layers is not None else stage_layer_counts(layers=L, pp=pp)
    if len(counts) != pp or sum(counts) != L:
        raise ValueError(f"stage_layers must give {pp} stages summing to {L} layers")
    starts = list(itertools.accumulate(counts[:-1], initial=0))  # first layer of each stage
    raw = [stage_params(counts=c, first_layer=starts[i], n_layers=counts[i], first_stage=i == 0,
                        last_stage=i == pp - 1, pp=pp) for i in range(pp)]
    out = []
    for i in range(pp):
        held = [i, pp - 1 - i] if dualpipe and pp - 1 - i != i else [i]
        dense = sum(raw[j]["tp_sharded"] / tp + raw[j]["replicated"] for j in held)
        expert = sum(raw[j]["expert"] / (ep * etp) for j in held)
        layer = max(gathered_layer_params(c, first_layer=starts[j], n_layers=counts[j], first_stage=j == 0,
                                          last_stage=j == pp - 1, pp=pp, tp=tp, ep=ep, etp=etp) for j in held)
        out.append({"stage": i, "stages_held": held, "dense_params": dense, "expert_params": expert,
                    "zero3_layer_params": layer})
    return out


def model_state_per_gpu(
    m: Any,
    *,
    num_gpus: int,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    ep: int = 1,
    etp: int | None = None,
    zero_stage: int = 0,
    recipe: str | dict[str, float] = "bf16_fp32_grads",
    stage: int | None = None,
    stage_layers: Sequence[int] | None = None,
    dualpipe: bool = False,
    holdings: list[dict[str, Any]] | None = None,
    reshard_after_forward: bool = True,
) -> dict[str, Any]:
    """Weights + gradients + optimizer state on one GPU of pipeline rank ``stage`` (None = the
    most loaded rank), for a catalogue Model.

    Dense parameters of the stage: TP-sharded ones / TP plus replicated ones; expert parameters /
    (EP·ETP), ETP defaulting to TP (Megatron). ZeRO/distributed optimizer shards dense state over
    DP·CP and expert state over EDP = N/(ETP·EP·PP). ``dualpipe``: rank i holds stages i and
    p − 1 − i (DeepSeek-V3 §3.2.2: two copies of the parameters). At ZeRO stage 3 the rank also
    holds its largest gathered layer (``gathered_layer_params``) at ``zero3_working_set_bytes``
    (DeepSpeed's estimator: 2 × the weight bytes per parameter); ``model_states_bytes`` is the
    state plus that working set, and the most loaded rank is the one with the most of it.

    ``holdings``: ``stage_holdings`` of the same model, TP, PP, EP, ETP, stage layers and DualPipe
    flag, when the caller already has it (a search over DP); ranks that hold the same are computed
    once.

    Returns params per GPU (``dense_params``, ``expert_params``), the group sizes, the byte
    breakdown of ``sharded_state_per_gpu_bytes``, ``total_GB`` / ``total_GiB`` (state only),
    ``zero3_layer_params``, ``zero3_working_bytes``, ``model_states_bytes`` / ``model_states_GB``
    and ``per_stage``.
    """
    etp = tp if etp is None else etp
    deg = shard_degrees(num_gpus=num_gpus, tp=tp, pp=pp, cp=cp, ep=ep, etp=etp)
    if holdings is None:
        holdings = stage_holdings(m, tp=tp, pp=pp, ep=ep, etp=etp, stage_layers=stage_layers, dualpipe=dualpipe)
    if len(holdings) != pp:
        raise ValueError(f"holdings must give {pp} stages")
    rows, index = holding_states(holdings, dense_shard_degree=deg["dense"], expert_shard_degree=deg["expert"],
                                 zero_stage=zero_stage, recipe=recipe, reshard_after_forward=reshard_after_forward)
    per_stage = [{**rows[j], "stage": h["stage"], "stages_held": h["stages_held"]} for h, j in zip(holdings, index)]
    pick = max(per_stage, key=lambda r: r["model_states_bytes"]) if stage is None else per_stage[stage]
    res = dict(pick)
    res.update(dp=deg["dp"], edp=deg["edp"], etp=etp, per_stage=per_stage)
    return res


def shard_degrees(*, num_gpus: int, tp: int = 1, pp: int = 1, cp: int = 1, ep: int = 1,
                  etp: int | None = None) -> dict[str, int]:
    """The group sizes of ``model_state_per_gpu``: ``dp``, ``edp`` and the degrees ZeRO shards
    over, ``dense`` = DP·CP (Megatron's dp_cp group) and ``expert`` = EDP."""
    etp = tp if etp is None else etp
    dp = dense_data_parallel(num_gpus=num_gpus, tp=tp, pp=pp, cp=cp)
    edp = expert_data_parallel(num_gpus=num_gpus, pp=pp, ep=ep, etp=etp)
    return {"dp": dp, "edp": edp, "dense": dp * cp, "expert": edp}


def holding_states(holdings: list[dict[str, Any]], *, dense_shard_degree: float, expert_shard_degree: float,
                   zero_stage: int = 0, recipe: str | dict[str, float] = "bf16_fp32_grads",
                   reshard_after_forward: bool = True) -> tuple[list[dict[str, Any]], list[int]]:
    """The state of each distinct holding of ``stage_holdings`` (ranks that hold the same are
    computed once) and, rank by rank, the index of its row. A row has ``stage`` and ``stages_held``
    None, the params, ``sharded_state_per_gpu_bytes`` and the GB, GiB and ZeRO-3 working-set
    figures of ``model_state_per_gpu``'s rows. ``reshard_after_forward`` False (FSDP / ZeRO-3 keeping the
    gathered weights from each layer's forward to its backward): at the start of the backward every layer
    of the stage is gathered, so the working set adds the stage's other weights, unsharded."""
    weight_bytes = _recipe(recipe).get("weights", 0.0)
    seen: dict[tuple[float, float, float], int] = {}
    rows: list[dict[str, Any]] = []
    index = []
    for h in holdings:
        key = dense, expert, layer = h["dense_params"], h["expert_params"], h["zero3_layer_params"]
        if key not in seen:
            b = sharded_state_per_gpu_bytes(dense_params=dense, expert_params=expert,
                                            dense_shard_degree=dense_shard_degree,
                                            expert_shard_degree=expert_shard_degree, zero_stage=zero_stage,
                                            recipe=recipe)
            work = zero3_working_set_bytes(layer_params=layer, weight_bytes=weight_bytes) if zero_stage == 3 else 0.0
            if zero_stage == 3 and not reshard_after_forward:
                work += max(0.0, dense + expert - layer) * weight_bytes
            seen[key] = len(rows)
            rows.append({"stage": None, "stages_held": None, "dense_params": dense, "expert_params": expert,
                         **b, "total_GB": b["total_bytes"] / GB, "total_GiB": b["total_bytes"] / GiB,
                         "zero3_layer_params": layer, "zero3_working_bytes": work,
                         "model_states_bytes": b["total_bytes"] + work,
                         "model_states_GB": (b["total_bytes"] + work) / GB})
        index.append(seen[key])
    return rows, index
