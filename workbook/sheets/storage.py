"""Line items of the Storage sheet: dataset, data loading, checkpoints and logs of one training run
(spec 17.7). Tokens per step come from the Plan block; step time and run length are the ones in use
(Step Time sheet, last block: the step model, or the MFU given, by the scenario's time model).

Storage inputs left blank on the Plan sheet take the catalogue default (the sto_* rows); planning
constants without a scenario field are the defaults d_<key> or the constants below.
"""

from __future__ import annotations

from workbook.calc import storage as cs
from workbook.units import KB, SECONDS_PER_MINUTE

CONSTANTS = [
    ("KB", KB, "B/KB", "Bytes per KB (decimal)", "spec 17.1 §0"),
    ("s_per_minute", SECONDS_PER_MINUTE, "s/min", "Seconds per minute", "definition"),
    ("sto_uint16_vocab", cs.UINT16_VOCAB, "tokens", "Vocabulary size up to which token ids fit uint16",
     "spec 17.7.1"),
    ("sto_uint16_bytes", cs.UINT16_BYTES, "B/token", "Bytes per uint16 token id", "spec 17.7.1"),
    ("sto_uint32_bytes", cs.UINT32_BYTES, "B/token", "Bytes per uint32 token id", "spec 17.7.1"),
    ("sto_tokenize_core_MBps", cs.TOKENIZE_CORE_MBPS, "MB/s", "BPE tokenisation rate of one CPU core",
     "spec 17.7.7"),
    ("sto_oss_write_GBps", cs.OSS_WRITE_GBPS, "GB/s", "Write bandwidth of one 10x NVMe RAID0 storage server",
     "spec 17.7.5 table 17-87"),
    ("log_nccl_MB_per_gpu_day", cs.LOG_NCCL_MB_PER_GPU_DAY, "MB/GPU-day", "NCCL log volume at WARN level",
     "spec 17.7.6"),
    ("log_stdout_MB_per_gpu_day", cs.LOG_STDOUT_MB_PER_GPU_DAY, "MB/GPU-day", "stdout/stderr log volume",
     "spec 17.7.6 (1-10 MB)"),
    ("log_series_per_gpu", cs.LOG_SERIES_PER_GPU, "series/GPU", "Prometheus series per GPU", "spec 17.7.6"),
    ("log_scrape_s", cs.LOG_SCRAPE_S, "s", "Prometheus scrape interval", "spec 17.7.6"),
    ("log_bytes_per_sample", cs.LOG_BYTES_PER_SAMPLE, "B/sample", "Prometheus bytes per stored sample",
     "spec 17.7.6 (1-2 B)"),
    ("log_compression_x", cs.LOG_COMPRESSION_X, "x", "Log compression ratio (gzip/lz4 5-10x)", "spec 17.7.6"),
]


def _input(field: str) -> str:
    """A storage input: the scenario value, or the catalogue default when the input is left blank."""
    return f"=IF(ISBLANK({{storage.{field}}}),d_{field},{{storage.{field}}})"


ITEMS = {
    "sto_dataset_bytes_per_token": _input("dataset_bytes_per_token"),
    "sto_ckpt_bytes_per_param": _input("ckpt_bytes_per_param"),
    "sto_ckpt_interval_steps": _input("ckpt_interval_steps"),
    "sto_ckpt_keep": _input("ckpt_keep"),
    "sto_mtbf_gpu_hours": _input("mtbf_gpu_hours"),
    "sto_fs_write_GBps": _input("fs_write_GBps"),
    "sto_fs_read_GBps": _input("fs_read_GBps"),
    "storage_token_id_bytes": "=IF({model_vocab}<c_sto_uint16_vocab,c_sto_uint16_bytes,c_sto_uint32_bytes)",
    # 17.7.1 dataset
    "storage_dataset_raw_TB": "={training.tokens}*{sto_dataset_bytes_per_token}/c_TB",
    "storage_dataset_total_TB": "={storage_dataset_raw_TB}*d_dataset_overhead_factor",
    "storage_tokenized_TB": "={training.tokens}*{storage_token_id_bytes}/c_TB",
    # 17.7.2 loading, 17.7.7 tokenisation
    "storage_read_MBps": "={plan_tokens_per_step}*{sto_dataset_bytes_per_token}/{train_step_time_s}/c_MB",
    "storage_read_per_rank_KBps": "={plan_tokens_per_step}*{storage_token_id_bytes}"
    "/({plan_dp}*{train_step_time_s})/c_KB",
    "storage_tokenize_cores": "={plan_tokens_per_step}/{train_step_time_s}*{sto_dataset_bytes_per_token}"
    "/(c_sto_tokenize_core_MBps*c_MB)",
    # 17.7.3-17.7.4 checkpoint size, retention, interval
    "ckpt_size_GB": "={params_total}*{sto_ckpt_bytes_per_param}/c_GB",
    "ckpt_shard_per_rank_GB": "={ckpt_size_GB}/{plan_dp}",
    "ckpt_retention_TB": "={ckpt_size_GB}*{sto_ckpt_keep}*c_GB/c_TB",
    "ckpt_host_buffer_GB": "={ckpt_size_GB}",
    "ckpt_cluster_mtbf_h": "={sto_mtbf_gpu_hours}/{training.num_gpus}",
    "ckpt_interval_max_steps": "={ckpt_cluster_mtbf_h}*c_s_per_hour/({train_step_time_s}*d_ckpt_margin_factor)",
    "ckpt_interval_ok_flag": "=IF({sto_ckpt_interval_steps}<={ckpt_interval_max_steps},1,0)",
    "ckpt_interval_min": "={sto_ckpt_interval_steps}*{train_step_time_s}/c_s_per_minute",
    "ckpt_count_written": "={train_days}*c_s_per_day/{train_step_time_s}/{sto_ckpt_interval_steps}",
    "ckpt_failures_expected": "={train_days}*c_s_per_day/c_s_per_hour/{ckpt_cluster_mtbf_h}",
    # 17.7.5 checkpoint bandwidth
    "ckpt_sync_write_GBps": "={ckpt_size_GB}/{train_step_time_s}",
    "ckpt_async_write_GBps": "={ckpt_size_GB}/({sto_ckpt_interval_steps}*{train_step_time_s})",
    "ckpt_async_per_gpu_MBps": "={ckpt_async_write_GBps}/{plan_dp}*c_GB/c_MB",
    "ckpt_save_time_s": "={ckpt_size_GB}/{sto_fs_write_GBps}",
    "ckpt_save_stall_frac": "={ckpt_save_time_s}/({sto_ckpt_interval_steps}*{train_step_time_s}+{ckpt_save_time_s})",
    "ckpt_load_time_s": "={ckpt_size_GB}/MIN({plan_dp}*d_nvme_bw_GBps,{sto_fs_read_GBps})",
    "ckpt_oss_nodes_async": "=ROUNDUP(ROUND({ckpt_async_write_GBps}/(c_sto_oss_write_GBps*d_fs_efficiency),"
    "c_count_ceil_digits),0)*d_storage_replication",
    "ckpt_lost_time_h": "={ckpt_failures_expected}*({sto_ckpt_interval_steps}*{train_step_time_s}/c_two"
    "+{ckpt_load_time_s})/c_s_per_hour",
    # 17.7.6 logs
    "logs_nccl_GB": "={training.num_gpus}*c_log_nccl_MB_per_gpu_day*{train_days}*c_MB/c_GB",
    "logs_stdout_GB": "={training.num_gpus}*c_log_stdout_MB_per_gpu_day*{train_days}*c_MB/c_GB",
    "logs_prometheus_GB": "=c_log_series_per_gpu*{training.num_gpus}*({train_days}*c_s_per_day"
    "/c_log_scrape_s)*c_log_bytes_per_sample/c_GB",
    "logs_total_compressed_GB": "=({logs_nccl_GB}+{logs_stdout_GB}+{logs_prometheus_GB})/c_log_compression_x",
    "storage_total_TB": "={storage_dataset_total_TB}+{ckpt_retention_TB}+{logs_total_compressed_GB}*c_GB/c_TB",
}
