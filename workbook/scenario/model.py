"""Pydantic models of a scenario. Units are in field names or descriptions; ranges are enforced."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

Precision = Literal["fp32", "bf16", "fp16", "fp8"]
WeightPrecision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
KvPrecision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
Optimizer = Literal["adam", "adam_mv", "adam_8bit", "sgd_momentum", "adam_mini", "sgd"]
Recompute = Literal["none", "selective", "full"]
PriceBasis = Literal["on_demand", "reserved", "spot"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=True)


class TrainingInputs(_Strict):
    """Training run inputs (spec 17.3, 17.4, 17.5, 17.9.4)."""

    tokens: float = Field(1.0e12, gt=0, le=1e16, description="training tokens T_tok (tokens)")
    seq_len: int = Field(4096, ge=1, le=10_000_000, description="sequence length S (tokens)")
    micro_batch: int = Field(1, ge=1, le=65536, description="micro-batch per GPU B_micro (sequences)")
    grad_accum: int = Field(8, ge=1, le=65536, description="gradient-accumulation steps GA")
    precision: Precision = Field("bf16", description="weight/compute precision of training")
    grad_precision: Precision = Field("bf16", description="gradient precision")
    optimizer: Optimizer = Field("adam", description="optimizer (bytes of state per param: spec 17.4.3)")
    zero_stage: int = Field(1, ge=0, le=3, description="ZeRO stage 0-3 (spec 17.4.8)")
    recompute: Recompute = Field("full", description="activation recompute mode (spec 17.4.6)")
    num_gpus: int = Field(8, ge=1, le=1_000_000, description="GPUs in the training job N")
    tp: int = Field(1, ge=1, le=64, description="tensor-parallel degree")
    pp: int = Field(1, ge=1, le=512, description="pipeline-parallel degree")
    ep: int = Field(1, ge=1, le=1024, description="expert-parallel degree (inside DP)")
    sp: int = Field(1, ge=1, le=1024, description="sequence/context-parallel degree (inside TP group)")
    mfu: float = Field(0.40, gt=0, le=1, description="model FLOPs utilisation (fraction)")
    target_days: float = Field(30.0, gt=0, le=3650, description="target training duration (days)")
    overhead_factor: float = Field(1.0, ge=1, le=3, description="wall-clock overhead factor on compute time (17.5.3: 1.10-1.15)")
    act_GB: Optional[float] = Field(None, ge=0, le=1e5, description="activation memory per GPU override (GB); null = computed")
    runtime_overhead_GB: float = Field(2.0, ge=0, le=1e4, description="framework/runtime overhead per GPU (GB)")
    spare_fraction: float = Field(0.0, ge=0, le=1, description="spare GPUs as a fraction of N (17.5.4: 0.05-0.10)")
    usable_hbm_frac: float = Field(0.75, gt=0, le=1, description="HBM fraction usable for ZeRO-3 state in the GPU memory floor (17.5.10 step 2: 60 of 80 GB)")
    tp_overlap_frac: float = Field(0.0, ge=0, le=1, description="fraction of TP communication hidden under compute (17.6.8: 0.5-0.6; 0 = none)")

    @model_validator(mode="after")
    def _layout_divides(self) -> "TrainingInputs":
        mp = self.tp * self.pp
        if self.num_gpus % mp:
            raise ValueError(
                f"num_gpus={self.num_gpus} must be a multiple of tp*pp={mp} (DP = num_gpus/(tp*pp))"
            )
        dp = self.num_gpus // mp
        if dp % self.ep:
            raise ValueError(f"ep={self.ep} must divide the data-parallel degree dp={dp}")
        return self


class InferenceInputs(_Strict):
    """Serving inputs (spec 17.4.9-17.4.11, 17.8)."""

    prompt_tokens: int = Field(2048, ge=1, le=10_000_000, description="prompt length (tokens)")
    output_tokens: int = Field(512, ge=1, le=10_000_000, description="generated tokens per request")
    batch: int = Field(32, ge=1, le=1_000_000, description="concurrent sequences in a decode batch")
    weight_precision: WeightPrecision = Field("bf16", description="weight precision at inference")
    kv_precision: KvPrecision = Field("bf16", description="KV-cache precision")
    tp: int = Field(1, ge=1, le=64, description="tensor-parallel degree of one serving replica")
    compute_efficiency: float = Field(0.5, gt=0, le=1, description="achieved/peak FLOPS in prefill (eta_p)")
    memory_efficiency: float = Field(0.8, gt=0, le=1, description="achieved/peak HBM bandwidth in decode (eta_bw)")
    runtime_overhead_GB: float = Field(2.0, ge=0, le=1e4, description="runtime overhead per GPU (GB)")
    replicas: int = Field(1, ge=1, le=1_000_000, description="serving replicas (each of tp GPUs)")
    decode_compute_efficiency: float = Field(0.7, gt=0, le=1, description="achieved/peak FLOPS in decode (eta_c, spec 17.8 F3; book 0.7)")
    kv_usable_frac: float = Field(1.0, gt=0, le=1, description="usable fraction of free HBM for KV (spec F5: 1 book, 0.9 paged, 0.96 seed 001)")
    spec_draft_tokens: int = Field(0, ge=0, le=64, description="speculative decoding draft length K (0 = off) (spec F8)")
    spec_accept_rate: float = Field(0.8, ge=0, le=1, description="speculative decoding acceptance probability alpha (spec F8)")
    spec_draft_params: float = Field(0.0, ge=0, le=1e13, description="draft model parameters (count) (spec F8)")
    chunk_tokens: int = Field(512, ge=1, le=1_000_000, description="chunked-prefill chunk size C (tokens) (spec F9)")


class NetworkInputs(_Strict):
    """Interconnect inputs (spec 17.1.2, 17.1.6, 17.6). null = catalogue default."""

    nic_Gbps: Optional[float] = Field(None, gt=0, le=1e5, description="one NIC's line rate (Gbit/s)")
    nics_per_node: Optional[int] = Field(None, ge=1, le=64, description="NICs per node")
    network_efficiency: Optional[float] = Field(None, gt=0, le=1, description="achievable fraction of NIC line rate")
    nvlink_efficiency: Optional[float] = Field(None, gt=0, le=1, description="achievable fraction of NVLink rate")
    nvlink_direction_factor: Optional[float] = Field(None, gt=0, le=1, description="factor on the quoted NVLink figure: 1 = book convention, 0.5 = one direction")
    pcie_direction_factor: Optional[float] = Field(None, gt=0, le=1, description="factor on the quoted PCIe figure: 1 = book convention, 0.5 = one direction")


class StorageInputs(_Strict):
    """Storage IO inputs (spec 17.7). null = catalogue default."""

    dataset_bytes_per_token: Optional[float] = Field(None, gt=0, le=1e4, description="stored bytes per training token (B/token)")
    ckpt_bytes_per_param: Optional[float] = Field(None, gt=0, le=64, description="checkpoint bytes per parameter (B/param)")
    ckpt_interval_steps: Optional[int] = Field(None, ge=1, le=10_000_000, description="steps between checkpoints")
    ckpt_keep: Optional[int] = Field(None, ge=1, le=10_000, description="checkpoints retained")
    mtbf_gpu_hours: Optional[float] = Field(None, gt=0, le=1e9, description="MTBF of one GPU (hours)")
    fs_write_GBps: Optional[float] = Field(None, gt=0, le=1e6, description="file-system aggregate write bandwidth (GB/s)")
    fs_read_GBps: Optional[float] = Field(None, gt=0, le=1e6, description="file-system aggregate read bandwidth (GB/s)")


class CostInputs(_Strict):
    """Price and TCO inputs (spec 17.5.9, 17.8.11, 17.9). null = catalogue default."""

    price_basis: PriceBasis = Field("on_demand", description="which catalogue GPU-hour price applies")
    gpu_hour_usd: Optional[float] = Field(None, gt=0, le=1e4, description="price override (USD per GPU-hour); null = catalogue price for the basis")
    budget_usd: Optional[float] = Field(None, gt=0, le=1e13, description="budget (USD); null = none")
    electricity_usd_per_kWh: Optional[float] = Field(None, ge=0, le=10, description="electricity price (USD/kWh)")
    pue: Optional[float] = Field(None, ge=1, le=5, description="power usage effectiveness")
    server_capex_usd: Optional[float] = Field(None, ge=0, le=1e9, description="capex per server (USD)")
    depreciation_years: Optional[float] = Field(None, gt=0, le=30, description="depreciation period (years)")
    api_usd_per_1M_tokens: float = Field(10.0, ge=0, le=1e4, description="API price compared against (USD per 1M output tokens; GPT-4o 10, spec 17.8.11)")
    infra_usd_per_1M_tokens: Optional[float] = Field(None, ge=0, le=1e4, description="self-host infrastructure adder C_infra (USD per 1M tokens)")
    utilisation_frac: float = Field(1.0, gt=0, le=1, description="average serving utilisation (share of peak throughput used, spec F11)")


class Scenario(_Strict):
    """A named plan: model and GPU from the catalogue plus the inputs of each area."""

    name: str = Field(..., min_length=1, max_length=64, description="short unique name (column header)")
    description: str = Field("", max_length=2000)
    model: Optional[str] = Field(None, description="catalogue model id")
    model_arch: Optional[dict] = Field(None, description="inline architecture (catalogue model fields)")
    gpu: str = Field(..., description="catalogue GPU id")
    training: TrainingInputs = Field(default_factory=TrainingInputs)
    inference: InferenceInputs = Field(default_factory=InferenceInputs)
    network: NetworkInputs = Field(default_factory=NetworkInputs)
    storage: StorageInputs = Field(default_factory=StorageInputs)
    cost: CostInputs = Field(default_factory=CostInputs)
    #: where the scenario was read from (set by load_scenario; used for error messages)
    _source_file: Optional[str] = PrivateAttr(default=None)
    _source_lines: dict = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _one_model(self) -> "Scenario":
        if (self.model is None) == (self.model_arch is None):
            raise ValueError("give exactly one of 'model' (a catalogue id) or 'model_arch' (inline)")
        return self
