"""Training Memory sheet: the whole model's training memory, unsharded (spec 17.4.1-17.4.7).

Weights at the training precision, gradients at the gradient precision, optimizer states in the
full ledger (incl. the FP32 master, dropped when training in FP32), activations per the recompute
mode for one micro-batch, runtime overhead, and the minimum GPU count with ZeRO-3.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import train_memory as tm
from workbook.units import GB, bytes_per_element

QUANTITIES = [
    Q("train_weight_bytes_per_param", "B/param", "Weight bytes per parameter (training precision)", "17.4.2"),
    Q("train_grad_bytes_per_param", "B/param", "Gradient bytes per parameter", "17.4.4"),
    Q("train_master_bytes_per_param", "B/param", "FP32 master bytes per parameter (0 when training in FP32)", "17.4.3"),
    Q("train_optimizer_bytes_per_param", "B/param", "Optimizer bytes per parameter incl. FP32 master", "17.4.3"),
    Q("train_static_bytes_per_param", "B/param", "Static bytes per parameter (weights + grads + optimizer)", "17.4.1"),
    Q("train_weights_GB", "GB", "Training weights (whole model)", "17.4.2"),
    Q("train_grads_GB", "GB", "Gradients (whole model)", "17.4.4"),
    Q("train_master_GB", "GB", "FP32 master weights (part of optimizer)", "17.4.3"),
    Q("train_optimizer_GB", "GB", "Optimizer states incl. master (whole model)", "17.4.3"),
    Q("train_static_GB", "GB", "Static training memory: weights + grads + optimizer", "17.4.1"),
    Q("train_weights_share_frac", "fraction", "Weights share of static memory", "17.4.1"),
    Q("train_optimizer_share_frac", "fraction", "Optimizer share of static memory", "17.4.1"),
    Q("train_grads_share_frac", "fraction", "Gradients share of static memory", "17.4.1"),
    Q("train_act_bytes_per_elem", "B", "Activation bytes per element (compute precision; BF16 for FP8 training)", "17.4.5"),
    Q("act_ffn_width", "count", "FFN inner width in the activation formula (expert d_ff for MoE)", "17.4.5"),
    Q("act_no_recompute_GB", "GB", "Activations without recompute, one micro-batch (book formula)", "17.4.5"),
    Q("act_qkt_per_layer_GB", "GB", "Attention score tensor per layer (h·B·S²·2)", "17.4.5"),
    Q("act_selective_GB", "GB", "Activations, selective recompute (attention scores recomputed)", "17.4.6"),
    Q("act_full_recompute_GB", "GB", "Activations, full recompute: layer inputs only (L·B·S·d·2)", "17.4.6"),
    Q("act_megatron_GB", "GB", "Activations, Megatron estimate without recompute (reference variant)", "17.4.5"),
    Q("train_activations_GB", "GB", "Activations used: chosen recompute mode, or the override", "17.4.6"),
    Q("train_act_saving_frac", "fraction", "Activation saving of the chosen mode versus no recompute", "17.4.6"),
    Q("train_overhead_GB", "GB", "Runtime overhead (CUDA context, workspace)", "17.4.7"),
    Q("train_total_GB", "GB", "Total training memory, whole model on one device", "17.4.7"),
    Q("train_total_vs_hbm_x", "x", "Total training memory over one GPU's HBM", "17.4.7"),
    Q("train_state_headroom_GB", "GB", "HBM per GPU left for sharded static state (HBM - activations - overhead)", "17.4.7"),
    Q("train_min_gpus_zero3", "GPUs", "Minimum GPUs with ZeRO-3: ceil(static / (HBM - act - overhead)); 0 = cannot fit", "17.4.7"),
    Q("train_min_gpus_static_only", "GPUs", "Book's rough card count ceil(static / HBM), ignoring activations", "17.4.7"),
]


def optimizer_bytes(optimizer: str, precision: str) -> tuple[float, float]:
    """(optimizer bytes/param, of which FP32 master); FP32 training needs no separate master."""
    comps = dict(tm.OPTIMIZER_COMPONENTS[optimizer])
    if precision == "fp32":
        comps.pop("master", None)
    return sum(comps.values()), comps.get("master", 0.0)


def compute(ctx: Context) -> dict[str, float]:
    t, m, q = ctx.s.training, ctx.model, ctx.q
    P = q["params_total"]
    wb = bytes_per_element(t.precision)
    gb = bytes_per_element(t.grad_precision)
    ob, mb = optimizer_bytes(t.optimizer, t.precision)
    static_b = wb + gb + ob
    w = tm.weights_GB(params=P, bytes_per_param=wb)
    g = tm.grads_GB(params=P, grad_bytes=gb)
    o = tm.bytes_GB(params=P, bytes_per_param=ob)
    static = w + g + o
    L, d, B, S, h = float(m.layers), float(m.d_model), float(t.micro_batch), float(t.seq_len), float(m.n_heads)
    d_ff = float(m.expert_d_ff if m.moe else m.d_ff)
    # activations are stored in the compute precision (BF16 for FP8 training too)
    ab = 4.0 if t.precision == "fp32" else 2.0
    kw = dict(layers=L, batch=B, seq_len=S, d_model=d)
    no = tm.activations_no_recompute_GB(d_ff=d_ff, n_heads=h, act_bytes=ab, **kw)
    qkt_layer = tm.qkt_bytes(n_heads=h, batch=B, seq_len=S, act_bytes=ab) / GB
    selective = no - L * qkt_layer
    full = tm.activations_full_recompute_GB(act_bytes=ab, **kw)
    # the book has no op-level mode: op_selective takes the selective formula (the tensor model has its own)
    chosen = {"none": no, "selective": selective, "full": full, "op_selective": selective}[t.recompute]
    act = chosen if t.act_GB is None else float(t.act_GB)
    ovh = float(t.runtime_overhead_GB)
    total = tm.training_total_GB(static_GB=static, activations_GB=act, overhead_GB=ovh)
    hbm = float(ctx.gpu.hbm_GB)
    room = hbm - act - ovh
    return {
        "train_weight_bytes_per_param": wb,
        "train_grad_bytes_per_param": gb,
        "train_master_bytes_per_param": mb,
        "train_optimizer_bytes_per_param": ob,
        "train_static_bytes_per_param": static_b,
        "train_weights_GB": w,
        "train_grads_GB": g,
        "train_master_GB": tm.bytes_GB(params=P, bytes_per_param=mb),
        "train_optimizer_GB": o,
        "train_static_GB": static,
        "train_weights_share_frac": w / static,
        "train_optimizer_share_frac": o / static,
        "train_grads_share_frac": g / static,
        "train_act_bytes_per_elem": ab,
        "act_ffn_width": d_ff,
        "act_no_recompute_GB": no,
        "act_selective_GB": selective,
        "act_full_recompute_GB": full,
        "act_megatron_GB": tm.activations_megatron_GB(n_heads=h, **kw),
        "act_qkt_per_layer_GB": qkt_layer,
        "train_activations_GB": act,
        "train_act_saving_frac": 1 - act / no if no > 0 else 0.0,
        "train_overhead_GB": ovh,
        "train_state_headroom_GB": room,
        "train_total_GB": total,
        "train_total_vs_hbm_x": total / hbm,
        # 0 GPUs would mean "impossible": activations + overhead alone exceed one GPU
        "train_min_gpus_zero3": tm.min_gpus_zero3(static_GB=static, hbm_GB=hbm, activations_GB=act,
                                                  overhead_GB=ovh) if room > 0 else 0,
        "train_min_gpus_static_only": tm.min_cards(size_GB=static, hbm_GB=hbm),
    }
