"""Line items of the Step Time sheet, fourth block: the GPUs the target days need at the step model
(N·days / target days at the layout's per-GPU throughput, rounded up to whole steps of the layout)."""

from __future__ import annotations

_R = "{training.tp}*{training.cp}*{training.pp}"  # one TP·CP·PP replica
_E = "{plan_etp}*{training.ep}*{training.pp}"  # one ETP·EP·PP expert group
_G = "{gpu_gpus_per_node}"

ITEMS = {
    "st_gpu_step_max": f"=MAX({_G},{_R},{_E})",
    "st_gpu_step": f"=IF(AND(MOD({{st_gpu_step_max}},{_G})=0,MOD({{st_gpu_step_max}},{_R})=0,"
    f"MOD({{st_gpu_step_max}},{_E})=0),{{st_gpu_step_max}},{_G}*{_R}*{_E})",
    "st_gpus_time_raw": "={training.num_gpus}*{st_train_days_with_overhead}/{training.target_days}",
    "st_gpus_needed": "=ROUNDUP(ROUND(MAX({st_gpus_time_raw},{plan_gpus_memory_floor})/{st_gpu_step},"
    "c_count_ceil_digits),0)*{st_gpu_step}",
    "st_gpus_needed_dp": f"={{st_gpus_needed}}/({_R})",
    "st_days_at_needed_gpus": "={st_train_days_with_overhead}*{training.num_gpus}/{st_gpus_needed}",
}
