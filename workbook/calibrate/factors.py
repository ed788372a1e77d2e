"""The factor registry: which named efficiency factors each kind of validation point depends on.

A *factor* is one numeric field of one catalogue record that calibration may move: a per-GPU field
of catalog/efficiency.yaml (``efficiency``), a per-GPU device field of catalog/engines.yaml
(``device``) or a per-engine profile field of catalog/engines.yaml (``engine``). Each has bounds and
a relative prior width; the catalogue value is the prior (docs/validation.md "Calibration").

A point's *kind* comes from its key (:func:`kind_of`): counts (parameters, FLOPs), memory,
step_time (step time, TFLOP/s, tokens/s), gpu_hours (GPU-hours, training days), ttft, tpot (decode
step, TPOT), serving_throughput and kv_capacity. ``KIND_FACTORS`` lists the factors fitted by
default for each kind, in priority order; ``KIND_OPTIONAL`` the ones fitted only when asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from workbook.catalog.models import COMPUTE_FIELDS, compute_record

Table = Literal["efficiency", "device", "engine"]

KINDS: tuple[str, ...] = ("counts", "memory", "step_time", "gpu_hours", "ttft", "tpot",
                          "serving_throughput", "kv_capacity")

KIND_LABELS: dict[str, str] = {
    "counts": "parameters and FLOPs",
    "memory": "training memory",
    "step_time": "step time / throughput",
    "gpu_hours": "GPU-hours / training days",
    "ttft": "TTFT",
    "tpot": "TPOT / decode step",
    "serving_throughput": "serving throughput",
    "kv_capacity": "KV capacity / serving memory",
}

#: (pattern on the key, kind), first match wins
_KIND_RULES: tuple[tuple[str, str], ...] = (
    (r"^params_|_FLOPs$|^train_total_FLOPs$", "counts"),
    (r"^srv_kv_|^srv_.*_GiB$|^srv_.*_GB$", "kv_capacity"),
    (r"^srv_.*ttft", "ttft"),
    (r"^srv_decode_step_ms$|^srv_.*tpot", "tpot"),
    (r"^srv_.*tokens_per_s", "serving_throughput"),
    (r"gpu_hours|train_days", "gpu_hours"),
    (r"^st_|^train_tokens_per_s|^plan_cluster_PFLOPS$|TFLOPS", "step_time"),
    (r"^act_|^state_|^train_.*_GB$|^zero_|_per_gpu_GB$", "memory"),
)


#: the two models the kinds belong to: the training step model and the serving models. ``validate --cv``
#: fits the training kinds' factors on the training points (as the shipped calibration does,
#: catalog/calibration/shipped.yaml), then the serving kinds' other factors on the serving points with those
#: held (run.calibrate ``by_domain``): the serving models read the GPU's attention efficiency as the training
#: points set it (their GEMM ceiling is a field of its own, serving_gemm_efficiency), and their errors do not move
#: the training predictions.
DOMAINS: dict[str, tuple[str, ...]] = {
    "training": ("counts", "memory", "step_time", "gpu_hours"),
    "serving": ("ttft", "tpot", "serving_throughput", "kv_capacity"),
}


def domain_of(kind: str) -> str:
    """The domain (training, serving) of a kind."""
    return next(d for d, kinds in DOMAINS.items() if kind in kinds)


def kind_of(key: str) -> str | None:
    """The kind of a quantity name, or None when calibration cannot use it."""
    for pattern, kind in _KIND_RULES:
        if re.search(pattern, key):
            return kind
    return None


@dataclass(frozen=True)
class FactorSpec:
    """One calibratable field: where it lives, its bounds and the width of its prior."""

    table: Table
    field: str
    lower: float
    upper: float
    prior_sigma_frac: float  # 1 sigma of the prior, relative (log scale)
    doc: str

    @property
    def name(self) -> str:
        return f"{self.table}.{self.field}"


_SPECS: tuple[FactorSpec, ...] = (
    FactorSpec("efficiency", "gemm_efficiency", 0.2, 0.95, 0.25, "sustained matmul FLOP/s / BF16 peak in training"),
    FactorSpec("efficiency", "fp8_gemm_efficiency", 0.2, 0.95, 0.25, "FP8 matmul FLOP/s / FP8 peak in training"),
    FactorSpec("efficiency", "serving_gemm_efficiency", 0.2, 0.95, 0.25, "serving GEMM compute ceiling / BF16 peak"),
    FactorSpec("efficiency", "attention_efficiency", 0.1, 0.95, 0.25, "fused attention FLOP/s / BF16 peak"),
    FactorSpec("efficiency", "hbm_efficiency", 0.3, 1.0, 0.15, "streaming bandwidth / HBM peak"),
    FactorSpec("efficiency", "nvlink_efficiency", 0.3, 1.0, 0.2, "collective bus bandwidth / one-way NVLink"),
    FactorSpec("efficiency", "network_efficiency", 0.3, 1.0, 0.2, "collective bus bandwidth / NIC line rate"),
    FactorSpec("device", "decode_hbm_efficiency", 0.3, 1.0, 0.15, "decode weight streaming / HBM peak"),
    FactorSpec("engine", "cpu_overhead_frac", 0.001, 3.0, 0.5, "unoverlapped CPU time per decode step / GPU time"),
    FactorSpec("engine", "cpu_per_seq_us", 0.1, 1000.0, 0.5, "CPU time per running sequence per decode step"),
    FactorSpec("engine", "small_kernel_us", 0.5, 30.0, 0.5, "latency-bound small kernel"),
    FactorSpec("engine", "non_torch_GiB_tp1", 0.01, 10.0, 0.5, "non-torch memory at TP 1"),
    FactorSpec("engine", "non_torch_GiB_tp_multi", 0.01, 10.0, 0.5, "non-torch memory at TP > 1"),
    FactorSpec("engine", "cuda_context_GiB", 0.01, 5.0, 0.5, "CUDA context memory"),
)

#: spec name -> spec
SPECS: dict[str, FactorSpec] = {s.name: s for s in _SPECS}

_TRAIN = ("efficiency.gemm_efficiency", "efficiency.attention_efficiency", "efficiency.fp8_gemm_efficiency")
_DECODE = ("device.decode_hbm_efficiency", "efficiency.hbm_efficiency", "engine.cpu_overhead_frac",
           "engine.cpu_per_seq_us")

#: kind -> factors fitted by default, in priority order (earlier ones are kept when points cannot tell
#: several apart)
KIND_FACTORS: dict[str, tuple[str, ...]] = {
    "counts": (),
    "memory": (),
    "step_time": _TRAIN,
    "gpu_hours": _TRAIN,
    "ttft": ("efficiency.serving_gemm_efficiency", "efficiency.attention_efficiency"),
    "tpot": _DECODE,
    "serving_throughput": ("efficiency.serving_gemm_efficiency",) + _DECODE,
    "kv_capacity": (),
}

#: kind -> further factors the points depend on, fitted only when named with --factors
KIND_OPTIONAL: dict[str, tuple[str, ...]] = {
    "counts": (),
    "memory": (),
    "step_time": ("efficiency.hbm_efficiency", "efficiency.nvlink_efficiency", "efficiency.network_efficiency"),
    "gpu_hours": ("efficiency.hbm_efficiency", "efficiency.nvlink_efficiency", "efficiency.network_efficiency"),
    "ttft": ("efficiency.hbm_efficiency", "efficiency.nvlink_efficiency"),
    "tpot": ("engine.small_kernel_us",),
    "serving_throughput": ("engine.small_kernel_us", "efficiency.nvlink_efficiency"),
    "kv_capacity": ("engine.non_torch_GiB_tp1", "engine.non_torch_GiB_tp_multi", "engine.cuda_context_GiB"),
}

#: every spec in the order calibration prefers them
PRIORITY: tuple[str, ...] = tuple(s.name for s in _SPECS)


@dataclass(frozen=True, order=True)
class Factor:
    """One factor of one record: ``efficiency[a100-80gb].gemm_efficiency``."""

    spec_name: str
    record: str  # GPU id (efficiency, device) or engine profile id (engine)
    domain: str = ""  # fitted on (and moving) this domain's points only; "" = every point (DOMAINS)

    @property
    def spec(self) -> FactorSpec:
        return SPECS[self.spec_name]

    @property
    def label(self) -> str:
        name = f"{self.spec.table}[{self.record}].{self.spec.field}"
        return f"{name} ({self.domain})" if self.domain else name

    def value(self, catalog) -> float:
        """The factor's value in a catalogue."""
        return float(getattr(_record(catalog, self.spec.table, self.record), self.spec.field))


def _record(catalog, table: str, record: str):
    if table == "efficiency":
        return catalog.efficiency_of(record)
    if table == "device":
        return catalog.engines.device(record)
    return catalog.engines.profile(record)


def _has_record(catalog, table: str, record: str) -> bool:
    if table == "efficiency":
        return record in catalog.efficiency
    if catalog.engines is None:
        return False
    items = catalog.engines.devices if table == "device" else catalog.engines.profiles
    return any((d.gpu if table == "device" else d.id) == record for d in items)


def record_of(catalog, spec_name: str, gpu_id: str) -> str:
    """The efficiency record that holds ``spec_name`` for this GPU: a compute-die factor (COMPUTE_FIELDS) of a
    GPU with ``compute_as`` lives in that GPU's record, one factor for both (catalog/efficiency.yaml)."""
    if SPECS[spec_name].table == "efficiency" and SPECS[spec_name].field in COMPUTE_FIELDS:
        return compute_record(catalog.efficiency, gpu_id)
    return gpu_id


def holders(catalog, f: "Factor") -> list[str]:
    """Every GPU whose value ``f`` sets: its record and, for a compute-die factor, the GPUs tied to it."""
    if f.spec.table != "efficiency":
        return [f.record]
    return [g for g in catalog.efficiency if record_of(catalog, f.spec_name, g) == f.record]


def factors_of(kind: str, gpu_id: str, engine_id: str | None, catalog, *, optional: bool = False) -> list[Factor]:
    """The factors a point of ``kind`` on this GPU and engine depends on (records that exist)."""
    names = KIND_FACTORS[kind] + (KIND_OPTIONAL[kind] if optional else ())
    out = []
    for name in names:
        table = SPECS[name].table
        record = engine_id if table == "engine" else record_of(catalog, name, gpu_id)
        if record is not None and _has_record(catalog, table, record) and applies(catalog, table, record, name):
            out.append(Factor(name, record))
    return out


def applies(catalog, table: str, record: str, name: str) -> bool:
    """A field the record leaves out (fp8_gemm_efficiency of a GPU without FP8) is no factor of it (a record that
    does not exist is not this function's to refuse)."""
    rec = catalog.efficiency.get(record) if table == "efficiency" else None
    return rec is None or getattr(rec, SPECS[name].field) is not None


def parse_factor(text: str) -> tuple[str, str | None]:
    """``table.field`` (every record the points use) or ``table[record].field`` -> (spec name, record)."""
    m = re.fullmatch(r"(efficiency|device|engine)(?:\[([a-z0-9.-]+)\])?\.([A-Za-z0-9_]+)", text.strip())
    if not m or f"{m.group(1)}.{m.group(3)}" not in SPECS:
        raise ValueError(text)
    return f"{m.group(1)}.{m.group(3)}", m.group(2)


def records_with(catalog, gpu_id: str, values: dict[Factor, float]):
    """(efficiency record of ``gpu_id``, engines catalogue) with the factor values put in."""
    eff = catalog.efficiency_of(gpu_id)
    upd = {f.spec.field: v for f, v in values.items()
           if f.spec.table == "efficiency" and f.record == record_of(catalog, f.spec_name, gpu_id)}
    if upd:
        eff = eff.model_copy(update=upd)
    return eff, engines_with(catalog.engines, values)


def engines_with(engines, values: dict[Factor, float]):
    """The engines catalogue with device and profile factor values put in."""
    dev = _grouped(values, "device")
    prof = _grouped(values, "engine")
    if engines is None or not (dev or prof):
        return engines
    return engines.model_copy(update={
        "devices": [d.model_copy(update=dev[d.gpu]) if d.gpu in dev else d for d in engines.devices],
        "profiles": [p.model_copy(update=prof[p.id]) if p.id in prof else p for p in engines.profiles],
    })


def catalog_with(catalog, values: dict[Factor, float]):
    """The whole catalogue with the factor values put in (efficiency records and engines)."""
    eff: dict[str, dict[str, float]] = {}
    for f, v in values.items():
        if f.spec.table == "efficiency":
            for g in holders(catalog, f):
                eff.setdefault(g, {})[f.spec.field] = v
    efficiency = {g: (r.model_copy(update=eff[g]) if g in eff else r) for g, r in catalog.efficiency.items()}
    return catalog.model_copy(update={"efficiency": efficiency, "engines": engines_with(catalog.engines, values)})


def _grouped(values: dict[Factor, float], table: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for f, v in values.items():
        if f.spec.table == table:
            out.setdefault(f.record, {})[f.spec.field] = v
    return out


def ordered(factors: Iterable[Factor]) -> list[Factor]:
    """Factors in calibration priority order (spec priority, then record id)."""
    return sorted(set(factors), key=lambda f: (PRIORITY.index(f.spec_name), f.record, f.domain))
