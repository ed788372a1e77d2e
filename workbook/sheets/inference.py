"""Line items of the Inference sheet: prefill/TTFT, decode step, throughput, capacity, speculative decoding and
chunked prefill (spec 17.8, families F1-F9).

Weights read from HBM use P_total (Plan: params_total via the KV Cache sheet's per-GPU weights); FLOPs use
P_active (= P_total for dense models, top-k experts for MoE), as workbook/calc/inference.py documents.
Times are kept in ms on the sheet; FLOP/s = TFLOPS x c_tera, bytes/s = GB/s x c_GB.
"""

from __future__ import annotations

from workbook.sheets.excel_math import power_nonneg

CONSTANTS = [
    ("infer_floor_eps", 1e-9, "sequences",
     "Tolerance added before rounding a batch count down (binary noise just below an integer)",
     "workbook/reference/serving.py _floor"),
]

#: weight precision -> which GPU peak the matmuls run at (CHOOSE index: 1 BF16, 2 FP16, 3 FP8, 4 FP32);
#: INT8/INT4 weights are dequantised to BF16 (spec F3)
TABLES = {
    "infer_dtype": (
        "name",
        [("bf16", {"peak_choice": 1.0}), ("fp16", {"peak_choice": 2.0}), ("fp8", {"peak_choice": 3.0}),
         ("fp32", {"peak_choice": 4.0}), ("int8", {"peak_choice": 1.0}), ("int4", {"peak_choice": 1.0})],
        "spec 17.8 F3 (INT4/INT8 compute in BF16 after dequantisation)",
    ),
}

_ETA_P = "{inference.compute_efficiency}"
_ETA_C = "{inference.decode_compute_efficiency}"
_ETA_BW = "{inference.memory_efficiency}"
_TP = "{inference.tp}"
_B = "{inference.batch}"
#: achieved HBM bandwidth in GB/s
_BW = f"({{gpu_hbm_bw_GBps}}*{_ETA_BW})"

ITEMS = {
    # FP8 weights run on FP8 units (BF16 rate if the GPU has none); FP16/FP32 as stored; INT8/INT4 on BF16
    "infer_peak_TFLOPS": "=CHOOSE(INDEX(t_infer_dtype_peak_choice,MATCH({inference.weight_precision},t_infer_dtype_name,0)),"
    "{gpu_bf16_dense_TFLOPS},{gpu_fp16_dense_TFLOPS},"
    "{gpu_fp8_dense_TFLOPS}+({gpu_fp8_dense_TFLOPS}=0)*{gpu_bf16_dense_TFLOPS},{gpu_fp32_TFLOPS})",
    "infer_num_gpus": f"={_TP}*{{inference.replicas}}",
    # F1
    "prefill_FLOPs": "=c_two*{params_active}*{inference.prompt_tokens}",
    "prefill_intensity_FLOP_per_byte": "={prefill_FLOPs}/({params_total}*{infer_weight_bytes_per_param})",
    # F2
    "prefill_compute_ms": f"={{prefill_FLOPs}}/({_TP}*{{infer_peak_TFLOPS}}*c_tera*{_ETA_P})*c_ms_per_s",
    "prefill_weight_floor_ms": f"={{infer_weights_per_gpu_GB}}/{_BW}*c_ms_per_s",
    "prefill_ms": "=MAX({prefill_compute_ms},{prefill_weight_floor_ms})",
    "prefill_compute_bound_flag": "=IF({prefill_compute_ms}>={prefill_weight_floor_ms},1,0)",
    # F3
    "decode_context_tokens": "={inference.prompt_tokens}+{inference.output_tokens}/c_two",
    "decode_kv_per_request_per_gpu_MB": "={kv_per_token_bytes}*{decode_context_tokens}/{infer_kv_shard_divisor}/c_MB",
    "decode_compute_ms_per_seq": f"=c_two*{{params_active}}/{_TP}/({{infer_peak_TFLOPS}}*c_tera*{_ETA_C})*c_ms_per_s",
    "decode_kv_read_ms_per_seq": f"={{decode_kv_per_request_per_gpu_MB}}*c_MB/({_BW}*c_GB)*c_ms_per_s",
    "decode_first_step_ms": "=MAX({decode_compute_ms_per_seq},{prefill_weight_floor_ms}+{decode_kv_read_ms_per_seq})",
    "ttft_ms": "={prefill_ms}+{decode_first_step_ms}",
    "decode_compute_ms": f"={{decode_compute_ms_per_seq}}*{_B}",
    "decode_memory_ms": f"={{prefill_weight_floor_ms}}+{_B}*{{decode_kv_read_ms_per_seq}}",
    "tpot_ms": "=MAX({decode_compute_ms},{decode_memory_ms})",
    "decode_memory_bound_flag": "=IF({decode_memory_ms}>={decode_compute_ms},1,0)",
    "decode_intensity_FLOP_per_byte": f"=c_two*{{params_active}}/{_TP}*{_B}"
    f"/({{infer_weights_per_gpu_GB}}*c_GB+{_B}*{{decode_kv_per_request_per_gpu_MB}}*c_MB)",
    # F3/F4 throughput
    "decode_tokens_per_s_replica": f"={_B}/{{tpot_ms}}*c_ms_per_s",
    "decode_tokens_per_s_total": "={decode_tokens_per_s_replica}*{inference.replicas}",
    "per_user_tokens_per_s": "=c_ms_per_s/{tpot_ms}",
    "decode_bandwidth_bound_tokens_per_s": f"={_B}/{{decode_memory_ms}}*c_ms_per_s",
    "decode_compute_ceiling_tokens_per_s": "=c_ms_per_s/{decode_compute_ms_per_seq}",
    # T_comp(B) = T_mem(B) at B* = T_weights / (T_comp per seq - T_KV per seq); never (0) if the slope is not positive
    "decode_compute_bound_batch": "=IF({decode_compute_ms_per_seq}>{decode_kv_read_ms_per_seq},"
    "{prefill_weight_floor_ms}/({decode_compute_ms_per_seq}-{decode_kv_read_ms_per_seq}),0)",
    # 17.8.6
    "request_latency_s": "=({ttft_ms}+({inference.output_tokens}-1)*{tpot_ms})/c_ms_per_s",
    "requests_per_s_total": "={decode_tokens_per_s_total}/{inference.output_tokens}",
    # F5
    "kv_free_per_gpu_GB": "={gpu_hbm_GB}-{infer_weights_per_gpu_GB}-{inference.runtime_overhead_GB}",
    "max_batch_per_replica": "=MAX(0,INT({inference.kv_usable_frac}*{kv_free_per_gpu_GB}"
    "/({kv_per_seq_GB}/{infer_kv_shard_divisor})+c_infer_floor_eps))",
    "max_concurrency_total": "={inference.replicas}*{max_batch_per_replica}",
    "batch_fits_flag": f"=IF({_B}<={{max_batch_per_replica}},1,0)",
    # F8: E = (1 - a^(K+1)) / (1 - a), K+1 when a = 1 (E = 1 when K = 0)
    "spec_expected_tokens_per_step": "=IF({inference.spec_accept_rate}=1,{inference.spec_draft_tokens}+1,"
    f"(1-{power_nonneg('{inference.spec_accept_rate}', '{inference.spec_draft_tokens}+1')})/(1-{{inference.spec_accept_rate}}))",
    "spec_speedup_x": "={spec_expected_tokens_per_step}"
    "/(1+{inference.spec_draft_tokens}*{inference.spec_draft_params}/{params_active})",
    "spec_tpot_ms": "={tpot_ms}/{spec_speedup_x}",
    # F9 (prefill-priority scheduler)
    "chunk_ms": f"=c_two*{{params_active}}*{{inference.chunk_tokens}}/({_TP}*{{infer_peak_TFLOPS}}*c_tera*{_ETA_P})"
    "*c_ms_per_s",
    "prefill_chunks": "=ROUNDUP({inference.prompt_tokens}/{inference.chunk_tokens},0)",
    "ttft_worst_chunked_ms": "={chunk_ms}+{prefill_ms}",
}
