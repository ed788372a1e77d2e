"""Plan sheet: training throughput, time, GPU count and layout for one scenario
(spec 17.5.2-17.5.10 and the numeric steps of the 17.9.4 planning procedure).

Training compute is the Models sheet's C = 6·P_active·D (ctx.q["train_total_FLOPs"]); MFU counts
model FLOPs only, so recomputation does not enter here. These rows are the "MFU given" figures: the
training days the plan uses (the scenario's time model) are on the Step Time sheet (calc.train_time).

Counts (nodes, GPUs, rails, storage servers) are rounded up with :func:`ceil_count_xl`, the workbook's
ROUNDUP(ROUND(x, c_count_ceil_digits), 0): rounding to a fixed number of decimals first drops float
noise (1120/7 = 160.00000000000003 gives 160), and reference and workbook do the same arithmetic.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import layout as lay
from workbook.reference import train_cost as tc
from workbook.reference import training as tr
from workbook.reference.excel import excel_round, excel_roundup
from workbook.units import GB, KILO, MS_PER_S, SECONDS_PER_DAY, TERA

#: decimals kept before a count is rounded up (the workbook constant c_count_ceil_digits)
COUNT_CEIL_DIGITS = 9


def ceil_count_xl(x: float) -> float:
    """A count rounded up after dropping float noise: ROUNDUP(ROUND(x, COUNT_CEIL_DIGITS), 0)."""
    return excel_roundup(excel_round(x, COUNT_CEIL_DIGITS), 0)


QUANTITIES = [
    Q("purpose_training_flag", "0/1", "Training applies (purpose training or both): its checks, its GPUs owned", "Plan"),
    Q("purpose_serving_flag", "0/1", "Serving applies (purpose serving or both): its checks, its GPUs owned", "Plan"),
    Q("plan_train_FLOP", "FLOP", "Training compute used by the plan (6·P_active·D)", "17.5.3"),
    Q("plan_dp", "GPUs", "Data-parallel replicas of the plan layout, N / (TP·CP·PP)", "17.5.8"),
    Q("plan_dp_cp", "GPUs", "Gradient and optimizer-sharding group DP·CP = N / (TP·PP)", "17.5.8",
      note="Megatron dp_cp group"),
    Q("plan_etp", "GPUs", "Expert tensor-parallel degree in use (blank input = TP)", "17.5.8"),
    Q("plan_edp", "GPUs", "Expert-data-parallel degree N / (ETP·EP·PP)", "17.5.8", note="Megatron parallel folding"),
    Q("plan_layers_per_stage", "layers", "Layers per pipeline stage (L / PP)", "17.5.8"),
    Q("plan_nodes", "nodes", "Nodes occupied by the training job", "17.5.10"),
    Q("plan_global_batch_seqs", "sequences", "Global batch B_micro·GA·DP", "17.5.6"),
    Q("plan_tokens_per_step", "tokens", "Tokens per optimizer step (global batch x S)", "17.5.6"),
    Q("plan_steps_total", "steps", "Optimizer steps to consume the training tokens", "17.5.6"),
    Q("plan_tokens_per_s", "tokens/s", "Cluster throughput at the MFU given (N·peak·MFU / 6P)", "17.5.2"),
    Q("plan_tokens_per_day", "tokens", "Training tokens per day at the MFU given", "17.5.2"),
    Q("plan_tokens_per_s_per_gpu", "tokens/s", "Throughput per GPU at the MFU given", "17.5.2"),
    Q("plan_cluster_PFLOPS", "PFLOP/s", "Cluster model FLOP/s at the MFU given (N·peak·MFU)", "17.5.3"),
    Q("plan_step_time_s", "s", "Step time at the MFU given (tokens per step / throughput)", "17.5.5"),
    Q("plan_micro_batch_time_ms", "ms", "Time per micro-batch at the MFU given (step time / GA)", "17.5.5"),
    Q("plan_train_time_s", "s", "Training time at the MFU given, compute only", "17.5.3"),
    Q("plan_train_days", "days", "Training days at the MFU given, compute only", "17.5.3"),
    Q("plan_train_days_with_overhead", "days", "Training days at the MFU given, incl. the overhead factor", "17.5.3"),
    Q("plan_gpu_hours", "GPU-h", "GPU-hours of the run at the MFU given, incl. overhead (N·days·24)", "17.5.9"),
    Q("plan_meets_target_flag", "0/1", "Scenario GPUs finish within the target days at the MFU given (1 = yes)", "17.5.4"),
    Q("plan_train_state_TB", "TB", "Full training state P_total x 16 B (BF16 W+G, FP32 master, m, v)", "17.5.10"),
    Q("plan_gpus_memory_floor", "GPUs", "GPU floor from memory: ceil(16·P / usable HBM) (ZeRO-3)", "17.5.10"),
    Q("plan_gpus_time_raw", "GPUs", "GPUs to meet the target days at the MFU given, unrounded (incl. overhead)", "17.5.4"),
    Q("plan_gpus_needed", "GPUs", "GPUs the target days need at the MFU given: max(memory, time) in whole TP·CP·PP replicas", "17.5.4",
      note="advisory: the job runs on its input N; the count in use is train_gpus_needed (Step Time)"),
    Q("plan_gpus_needed_dp", "GPUs", "Data-parallel replicas at the needed GPU count", "17.5.10"),
    Q("plan_nodes_to_buy", "nodes", "Nodes to procure: the job's GPUs plus spares, in whole nodes", "17.5.4"),
    Q("plan_gpus_to_buy", "GPUs", "GPUs to procure (whole nodes; the cost is priced on these)", "17.5.4"),
    Q("plan_days_at_needed_gpus", "days", "Training days on the needed GPU count at the MFU given (incl. overhead)", "17.5.4"),
    Q("plan_bubble_frac", "fraction", "Pipeline bubble (PP-1)/GA, relative to useful time (book form)", "17.5.8"),
    Q("plan_bubble_share_frac", "fraction", "Pipeline bubble share of step time (PP-1)/(GA+PP-1)", "17.5.8"),
    Q("plan_ga_covers_pp_flag", "0/1", "GA >= PP, enough micro-batches to fill the pipeline (1 = yes)", "17.5.7"),
    Q("plan_ga_efficient_flag", "0/1", "GA >= 4·PP, pipeline efficiency rule (1 = yes)", "17.5.7"),
    Q("plan_global_batch_ok_flag", "0/1", "Global batch reaches the 256K-token floor (1 = yes)", "17.5.7"),
    Q("plan_mfu_in_band_flag", "0/1", "MFU input inside the plausible 20-60 % band (1 = yes)", "17.5.2"),
    Q("plan_tp_in_node_flag", "0/1", "TP fits inside one NVLink node (1 = yes)", "17.5.8"),
    Q("plan_pp_divides_layers_flag", "0/1", "PP divides the layer count (1 = yes)", "17.5.8"),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q, m = ctx.s.training, ctx.q, ctx.model
    peak = q["mfu_peak_TFLOPS"]  # the peak the MFU given refers to
    c = q["train_total_FLOPs"]
    p_active, p_total = q["params_active"], q["params_total"]
    n, tp, pp = t.num_gpus, t.tp, t.pp
    gpn = int(ctx.gpu.gpus_per_node)
    dp = int(lay.dp_degree(num_gpus=n, tp=tp * t.cp, pp=pp))
    etp = tp if t.etp is None else t.etp
    seqs = tr.global_batch_seqs(micro_batch=t.micro_batch, grad_accum=t.grad_accum, dp=dp)
    tokens_step = seqs * t.seq_len
    tok_s = tr.tokens_per_s_from_mfu(num_gpus=n, peak_TFLOPS=peak, mfu=t.mfu, params=p_active)
    step_s = tokens_step / tok_s
    time_s = tr.train_time_s(total_FLOP=c, num_gpus=n, peak_TFLOPS=peak, mfu=t.mfu)
    days_ovh = time_s * t.overhead_factor / SECONDS_PER_DAY
    usable_GB = float(ctx.gpu.hbm_GB) * t.usable_hbm_frac
    n_mem = ceil_count_xl(p_total * lay.TRAIN_STATE_BYTES_PER_PARAM / (usable_GB * GB))  # 17.5.10 step 2
    n_time = tr.gpus_raw(total_FLOP=c * t.overhead_factor, target_days=t.target_days, peak_TFLOPS=peak, mfu=t.mfu)
    replica = tp * t.cp * pp
    dp_needed = ceil_count_xl(max(n_time, n_mem) / replica)  # step 4: whole TP·CP·PP replicas
    n_needed = dp_needed * replica
    days_needed = tr.train_time_days(total_FLOP=c, num_gpus=n_needed, peak_TFLOPS=peak, mfu=t.mfu,
                                     overhead_factor=t.overhead_factor)
    nodes_buy = ceil_count_xl(n * (1 + t.spare_fraction) / gpn)
    checks = tr.batch_checks(micro_batch=t.micro_batch, grad_accum=t.grad_accum, dp=dp, seq_len=t.seq_len, pp=pp,
                             micro_batch_max=t.micro_batch)
    return {
        "purpose_training_flag": float(ctx.s.purpose in ("training", "both")),
        "purpose_serving_flag": float(ctx.s.purpose in ("serving", "both")),
        "plan_train_FLOP": c,
        "plan_dp": dp,
        "plan_dp_cp": dp * t.cp,
        "plan_etp": etp,
        "plan_edp": n // (etp * t.ep * pp),
        "plan_layers_per_stage": lay.layers_per_stage(layers=int(m.layers), pp=pp),
        "plan_nodes": ceil_count_xl(n / gpn),
        "plan_global_batch_seqs": seqs,
        "plan_tokens_per_step": tokens_step,
        "plan_steps_total": t.tokens / tokens_step,
        "plan_tokens_per_s": tok_s,
        "plan_tokens_per_day": tok_s * SECONDS_PER_DAY,
        "plan_tokens_per_s_per_gpu": tok_s / n,
        "plan_cluster_PFLOPS": tr.cluster_FLOP_per_s(num_gpus=n, peak_TFLOPS=peak, mfu=t.mfu) / (TERA * KILO),
        "plan_step_time_s": step_s,
        "plan_micro_batch_time_ms": step_s / t.grad_accum * MS_PER_S,
        "plan_train_time_s": time_s,
        "plan_train_days": time_s / SECONDS_PER_DAY,
        "plan_train_days_with_overhead": days_ovh,
        "plan_gpu_hours": tc.gpu_hours(num_gpus=n, days=days_ovh),
        "plan_meets_target_flag": float(days_ovh <= t.target_days),
        "plan_train_state_TB": lay.train_state_TB(params=p_total),
        "plan_gpus_memory_floor": n_mem,
        "plan_gpus_time_raw": n_time,
        "plan_gpus_needed": n_needed,
        "plan_gpus_needed_dp": dp_needed,
        "plan_nodes_to_buy": nodes_buy,
        "plan_gpus_to_buy": nodes_buy * gpn,
        "plan_days_at_needed_gpus": days_needed,
        "plan_bubble_frac": lay.bubble_frac(pp=pp, micro_batches=t.grad_accum),
        "plan_bubble_share_frac": lay.bubble_share_frac(pp=pp, micro_batches=t.grad_accum),
        "plan_ga_covers_pp_flag": float(checks["PP_min_ok"]),
        "plan_ga_efficient_flag": float(checks["PP_efficiency_ok"]),
        "plan_global_batch_ok_flag": float(checks["global_batch_ok"]),
        "plan_mfu_in_band_flag": float(tr.MFU_WARN_LOW_FRAC <= t.mfu <= tr.MFU_WARN_HIGH_FRAC),
        "plan_tp_in_node_flag": float(tp <= min(gpn, lay.TP_MAX)),
        "plan_pp_divides_layers_flag": float(int(m.layers) % pp == 0),
    }

