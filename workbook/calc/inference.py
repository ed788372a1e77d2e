"""Inference sheet: prefill/TTFT, decode step, throughput, capacity, speculative decoding and chunked
prefill for one scenario (spec 17.8, families F1-F9).

Weights read use params_total, FLOPs use params_active (equal for dense models). Reads params (models) and the
per-GPU weights, weight bytes per parameter, KV per token and KV shard divisor (kv_cache) from ctx.q (both sheets
come earlier in workbook.calc.SHEETS).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import inference as inf
from workbook.reference import serving as sv
from workbook.units import GB, MB, MS_PER_S

QUANTITIES = [
    Q("infer_peak_TFLOPS", "TFLOPS", "Peak dense TFLOPS for inference math (FP8 weights on FP8 units; INT8/INT4 dequantised to BF16)", "17.8.3"),
    Q("infer_num_gpus", "GPUs", "Serving GPUs in total (TP x replicas)", "17.8.6"),
    Q("prefill_FLOPs", "FLOP", "Prefill FLOPs of one prompt (2·P_active·S_in)", "17.8.1"),
    Q("prefill_intensity_FLOP_per_byte", "FLOP/B", "Prefill arithmetic intensity (prefill FLOPs / weight bytes)", "17.8.1"),
    Q("prefill_compute_ms", "ms", "Prefill compute time per replica (2·P·S_in / (TP·peak·eta_p))", "17.8.2"),
    Q("prefill_weight_floor_ms", "ms", "Prefill memory floor: per-GPU weights read once from HBM", "17.8.2"),
    Q("prefill_ms", "ms", "Prefill time (larger of compute time and memory floor)", "17.8.2"),
    Q("prefill_compute_bound_flag", "0/1", "Prefill is compute-bound (1 = compute time exceeds the weight read)", "17.8.2"),
    Q("decode_context_tokens", "tokens", "Average KV context during decode (prompt + half the output)", "17.8.3"),
    Q("decode_kv_per_request_per_gpu_MB", "MB", "KV read per request per GPU in one decode step (average context)", "17.8.3"),
    Q("decode_compute_ms_per_seq", "ms", "Decode compute time per sequence in a step (2·P/TP / (peak·eta_c))", "17.8.3"),
    Q("decode_kv_read_ms_per_seq", "ms", "Decode KV read time per sequence in a step (KV_gpu / (BW·eta_bw))", "17.8.3"),
    Q("decode_first_step_ms", "ms", "First decode step (batch 1) counted in TTFT", "17.8.2"),
    Q("ttft_ms", "ms", "Time to first token (prefill + first decode step)", "17.8.2"),
    Q("decode_compute_ms", "ms", "Decode step compute time at the batch (2·P/TP·B / (peak·eta_c))", "17.8.3"),
    Q("decode_memory_ms", "ms", "Decode step memory time at the batch ((weights + B·KV)/ (BW·eta_bw))", "17.8.3"),
    Q("tpot_ms", "ms", "Time per output token = decode step time (larger of compute and memory)", "17.8.3"),
    Q("decode_memory_bound_flag", "0/1", "Decode is memory-bound at the batch (1 = memory time dominates)", "17.8.3"),
    Q("decode_intensity_FLOP_per_byte", "FLOP/B", "Decode arithmetic intensity at the batch", "17.8.1"),
    Q("decode_tokens_per_s_replica", "tokens/s", "Decode throughput of one replica (B / step time)", "17.8.4"),
    Q("decode_tokens_per_s_total", "tokens/s", "Decode throughput of all replicas", "17.8.4"),
    Q("per_user_tokens_per_s", "tokens/s", "Generation speed seen by one user (1 / TPOT)", "17.8.4"),
    Q("decode_bandwidth_bound_tokens_per_s", "tokens/s", "Bandwidth-only throughput bound of one replica (compute ignored)", "17.8.10"),
    Q("decode_compute_ceiling_tokens_per_s", "tokens/s", "Compute ceiling of one replica (peak·eta_c / (2·P/TP))", "17.8.4"),
    Q("decode_compute_bound_batch", "sequences", "Batch at which decode turns compute-bound (0 = never)", "17.8.4"),
    Q("request_latency_s", "s", "End-to-end latency of one request (TTFT + (O − 1)·TPOT)", "17.8.6"),
    Q("requests_per_s_total", "requests/s", "Completed requests per second, all replicas (decode-limited)", "17.8.6"),
    Q("kv_free_per_gpu_GB", "GB", "HBM per GPU left for KV (HBM − weights − overhead)", "17.8.6"),
    Q("max_batch_per_replica", "sequences", "Largest batch per replica whose full-context KV fits (usable fraction applied)", "17.8.6"),
    Q("max_concurrency_total", "sequences", "Concurrent sequences all replicas can hold", "17.8.6"),
    Q("batch_fits_flag", "0/1", "The scenario batch fits in the KV memory (1 = fits)", "17.8.6"),
    Q("spec_expected_tokens_per_step", "tokens", "Speculative decoding: tokens per target forward (1 when off)", "17.8.8"),
    Q("spec_speedup_x", "x", "Speculative decoding effective speed-up (draft cost included)", "17.8.8"),
    Q("spec_tpot_ms", "ms", "Time per output token with speculative decoding", "17.8.8"),
    Q("chunk_ms", "ms", "Chunked prefill: compute time of one chunk", "17.8.9"),
    Q("prefill_chunks", "chunks", "Chunks needed for the prompt", "17.8.9"),
    Q("ttft_worst_chunked_ms", "ms", "Worst-case TTFT of a new prompt behind a chunked prefill (prefill-priority)", "17.8.9"),
]


def _compute_dtype(weight_precision: str) -> str:
    """Precision of the matmuls: FP8/FP32 as stored; INT8/INT4 dequantised to BF16 (spec F3)."""
    return weight_precision if weight_precision in ("fp8", "fp32", "fp16") else "bf16"


def peak_TFLOPS(gpu, weight_precision: str) -> float:
    """Peak dense TFLOPS for the compute precision (BF16 where the GPU lacks the unit)."""
    field = {"fp8": "fp8_dense_TFLOPS", "fp32": "fp32_TFLOPS", "fp16": "fp16_dense_TFLOPS"}.get(
        _compute_dtype(weight_precision), "bf16_dense_TFLOPS")
    value = getattr(gpu, field, None)
    return float(value if value else gpu.bf16_dense_TFLOPS)


def compute(ctx: Context) -> dict[str, float]:
    """Inference quantities of one scenario (spec 17.8)."""
    s, g, q = ctx.s.inference, ctx.gpu, ctx.q
    params = float(q["params_total"])  # weights read from HBM (spec F1: total P)
    p_flop = float(q["params_active"])  # FLOPs per token: 2·P_active (= P_total for dense; MoE routes top-k)
    wb = float(q["infer_weight_bytes_per_param"])
    w_gpu = float(q["infer_weights_per_gpu_GB"]) * GB
    kv_tok, kv_div = float(q["kv_per_token_bytes"]), float(q["infer_kv_shard_divisor"])
    peak, bw = peak_TFLOPS(g, s.weight_precision), float(g.hbm_bw_GBps)
    p_gpu = p_flop / s.tp

    t_pre_c = inf.prefill_compute_time_s(params=p_flop, prompt_tokens=s.prompt_tokens, peak_TFLOPS=peak,
                                         efficiency_frac=s.compute_efficiency, tp=s.tp)
    t_pre_m = inf.weight_read_time_s(weight_bytes_per_gpu=w_gpu, hbm_bw_GBps=bw, hbm_efficiency_frac=s.memory_efficiency)
    t_pre = max(t_pre_c, t_pre_m)

    s_avg = s.prompt_tokens + s.output_tokens / 2
    kv_gpu = kv_tok * s_avg / kv_div
    step_kw = dict(params_per_gpu=p_gpu, weight_bytes_per_gpu=w_gpu, kv_bytes_per_request_per_gpu=kv_gpu, peak_TFLOPS=peak,
                   hbm_bw_GBps=bw, compute_efficiency_frac=s.decode_compute_efficiency, hbm_efficiency_frac=s.memory_efficiency)
    step = inf.decode_step(batch=s.batch, replicas=1, **step_kw)
    first = inf.decode_step(batch=1, **step_kw).t_step_s
    comp_per_seq = inf.decode_compute_time_s(params_per_gpu=p_gpu, batch=1, peak_TFLOPS=peak,
                                             compute_efficiency_frac=s.decode_compute_efficiency)
    kv_read_per_seq = inf.weight_read_time_s(weight_bytes_per_gpu=kv_gpu, hbm_bw_GBps=bw,
                                             hbm_efficiency_frac=s.memory_efficiency)
    ttft = inf.ttft_s(prefill_s=t_pre, first_decode_step_s=first)
    b_star = inf.compute_bound_batch(**{k: v for k, v in step_kw.items()})

    free = sv.free_memory_per_gpu_GB(hbm_GB=float(g.hbm_GB), weight_per_gpu_GB=w_gpu / GB, overhead_GB=s.runtime_overhead_GB)
    kv_full_GB = kv_tok * (s.prompt_tokens + s.output_tokens) / kv_div / GB
    b_max = sv.max_batch_per_group(hbm_GB=float(g.hbm_GB), weight_per_gpu_GB=w_gpu / GB, kv_per_gpu_GB=kv_full_GB,
                                   overhead_GB=s.runtime_overhead_GB, usable_frac=s.kv_usable_frac)

    if s.spec_draft_tokens > 0:
        ov = sv.draft_overhead_frac(draft_tokens=s.spec_draft_tokens, params_draft=s.spec_draft_params, params_target=p_flop)
        e = sv.expected_tokens_per_step(alpha=s.spec_accept_rate, draft_tokens=s.spec_draft_tokens)
        speed = sv.speculative_speedup_x(alpha=s.spec_accept_rate, draft_tokens=s.spec_draft_tokens, overhead_frac=ov)
    else:
        e, speed = 1.0, 1.0

    chunk = sv.chunk_time_s(params=p_flop, chunk_tokens=s.chunk_tokens, peak_TFLOPS=peak,
                            efficiency_frac=s.compute_efficiency, tp=s.tp)
    latency = inf.total_latency_s(ttft_s=ttft, output_tokens=s.output_tokens, tpot_s=step.t_step_s)
    total_tps = step.throughput_tok_per_s * s.replicas
    return {
        "infer_peak_TFLOPS": peak,
        "infer_num_gpus": float(s.tp * s.replicas),
        "prefill_FLOPs": inf.prefill_FLOPs(params=p_flop, prompt_tokens=s.prompt_tokens),
        "prefill_intensity_FLOP_per_byte": inf.prefill_FLOPs(params=p_flop, prompt_tokens=s.prompt_tokens) / (params * wb),
        "prefill_compute_ms": t_pre_c * MS_PER_S,
        "prefill_weight_floor_ms": t_pre_m * MS_PER_S,
        "prefill_ms": t_pre * MS_PER_S,
        "prefill_compute_bound_flag": float(t_pre_c >= t_pre_m),
        "decode_context_tokens": s_avg,
        "decode_kv_per_request_per_gpu_MB": kv_gpu / MB,
        "decode_compute_ms_per_seq": comp_per_seq * MS_PER_S,
        "decode_kv_read_ms_per_seq": kv_read_per_seq * MS_PER_S,
        "decode_first_step_ms": first * MS_PER_S,
        "ttft_ms": ttft * MS_PER_S,
        "decode_compute_ms": step.t_comp_s * MS_PER_S,
        "decode_memory_ms": step.t_mem_s * MS_PER_S,
        "tpot_ms": step.tpot_s * MS_PER_S,
        "decode_memory_bound_flag": float(step.memory_bound),
        "decode_intensity_FLOP_per_byte": inf.decode_FLOPs(params=p_gpu, batch=s.batch) / step.bytes_per_gpu,
        "decode_tokens_per_s_replica": step.throughput_tok_per_s,
        "decode_tokens_per_s_total": total_tps,
        "per_user_tokens_per_s": step.per_user_tok_per_s,
        "decode_bandwidth_bound_tokens_per_s": inf.decode_throughput_bound_tok_per_s(
            batch=s.batch, weight_bytes_per_gpu=w_gpu, kv_bytes_per_request_per_gpu=kv_gpu, hbm_bw_GBps=bw,
            hbm_efficiency_frac=s.memory_efficiency),
        "decode_compute_ceiling_tokens_per_s": inf.decode_compute_ceiling_tok_per_s(
            params_per_gpu=p_gpu, peak_TFLOPS=peak, compute_efficiency_frac=s.decode_compute_efficiency),
        "decode_compute_bound_batch": 0.0 if b_star == float("inf") else b_star,
        "request_latency_s": latency,
        "requests_per_s_total": total_tps / s.output_tokens,
        "kv_free_per_gpu_GB": free,
        "max_batch_per_replica": float(b_max),
        "max_concurrency_total": float(sv.total_concurrency(replicas=s.replicas, batch_per_group=b_max)),
        "batch_fits_flag": float(s.batch <= b_max),
        "spec_expected_tokens_per_step": e,
        "spec_speedup_x": speed,
        "spec_tpot_ms": step.tpot_s / speed * MS_PER_S,
        "chunk_ms": chunk * MS_PER_S,
        "prefill_chunks": float(sv.n_chunks(prompt_tokens=s.prompt_tokens, chunk_tokens=s.chunk_tokens)),
        "ttft_worst_chunked_ms": sv.ttft_worst_prefill_priority_s(chunk_s=chunk, own_prefill_s=t_pre) * MS_PER_S,
    }
