"""Line items of the KV Cache sheet: KV cache, inference memory per GPU, fit checks and KV offload
(spec 17.4.9-17.4.12)."""

from __future__ import annotations

from typing import get_args

from workbook.calc.kv_cache import TP_OPTIONS
from workbook.reference import infer_memory as im
from workbook.scenario.model import WeightPrecision
from workbook.units import bytes_per_element

CONSTANTS = [
    ("kv_baseline_bytes", bytes_per_element("bf16"), "B", "KV baseline bytes per element (BF16 cache)", "spec 17.4.10"),
    ("infer_act_bytes", bytes_per_element("bf16"), "B", "Activation bytes per element at inference (BF16)", "spec 17.4.11"),
]


def _weight_bytes(p: str) -> float:
    return im.INT4_WITH_SCALES_BYTES_PER_PARAM if p == "int4" else bytes_per_element(p)


TABLES = {
    "infer_weight": ("name", [(p, {"bytes": _weight_bytes(p)}) for p in get_args(WeightPrecision)],
                     "spec 17.4.11 (weights P·bytes; INT4 with scales and zero points 0.55)"),
    "infer_tp_options": ("option", [(str(2**i), {"tp": float(2**i)}) for i in range(TP_OPTIONS)],
                         "spec 17.4.11 (power-of-two TP degrees tried for the minimum TP that fits)"),
}

_MLA = "{model_is_mla_flag}=1"
_TP = "t_infer_tp_options_tp"
_H = "{infer_kv_heads_shardable}"

ITEMS = {
    "kv_bytes_per_elem": "=INDEX(t_prec_bytes,MATCH({inference.kv_precision},t_prec_name,0))",
    "kv_width_per_layer": f"=IF({_MLA},{{model_kv_lora_rank}}+{{model_qk_rope_head_dim}},"
    "c_two*{model_n_kv_heads}*{model_head_dim})",
    "kv_mha_width_per_layer": f"=IF({_MLA},{{model_n_heads}}*({{model_qk_nope_head_dim}}+{{model_qk_rope_head_dim}}"
    "+{model_v_head_dim}),c_two*{model_n_heads}*{model_head_dim})",
    "kv_per_token_bytes": "={model_layers}*{kv_width_per_layer}*{kv_bytes_per_elem}",
    "kv_per_token_MB": "={kv_per_token_bytes}/c_MB",
    "kv_vs_mha_frac": "={kv_per_token_bytes}/({model_layers}*{kv_mha_width_per_layer}*c_kv_baseline_bytes)",
    "kv_context_tokens": "={inference.prompt_tokens}+{inference.output_tokens}",
    "kv_per_seq_GB": "={kv_per_token_bytes}*{kv_context_tokens}/c_GB",
    "kv_cache_GB": "={kv_per_seq_GB}*{inference.batch}",
    "infer_weight_bytes_per_param": "=INDEX(t_infer_weight_bytes,MATCH({inference.weight_precision},t_infer_weight_name,0))",
    "infer_weights_GB": "={params_total}*{infer_weight_bytes_per_param}/c_GB",
    "infer_total_GB": "={infer_weights_GB}+{kv_cache_GB}+{inference.runtime_overhead_GB}*{inference.tp}",
    "infer_kv_heads_shardable": f"=IF({_MLA},1,{{model_n_kv_heads}})",
    "infer_kv_shard_divisor": f"=MIN({{inference.tp}},{_H})",
    "infer_weights_per_gpu_GB": "={infer_weights_GB}/{inference.tp}",
    "infer_kv_per_gpu_GB": "={kv_cache_GB}/{infer_kv_shard_divisor}",
    "infer_overhead_GB": "={inference.runtime_overhead_GB}",
    "infer_per_gpu_GB": "={infer_weights_per_gpu_GB}+{infer_kv_per_gpu_GB}+{infer_overhead_GB}",
    "infer_hbm_headroom_GB": "={gpu_hbm_GB}-{infer_per_gpu_GB}",
    "infer_fits_flag": "=IF({infer_per_gpu_GB}<={gpu_hbm_GB},1,0)",
    # per-GPU memory at each TP option t: weights/t + KV/min(t, heads) + overhead; count those over HBM
    "infer_tp_options_short": f"=SUMPRODUCT(({{infer_weights_GB}}/{_TP}+{{kv_cache_GB}}/(({_TP}<{_H})*{_TP}"
    f"+({_TP}>={_H})*{_H})+{{infer_overhead_GB}}>{{gpu_hbm_GB}})*1)",
    # memory per GPU falls as TP grows, so the options that fit follow the ones that do not
    "infer_min_tp_fit": f"=IF({{infer_tp_options_short}}<COUNT({_TP}),"
    f"INDEX({_TP},MIN({{infer_tp_options_short}}+1,COUNT({_TP}))),0)",
    "infer_kv_dominant_flag": "=IF({kv_cache_GB}>{infer_weights_GB},1,0)",
    "infer_qkt_no_flash_GB": "={model_n_heads}/{inference.tp}*{inference.prompt_tokens}*{inference.prompt_tokens}"
    "*c_infer_act_bytes/c_GB",
    "weights_read_ms": "={infer_weights_per_gpu_GB}/{gpu_hbm_bw_GBps}*c_ms_per_s",
    "kv_read_ms": "={infer_kv_per_gpu_GB}/{gpu_hbm_bw_GBps}*c_ms_per_s",
    "kv_offload_read_s": "={infer_kv_per_gpu_GB}/{pcie_effective_GBps}",
}
