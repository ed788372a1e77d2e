"""Step Time sheet, fourth block: the GPUs the target days need at the step model (spec 17.5.4's
procedure at the modelled throughput of the chosen layout, instead of a typed MFU).

Advisory, like the Plan sheet's MFU-given count (the job runs on its input N), and an approximation:
the layout's per-GPU throughput is held at its value on N, so the days scale as 1/N (more DP replicas
at the same TP, CP, PP, EP, micro-batch and GA; the DP reduction assumed no more exposed than now).
workbook.reference.layout.gpus_for_target_at_layout; the count steps in whole nodes, TP·CP·PP
replicas and ETP·EP·PP groups (reference.layout.layout_gpu_step).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.calc.plan import ceil_count_xl
from workbook.reference import layout as lay

_S = "17.5.4"
_NOTE = "advisory, per-GPU throughput held at this layout's"

QUANTITIES = [
    Q("st_gpu_step_max", "GPUs", "Largest of GPUs per node, TP·CP·PP and ETP·EP·PP", "17.5.8"),
    Q("st_gpu_step", "GPUs", "Step of the GPU count: that largest if a multiple of the other two, else their product",
      "17.5.8", note="the least common multiple for powers of two"),
    Q("st_gpus_time_raw", "GPUs", "GPUs the target days need at the step model, unrounded (N·days / target days)", _S,
      note=_NOTE),
    Q("st_gpus_needed", "GPUs", "GPUs the target days need at the step model: max(memory, time) in whole steps", _S,
      note=_NOTE),
    Q("st_gpus_needed_dp", "GPUs", "Data-parallel replicas at the step model's needed GPU count", _S),
    Q("st_days_at_needed_gpus", "days", "Training days of the step model on its needed GPU count (incl. overhead)", _S,
      note=_NOTE),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q = ctx.s.training, ctx.q
    gpn, etp = int(ctx.gpu.gpus_per_node), int(q["plan_etp"])
    top = max(gpn, t.tp * t.cp * t.pp, etp * t.ep * t.pp)
    step = lay.layout_gpu_step(gpus_per_node=gpn, tp=t.tp, cp=t.cp, pp=t.pp, etp=etp, ep=t.ep)
    days = q["st_train_days_with_overhead"]
    n_time = lay.gpus_for_target_at_layout(num_gpus=t.num_gpus, days=days, target_days=t.target_days,
                                           gpu_step=step)["gpus_time"]
    n = ceil_count_xl(max(n_time, q["plan_gpus_memory_floor"]) / step) * step  # the workbook's ROUNDUP(ROUND(..))
    return {
        "st_gpu_step_max": top,
        "st_gpu_step": step,
        "st_gpus_time_raw": n_time,
        "st_gpus_needed": n,
        "st_gpus_needed_dp": n / (t.tp * t.cp * t.pp),
        "st_days_at_needed_gpus": days * t.num_gpus / n,
    }
