"""Activations sheet, second part: the activations each pipeline rank holds, and the most loaded one.

``workbook.reference.activations.activations_per_gpu`` (Korthikanti et al. 2022 §4.2.3; Megatron-LM
``schedules.py``): a rank holds its in-flight micro-batches (1F1B: PP − i, the first-stage
multiplier PP; interleaved: (2(PP − i − 1) + (v − 1)·PP + 1)/v, i.e. PP·(1 + (PP − 1)/(PP·v)) on the
first rank; at most GA) times its layers, plus the embedding tensors on the first rank and the
output layer on the last, plus the working set of recomputing one layer.

Layers split evenly, earlier stages taking the remainder; an MoE model's leading dense layers sit
on the first stages. In-flight micro-batches and layer counts fall with the rank, so the most loaded
rank is one of four candidates: A the first rank, B the rank holding the first MoE layer, C the
rank after B, D the last rank (B, C and D coincide for a dense model). The sheet shows the four;
``act_per_gpu_GB`` is the reference's maximum over every rank (``workbook verify`` proves the two
agree).
"""

from __future__ import annotations

from workbook.calc.activations import tensor_kwargs
from workbook.calc.base import Context, Q
from workbook.reference import activations as ra
from workbook.units import GB

#: the candidate ranks: (key letter, label)
CANDIDATES = [("a", "A (the first rank)"), ("b", "B (holds the first MoE layer)"), ("c", "C (the rank after B)"),
              ("d", "D (the last rank)")]
_S = "Korthikanti 2022 §4.2.3"


def _candidate_quantities() -> list[Q]:
    out = []
    for x, name in CANDIDATES:
        out += [
            Q(f"act_st{x}_stage", "stage", f"Stage {name}: pipeline rank (0 = first)", "Megatron schedules.py"),
            Q(f"act_st{x}_layers", "layers", f"Stage {name}: layers", "Megatron schedules.py"),
            Q(f"act_st{x}_moe_layers", "layers", f"Stage {name}: MoE layers among them", "17.2.2"),
            Q(f"act_st{x}_in_flight", "x", f"Stage {name}: micro-batches in flight (at most GA)", _S),
            Q(f"act_st{x}_GB", "GB", f"Stage {name}: activations at the peak (kept + recompute working set)", _S),
        ]
    return out


QUANTITIES = [
    Q("act_layers_base", "layers", "Layers of the smaller pipeline stages, floor(L/PP)", "Megatron schedules.py"),
    Q("act_layers_extra", "count", "Stages holding one layer more, L mod PP (the first ones)", "Megatron schedules.py"),
    Q("act_first_moe_layer", "count", "Index of the first MoE layer (L for a dense model)", "17.2.2"),
    Q("act_first_moe_stage", "stage", "Pipeline rank holding the first MoE layer (PP for a dense model)", "17.2.2"),
    *_candidate_quantities(),
    Q("act_per_gpu_GB", "GB", "Activations per GPU on the most loaded rank (tensor model, peak)", _S),
]


def first_moe_stage(*, layers: int, pp: int, first_moe_layer: int) -> int:
    """The rank holding layer ``first_moe_layer`` when the first L mod PP ranks take one layer more
    (PP when the index is L, i.e. a dense model)."""
    base, extra = divmod(layers, pp)
    big = extra * (base + 1)
    return first_moe_layer // (base + 1) if first_moe_layer < big else extra + (first_moe_layer - big) // base


def candidate_stages(*, layers: int, pp: int, first_moe_layer: int) -> tuple[int, int, int, int]:
    """The four candidate ranks A, B, C, D (see the module docstring)."""
    b = min(pp - 1, first_moe_stage(layers=layers, pp=pp, first_moe_layer=first_moe_layer))
    return 0, b, min(pp - 1, b + 1), pp - 1


def stage_activations(ctx: Context) -> dict:
    """``activations_per_gpu`` for the scenario (every rank in ``per_stage``)."""
    t, m = ctx.s.training, ctx.model
    kw = tensor_kwargs(ctx)
    # with one stage the interleaved schedule is plain 1F1B (one micro-batch in flight either way)
    schedule = t.pipeline_schedule if t.pp > 1 else "1f1b"
    if schedule == "zero_bubble":  # zero bubble (ZB-H1) keeps 1F1B's activation memory (Qi et al. 2023)
        schedule = "1f1b"
    return ra.activations_per_gpu(m, **kw, pp=t.pp, schedule=schedule, vp=t.virtual_stages,
                                  num_microbatches=t.grad_accum, recompute=t.recompute)


def compute(ctx: Context) -> dict[str, float]:
    t, m = ctx.s.training, ctx.model
    L, pp = int(m.layers), t.pp
    first_moe = int(m.n_dense_layers or 0) if m.moe else L
    res = stage_activations(ctx)
    counts = ra.stage_layer_counts(layers=L, pp=pp)
    base, extra = divmod(L, pp)
    out = {"act_layers_base": float(base), "act_layers_extra": float(extra),
           "act_first_moe_layer": float(first_moe),
           "act_first_moe_stage": float(first_moe_stage(layers=L, pp=pp, first_moe_layer=first_moe))}
    for (x, _), idx in zip(CANDIDATES, candidate_stages(layers=L, pp=pp, first_moe_layer=first_moe)):
        start = sum(counts[:idx])
        row = res["per_stage"][idx]
        out.update({
            f"act_st{x}_stage": float(idx),
            f"act_st{x}_layers": float(counts[idx]),
            f"act_st{x}_moe_layers": float(sum(1 for j in range(start, start + counts[idx]) if j >= first_moe)),
            f"act_st{x}_in_flight": row["in_flight"],
            f"act_st{x}_GB": row["peak_bytes"] / GB,
        })
    out["act_per_gpu_GB"] = res["peak_bytes"] / GB
    return out
