"""Line items of the Training Memory sheet: the whole model's training memory, unsharded
(spec 17.4.1-17.4.7)."""

from __future__ import annotations

from typing import get_args

from workbook.reference import train_memory as tm
from workbook.scenario.model import Optimizer, Precision, Recompute

CONSTANTS = [
    ("act_d_tensors", 4.0, "tensors", "Activation tensors of width d per layer in the book's formula (4d)", "spec 17.4.5"),
    ("act_dff_tensors", 2.0, "tensors", "Activation tensors of width d_ff per layer in the book's formula (2d_ff)", "spec 17.4.5"),
    ("megatron_act_bytes_sbd", 34.0, "B", "Megatron activation bytes per S·B·d per layer (34)", "spec 17.4.5"),
    ("megatron_act_bytes_score", 5.0, "B", "Megatron activation bytes per h·S²·B per layer (5)", "spec 17.4.5"),
]


def _optimizer_rows() -> list[tuple[str, dict[str, float]]]:
    rows = []
    for name in get_args(Optimizer):
        comps = tm.OPTIMIZER_COMPONENTS[name]
        master = comps.get("master", 0.0)
        rows.append((name, {"states": sum(comps.values()) - master, "master": master}))
    return rows


def _precision_rows() -> list[tuple[str, dict[str, float]]]:
    # FP32 training needs no separate FP32 master; activations stay in the compute precision
    # (FP32: 4 bytes; BF16/FP16, and FP8 training, which keeps BF16 activations: 2 bytes)
    return [(p, {"master_kept": 0.0 if p == "fp32" else 1.0, "act_bytes": 4.0 if p == "fp32" else 2.0})
            for p in get_args(Precision)]


TABLES = {
    "tm_optimizer": ("name", _optimizer_rows(),
                     "spec 17.4.3 (full view: optimizer states plus the FP32 master, corrected)"),
    "tm_precision": ("name", _precision_rows(), "spec 17.4.3 (master), 17.4.5 (activation bytes)"),
    # option number = position of the mode's activation row in the CHOOSE of train_activations_GB
    "tm_recompute": ("mode", [(m, {"option": float(i + 1)}) for i, m in enumerate(get_args(Recompute))],
                     "spec 17.4.6 (recompute modes: none, selective, full; op_selective = the "
                     "torchtitan op-level mode, the book's selective formula, the tensor model's own)"),
}

_OPT = "MATCH({training.optimizer},t_tm_optimizer_name,0)"
_PREC = "MATCH({training.precision},t_tm_precision_name,0)"
_LBS = "{model_layers}*{training.micro_batch}*{training.seq_len}"
_ROOM = "{train_state_headroom_GB}"

ITEMS = {
    "train_weight_bytes_per_param": "=INDEX(t_prec_bytes,MATCH({training.precision},t_prec_name,0))",
    "train_grad_bytes_per_param": "=INDEX(t_prec_bytes,MATCH({training.grad_precision},t_prec_name,0))",
    "train_master_bytes_per_param": f"=INDEX(t_tm_optimizer_master,{_OPT})*INDEX(t_tm_precision_master_kept,{_PREC})",
    "train_optimizer_bytes_per_param": f"=INDEX(t_tm_optimizer_states,{_OPT})+{{train_master_bytes_per_param}}",
    "train_static_bytes_per_param": "={train_weight_bytes_per_param}+{train_grad_bytes_per_param}"
    "+{train_optimizer_bytes_per_param}",
    "train_weights_GB": "={params_total}*{train_weight_bytes_per_param}/c_GB",
    "train_grads_GB": "={params_total}*{train_grad_bytes_per_param}/c_GB",
    "train_master_GB": "={params_total}*{train_master_bytes_per_param}/c_GB",
    "train_optimizer_GB": "={params_total}*{train_optimizer_bytes_per_param}/c_GB",
    "train_static_GB": "={train_weights_GB}+{train_grads_GB}+{train_optimizer_GB}",
    "train_weights_share_frac": "={train_weights_GB}/{train_static_GB}",
    "train_optimizer_share_frac": "={train_optimizer_GB}/{train_static_GB}",
    "train_grads_share_frac": "={train_grads_GB}/{train_static_GB}",
    "train_act_bytes_per_elem": f"=INDEX(t_tm_precision_act_bytes,{_PREC})",
    "act_ffn_width": "=IF({model_moe}=1,{model_expert_d_ff},{model_d_ff})",
    # L·B·S·((4d + 2d_ff) + h·S)·b / GB
    "act_no_recompute_GB": f"={_LBS}*(c_act_d_tensors*{{model_d_model}}+c_act_dff_tensors*{{act_ffn_width}}"
    "+{model_n_heads}*{training.seq_len})*{train_act_bytes_per_elem}/c_GB",
    "act_qkt_per_layer_GB": "={model_n_heads}*{training.micro_batch}*{training.seq_len}*{training.seq_len}"
    "*{train_act_bytes_per_elem}/c_GB",
    "act_selective_GB": "={act_no_recompute_GB}-{model_layers}*{act_qkt_per_layer_GB}",
    "act_full_recompute_GB": f"={_LBS}*{{model_d_model}}*{{train_act_bytes_per_elem}}/c_GB",
    "act_megatron_GB": f"={_LBS}*(c_megatron_act_bytes_sbd*{{model_d_model}}"
    "+c_megatron_act_bytes_score*{model_n_heads}*{training.seq_len})/c_GB",
    "train_activations_GB": "=IF(ISBLANK({training.act_GB}),CHOOSE(INDEX(t_tm_recompute_option,"
    "MATCH({training.recompute},t_tm_recompute_mode,0)),{act_no_recompute_GB},{act_selective_GB},"
    "{act_full_recompute_GB},{act_selective_GB}),{training.act_GB})",
    "train_act_saving_frac": "=IF({act_no_recompute_GB}>0,1-{train_activations_GB}/{act_no_recompute_GB},0)",
    "train_overhead_GB": "={training.runtime_overhead_GB}",
    "train_total_GB": "={train_static_GB}+{train_activations_GB}+{train_overhead_GB}",
    "train_total_vs_hbm_x": "={train_total_GB}/{gpu_hbm_GB}",
    "train_state_headroom_GB": "={gpu_hbm_GB}-{train_activations_GB}-{train_overhead_GB}",
    "train_min_gpus_zero3": f"=IF({_ROOM}>0,MAX(1,CEILING({{train_static_GB}}/{_ROOM},1)),0)",
    "train_min_gpus_static_only": "=MAX(1,CEILING({train_static_GB}/{gpu_hbm_GB},1))",
}
