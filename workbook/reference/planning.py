"""End-to-end planning (spec 17.9): the 10-step procedure (17.9.4, §5), rules of thumb (17.9.5, §7)
and the H800 vs H20 comparison data (17.9.6, §8).

Formulas other parts own are imported (training time and GPU back-solve: training.py; cost:
train_cost.py; DP traffic: comm.py; checkpoint and MTBF: storage.py); this module strings them into the book's procedure.
"""

from __future__ import annotations

import math

from workbook.reference import comm, storage, train_cost, training
from workbook.reference.hardware import ridge_FLOP_per_byte
from workbook.units import GB, TB, HOURS_PER_DAY, MS_PER_S, SECONDS_PER_HOUR, SECONDS_PER_MINUTE

#: static training bytes per parameter (16Ψ) and checkpoint bytes per parameter (10P) (spec T4, T7)
STATIC_BYTES_PER_PARAM = 16.0
CKPT_BYTES_PER_PARAM = 10.0
#: step 3 MFU lookup (spec §5): (low, high) by setting; > 1000 GPUs subtracts 0.03-0.05
MFU_TABLE_17_9_4 = {
    "dense_single_node": (0.40, 0.50),
    "dense_multi_node": (0.35, 0.42),
    "moe_multi_node": (0.30, 0.35),
}
MFU_LARGE_CLUSTER_PENALTY = (0.03, 0.05)
LARGE_CLUSTER_GPUS = 1000
#: rule 9 MFU curve: GPUs -> MFU (spec §7)
MFU_CURVE_RULE9 = {8: 0.48, 80: 0.43, 800: 0.38, 8000: 0.33}
#: acceptance thresholds (spec T6, §7)
COMM_SHARE_MAX_FRAC = 0.20
TP_MAX = 8
EP_MAX = 8

#: Table 17-134 (spec §2.1): book figures; NVLink as the book quotes it (bidirectional aggregate)
GPU_TABLE_17_134 = {
    "H800": {"bf16_dense_TFLOPS": 989.5, "fp8_dense_TFLOPS": 1979.0, "hbm_GB": 80.0, "hbm_bw_GBps": 3350.0,
             "nvlink_bw_GBps": 400.0, "tdp_W": 700.0},
    "H20": {"bf16_dense_TFLOPS": 148.0, "fp8_dense_TFLOPS": 296.0, "hbm_GB": 96.0, "hbm_bw_GBps": 4000.0,
            "nvlink_bw_GBps": 900.0, "tdp_W": 500.0},
}
#: Table 17-136 (H800 value, H20 value, how the advantage is expressed), book figures
H800_VS_H20_17_136 = {
    "decode-70B-single": (41.8, 35.0, "pct_faster_time"),
    "throughput-TP4-B32": (3040.0, 3630.0, "pct_higher"),
    "KV-capacity-TP4": (43.0, 59.0, "pct_higher"),
    "prefill-70B-4K": (0.83, 5.53, "x_slower"),
    "INT4-concurrency": (256.0, 352.0, "pct_higher"),
    "spot-price": (1.00, 0.50, "pct_cheaper"),
    "cost-on-demand": (0.91, 0.30, "x_cheaper"),
    "cost-spot": (0.37, 0.15, "x_cheaper"),
}
#: Table 17-137 decision matrix
DECISION_17_137 = {
    "pretraining_above_7B": "H800",
    "short_prompt_long_output": "H20",
    "long_prompt_short_output": "H800",
    "offline_batch": "H20",
    "high_concurrency_4K": "H20",
    "moe_inference": "H20",
    "mixed": "route long prompts to H800, short ones to H20",
}


def h20_advantage(*, h800: float, h20: float, kind: str) -> float:
    """H20's advantage as Table 17-136 states it: % higher, x slower, % cheaper, x cheaper (spec §8)."""
    if kind == "pct_higher":
        return (h20 / h800 - 1.0) * 100.0
    if kind == "pct_faster_time":
        return (h800 / h20 - 1.0) * 100.0
    if kind == "x_slower":
        return h20 / h800
    if kind == "pct_cheaper":
        return (1.0 - h20 / h800) * 100.0
    if kind == "x_cheaper":
        return h800 / h20
    raise ValueError(f"unknown advantage kind {kind!r}")


def gpu_ridges() -> dict[str, float]:
    """Ridge points of Table 17-134 (295.4 H800, 37.0 H20)."""
    return {k: ridge_FLOP_per_byte(peak_TFLOPS=g["bf16_dense_TFLOPS"], hbm_bw_GBps=g["hbm_bw_GBps"])
            for k, g in GPU_TABLE_17_134.items()}


# --------------------------------------------------------------------------- 10 steps (17.9.4)
def mfu_lookup(*, moe: bool, num_gpus: int, gpus_per_node: int = 8, pick: str = "low") -> float:
    """Step 3: MFU from the §5 table (low or high end), minus the >1000-GPU penalty."""
    key = "moe_multi_node" if moe else ("dense_single_node" if num_gpus <= gpus_per_node else "dense_multi_node")
    lo, hi = MFU_TABLE_17_9_4[key]
    mfu = lo if pick == "low" else hi
    if num_gpus > LARGE_CLUSTER_GPUS:
        mfu -= MFU_LARGE_CLUSTER_PENALTY[1] if pick == "low" else MFU_LARGE_CLUSTER_PENALTY[0]
    return mfu


def mfu_lookup_measured(*, moe: bool, num_gpus: int, gpus_per_node: int = 8, pick: str = "low",
                        rows=None) -> float:
    """Step 3 on measured data: MFU from catalog/mfu.yaml (``rows``: its MfuRow records, default the
    shipped catalogue's), the row of the book's setting whose GPU range holds ``num_gpus``; its low or
    high end, or "mid". ValueError when no row covers the count (no measured MFU, no extrapolation)."""
    if pick not in ("low", "high", "mid"):
        raise ValueError(f"pick must be 'low', 'high' or 'mid', got {pick!r}")
    if rows is None:
        from workbook.catalog import load_catalog

        rows = load_catalog().mfu
    setting = "moe_multi_node" if moe else ("dense_single_node" if num_gpus <= gpus_per_node else "dense_multi_node")
    for r in rows:
        if r.setting == setting and r.gpus_min <= num_gpus <= r.gpus_max:
            if pick == "mid":
                return (r.mfu_low + r.mfu_high) / 2
            return r.mfu_low if pick == "low" else r.mfu_high
    covered = ", ".join(f"{r.gpus_min}-{r.gpus_max}" for r in rows if r.setting == setting) or "none"
    raise ValueError(f"no measured MFU for {setting} on {num_gpus} GPUs (catalog/mfu.yaml covers {covered})")


def static_memory_GB(*, params: float, bytes_per_param: float = STATIC_BYTES_PER_PARAM) -> float:
    """16·P bytes in GB (spec T4, step 4)."""
    return bytes_per_param * params / GB


def gpus_for_memory_floor(*, params_total: float, hbm_GB: float, act_GB: float, overhead_GB: float) -> dict[str, float]:
    """Step 4: N_mem = ceil(16·P/(M_GPU − M_act − M_overhead)) (ZeRO-3-like full sharding)."""
    avail = hbm_GB - act_GB - overhead_GB
    if avail <= 0:
        raise ValueError("activations + overhead leave no memory for model state")
    total = static_memory_GB(params=params_total)
    return {"M_total_GB": total, "M_avail_GB": avail, "N_mem": math.ceil(total / avail - 1e-12)}


def gpus_for_time_floor(*, total_FLOP: float, target_days: float, peak_TFLOPS: float, mfu: float) -> dict[str, float]:
    """Step 5: N_time = ceil(C/(T·86400·peak·MFU)); the denominator is returned too."""
    raw = training.gpus_raw(total_FLOP=total_FLOP, target_days=target_days, peak_TFLOPS=peak_TFLOPS, mfu=mfu)
    return {"time_denominator_FLOPs": total_FLOP / raw, "N_time_raw": raw, "N_time": math.ceil(raw - 1e-12)}


def round_gpus(*, gpus: int, tp: int = 1, pp: int = 1, ep: int = 1, gpus_per_node: int = 8) -> int:
    """Step 5 rounding: the next multiple of lcm(TP·PP·EP, GPUs per node) (615 → 624 at TP·PP = 16)."""
    group = math.lcm(int(tp * pp * ep), int(gpus_per_node))
    return int(math.ceil(gpus / group) * group)


def plan_memory_per_gpu_GB(*, params_total: float, tp: int, pp: int, ep: int = 1, act_GB: float = 0.0,
                           overhead_GB: float = 0.0) -> dict[str, float]:
    """Step 7: M_gpu = 16·P/(TP·PP·EP) + M_act + M_overhead (no ZeRO)."""
    state = static_memory_GB(params=params_total) / (tp * pp * ep)
    return {"M_state_per_GPU_GB": state, "M_per_GPU_GB": state + act_GB + overhead_GB}


def checkpoint(*, params_total: float, num_gpus: int, fs_write_GBps: float,
               bytes_per_param: float = CKPT_BYTES_PER_PARAM) -> dict[str, float]:
    """Step 9: M_ckpt = 10·P; per GPU M_ckpt/N; t_save = M_ckpt/BW_fs (spec T7)."""
    size_GB = storage.ckpt_bytes(params_total=params_total, bytes_per_param=bytes_per_param) / GB
    return {"ckpt_GB": size_GB, "per_GPU_GB": size_GB / num_gpus, "t_save_s": size_GB / fs_write_GBps}


def plan_cost_usd(*, num_gpus: float, days: float, gpu_hour_usd: float) -> float:
    """Step 10: cost = N·T·24·price (spec T8)."""
    return train_cost.cloud_cost_usd(gpu_hours=train_cost.gpu_hours(num_gpus=num_gpus, days=days), gpu_hour_usd=gpu_hour_usd)


def plan_10_step(
    *,
    params_total: float,
    params_active: float | None = None,
    tokens: float | None = None,
    target_days: float,
    budget_usd: float,
    peak_TFLOPS: float,
    hbm_GB: float,
    gpu_hour_usd: float,
    mfu: float | None = None,
    moe: bool = False,
    act_GB: float = 3.0,
    overhead_GB: float = 2.0,
    tp: int = 8,
    pp: int = 1,
    ep: int = 1,
    grad_accum: int = 16,
    ib_GBps: float = 50.0,
    fs_write_GBps: float = 100.0,
    gpus_per_node: int = 8,
    num_gpus: int | None = None,
) -> dict[str, float]:
    """The 10-step procedure of 17.9.4 (spec §5); returns every intermediate.

    ``num_gpus`` overrides the rounded N (the book picks 640). PP is raised until the memory check
    passes when the given layout does not fit (step 7 → step 6 loop).
    """
    p_active = params_total if params_active is None else params_active
    d_tokens = 20.0 * params_total if tokens is None else tokens
    out: dict[str, float] = {"P_total": params_total, "P_active": p_active, "D_tokens": d_tokens}
    out["C_total_FLOPs"] = training.train_compute_FLOP(params=p_active, tokens=d_tokens)  # step 2
    mem = gpus_for_memory_floor(params_total=params_total, hbm_GB=hbm_GB, act_GB=act_GB, overhead_GB=overhead_GB)
    out.update(mem)  # step 4
    mfu_used = mfu if mfu is not None else mfu_lookup(moe=moe, num_gpus=gpus_per_node * 2)  # step 3
    t = gpus_for_time_floor(total_FLOP=out["C_total_FLOPs"], target_days=target_days, peak_TFLOPS=peak_TFLOPS, mfu=mfu_used)
    if mfu is None and max(t["N_time"], mem["N_mem"]) > LARGE_CLUSTER_GPUS:  # iterate once
        mfu_used = mfu_lookup(moe=moe, num_gpus=max(t["N_time"], mem["N_mem"]))
        t = gpus_for_time_floor(total_FLOP=out["C_total_FLOPs"], target_days=target_days, peak_TFLOPS=peak_TFLOPS, mfu=mfu_used)
    out["MFU"] = mfu_used
    out.update(t)
    out["N"] = max(mem["N_mem"], t["N_time"])  # step 5
    # steps 6-7: raise PP until the static state fits
    while True:
        m = plan_memory_per_gpu_GB(params_total=params_total, tp=tp, pp=pp, ep=ep, act_GB=act_GB, overhead_GB=overhead_GB)
        if m["M_per_GPU_GB"] < hbm_GB or pp >= 64:
            break
        pp *= 2
    n_rounded = round_gpus(gpus=out["N"], tp=tp, pp=pp, ep=ep, gpus_per_node=gpus_per_node)
    n = n_rounded if num_gpus is None else num_gpus
    out.update({"N_rounded": n_rounded, "N_chosen": n, "nodes": n / gpus_per_node,
                "TP": tp, "PP": pp, "EP": ep, "DP": n / (tp * pp * ep), "GA": grad_accum})
    out.update(m)
    out["memory_fits"] = float(m["M_per_GPU_GB"] < hbm_GB)
    # step 8: DP all-reduce per GPU, amortised by GA
    dp = int(n // (tp * pp * ep))
    grad_GB = comm.dp_grad_shard_GB(params=params_total, tp=tp, pp=pp * ep)
    v_dp = comm.dp_allreduce_GB(grad_GB=grad_GB, dp=dp) if dp > 1 else 0.0
    out["V_DP_GB"] = v_dp
    out["t_DP_ms"] = v_dp / ib_GBps * MS_PER_S
    out["t_DP_amortised_ms"] = out["t_DP_ms"] / grad_accum
    out["tp_intra_node"] = float(tp <= gpus_per_node)
    out["ep_intra_node"] = float(ep * tp <= gpus_per_node or ep == 1)
    out.update(checkpoint(params_total=params_total, num_gpus=n, fs_write_GBps=fs_write_GBps))  # step 9
    # step 10
    days_actual = training.train_time_days(total_FLOP=out["C_total_FLOPs"], num_gpus=n, peak_TFLOPS=peak_TFLOPS, mfu=mfu_used)
    out["T_actual_days"] = days_actual
    out["cost_target_USD"] = plan_cost_usd(num_gpus=n, days=target_days, gpu_hour_usd=gpu_hour_usd)
    out["cost_actual_USD"] = plan_cost_usd(num_gpus=n, days=days_actual, gpu_hour_usd=gpu_hour_usd)
    out["within_budget"] = float(out["cost_target_USD"] <= budget_usd)
    out["budget_headroom_USD"] = budget_usd - out["cost_target_USD"]
    return out


def rail_fabric(*, nodes: int, rails: int = 8, port_GBps: float = 50.0) -> dict[str, float]:
    """Rail-optimised fabric (17.9.3, erratum 27): one port per node per rail; TB/s per rail and in total."""
    rail_TBps = nodes * port_GBps * GB / TB
    return {"ports_per_rail": nodes, "rail_TBps": rail_TBps, "total_TBps": rail_TBps * rails}


# --------------------------------------------------------------------------- rules of thumb (17.9.5)
def quick_param_count(*, layers: float, d_model: float, d_ff: float) -> float:
    """Corrected compact form 12·L·d²·(1/3 + d_ff/(4d)) for a 3-matrix FFN (spec T1, erratum 34)."""
    return 12.0 * layers * d_model**2 * (1.0 / 3.0 + d_ff / (4.0 * d_model))


def cluster_failure_interval_min(*, mtbf_gpu_hours: float, num_gpus: float) -> float:
    """System MTBF = MTBF_gpu/N, in minutes (rule 14, erratum 37)."""
    return storage.cluster_mtbf_h(mtbf_gpu_h=mtbf_gpu_hours, num_gpus=num_gpus) * SECONDS_PER_HOUR / SECONDS_PER_MINUTE


def daily_failure_frac(*, mtbf_gpu_hours: float) -> float:
    """Per-GPU failure probability per day ≈ 24/MTBF (erratum 37: 500 h → 4.8 %)."""
    return HOURS_PER_DAY / mtbf_gpu_hours


def recompute_extra_compute_pct(*, train_flops_factor: float = 6.0, recompute_flops_factor: float = 8.0) -> float:
    """Full recompute adds (8 − 6)/6 = 33 % compute (rule 6)."""
    return (recompute_flops_factor / train_flops_factor - 1.0) * 100.0


def mfu_rule9(num_gpus: float) -> float:
    """MFU from the rule-9 curve (48/43/38/33 % at 8/80/800/8000 GPUs), log-interpolated, clamped."""
    pts = sorted(MFU_CURVE_RULE9.items())
    if num_gpus <= pts[0][0]:
        return pts[0][1]
    for (n0, m0), (n1, m1) in zip(pts, pts[1:]):
        if num_gpus <= n1:
            f = math.log(num_gpus / n0) / math.log(n1 / n0)
            return m0 + f * (m1 - m0)
    return pts[-1][1]


def rules_of_thumb_checks(*, tp: int, ep: int, gpus_per_node: int, t_comm_s: float, grad_accum: float,
                          t_compute_s: float) -> dict[str, bool]:
    """Rules 2-4 as checks: TP ≤ 8 in NVLink, EP in NVLink, DP hidden when t_comm/GA < t_compute."""
    return {
        "tp_within_nvlink": tp <= min(TP_MAX, gpus_per_node),
        "ep_within_nvlink": ep <= EP_MAX and ep * tp <= gpus_per_node or ep == 1,
        "dp_hidden_by_ga": t_comm_s / grad_accum < t_compute_s,
    }
