"""Storage IO (spec 17.7): dataset size, data-loading bandwidth and IOPS, checkpoint size,
interval, retention and bandwidth, log storage, data pipeline. Decimal units (GB = 1e9 B).
"""

from __future__ import annotations

import math

from workbook.reference.training import ceil_count
from workbook.units import BITS_PER_BYTE, GB, MB, MEGA, MS_PER_S, SECONDS_PER_DAY, SECONDS_PER_HOUR

#: table 17-78 (spec 17.7.3): checkpoint bytes per parameter, the book's full mixed-precision convention
CKPT_BYTES_COMPONENTS: dict[str, float] = {"W_bf16": 2, "G_bf16": 2, "master_fp32": 4, "m_fp32": 4, "v_fp32": 4,
                                          "total": 16}
CKPT_BYTES_PER_PARAM_BOOK = 16
CKPT_BYTES_PER_PARAM_REALISTIC = 14  # frameworks do not save gradients (spec 17.7.3)
#: table 17-87 (spec 17.7.5): storage server classes (GB/s, IOPS)
OSS_TABLE: dict[str, dict] = {
    "10xNVMe-RAID0": {"read_GBps": 50, "write_GBps": 40, "IOPS": 1e6},
    "24xNVMe-all-flash": {"read_GBps": 100, "write_GBps": 80, "IOPS": 2e6},
    "IB-NDR400-port": {"read_GBps": 50, "write_GBps": 50, "IOPS": None},
}
NVME_WRITE_GBPS = 7.0
#: table 17-92 (spec 17.7.7): CPU ms per sample of image augmentations (low, high)
AUGMENT_MS: dict[str, dict[str, float]] = {
    "random-crop-224": {"ms_low": 0.5, "ms_high": 0.5},
    "h-flip": {"ms_low": 0, "ms_high": 0.1},
    "color-jitter": {"ms_low": 0.3, "ms_high": 0.3},
    "AutoAugment-RandAugment": {"ms_low": 2, "ms_high": 5},
    "MixUp-CutMix": {"ms_low": 5, "ms_high": 10},
}
#: NCCL log volume per GPU-day by level (spec 17.7.6)
NCCL_LOG_MB_PER_GPU_DAY = {"WARN": 1, "INFO": 10, "TRACE": 100}


def _pos(**values: float) -> None:
    for name, v in values.items():
        if v is None or not v > 0:
            raise ValueError(f"{name} must be positive, got {v!r}")


# --------------------------------------------------------------------------- 17.7.1 dataset size
def dataset_bytes(*, tokens: float, bytes_per_token: float = 4, overhead_factor: float = 1.0) -> float:
    """M = D * bytes/token * f_overhead (spec 17.7.1; f 1.3-2.0 for tokenised copies, shards, index)."""
    return tokens * bytes_per_token * overhead_factor


def video_GB_per_hour(bitrate_Mbps: float) -> float:
    """bytes/hour = bitrate * 3600 / 8 (spec 17.7.1)."""
    return bitrate_Mbps * MEGA * SECONDS_PER_HOUR / BITS_PER_BYTE / GB


def audio_MB_per_hour(*, sample_rate_Hz: float, bytes_per_sample: float, channels: int = 1) -> float:
    """bytes/hour = rate * bytes * channels * 3600 (spec 17.7.1; 16 kHz mono 16-bit = 115.2 MB/h)."""
    return sample_rate_Hz * bytes_per_sample * channels * SECONDS_PER_HOUR / MB


def devices_needed(*, need: float, per_device: float) -> int:
    """ceil(need / per_device) drives, nodes or cores (spec 17.7.1, 17.7.5)."""
    _pos(per_device=per_device)
    return ceil_count(need / per_device)


# --------------------------------------------------------------------------- 17.7.2 loading bandwidth
def read_bw_Bps(*, tokens_per_step: float, bytes_per_token: float, t_step_s: float) -> float:
    """Read_BW = tokens/step * bytes/token / T_step (spec 17.7.2)."""
    _pos(t_step_s=t_step_s)
    return tokens_per_step * bytes_per_token / t_step_s


def read_bw_per_rank_Bps(*, tokens_per_step: float, bytes_per_token: float, dp: float, t_step_s: float) -> float:
    """Per DP rank: tokens/step * bytes / (DP * T_step) (spec 17.7.2; 10.4 KB/s for 405B)."""
    _pos(dp=dp)
    return read_bw_Bps(tokens_per_step=tokens_per_step, bytes_per_token=bytes_per_token, t_step_s=t_step_s) / dp


def read_iops(*, reads_per_step: float, t_step_s: float) -> float:
    """IOPS = reads per step / T_step (spec 17.7.2)."""
    _pos(t_step_s=t_step_s)
    return reads_per_step / t_step_s


# --------------------------------------------------------------------------- 17.7.3 checkpoint size
def ckpt_bytes(*, params_total: float, bytes_per_param: float = CKPT_BYTES_PER_PARAM_BOOK) -> float:
    """M_CKPT = P_total * bytes/param (spec 17.7.3; MoE uses TOTAL params)."""
    return params_total * bytes_per_param


def ckpt_shares_frac(components: dict[str, float]) -> dict[str, float]:
    """Shares of the checkpoint: optimizer + master, weights, grads (spec 17.7.3)."""
    total = components["W"] + components["G"] + components["master"] + components["m"] + components["v"]
    return {"opt_master_frac": (components["master"] + components["m"] + components["v"]) / total,
            "weights_frac": components["W"] / total, "grads_frac": components["G"] / total}


# --------------------------------------------------------------------------- 17.7.4 interval, retention
def cluster_mtbf_h(*, mtbf_gpu_h: float, num_gpus: float) -> float:
    """Independent failures: MTBF_cluster = MTBF_gpu / N (spec 17.7.4, corrected)."""
    _pos(num_gpus=num_gpus)
    return mtbf_gpu_h / num_gpus


def ckpt_interval_steps_max(*, mtbf_h: float, t_step_s: float, margin_factor: float = 5) -> float:
    """N_steps <= MTBF / (T_step * margin) (spec 17.7.4)."""
    _pos(t_step_s=t_step_s, margin_factor=margin_factor)
    return mtbf_h * SECONDS_PER_HOUR / (t_step_s * margin_factor)


def lost_time_s(*, interval_steps: float, t_step_s: float) -> float:
    """Worst-case loss on a failure = N_interval * T_step (mean is half) (spec 17.7.4)."""
    return interval_steps * t_step_s


def total_steps(*, days: float, t_step_s: float) -> float:
    """Steps in a run = days * 86400 / T_step (spec 17.7.4)."""
    _pos(t_step_s=t_step_s)
    return days * SECONDS_PER_DAY / t_step_s


def retention(*, recent: int, daily_milestones: int = 0, permanent_marks: float = 0) -> float:
    """N_kept = recent + daily milestones + permanent marks (spec 17.7.4 ex1 policy)."""
    return recent + daily_milestones + permanent_marks


# --------------------------------------------------------------------------- 17.7.5 checkpoint bandwidth
def ckpt_write_bw_GBps(*, ckpt_GB: float, t_step_s: float, window_steps: float = 1, dp: float = 1) -> float:
    """Sync (window 1 step) M/T_step; async M/(N*T_step); distributed per GPU / DP (spec 17.7.5)."""
    _pos(t_step_s=t_step_s, window_steps=window_steps, dp=dp)
    return ckpt_GB / (window_steps * t_step_s) / dp


def oss_nodes(*, bw_GBps: float, per_oss_GBps: float, f_eff: float = 0.8, replication: int = 1) -> dict[str, float]:
    """N_OSS = ceil(BW/(BW_OSS * f_eff)); total = N_OSS * replication (spec 17.7.5)."""
    _pos(per_oss_GBps=per_oss_GBps, f_eff=f_eff)
    raw = bw_GBps / (per_oss_GBps * f_eff)
    n = ceil_count(raw)
    return {"raw": raw, "nodes": n, "total": n * replication}


def gpus_per_device(*, device_GBps: float, per_gpu_GBps: float) -> int:
    """GPUs one device can fully sustain: floor(device BW / per-GPU BW) (spec 17.7.5)."""
    _pos(per_gpu_GBps=per_gpu_GBps)
    return math.floor(device_GBps / per_gpu_GBps + 1e-9)


def ckpt_load_time_s(*, ckpt_GB: float, dp: float, read_per_gpu_GBps: float, fs_read_GBps: float = math.inf) -> float:
    """T_load = M / min(DP * BW_gpu, BW_agg) (spec 17.7.5; each rank reads its shard)."""
    _pos(dp=dp, read_per_gpu_GBps=read_per_gpu_GBps, fs_read_GBps=fs_read_GBps)
    return ckpt_GB / min(dp * read_per_gpu_GBps, fs_read_GBps)


def load_bw_per_gpu_GBps(*, ckpt_GB: float, num_gpus: float, t_load_s: float) -> float:
    """Read BW per GPU to restart in T_load: M / (N * T_load) (spec 17.7.4)."""
    _pos(num_gpus=num_gpus, t_load_s=t_load_s)
    return ckpt_GB / (num_gpus * t_load_s)


# --------------------------------------------------------------------------- 17.7.6 logs
def per_gpu_day_log_GB(*, num_gpus: float, MB_per_gpu_day: float, days: float) -> float:
    """NCCL / stdout logs = N * rate * days (spec 17.7.6)."""
    return num_gpus * MB_per_gpu_day * days * MB / GB


def metrics_GB(*, metrics_per_step: float, steps: float, bytes_per_scalar: float = 100) -> float:
    """Scalar metrics = metrics * steps * 100 B (spec 17.7.6)."""
    return metrics_per_step * steps * bytes_per_scalar / GB


def traces_GB(*, traces: float, trace_MB: float, ranks: float = 1) -> float:
    """Profiler traces = count * size (* ranks profiling) (spec 17.7.6)."""
    return traces * trace_MB * ranks * MB / GB


def prometheus_GB(*, series: float, days: float, scrape_s: float = 15, bytes_per_sample: float = 1.5) -> float:
    """Series * (days*86400/scrape) * bytes/sample (spec 17.7.6)."""
    _pos(scrape_s=scrape_s)
    return series * (days * SECONDS_PER_DAY / scrape_s) * bytes_per_sample / GB


def compressed(raw: float, ratio: float) -> float:
    """raw / compression ratio (gzip/lz4 5-10x) (spec 17.7.6)."""
    _pos(ratio=ratio)
    return raw / ratio


# --------------------------------------------------------------------------- 17.7.7 data pipeline
def tokenize_cores(*, tokens_per_s: float, bytes_per_token: float = 4, core_MBps: float = 1.0) -> float:
    """CPU cores = tok/s * 4 B / per-core rate (spec 17.7.7; the global batch is tokenised once)."""
    _pos(core_MBps=core_MBps)
    return tokens_per_s * bytes_per_token / (core_MBps * MB)


def tokenized_stream_tokens_per_s(*, disk_GBps: float, bytes_per_token: float = 2) -> float:
    """tok/s a disk can feed = BW / bytes per token (spec 17.7.7, corrected to G tok/s)."""
    _pos(bytes_per_token=bytes_per_token)
    return disk_GBps * GB / bytes_per_token


def prefetch_buffer_bytes(*, workers: float, prefetch_factor: float, batch_bytes_per_worker: float) -> float:
    """workers * prefetch * per-worker (per-rank) batch bytes (spec 17.7.7, corrected)."""
    return workers * prefetch_factor * batch_bytes_per_worker


def augment_cores(*, num_gpus: float, samples_per_s: float, ms_per_sample: float) -> float:
    """CPU-seconds per second = N * samples/s * ms / 1000 (spec 17.7.7)."""
    return num_gpus * samples_per_s * ms_per_sample / MS_PER_S


def shuffle_buffer_bytes(*, samples: float, sample_bytes: float) -> float:
    """Shuffle buffer = samples * bytes per sample (spec 17.7.7)."""
    return samples * sample_bytes

