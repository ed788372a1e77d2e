"""Step Time sheet, third block: the step and its rates (docs/step_time.md "Step").

t_step = GA·t_mb·(1 + bubble) + exposed DP gradient reduction + optimizer step (Narayanan et al.
2021 eq. 1; bubble (PP-1)/GA for 1F1B, (PP-1)/(GA·v) interleaved, 0 zero-bubble, Qi et al. 2023).
MFU counts model FLOPs, HFU adds the recompute passes; both against the peak an MFU refers to
(``mfu_peak_TFLOPS``: dense BF16 unless ``training.mfu_peak`` is "precision"); the step model itself
computes at the BF16 rates (st_peak_TFLOPS). The
training time of the step model is the tokens over its tokens per second (overhead factor on top).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.calc.step_inputs import reference_step
from workbook.reference import measured as mea
from workbook.reference import step_time as stm
from workbook.units import GB, SECONDS_PER_DAY

_S = "docs/step_time.md"

QUANTITIES = [
    Q("st_bubble_frac", "fraction", "Pipeline bubble relative to the useful time of the schedule",
      "Narayanan 2021 §2.2"),
    Q("st_pipeline_step_s", "s", "Forward + backward of all GA micro-batches through the pipeline, bubble included",
      "Narayanan 2021 eq. 1"),
    Q("st_bubble_step_s", "s", "Pipeline bubble per step", "Narayanan 2021 eq. 1"),
    Q("st_grad_dense_GB", "GB", "Dense gradients a GPU reduces per step", "17.6.3"),
    Q("st_grad_expert_GB", "GB", "Routed-expert gradients a GPU reduces per step", "17.6.6"),
    Q("st_expert_dp", "GPUs", "Expert data-parallel ranks, DP·CP / EP", "17.5.8"),
    Q("st_expert_ranks_per_node", "ranks", "Expert data-parallel ranks inside one node", "17.6.10"),
    Q("st_expert_nodes", "nodes", "Nodes of the expert data-parallel group", "17.6.10"),
    Q("st_expert_alpha_s", "s", "Latency of one expert-gradient all-reduce", "17.6.10"),
    Q("st_expert_s_per_GB", "s/GB", "Expert-gradient all-reduce time per GB", "17.6.10"),
    Q("st_dp_allreduce_step_s", "s", "DP gradient all-reduce per step (ZeRO 0-2: dense, then experts)", "17.6.3"),
    Q("st_dp_reduce_scatter_step_s", "s", "DP gradient reduce-scatter per step (ZeRO-3: every micro-batch)", "17.4.8"),
    Q("st_dp_comm_step_s", "s", "DP gradient reduction per step at the chosen ZeRO stage", "17.6.3"),
    Q("st_bwd_window_s", "s", "Backward of the last micro-batch on the stage, less its share hiding the CP ring "
      "(the DP overlap window)", "docs/step_time.md (Overlap windows)"),
    Q("st_dp_exposed_step_s", "s", "DP gradient reduction not hidden under the last backward (ZeRO-3: 0, its "
      "per-micro-batch reduce-scatter is in the exposed ZeRO-3 time)", _S),
    Q("st_optimizer_step_s", "s", "Optimizer step: Adam over the local (ZeRO >= 1: 1/(DP·CP)) weights, memory-bound",
      _S),
    Q("st_step_s", "s", "Step time of the step model: pipeline + exposed DP + optimizer", _S),
    Q("st_tokens_per_step", "tokens", "Tokens per step, B_micro·GA·DP·S", "17.5.6"),
    Q("st_tokens_per_s", "tokens/s", "Cluster throughput of the step model", _S),
    Q("st_attn_model_FLOP_per_token", "FLOP", "Attention-core FLOPs per token and layer forward (counted as computed)",
      "Korthikanti 2022 §3"),
    Q("st_model_FLOPs_per_step", "FLOP", "Model FLOPs per step: 3 x (L·(2·P_act + attention) + 2·d·V) x tokens",
      "Korthikanti 2022 §6"),
    Q("st_hardware_FLOPs_per_step", "FLOP", "Hardware FLOPs per step: model FLOPs + the recomputed forward",
      "Narayanan 2021 eq. 3"),
    Q("st_model_TFLOPS_per_gpu", "TFLOPS", "Model TFLOP/s per GPU of the step model", _S),
    Q("st_hardware_TFLOPS_per_gpu", "TFLOPS", "Hardware TFLOP/s per GPU (recompute counted) of the step model", _S),
    Q("st_mfu", "fraction", "MFU predicted by the step model (model FLOPs / (N·MFU peak·step))", _S),
    Q("st_hfu", "fraction", "HFU predicted by the step model (hardware FLOPs / (N·MFU peak·step))", _S),
    Q("st_train_days", "days", "Training days of the step model, compute only (tokens / tokens per second)", _S),
    Q("st_train_days_with_overhead", "days", "Training days of the step model incl. the overhead factor", "17.5.3"),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q = ctx.s.training, ctx.q
    r = reference_step(ctx)
    group, ranks = q["st_dp_group"], q["st_ranks_per_node"]
    g_dense = q["st_dense_params_gpu"] * q["st_grad_bytes"] / GB
    g_expert = q["st_expert_params_gpu"] * q["st_grad_bytes"] / GB
    e_dp = group / t.ep
    e_ranks = min(max(1, ranks // t.ep), e_dp)
    e_nodes = e_dp / e_ranks
    e_alpha = (q["st_nvlink_alpha_s"] if e_ranks > 1 else 0.0) + (q["st_nic_alpha_s"] if e_nodes > 1 else 0.0)
    e_spg = 2 * (e_ranks - 1) / e_ranks / q["st_nvlink_bw_GBps"] \
        + 2 * (e_nodes - 1) / e_nodes / e_ranks / q["st_nic_bw_GBps"]
    full_ar = q["st_dp_alpha_s"] + (g_dense + g_expert) * q["st_dp_s_per_GB"] if group > 1 else 0.0
    dense_ar = q["st_dp_alpha_s"] + g_dense * q["st_dp_s_per_GB"] if group > 1 else 0.0
    expert_ar = e_alpha + g_expert * e_spg if g_expert > 0 and e_dp > 1 else 0.0
    attn_tok = stm.attention_core_FLOPs_per_token(seq_len=t.seq_len, n_heads=ctx.model.n_heads,
                                                  qk_head_dim=q["st_qk_head_dim"], v_head_dim=q["st_v_head_dim"],
                                                  mask_frac=q["st_attn_mask_frac"])
    days = t.tokens / r["tokens_per_s"] / SECONDS_PER_DAY
    at_peak = dict(num_gpus=t.num_gpus, step_s=r["step_s"], peak_TFLOPS=q["mfu_peak_TFLOPS"])
    return {
        "st_bubble_frac": r["bubble_frac"],
        "st_pipeline_step_s": r["pipeline_step_s"],
        "st_bubble_step_s": r["bubble_step_s"],
        "st_grad_dense_GB": g_dense,
        "st_grad_expert_GB": g_expert,
        "st_expert_dp": e_dp,
        "st_expert_ranks_per_node": e_ranks,
        "st_expert_nodes": e_nodes,
        "st_expert_alpha_s": e_alpha,
        "st_expert_s_per_GB": e_spg,
        "st_dp_allreduce_step_s": dense_ar + expert_ar,
        "st_dp_reduce_scatter_step_s": full_ar / 2 * t.grad_accum,
        "st_dp_comm_step_s": r["dp_comm_step_s"],
        "st_bwd_window_s": r["bwd_window_s"],
        "st_dp_exposed_step_s": r["dp_exposed_step_s"],
        "st_optimizer_step_s": r["optimizer_step_s"],
        "st_step_s": r["step_s"],
        "st_tokens_per_step": r["tokens_per_step"],
        "st_tokens_per_s": r["tokens_per_s"],
        "st_attn_model_FLOP_per_token": attn_tok,
        "st_model_FLOPs_per_step": r["model_FLOPs_per_step"],
        "st_hardware_FLOPs_per_step": r["hardware_FLOPs_per_step"],
        "st_model_TFLOPS_per_gpu": r["model_TFLOPS_per_gpu"],
        "st_hardware_TFLOPS_per_gpu": r["hardware_TFLOPS_per_gpu"],
        "st_mfu": mea.utilisation_frac(FLOPs_per_step=r["model_FLOPs_per_step"], **at_peak),
        "st_hfu": mea.utilisation_frac(FLOPs_per_step=r["hardware_FLOPs_per_step"], **at_peak),
        "st_train_days": days,
        "st_train_days_with_overhead": days * t.overhead_factor,
    }

