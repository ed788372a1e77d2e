"""Unit factors. Decimal everywhere (GB = 1e9 bytes); binary only where a name says GiB/MiB.

These are the same constants the workbook's Constants block holds; formulas reference them,
never literals.
"""

from __future__ import annotations

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
PB = 1e15
KiB = 2.0**10
MiB = 2.0**20
GiB = 2.0**30
TiB = 2.0**40

THOUSAND = 1e3
MILLION = 1e6
BILLION = 1e9
TRILLION = 1e12

TERA = 1e12  # TFLOPS -> FLOP/s
GIGA = 1e9
MEGA = 1e6
KILO = 1e3

BITS_PER_BYTE = 8.0
SECONDS_PER_MINUTE = 60.0
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
HOURS_PER_DAY = 24.0
DAYS_PER_YEAR = 365.0
HOURS_PER_YEAR = 8760.0
MONTHS_PER_YEAR = 12
MS_PER_S = 1e3
US_PER_S = 1e6

#: bytes per element of each numeric format (Table 17-1, spec 17.1.4)
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "nf4": 0.5,
    "fp4": 0.5,
}


def bytes_per_element(precision: str) -> float:
    """Bytes per element of a precision name (case-insensitive)."""
    return BYTES_PER_ELEMENT[precision.lower()]


#: The unit vocabulary: every unit the workbook shows in a Unit column (quantities, catalogue fields,
#: defaults, constants), with what it means. workbook.writer.styles.UNIT_FORMATS gives each a format.
UNITS: dict[str, str] = {
    # money
    "USD": "US dollars (a total; per-request amounts are small)",
    "USD/GPU": "US dollars per GPU",
    "USD/GPU-h": "US dollars per GPU-hour",
    "USD/h": "US dollars per hour",
    "USD/day": "US dollars per day",
    "USD/month": "US dollars per month (730 hours)",
    "USD/year": "US dollars per year",
    "USD/1M tokens": "US dollars per million tokens",
    "USD/request": "US dollars per request",
    "USD/server": "US dollars per server",
    "USD/switch": "US dollars per switch",
    "USD/kWh": "US dollars per kilowatt-hour",
    "USD/GB": "US dollars per GB transferred",
    "USD/TB-month": "US dollars per terabyte stored for a month",
    "USD/link": "US dollars per network link (two transceivers and a cable)",
    "USD/kW-month": "US dollars per kilowatt of IT load per month (data-centre space)",
    "USD/FTE-year": "US dollars per full-time person per year (loaded cost)",
    # shares, ratios, flags
    "fraction": "a share (shown as a percentage)",
    "x": "a ratio or multiplier (times)",
    "0/1": "a flag: 1 = yes, 0 = no",
    "code": "a code number (the label says what each value means)",
    "exponent": "a dimensionless exponent",
    # counts
    "count": "a number of things (parameters, heads, widths, items)",
    "tokens": "tokens",
    "sequences": "sequences (requests in a batch)",
    "requests": "requests (of a run or a queue)",
    "replicas": "serving replicas",
    "instances": "serving instances (groups of GPUs that serve together)",
    "params": "parameters (a count)",
    "stage": "a stage number (ZeRO 0-3)",
    "GPUs": "GPUs",
    "FTE": "full-time people",
    "GPUs/FTE": "GPUs one full-time person runs",
    "nodes": "server nodes",
    "layers": "Transformer layers",
    "heads": "attention heads",
    "ranks": "parallel ranks",
    "rails": "network rails",
    "steps": "optimizer steps",
    "chunks": "prefill chunks",
    "cores": "CPU cores",
    "checkpoints": "checkpoints",
    "failures": "failures",
    "tensors": "activation tensors",
    "ops": "collective operations",
    "elements": "tensor elements (a count)",
    "passes": "passes over a tensor, in reads and writes of its elements",
    "digits": "decimal digits",
    "forward-equivalents": "forward passes",
    "gen": "a PCIe generation",
    "B params": "billions of parameters",
    # data sizes and rates
    "B": "bytes",
    "MB": "megabytes (1e6 bytes)",
    "GB": "gigabytes (1e9 bytes)",
    "TB": "terabytes (1e12 bytes)",
    "GiB": "gibibytes (2^30 bytes, as serving engines log memory)",
    "MiB": "mebibytes (2^20 bytes), as nvidia-smi reports device memory",
    "B/param": "bytes per parameter",
    "B/element": "bytes per tensor element",
    "B/token": "bytes per token",
    "B/sample": "bytes per stored sample",
    "KB/s": "kilobytes per second",
    "MB/s": "megabytes per second",
    "GB/s": "gigabytes per second",
    "B/s": "bytes per second",
    "s/GB": "seconds per gigabyte moved",
    "Gbit/s": "gigabits per second",
    "Tbit/s": "terabits per second",
    "MB/GPU-day": "megabytes per GPU-day",
    "series/GPU": "monitoring series per GPU",
    # compute
    "FLOP": "floating-point operations",
    "FLOP/B": "FLOPs per byte (arithmetic intensity)",
    "FLOP/s": "floating-point operations per second",
    "B/kFLOP": "bytes per thousand FLOPs",
    "TFLOPS": "tera-FLOPs per second",
    "TOPS": "tera-operations per second",
    "PFLOP/s": "peta-FLOPs per second",
    "tokens/s": "tokens per second",
    "tokens/param": "tokens per parameter",
    "M tokens/day": "million tokens per day",
    "requests/s": "requests per second",
    "s/(requests/s)": "seconds per request/s of load (a slope)",
    "W": "watts",
    "kW": "kilowatts",
    # time
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "min": "minutes",
    "h": "hours",
    "days": "days",
    "months": "months",
    "years": "years",
    "date": "a calendar date (an Excel date serial, shown as month and year)",
    "year": "a calendar or fiscal year (a fiscal year is named by the calendar year it ends in)",
    "month": "a calendar month of the year, 1-12",
    "quarter": "a fiscal quarter, 1-4",
    "GPU-h": "GPU-hours",
    "GPU-days": "GPU-days",
    # unit factors of the Constants block
    "B/KB": "bytes per KB", "B/MB": "bytes per MB", "B/GB": "bytes per GB", "B/TB": "bytes per TB",
    "B/GiB": "bytes per GiB", "B/MiB": "bytes per MiB", "bit/B": "bits per byte",
    "1/k": "per kilo (1e3)", "1/M": "per mega (1e6)", "1/G": "per giga (1e9)", "1/T": "per tera (1e12)",
    "ms/s": "milliseconds per second", "us/s": "microseconds per second", "s/min": "seconds per minute",
    "s/h": "seconds per hour", "s/day": "seconds per day", "h/day": "hours per day",
    "day/yr": "days per year", "h/yr": "hours per year", "month/yr": "months per year",
    "month/quarter": "months per quarter",
}

#: unit of a catalogue field from its name's suffix (GB = 1e9 bytes)
FIELD_SUFFIX_UNITS: tuple[tuple[str, str], ...] = (
    ("_usd_per_gpu_hour", "USD/GPU-h"),
    ("_GBps", "GB/s"),
    ("_Gbps", "Gbit/s"),
    ("_GB", "GB"),
    ("_MiB", "MiB"),
    ("_GiB", "GiB"),
    ("_TFLOPS", "TFLOPS"),
    ("_TOPS", "TOPS"),
    ("_W", "W"),
    ("_usd", "USD"),
    ("_frac", "fraction"),
    ("_efficiency", "fraction"),
    ("_us", "us"),
)
#: catalogue fields whose name carries no unit suffix but whose unit is more than a count
FIELD_UNITS: dict[str, str] = {
    "pcie_gen": "gen",
    "gpus_per_node": "GPUs",
    "layers": "layers",
    "n_dense_layers": "layers",
    "n_heads": "heads",
    "n_kv_heads": "heads",
    "nic_GBps_per_gpu": "GB/s",
    "purchase_usd_per_gpu": "USD",
    "purchase_usd_per_server": "USD",
    # serving-engine profiles (catalog/engines.yaml)
    "memory_fraction": "fraction",
    "non_torch_GiB_tp1": "GiB",
    "non_torch_GiB_tp_multi": "GiB",
    "custom_allreduce_max_MB": "MiB",
    "max_num_seqs": "sequences",
    "cuda_graph_max_batch": "sequences",
    "max_num_batched_tokens": "tokens",
    "block_size_tokens": "tokens",
    "prefill_chunk_tokens": "tokens",
    "sampler_bytes_per_logit": "B",
    "scheduler_steps": "steps",
}


def field_unit(field: str, annotation: object = None) -> str:
    """Unit of a catalogue field: from its suffix, ``0/1`` for a yes/no field, else ``count``."""
    if field in FIELD_UNITS:
        return FIELD_UNITS[field]
    for suffix, unit in FIELD_SUFFIX_UNITS:
        if field.endswith(suffix):
            return unit
    if annotation is bool or "bool" in str(annotation):
        return "0/1"
    return "count"
