"""KV Cache sheet: KV cache, inference memory per GPU, fit checks and KV offload
(spec 17.4.9-17.4.12) for the scenario's serving setup."""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import infer_memory as im
from workbook.reference import kv
from workbook.reference import offload as off
from workbook.units import GB, MB, MS_PER_S, bytes_per_element

QUANTITIES = [
    Q("kv_bytes_per_elem", "B", "KV cache bytes per element (KV precision)", "17.4.10"),
    Q("kv_width_per_layer", "count", "Cached values per token per layer (K+V: 2·g·d_h; MLA: latent + RoPE key)", "17.4.9"),
    Q("kv_mha_width_per_layer", "count", "MHA cache width per token per layer of the same model (2·h·d_h; MLA: h·(d_nope+d_rope+d_v))", "17.4.10"),
    Q("kv_per_token_bytes", "B", "KV cache bytes per token (all layers)", "17.4.9"),
    Q("kv_per_token_MB", "MB", "KV cache per token (all layers, MB)", "17.2.3"),
    Q("kv_vs_mha_frac", "fraction", "KV size relative to an MHA cache of the same model at BF16", "17.4.10"),
    Q("kv_context_tokens", "tokens", "Context per sequence (prompt + output tokens)", "17.4.9"),
    Q("kv_per_seq_GB", "GB", "KV cache of one sequence at full context", "17.4.9"),
    Q("kv_cache_GB", "GB", "KV cache of the batch at full context", "17.4.9"),
    Q("infer_weight_bytes_per_param", "B/param", "Weight bytes per parameter at inference (INT4 incl. scales 0.55)", "17.4.11"),
    Q("infer_weights_GB", "GB", "Inference weights (whole model)", "17.4.11"),
    Q("infer_total_GB", "GB", "Inference memory of one replica: weights + KV + overhead on each GPU", "17.4.11"),
    Q("infer_kv_heads_shardable", "heads", "KV heads TP can split (g; 1 for the MLA latent)", "17.4.11"),
    Q("infer_kv_shard_divisor", "x", "KV split over TP (min(TP, KV heads); MLA latent is not split)", "17.4.11"),
    Q("infer_weights_per_gpu_GB", "GB", "Weights per GPU (weights / TP)", "17.4.11"),
    Q("infer_kv_per_gpu_GB", "GB", "KV cache per GPU", "17.4.11"),
    Q("infer_overhead_GB", "GB", "Runtime overhead per GPU at inference", "17.4.11"),
    Q("infer_per_gpu_GB", "GB", "Inference memory per GPU (weights/TP + KV/TP + overhead)", "17.4.11"),
    Q("infer_hbm_headroom_GB", "GB", "HBM left per GPU when serving (negative = short)", "17.4.11"),
    Q("infer_fits_flag", "0/1", "Serving setup fits in HBM (1 = fits)", "17.4.11"),
    Q("infer_tp_options_short", "count", "Power-of-two TP options 1-64 whose per-GPU memory does not fit", "17.4.11"),
    Q("infer_min_tp_fit", "GPUs", "Smallest power-of-two TP that fits (0 = none up to 64)", "17.4.11"),
    Q("infer_kv_dominant_flag", "0/1", "KV cache larger than the weights (1 = KV dominates)", "17.4.11"),
    Q("infer_qkt_no_flash_GB", "GB", "Prefill attention-score peak per GPU for one prompt without FlashAttention (h/TP·S²·2)", "17.4.11"),
    Q("weights_read_ms", "ms", "HBM time to stream the per-GPU weights once (decode lower bound)", "17.1.2"),
    Q("kv_read_ms", "ms", "HBM time to read the per-GPU KV cache once", "17.1.2"),
    Q("kv_offload_read_s", "s", "Time to read the per-GPU KV cache over PCIe if offloaded to CPU", "17.4.12"),
]


#: TP options tried for the minimum TP that fits: 1, 2, 4, ..., 64 (im.min_tp_to_fit's max_tp)
TP_OPTIONS = 7


def weight_bytes(precision: str) -> float:
    """Inference weight bytes/param; INT4 carries scales and zero points (0.55, spec 17.4.11)."""
    return im.INT4_WITH_SCALES_BYTES_PER_PARAM if precision == "int4" else bytes_per_element(precision)


def compute(ctx: Context) -> dict[str, float]:
    m, inf, q, g = ctx.model, ctx.s.inference, ctx.q, ctx.gpu
    L = float(m.layers)
    kb = bytes_per_element(inf.kv_precision)
    if m.attention == "mla":
        width = float(m.kv_lora_rank + m.qk_rope_head_dim)
        per_tok = kv.mla_kv_bytes_per_token(layers=L, kv_lora_rank=m.kv_lora_rank,
                                            qk_rope_head_dim=m.qk_rope_head_dim, kv_bytes=kb)
        n_kv = 1.0  # one latent shared by all heads: TP cannot split it
        mha_width = float(m.n_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim))
    else:
        width = 2.0 * m.n_kv_heads * m.head_dim
        per_tok = kv.kv_bytes_per_token(layers=L, n_kv_heads=m.n_kv_heads, head_dim=m.head_dim, kv_bytes=kb)
        n_kv = float(m.n_kv_heads)
        mha_width = 2.0 * m.n_heads * m.head_dim
    ctx_tokens = inf.prompt_tokens + inf.output_tokens
    per_seq = per_tok * ctx_tokens / GB
    cache = per_seq * inf.batch
    wb = weight_bytes(inf.weight_precision)
    w = im.inference_weights_GB(params=q["params_total"], bytes_per_param=wb)
    ovh = float(inf.runtime_overhead_GB)
    per = im.inference_per_gpu(weights_GB=w, kv_GB=cache, tp=inf.tp, overhead_GB=ovh, n_kv_heads=n_kv)
    kv_gpu, per_gpu = per["kv_GB"], per["total_GB"]
    hbm = float(g.hbm_GB)
    tp_options = [2**i for i in range(TP_OPTIONS)]
    short = sum(1 for t in tp_options if not im.fits(
        need_GB=im.inference_per_gpu(weights_GB=w, kv_GB=cache, tp=t, overhead_GB=ovh, n_kv_heads=n_kv)["total_GB"],
        hbm_GB=hbm))
    min_tp = im.min_tp_to_fit(weights_GB=w, kv_GB=cache, hbm_GB=hbm, overhead_GB=ovh, n_kv_heads=n_kv)
    return {
        "kv_bytes_per_elem": kb,
        "kv_width_per_layer": width,
        "kv_mha_width_per_layer": mha_width,
        "kv_per_token_bytes": per_tok,
        "kv_per_token_MB": per_tok / MB,
        "kv_vs_mha_frac": per_tok / (L * mha_width * bytes_per_element("bf16")),
        "kv_context_tokens": ctx_tokens,
        "kv_per_seq_GB": per_seq,
        "kv_cache_GB": cache,
        "infer_weight_bytes_per_param": wb,
        "infer_weights_GB": w,
        "infer_total_GB": w + cache + ovh * inf.tp,
        "infer_kv_heads_shardable": n_kv,
        "infer_kv_shard_divisor": im.kv_shard_divisor(tp=inf.tp, n_kv_heads=n_kv),
        "infer_weights_per_gpu_GB": per["weights_GB"],
        "infer_kv_per_gpu_GB": kv_gpu,
        "infer_overhead_GB": ovh,
        "infer_per_gpu_GB": per_gpu,
        "infer_hbm_headroom_GB": hbm - per_gpu,
        "infer_fits_flag": im.fits(need_GB=per_gpu, hbm_GB=hbm),
        "infer_tp_options_short": short,
        "infer_min_tp_fit": min_tp or 0,
        "infer_kv_dominant_flag": im.dominant_term(weights_GB=w, kv_GB=cache) == "kv",
        "infer_qkt_no_flash_GB": im.peak_activation_GB(n_heads=m.n_heads / inf.tp, batch=1, seq_len=inf.prompt_tokens),
        "weights_read_ms": per["weights_GB"] / g.hbm_bw_GBps * MS_PER_S,
        "kv_read_ms": kv_gpu / g.hbm_bw_GBps * MS_PER_S,
        "kv_offload_read_s": off.kv_read_time_s(kv_GB_per_seq=kv_gpu, batch=1, pcie_quoted_GBps=float(g.pcie_bw_GBps),
                                                direction_factor=ctx.s.network.pcie_direction_factor),
    }
