"""Pydantic models of the catalogue: GPUs, model architectures, default values, efficiency factors and the
measured MFU table (docs/contract.md)."""

from __future__ import annotations

import datetime as dt
import difflib
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workbook.errors import InputError

ID_PATTERN = r"^[a-z0-9.-]+$"
MemoryKind = Literal["HBM2", "HBM2e", "HBM3", "HBM3e", "GDDR6", "GDDR6X", "GDDR7"]


class _Record(BaseModel):
    """Fields every catalogue record carries: id, name, where the values come from, and when."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    id: str = Field(..., pattern=ID_PATTERN, max_length=64, description="lowercase id [a-z0-9.-]")
    name: str = Field(..., min_length=1, max_length=120)
    source: str = Field(..., min_length=1, description="spec section or datasheet/config URL")
    as_of: dt.date = Field(..., description="date the values were checked (ISO)")
    field_sources: dict[str, str] = Field(
        default_factory=dict, description="field -> source for values not from `source`"
    )
    notes: str = Field("", max_length=2000, description="caveats (book vs datasheet, estimates)")

    @model_validator(mode="after")
    def _field_sources_name_fields(self) -> "_Record":
        unknown = sorted(set(self.field_sources) - set(type(self).model_fields))
        if unknown:
            raise ValueError(f"field_sources names unknown fields: {', '.join(unknown)}")
        return self


class Gpu(_Record):
    """One GPU. NVLink/PCIe figures are as quoted; a direction factor is a separate input."""

    hbm_GB: float = Field(..., gt=0, le=10_000, description="device memory (GB)")
    hbm_device_MiB: float = Field(..., gt=0, le=10_000_000,
                                  description="device memory as nvidia-smi reports it (MiB = 2^20 B; above the CUDA runtime total)")
    hbm_bw_GBps: float = Field(..., gt=0, le=1e6, description="memory bandwidth (GB/s)")
    bf16_dense_TFLOPS: float = Field(..., gt=0, le=1e6, description="dense BF16 tensor peak (TFLOPS)")
    fp16_dense_TFLOPS: float = Field(..., gt=0, le=1e6, description="dense FP16 tensor peak (TFLOPS)")
    fp8_dense_TFLOPS: Optional[float] = Field(None, gt=0, le=1e6, description="dense FP8 peak; null = no FP8")
    int8_dense_TOPS: Optional[float] = Field(None, gt=0, le=1e6, description="dense INT8 peak (TOPS)")
    fp4_dense_TFLOPS: Optional[float] = Field(None, gt=0, le=1e6, description="dense FP4 peak; null = no FP4")
    fp32_TFLOPS: float = Field(..., gt=0, le=1e6, description="non-tensor FP32 peak (TFLOPS)")
    nvlink_bw_GBps: Optional[float] = Field(
        None, gt=0, le=1e5, description="NVLink, quoted bidirectional aggregate (GB/s); null = no NVLink"
    )
    nvlink_convention: Literal["bidirectional_aggregate"] = "bidirectional_aggregate"
    nvlink_links: Optional[int] = Field(None, ge=1, le=64, description="NVLink links per GPU")
    pcie_gen: int = Field(..., ge=1, le=7, description="PCIe generation")
    pcie_bw_GBps: float = Field(..., gt=0, le=1e4, description="PCIe x16, quoted per direction (GB/s)")
    tdp_W: float = Field(..., gt=0, le=5000, description="board power (W)")
    sm_count: int = Field(..., ge=1, le=1000, description="streaming multiprocessors (what communication kernels take a share of)")
    gpus_per_node: int = Field(8, ge=1, le=72, description="GPUs per server node")
    # prices: null = not known (field_sources[<field>] names source, as-of and term; "estimate: ..." if estimated)
    price_on_demand_usd_per_gpu_hour: Optional[float] = Field(None, gt=0, le=1000, description="on-demand (USD/GPU-h)")
    price_reserved_usd_per_gpu_hour: Optional[float] = Field(
        None, gt=0, le=1000, description="the book's reserved price, term 1 year (USD/GPU-h)")
    price_spot_usd_per_gpu_hour: Optional[float] = Field(None, gt=0, le=1000, description="spot / preemptible (USD/GPU-h)")
    price_reserved_1y_usd_per_gpu_hour: Optional[float] = Field(
        None, gt=0, le=1000, description="1-year commitment, published rate (USD/GPU-h)")
    price_reserved_3y_usd_per_gpu_hour: Optional[float] = Field(
        None, gt=0, le=1000, description="3-year commitment, published rate (USD/GPU-h)")
    purchase_usd_per_gpu: Optional[float] = Field(None, gt=0, le=1e7, description="purchase price of one GPU (USD)")
    purchase_usd_per_server: Optional[float] = Field(
        None, gt=0, le=1e8, description="purchase price of one server of gpus_per_node GPUs (USD)")
    memory_kind: MemoryKind

    def price_usd_per_gpu_hour(self, basis: str) -> Optional[float]:
        """The GPU-hour price for a basis: 'on_demand', 'reserved', 'reserved_1y', 'reserved_3y' or 'spot'
        (None if not known)."""
        return getattr(self, f"price_{basis}_usd_per_gpu_hour")


class Model(_Record):
    """A Transformer architecture with the fields params.model_param_counts reads."""

    family: str = Field(..., min_length=1, max_length=64)
    layers: int = Field(..., ge=1, le=1000)
    d_model: int = Field(..., ge=1, le=1_000_000)
    d_ff: int = Field(..., ge=1, le=10_000_000, description="FFN inner size (expert size for MoE)")
    n_heads: int = Field(..., ge=1, le=10_000)
    n_kv_heads: int = Field(..., ge=1, le=10_000)
    head_dim: int = Field(..., ge=1, le=10_000)
    vocab: int = Field(..., ge=1, le=10_000_000)
    tied_embeddings: bool
    ffn: Literal["swiglu", "geglu", "gelu"]
    attention: Literal["mha", "gqa", "mqa", "mla"]
    qkv_bias: bool = False
    norm: Literal["rmsnorm", "layernorm"]
    norm_params_per_layer: int = Field(..., ge=0, le=10_000_000, description="norm weights per layer (count)")
    # MLA (attention = mla)
    q_lora_rank: Optional[int] = Field(None, ge=1, le=1_000_000)
    kv_lora_rank: Optional[int] = Field(None, ge=1, le=1_000_000)
    qk_rope_head_dim: Optional[int] = Field(None, ge=1, le=10_000)
    qk_nope_head_dim: Optional[int] = Field(None, ge=1, le=10_000)
    v_head_dim: Optional[int] = Field(None, ge=1, le=10_000)
    # MoE
    moe: bool = False
    n_routed_experts: Optional[int] = Field(None, ge=1, le=100_000)
    top_k: Optional[int] = Field(None, ge=1, le=100_000)
    n_shared_experts: int = Field(0, ge=0, le=1000)
    expert_d_ff: Optional[int] = Field(None, ge=1, le=10_000_000)
    n_dense_layers: int = Field(0, ge=0, le=1000, description="leading dense (non-MoE) layers")
    dense_d_ff: Optional[int] = Field(None, ge=1, le=10_000_000)
    published_params_total: float = Field(..., gt=0, le=1e15, description="official total (count)")
    published_params_active: Optional[float] = Field(None, gt=0, le=1e15, description="official active (MoE)")
    hypothetical: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> "Model":
        mla = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
        if self.attention == "mla":
            missing = [f for f in mla if getattr(self, f) is None]
            if missing:
                raise ValueError(f"attention 'mla' needs {', '.join(missing)}")
        else:
            given = [f for f in mla + ("q_lora_rank",) if getattr(self, f) is not None]
            if given:
                raise ValueError(f"{', '.join(given)} only apply to attention 'mla'")
            if self.attention == "mha" and self.n_kv_heads != self.n_heads:
                raise ValueError("attention 'mha' needs n_kv_heads == n_heads")
            if self.attention == "mqa" and self.n_kv_heads != 1:
                raise ValueError("attention 'mqa' needs n_kv_heads == 1")
            if self.attention == "gqa" and not (1 < self.n_kv_heads < self.n_heads):
                raise ValueError("attention 'gqa' needs 1 < n_kv_heads < n_heads")
            if self.n_heads % self.n_kv_heads:
                raise ValueError(f"n_kv_heads={self.n_kv_heads} must divide n_heads={self.n_heads}")
        if self.moe:
            need = [f for f in ("n_routed_experts", "top_k", "expert_d_ff", "published_params_active")
                    if getattr(self, f) is None]
            if need:
                raise ValueError(f"moe: true needs {', '.join(need)}")
            if self.top_k > self.n_routed_experts:
                raise ValueError(f"top_k={self.top_k} exceeds n_routed_experts={self.n_routed_experts}")
            if self.n_dense_layers >= self.layers:
                raise ValueError("n_dense_layers must be below layers")
            if self.n_dense_layers and self.dense_d_ff is None:
                raise ValueError("n_dense_layers > 0 needs dense_d_ff")
        else:
            given = [f for f in ("n_routed_experts", "top_k", "expert_d_ff", "dense_d_ff")
                     if getattr(self, f) is not None]
            if given or self.n_shared_experts or self.n_dense_layers:
                raise ValueError("MoE fields are set but moe is false")
        return self


class GpuEfficiency(BaseModel):
    """Efficiency factors of one GPU (fractions are of the catalogue's peak or link figure)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    gpu: str = Field(..., pattern=ID_PATTERN, max_length=64, description="GPU id in catalog/gpus.yaml")
    compute_as: Optional[str] = Field(
        None, pattern=ID_PATTERN, max_length=64,
        description="GPU id whose compute die this GPU shares (the same SMs and kernels): its gemm_efficiency, "
                    "fp8_gemm_efficiency, attention_efficiency and serving_gemm_efficiency must equal that GPU's, and calibration fits them once for both")
    gemm_efficiency: float = Field(
        ..., gt=0, le=1, description="sustained matmul FLOP/s / dense BF16 peak in end-to-end training (the step model)")
    fp8_gemm_efficiency: Optional[float] = Field(
        None, gt=0, le=1, description="sustained FP8 matmul FLOP/s / dense FP8 peak in end-to-end FP8 training (the step "
                                      "model's layer GEMMs under an FP8 recipe); required where gpus.yaml gives an FP8 "
                                      "peak, left out where it does not (an FP8 recipe's GEMMs there are BF16 GEMMs)")
    serving_gemm_efficiency: float = Field(
        ..., gt=0, le=1, description="the serving models' GEMM compute ceiling: large-GEMM FLOP/s / dense BF16 peak "
                                     "(0.83 x MAMF), against which gemm_ridge_p_* were fitted")
    attention_efficiency: float = Field(
        ..., gt=0, le=1, description="fused (Flash) attention forward+backward FLOP/s / dense BF16 peak")
    hbm_efficiency: float = Field(..., gt=0, le=1, description="achieved streaming bandwidth / HBM peak")
    nvlink_efficiency: float = Field(
        ..., gt=0, le=1, description="collective bus bandwidth / one-direction NVLink (PCIe if no NVLink)")
    network_efficiency: float = Field(..., gt=0, le=1, description="collective bus bandwidth / NIC line rate")
    nic_GBps_per_gpu: float = Field(..., gt=0, le=1000, description="scale-out NIC per GPU, one direction (GB/s)")
    nvlink_latency_us: float = Field(..., ge=0, le=1000, description="latency of one intra-node collective (us)")
    network_latency_us: float = Field(..., ge=0, le=10000, description="latency of one inter-node collective (us)")
    # p <= 16 keeps t^p of any time in seconds above 1e-15 s clear of double underflow (1e-240)
    gemm_ridge_p_bf16: float = Field(
        ..., ge=1, le=16, description="smooth-roofline exponent p of a BF16 GEMM, t = (t_mem^p + t_comp^p)^(1/p)")
    gemm_ridge_p_fp8: float = Field(
        ..., ge=1, le=16, description="smooth-roofline exponent p of an FP8 (W8A8) GEMM, as gemm_ridge_p_bf16")
    source: str = Field(..., min_length=1, description="paper or benchmark the factors come from")
    as_of: dt.date = Field(..., description="date the values were checked (ISO)")
    field_sources: dict[str, str] = Field(default_factory=dict, description="field -> source where not `source`")
    notes: str = Field("", max_length=2000)

    @model_validator(mode="after")
    def _field_sources_name_fields(self) -> "GpuEfficiency":
        unknown = sorted(set(self.field_sources) - set(type(self).model_fields))
        if unknown:
            raise ValueError(f"field_sources names unknown fields: {', '.join(unknown)}")
        return self


#: the efficiency fields that belong to the compute die: equal for GPUs tied by ``compute_as``
COMPUTE_FIELDS: tuple[str, ...] = ("gemm_efficiency", "fp8_gemm_efficiency", "attention_efficiency",
                                   "serving_gemm_efficiency")


def compute_record(efficiency: dict[str, GpuEfficiency], gpu_id: str) -> str:
    """The GPU id whose record holds ``gpu_id``'s compute-die factors (itself unless ``compute_as``)."""
    rec = efficiency.get(gpu_id)
    return rec.compute_as if rec is not None and rec.compute_as else gpu_id


#: settings of the book's step-3 MFU table (spec 17.9.4), kept by the measured table (catalog/mfu.yaml)
MfuSetting = Literal["dense_single_node", "dense_multi_node", "moe_multi_node"]
#: what a run's published figure is: whole-run GPU-hours, sustained tokens/s per GPU, one iteration's time
MfuBasis = Literal["gpu_hours", "tokens_per_s", "step_time"]


class MfuRun(BaseModel):
    """One published run a row of catalog/mfu.yaml rests on."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    point: str = Field(..., pattern=r"^[a-z0-9.-]+\.yaml:[A-Za-z0-9_.-]+$",
                       description="validation point 'file.yaml:point' holding the published figure")
    model: str = Field(..., pattern=ID_PATTERN, description="model id in catalog/models.yaml")
    gpu: str = Field(..., pattern=ID_PATTERN, description="GPU id in catalog/gpus.yaml")
    gpus: int = Field(..., ge=1, le=1_000_000, description="GPUs of the run")
    basis: MfuBasis = Field(..., description="gpu_hours, tokens_per_s or step_time")
    implied_mfu: float = Field(..., gt=0, lt=1, description="6·P_active·(tokens/s/GPU) / BF16 dense peak")
    source: str = Field(..., min_length=1, description="paper and table of the published figure")


class MfuRow(BaseModel):
    """One row of catalog/mfu.yaml: a setting, a GPU-count range, the MFU range and the runs behind it."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    id: str = Field(..., pattern=ID_PATTERN, max_length=64)
    setting: MfuSetting
    gpus_min: int = Field(..., ge=1, le=1_000_000)
    gpus_max: int = Field(..., ge=1, le=1_000_000)
    mfu_low: float = Field(..., gt=0, lt=1)
    mfu_high: float = Field(..., gt=0, lt=1)
    margin: float = Field(..., ge=0, le=0.1, description="stated widening of the runs' span, MFU points")
    runs: list[MfuRun] = Field(..., min_length=1)
    source: str = Field(..., min_length=1)
    as_of: dt.date
    notes: str = Field("", max_length=2000)


class DefaultValue(BaseModel):
    """One default value (catalog/defaults.yaml); scenario fields left null take it by key."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    key: str = Field(..., pattern=r"^[A-Za-z0-9_]+$", max_length=64)
    value: Union[int, float]
    unit: str = Field(..., min_length=1, max_length=40)
    source: str = Field(..., min_length=1)
    as_of: dt.date
    notes: str = Field("", max_length=2000)


class Defaults(BaseModel):
    """All default values, by key."""

    model_config = ConfigDict(frozen=True)

    records: dict[str, DefaultValue]

    def value(self, key: str) -> float:
        """The value of a key (InputError naming the closest keys when unknown)."""
        if key not in self.records:
            raise InputError(f"unknown default {key!r}{_closest(key, self.records)}", field=key)
        return self.records[key].value

    def as_dict(self) -> dict[str, float]:
        """key -> value (what calc modules see as ctx.defaults)."""
        return {k: r.value for k, r in self.records.items()}

    def __contains__(self, key: object) -> bool:
        return key in self.records


def _closest(name: str, ids) -> str:
    near = difflib.get_close_matches(name, list(ids), n=3, cutoff=0.4)
    return f"; closest: {', '.join(near)}" if near else ""


class Catalog(BaseModel):
    """GPUs, models and defaults, each by id/key."""

    model_config = ConfigDict(frozen=True)

    gpus: dict[str, Gpu]
    models: dict[str, Model]
    defaults: Defaults
    #: step-time efficiency factors by GPU id (catalog/efficiency.yaml)
    efficiency: dict[str, GpuEfficiency] = Field(default_factory=dict)
    #: measured planning-MFU rows (catalog/mfu.yaml), in file order
    mfu: list[MfuRow] = Field(default_factory=list)
    #: serving-engine profiles and device memory (catalog/engines.yaml, workbook.catalog.engines.EnginesCatalog)
    engines: Any = None

    def gpu(self, gpu_id: str) -> Gpu:
        """The GPU record (InputError with the closest ids when unknown)."""
        if gpu_id not in self.gpus:
            raise InputError(
                f"unknown GPU id {gpu_id!r}{_closest(gpu_id, self.gpus)}",
                field="gpu", expected="one of " + ", ".join(self.gpus),
            )
        return self.gpus[gpu_id]

    def efficiency_of(self, gpu_id: str) -> GpuEfficiency:
        """The GPU's step-time efficiency record (InputError when the catalogue has none)."""
        if gpu_id not in self.efficiency:
            raise InputError(f"GPU {gpu_id!r} has no efficiency record (catalog/efficiency.yaml, Efficiency sheet)",
                             field="gpu", expected="one of " + ", ".join(self.efficiency))
        return self.efficiency[gpu_id]

    def model(self, model_id: str) -> Model:
        """The model record (InputError with the closest ids when unknown)."""
        if model_id not in self.models:
            raise InputError(
                f"unknown model id {model_id!r}{_closest(model_id, self.models)}",
                field="model", expected="one of " + ", ".join(self.models),
            )
        return self.models[model_id]
