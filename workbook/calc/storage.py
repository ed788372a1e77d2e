"""Storage sheet: dataset, data loading, checkpoints and logs of one training run (spec 17.7).

Tokens per step come from the Plan sheet; the step time and run length are the ones in use
(train_step_time_s, train_days: the step model, or the MFU given, by the scenario's time model). Storage inputs are resolved (no nulls);
planning constants without a scenario field are read from ctx.defaults by key.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.calc.plan import ceil_count_xl
from workbook.reference import storage as sto
from workbook.units import GB, KB, MB, SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MINUTE, TB

#: log-volume planning constants (spec 17.7.6): NCCL at WARN, stdout 5 MB/GPU-day, 20 series/GPU every 15 s
LOG_NCCL_MB_PER_GPU_DAY = sto.NCCL_LOG_MB_PER_GPU_DAY["WARN"]
LOG_STDOUT_MB_PER_GPU_DAY = 5
LOG_SERIES_PER_GPU = 20
LOG_SCRAPE_S = 15
LOG_BYTES_PER_SAMPLE = 1.5
LOG_COMPRESSION_X = 5
#: one 10x NVMe RAID0 storage server (table 17-87), the unit of the OSS sizing
OSS_WRITE_GBPS = sto.OSS_TABLE["10xNVMe-RAID0"]["write_GBps"]
#: token ids fit uint16 below this vocabulary size, else uint32 (spec 17.7.1)
UINT16_VOCAB = 65536
UINT16_BYTES = 2
UINT32_BYTES = 4
#: BPE tokenisation rate of one CPU core (spec 17.7.7)
TOKENIZE_CORE_MBPS = 1.0

QUANTITIES = [
    Q("sto_dataset_bytes_per_token", "B/token", "Stored bytes per training token in use (scenario, else default)", "17.7.1"),
    Q("sto_ckpt_bytes_per_param", "B/param", "Checkpoint bytes per parameter in use (scenario, else default)", "17.7.3"),
    Q("sto_ckpt_interval_steps", "steps", "Steps between checkpoints in use (scenario, else default)", "17.7.4"),
    Q("sto_ckpt_keep", "checkpoints", "Checkpoints retained in use (scenario, else default)", "17.7.4"),
    Q("sto_mtbf_gpu_hours", "h", "MTBF of one GPU in use (scenario, else default)", "17.7.4"),
    Q("sto_fs_write_GBps", "GB/s", "File-system aggregate write bandwidth in use (scenario, else default)", "17.7.5"),
    Q("sto_fs_read_GBps", "GB/s", "File-system aggregate read bandwidth in use (scenario, else default)", "17.7.5"),
    Q("storage_token_id_bytes", "B/token", "Bytes per tokenised token id (2 = uint16 if vocab < 65,536, else 4)", "17.7.1"),
    Q("storage_dataset_raw_TB", "TB", "Raw training text (tokens x bytes per token)", "17.7.1"),
    Q("storage_dataset_total_TB", "TB", "Dataset on disk incl. tokenised copy, shards and index", "17.7.1"),
    Q("storage_tokenized_TB", "TB", "Tokenised dataset (uint16 if vocab < 65,536, else uint32)", "17.7.1"),
    Q("storage_read_MBps", "MB/s", "Aggregate raw-text read bandwidth during training", "17.7.2"),
    Q("storage_read_per_rank_KBps", "KB/s", "Tokenised read bandwidth per DP rank", "17.7.2"),
    Q("storage_tokenize_cores", "cores", "CPU cores to tokenise on the fly (1 MB/s per core)", "17.7.7"),
    Q("ckpt_size_GB", "GB", "Checkpoint size (total params x checkpoint bytes per param)", "17.7.3"),
    Q("ckpt_shard_per_rank_GB", "GB", "Checkpoint shard written by each DP rank", "17.7.3"),
    Q("ckpt_retention_TB", "TB", "Checkpoint storage for the retained checkpoints", "17.7.4"),
    Q("ckpt_host_buffer_GB", "GB", "Host RAM to stage one asynchronous checkpoint", "17.7.4"),
    Q("ckpt_cluster_mtbf_h", "h", "Cluster MTBF (GPU MTBF / GPUs)", "17.7.4"),
    Q("ckpt_interval_max_steps", "steps", "Longest safe checkpoint interval (MTBF / (step x margin))", "17.7.4"),
    Q("ckpt_interval_ok_flag", "0/1", "Checkpoint interval within the MTBF rule (1 = yes)", "17.7.4"),
    Q("ckpt_interval_min", "min", "Wall time between checkpoints (= worst-case lost work)", "17.7.4"),
    Q("ckpt_count_written", "checkpoints", "Checkpoints written over the run", "17.7.4"),
    Q("ckpt_failures_expected", "failures", "Expected failures over the run (run hours / cluster MTBF)", "17.7.4"),
    Q("ckpt_sync_write_GBps", "GB/s", "Write bandwidth to save synchronously within one step", "17.7.5"),
    Q("ckpt_async_write_GBps", "GB/s", "Write bandwidth to save asynchronously within the interval", "17.7.5"),
    Q("ckpt_async_per_gpu_MBps", "MB/s", "Asynchronous write bandwidth per DP rank (distributed save)", "17.7.5"),
    Q("ckpt_save_time_s", "s", "Checkpoint save time at the file-system write bandwidth", "17.7.5"),
    Q("ckpt_save_stall_frac", "fraction", "Share of the run stalled by synchronous saves", "17.7.5"),
    Q("ckpt_load_time_s", "s", "Restart load time: size / min(DP x NVMe, file-system read)", "17.7.5"),
    Q("ckpt_oss_nodes_async", "nodes", "Storage servers for the async write incl. replication", "17.7.5"),
    Q("ckpt_lost_time_h", "h", "Expected time lost to failures (half an interval + reload each)", "17.7.4"),
    Q("logs_nccl_GB", "GB", "NCCL logs over the run (WARN level)", "17.7.6"),
    Q("logs_stdout_GB", "GB", "stdout/stderr logs over the run", "17.7.6"),
    Q("logs_prometheus_GB", "GB", "Prometheus metrics over the run", "17.7.6"),
    Q("logs_total_compressed_GB", "GB", "All logs over the run, compressed 5:1", "17.7.6"),
    Q("storage_total_TB", "TB", "Dataset + retained checkpoints + compressed logs", "17.7"),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q, so, m = ctx.s.training, ctx.q, ctx.s.storage, ctx.model
    d = ctx.defaults
    n = t.num_gpus
    dp = n // (t.tp * t.cp * t.pp)  # data-parallel replicas (the Plan sheet's plan_dp)
    step_s = q["train_step_time_s"]  # the time model in use
    run_days = q["train_days"]
    tokens_step = q["plan_tokens_per_step"]
    raw = sto.dataset_bytes(tokens=t.tokens, bytes_per_token=so.dataset_bytes_per_token)
    tok_bytes = UINT16_BYTES if int(m.vocab) < UINT16_VOCAB else UINT32_BYTES
    ckpt = sto.ckpt_bytes(params_total=q["params_total"], bytes_per_param=so.ckpt_bytes_per_param) / GB
    mtbf = sto.cluster_mtbf_h(mtbf_gpu_h=so.mtbf_gpu_hours, num_gpus=n)
    margin = float(d.get("ckpt_margin_factor", 5))
    interval_s = sto.lost_time_s(interval_steps=so.ckpt_interval_steps, t_step_s=step_s)
    steps = sto.total_steps(days=run_days, t_step_s=step_s)
    failures = run_days * SECONDS_PER_DAY / SECONDS_PER_HOUR / mtbf
    save_s = ckpt / so.fs_write_GBps
    load_s = sto.ckpt_load_time_s(ckpt_GB=ckpt, dp=dp, read_per_gpu_GBps=float(d.get("nvme_bw_GBps", 7)),
                                  fs_read_GBps=so.fs_read_GBps)
    async_bw = sto.ckpt_write_bw_GBps(ckpt_GB=ckpt, t_step_s=step_s, window_steps=so.ckpt_interval_steps)
    oss_raw = async_bw / (OSS_WRITE_GBPS * float(d.get("fs_efficiency", 0.8)))  # sto.oss_nodes, Excel ceiling
    oss_total = ceil_count_xl(oss_raw) * int(d.get("storage_replication", 3))
    dataset_total = raw * float(d.get("dataset_overhead_factor", 1.5)) / TB
    nccl = sto.per_gpu_day_log_GB(num_gpus=n, MB_per_gpu_day=LOG_NCCL_MB_PER_GPU_DAY, days=run_days)
    stdout = sto.per_gpu_day_log_GB(num_gpus=n, MB_per_gpu_day=LOG_STDOUT_MB_PER_GPU_DAY, days=run_days)
    prom = sto.prometheus_GB(series=LOG_SERIES_PER_GPU * n, days=run_days, scrape_s=LOG_SCRAPE_S,
                             bytes_per_sample=LOG_BYTES_PER_SAMPLE)
    logs = sto.compressed(nccl + stdout + prom, LOG_COMPRESSION_X)
    retention = ckpt * so.ckpt_keep * GB / TB
    return {
        "sto_dataset_bytes_per_token": so.dataset_bytes_per_token,
        "sto_ckpt_bytes_per_param": so.ckpt_bytes_per_param,
        "sto_ckpt_interval_steps": so.ckpt_interval_steps,
        "sto_ckpt_keep": so.ckpt_keep,
        "sto_mtbf_gpu_hours": so.mtbf_gpu_hours,
        "sto_fs_write_GBps": so.fs_write_GBps,
        "sto_fs_read_GBps": so.fs_read_GBps,
        "storage_token_id_bytes": tok_bytes,
        "storage_dataset_raw_TB": raw / TB,
        "storage_dataset_total_TB": dataset_total,
        "storage_tokenized_TB": t.tokens * tok_bytes / TB,
        "storage_read_MBps": sto.read_bw_Bps(tokens_per_step=tokens_step, bytes_per_token=so.dataset_bytes_per_token,
                                             t_step_s=step_s) / MB,
        "storage_read_per_rank_KBps": sto.read_bw_per_rank_Bps(tokens_per_step=tokens_step, bytes_per_token=tok_bytes,
                                                               dp=dp, t_step_s=step_s) / KB,
        "storage_tokenize_cores": sto.tokenize_cores(tokens_per_s=tokens_step / step_s,
                                                     bytes_per_token=so.dataset_bytes_per_token,
                                                     core_MBps=TOKENIZE_CORE_MBPS),
        "ckpt_size_GB": ckpt,
        "ckpt_shard_per_rank_GB": ckpt / dp,
        "ckpt_retention_TB": retention,
        "ckpt_host_buffer_GB": ckpt,
        "ckpt_cluster_mtbf_h": mtbf,
        "ckpt_interval_max_steps": sto.ckpt_interval_steps_max(mtbf_h=mtbf, t_step_s=step_s, margin_factor=margin),
        "ckpt_interval_ok_flag": float(so.ckpt_interval_steps <= sto.ckpt_interval_steps_max(
            mtbf_h=mtbf, t_step_s=step_s, margin_factor=margin)),
        "ckpt_interval_min": interval_s / SECONDS_PER_MINUTE,
        "ckpt_count_written": steps / so.ckpt_interval_steps,
        "ckpt_failures_expected": failures,
        "ckpt_sync_write_GBps": sto.ckpt_write_bw_GBps(ckpt_GB=ckpt, t_step_s=step_s),
        "ckpt_async_write_GBps": async_bw,
        "ckpt_async_per_gpu_MBps": async_bw / dp * GB / MB,
        "ckpt_save_time_s": save_s,
        "ckpt_save_stall_frac": save_s / (interval_s + save_s),
        "ckpt_load_time_s": load_s,
        "ckpt_oss_nodes_async": oss_total,
        "ckpt_lost_time_h": failures * (interval_s / 2 + load_s) / SECONDS_PER_HOUR,
        "logs_nccl_GB": nccl,
        "logs_stdout_GB": stdout,
        "logs_prometheus_GB": prom,
        "logs_total_compressed_GB": logs,
        "storage_total_TB": dataset_total + retention + logs * GB / TB,
    }
