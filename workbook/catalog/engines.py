"""Serving-engine profiles and device memory (catalog/engines.yaml; docs/serving.md).

Two lists in one file:

- ``devices``: per GPU id, the memory the CUDA runtime reports as total (what engines multiply their
  memory fraction by; 80 "GB" H100s report about 79.2 GiB, not 80e9 B) and the fraction of HBM peak
  that decode's skinny GEMMs stream weights at.
- ``profiles``: per engine and version, how it sizes the KV cache (vLLM ``gpu_memory_utilization`` of
  the total, SGLang ``mem_fraction_static`` of the free memory at start, TensorRT-LLM
  ``free_gpu_memory_fraction`` of the memory left after weights and activations), what its memory
  profile reserves (activation peak, non-torch buffers, CUDA-graph pool), its paging block, and the
  per-step costs of its decode loop (CUDA graphs, kernel counts, all-reduce kernel, CPU overhead,
  prefill scheduling).

Every record names its source and as_of; values from elsewhere are named in ``field_sources``.
``load_engines`` raises InputError naming the file, the line, the record (its id) and the field.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Iterable, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from workbook.catalog.load import DEFAULT_DIR
from workbook.catalog.models import ID_PATTERN
from workbook.catalog.yamlio import line_of, load_yaml, to_input_error
from workbook.errors import InputError

#: the file name inside the catalogue folder
ENGINES_FILE = "engines.yaml"

MemoryRule = Literal["total_fraction", "static_fraction", "free_fraction"]
PrefillMode = Literal["separate", "chunked_mixed"]
DecodeKernel = Literal["per_kv_head", "per_query_head"]


class _Sourced(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    source: str = Field(..., min_length=1, description="paper, code or log the values come from")
    as_of: dt.date = Field(..., description="date the values were checked (ISO)")
    field_sources: dict[str, str] = Field(default_factory=dict, description="field -> source where not `source`")
    notes: str = Field("", max_length=3000)

    @model_validator(mode="after")
    def _field_sources_name_fields(self) -> "_Sourced":
        unknown = sorted(set(self.field_sources) - set(type(self).model_fields))
        if unknown:
            raise ValueError(f"field_sources names unknown fields: {', '.join(unknown)}")
        return self


class DeviceMemory(_Sourced):
    """What one GPU model offers a serving engine."""

    gpu: str = Field(..., pattern=ID_PATTERN, max_length=64, description="GPU id in catalog/gpus.yaml")
    cuda_total_GiB: float = Field(..., gt=0, le=10_000, description="total memory the CUDA runtime reports (GiB)")
    decode_hbm_efficiency: float = Field(
        ..., gt=0, le=1, description="weight-streaming bandwidth of decode GEMMs (M <= 64) / HBM peak")


class EngineProfile(_Sourced):
    """One serving engine at one version, with its defaults."""

    id: str = Field(..., pattern=ID_PATTERN, max_length=64)
    name: str = Field(..., min_length=1, max_length=120)
    engine: Literal["vllm", "sglang", "tensorrt-llm", "deepseek"]
    version: str = Field(..., min_length=1, max_length=40)
    # --- memory
    memory_rule: MemoryRule = Field(..., description="how the KV budget is derived (docs/serving.md)")
    memory_fraction: float = Field(..., gt=0, le=1, description="gpu_memory_utilization / mem_fraction_static / free fraction")
    max_num_seqs: int = Field(..., ge=1, le=1_000_000, description="largest running batch (requests)")
    max_num_batched_tokens: int = Field(..., ge=1, le=10_000_000, description="token budget of one step (profile size)")
    block_size_tokens: int = Field(..., ge=1, le=4096, description="KV paging block (tokens)")
    profile_sampler: bool = Field(..., description="the memory profile runs the sampler on max_num_seqs rows")
    sampler_bytes_per_logit: float = Field(..., ge=0, le=1000, description="peak bytes per (row, vocab) entry of the sampler")
    non_torch_GiB_tp1: float = Field(..., ge=0, le=100, description="non-torch memory the profile charges at TP = 1 (GiB)")
    non_torch_GiB_tp_multi: float = Field(..., ge=0, le=100, description="the same at TP > 1 (NCCL, custom all-reduce) (GiB)")
    cuda_context_GiB: float = Field(..., ge=0, le=100, description="CUDA context and driver memory used before any budget is measured (GiB)")
    cuda_graph_GiB: float = Field(..., ge=0, le=100, description="CUDA-graph pool (GiB)")
    cuda_graph_in_budget: bool = Field(..., description="the graph pool is taken out of the KV budget (else from the headroom)")
    # --- decode loop
    cuda_graphs: bool = Field(..., description="decode steps replay CUDA graphs")
    cuda_graph_max_batch: int = Field(..., ge=0, le=100_000, description="largest captured decode batch; above it steps run eagerly")
    graph_launch_us: float = Field(..., ge=0, le=1000, description="per-kernel cost inside a CUDA graph (us)")
    eager_launch_us: float = Field(..., ge=0, le=1000, description="CPU cost of launching one op eagerly (us)")
    small_kernel_us: float = Field(..., ge=0, le=1000, description="duration of a latency-bound small kernel (norm, RoPE, activation) (us)")
    allreduce_alpha_us: float = Field(..., ge=0, le=10_000, description="fixed time of one TP all-reduce (us)")
    allreduce_bus_efficiency: float = Field(..., gt=0, le=1, description="small-message all-reduce bus bandwidth / one-way NVLink")
    custom_allreduce_max_MB: float = Field(..., ge=0, le=10_000, description="largest message the custom all-reduce takes (MiB)")
    nccl_alpha_us: float = Field(..., ge=0, le=10_000, description="fixed time of one NCCL all-reduce; its bandwidth term uses the GPU's nvlink_efficiency (us)")
    cpu_overhead_frac: float = Field(..., ge=0, le=10, description="unoverlapped CPU time per decode step / GPU time of the step")
    cpu_per_seq_us: float = Field(..., ge=0, le=100_000, description="unoverlapped CPU time per running sequence per decode step (output processing) (us)")
    scheduler_steps: int = Field(..., ge=1, le=1000, description="decode steps scheduled at once (vLLM multi-step)")
    ep_overlap_frac: float = Field(..., ge=0, le=1, description="share of the EP all-to-all its micro-batches hide under GPU work (a scenario may override)")
    prefill_comm_sms: int = Field(..., ge=0, le=1000, description="SMs the prefill EP all-to-all kernels hold while they overlap GPU work (DeepEP normal kernels)")
    decode_comm_sm_frac: float = Field(..., ge=0, le=1, description="share of a decode EP exchange during which its kernels hold the GPU's SMs (DeepEP low-latency kernels: sending and receiving)")
    moe_expert_us: float = Field(0.0, ge=0, le=1000, description="fixed time per distinct routed expert a decode "
                                 "step's MoE layer touches on a GPU, besides its weight bytes (us)")
    moe_layer_us: float = Field(0.0, ge=0, le=1000, description="fixed time of a decode step's fused MoE call per MoE "
                                "layer besides its weight bytes, the small kernels and the launches the step already "
                                "counts (the grouped GEMMs' ramp at a few tokens per expert) (us)")
    decode_micro_batches: int = Field(..., ge=1, le=8, description="passes a decode step splits its batch into, run one after another (two-batch overlap: 2)")
    prefill_mode: PrefillMode = Field(..., description="separate prefill steps, or chunks mixed into decode steps")
    prefill_chunk_tokens: int = Field(..., ge=1, le=10_000_000, description="largest prefill chunk (tokens)")
    prefill_cuda_graphs: bool = Field(..., description="prefill steps replay CUDA graphs (else launched eagerly)")
    decode_attention_kernel: DecodeKernel = Field(
        "per_kv_head", description="decode attention reads the KV cache once per KV head (GQA-aware kernels) or "
        "once per query head (older kernels: g query heads per KV head read it g times)")
    # --- per request (issue 22)
    request_overhead_ms: float = Field(0.0, ge=0, le=10_000, description="fixed time every request spends on its "
                                       "way to the first token besides the GPU prefill: admission, input processing, "
                                       "the first token's sampling and output (ms)")

    def non_torch_GiB(self, tp: int) -> float:
        """Non-torch memory charged by the profile at a TP degree."""
        return self.non_torch_GiB_tp1 if tp <= 1 else self.non_torch_GiB_tp_multi


class EnginesCatalog(BaseModel):
    """The whole file: devices by GPU id, profiles by id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    devices: list[DeviceMemory]
    profiles: list[EngineProfile]

    def device(self, gpu_id: str) -> DeviceMemory:
        for d in self.devices:
            if d.gpu == gpu_id:
                return d
        raise InputError(f"no device-memory record for GPU {gpu_id!r}", field="devices",
                         expected="one of " + ", ".join(d.gpu for d in self.devices))

    def profile(self, profile_id: str) -> EngineProfile:
        for p in self.profiles:
            if p.id == profile_id:
                return p
        raise InputError(f"unknown engine profile {profile_id!r}", field="profiles",
                         expected="one of " + ", ".join(p.id for p in self.profiles))


def _record_name(data: object, loc: tuple) -> str | None:
    """The id (or gpu) of the record an error location points into."""
    if len(loc) >= 2 and isinstance(data, dict) and isinstance(loc[1], int):
        items = data.get(loc[0])
        if isinstance(items, list) and 0 <= loc[1] < len(items) and isinstance(items[loc[1]], dict):
            rec = items[loc[1]]
            name = rec.get("id", rec.get("gpu"))
            return str(name) if name is not None else None
    return None


def load_engines(path: str | Path | None = None, *, gpu_ids: Optional[Iterable[str]] = None,
                 partial: bool = False) -> EnginesCatalog:
    """Validate catalog/engines.yaml (or ``path``).

    InputError names the file, the line, the record (``profiles[2] (vllm-0.6.0)``) and the field, for bad
    YAML, a missing or unknown field, a value out of range, a duplicate id, or (with ``gpu_ids``) a
    device record naming a GPU that gpus.yaml does not have. ``partial`` (a catalogue overlay's file) lets
    either list be absent.
    """
    path = Path(path) if path is not None else DEFAULT_DIR / ENGINES_FILE
    data, lines = load_yaml(path)
    if not isinstance(data, dict):
        raise InputError(f"expected a mapping with 'devices' {'and/or' if partial else 'and'} 'profiles' lists",
                         file=str(path), line=1)
    if partial:
        data = {**data, "devices": data.get("devices") or [], "profiles": data.get("profiles") or []}
    try:
        cat = EnginesCatalog.model_validate(data)
    except ValidationError as exc:
        err = to_input_error(exc, file=str(path), lines=lines, model=EnginesCatalog)
        loc = tuple(exc.errors(include_url=False)[0]["loc"])
        name = _record_name(data, loc)
        if name and err.field:
            head = f"{loc[0]}[{loc[1]}]"
            err = InputError(err.message, file=err.file, line=err.line,
                             field=err.field.replace(head, f"{head} ({name})", 1), expected=err.expected)
        raise err from None
    for key, ident in (("devices", "gpu"), ("profiles", "id")):
        seen: dict[str, int] = {}
        for i, rec in enumerate(getattr(cat, key)):
            rid = getattr(rec, ident)
            if rid in seen:
                raise InputError(f"duplicate {ident} {rid!r} (first on line {line_of(lines, (key, seen[rid], ident))})",
                                 file=str(path), line=line_of(lines, (key, i, ident)),
                                 field=f"{key}[{i}] ({rid}).{ident}")
            seen[rid] = i
    if gpu_ids is not None:
        known = list(gpu_ids)
        for i, d in enumerate(cat.devices):
            if d.gpu not in known:
                raise InputError(f"unknown GPU id {d.gpu!r} (not in gpus.yaml)", file=str(path),
                                 line=line_of(lines, ("devices", i, "gpu")), field=f"devices[{i}] ({d.gpu}).gpu",
                                 expected="one of " + ", ".join(known))
    return cat
