"""Pydantic models of a scenario. Units are in field names or descriptions; ranges are enforced."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

Precision = Literal["fp32", "bf16", "fp16", "fp8"]
WeightPrecision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
KvPrecision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
Optimizer = Literal["adam", "adam_mv", "adam_8bit", "sgd_momentum", "adam_mini", "sgd"]
#: activation recompute: none; selective (Megatron's core attention, Korthikanti et al. 2022); full (per layer);
#: op_selective (torchtitan's op-level selective AC: saves every other matmul's output and the attention's,
#: recomputes the rest; dense GQA/MHA models only; docs/activations.md)
Recompute = Literal["none", "selective", "full", "op_selective"]
#: FP8 training recipes (workbook.reference.fp8; Transformer Engine, torchao.float8, DeepSeek-V3 §3.3)
Fp8Recipe = Literal["delayed", "current", "rowwise", "blockwise"]
#: training frameworks (catalog/frameworks.yaml profiles; megatron = the step model as validated)
Framework = Literal["megatron", "deepspeed", "fsdp2_eager", "fsdp2_compile"]
#: "tensors": activations from the tensors each layer saves (Korthikanti et al. 2022, Megatron) and
#: state sharded by parameter class (workbook.reference.activations, sharded_state);
#: "book": the book's 17.4.5-17.4.8 formulas
MemoryModel = Literal["tensors", "book"]
OnOff = Literal["on", "off"]
#: serving load model (issue 22): "rate" an open-loop arrival rate (inference.arrival_rate_rps), "concurrency"
#: N closed-loop clients with no think time (inference.concurrency), "static" a static batch of
#: inference.batch requests run to the output length together (docs/serving.md "Three load models")
LoadModel = Literal["rate", "concurrency", "static"]
#: output lengths of an offline run's requests (docs/serving.md "A finite offline run"): "exponential" a mix
#: (chat data sets), "fixed" every request to the same length (synthetic benchmarks with no spread)
OutputLengths = Literal["exponential", "fixed"]
#: pipeline schedules (Narayanan et al. 2021 §2.2 1F1B and interleaved 1F1B; Qi et al. 2023 zero bubble,
#: which keeps 1F1B's activation memory)
PipelineSchedule = Literal["1f1b", "interleaved", "zero_bubble"]
#: training time model: "step" the closed-form step time (workbook.reference.step_time), "mfu" the MFU given,
#: "measured" a measured hardware TFLOP/s per GPU (recompute passes included, as a profiler or Megatron logs it)
TimeModel = Literal["step", "mfu", "measured"]
#: the peak an MFU refers to: "bf16" the dense BF16 peak (the usual convention), "precision" the dense peak at
#: the training precision (FP8 on an FP8 run)
MfuPeak = Literal["bf16", "precision"]
PriceBasis = Literal["on_demand", "reserved", "spot"]
#: serving model: "engine" the measured-engine models (docs/serving.md; workbook.reference.engine_memory,
#: decode_time, prefill_time, serving_load), "book" the spec 17.8 roofline
ServingModel = Literal["engine", "book"]
#: the default serving-engine profile (catalog/engines.yaml)
DEFAULT_ENGINE = "vllm-0.10"
Purpose = Literal["both", "training", "serving"]
#: the longest TCO horizon (cost.depreciation_years): the TCO sheet has one row per year up to it (GPU servers
#: are written off over 3-6 years; spec 17.5.9 and 17.9.3 use 3)
TCO_MAX_YEARS = 10


def In(default, *, title: str, unit: str, example, desc: str, note: str = "", required_if: str = "",
       kind: str = "", only_if: str = "", **bounds):  # noqa: N802
    """A scenario input: short title (validation title, INPUT ERROR text), unit, an example value,
    a description (the Plan label), an optional note (the Plan Notes column); for an optional
    input, ``required_if="field=value"``: a sibling choice that makes a blank an error; ``only_if="field=value"``:
    the sibling choice without which a given value is an error (blank = ignored); ``kind`` names a
    catalogue list the value is an id of ("engine": catalog/engines.yaml profiles)."""
    extra = {"unit": unit, "note": note, **({"required_if": required_if} if required_if else {}),
             **({"kind": kind} if kind else {}), **({"only_if": only_if} if only_if else {})}
    return Field(default, title=title, description=desc, examples=[example], json_schema_extra=extra, **bounds)


def required_if(info) -> tuple[str, str] | None:
    """(sibling field, value) that makes a blank input an error, or None."""
    cond = (info.json_schema_extra or {}).get("required_if")
    return tuple(cond.split("=", 1)) if cond else None


def only_if(info) -> tuple[str, str] | None:
    """(sibling field, value) without which a given input is an error, or None."""
    cond = (info.json_schema_extra or {}).get("only_if")
    return tuple(cond.split("=", 1)) if cond else None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_assignment=True)


class TrainingInputs(_Strict):
    """Training run inputs (spec 17.3, 17.4, 17.5, 17.9.4)."""

    tokens: float = In(1.0e12, title="Training tokens", unit="tokens", example=2e12, ge=1e6, le=1e16,
                       desc="Training tokens T_tok")
    seq_len: int = In(4096, title="Sequence length", unit="tokens", example=4096, ge=16, le=10_000_000,
                      desc="Sequence length S")
    micro_batch: int = In(1, title="Micro-batch", unit="sequences", example=4, ge=1, le=65536,
                          desc="Micro-batch per GPU B_micro")
    grad_accum: int = In(8, title="Gradient accumulation", unit="steps", example=16, ge=1, le=65536,
                         desc="Gradient-accumulation steps GA")
    precision: Precision = In("bf16", title="Training precision", unit="choice", example="bf16",
                              desc="Weight and compute precision of training")
    framework: Framework = In("megatron", title="Training framework", unit="choice", example="megatron",
                              desc="Training framework profile: its kernel factors on the step model",
                              note="catalog/frameworks.yaml; docs/frameworks.md")
    fp8_recipe: Optional[Fp8Recipe] = In(None, title="FP8 recipe", unit="choice", example="delayed",
                                          desc="FP8 training recipe: per-tensor delayed or current scaling, "
                                          "row-wise or block-wise scales (precision fp8 only)",
                                          note="blank = delayed; refused unless precision is fp8",
                                          only_if="precision=fp8")
    grad_precision: Precision = In("bf16", title="Gradient precision", unit="choice", example="bf16",
                                   desc="Gradient precision")
    optimizer: Optimizer = In("adam", title="Optimizer", unit="choice", example="adam",
                              desc="Optimizer", note="bytes of state per parameter: spec 17.4.3")
    zero_stage: int = In(1, title="ZeRO stage", unit="stage", example=1, ge=0, le=3,
                         desc="ZeRO stage 0-3", note="spec 17.4.8")
    recompute: Recompute = In("full", title="Recompute", unit="choice", example="full",
                              desc="Activation recompute mode",
                              note="spec 17.4.6; op_selective = torchtitan op-level SAC, dense models only")
    num_gpus: int = In(8, title="GPUs in the job", unit="GPUs", example=256, ge=1, le=1_000_000,
                       desc="GPUs in the training job N", note="N = TP x CP x PP x DP")
    tp: int = In(1, title="TP degree", unit="GPUs", example=8, ge=1, le=64, desc="Tensor-parallel degree")
    pp: int = In(1, title="PP degree", unit="GPUs", example=1, ge=1, le=512, desc="Pipeline-parallel degree")
    ep: int = In(1, title="EP degree", unit="GPUs", example=1, ge=1, le=1024, desc="Expert-parallel degree",
                 note="inside DP x CP")
    cp: int = In(1, title="CP degree", unit="GPUs", example=2, ge=1, le=1024, desc="Context-parallel degree",
                 note="splits the sequence; N = TP x CP x PP x DP")
    etp: Optional[int] = In(None, title="Expert TP degree", unit="GPUs", example=1, ge=1, le=64,
                            desc="Expert tensor-parallel degree ETP", note="MoE; blank = TP degree")
    memory_model: MemoryModel = In("tensors", title="Memory model", unit="choice", example="tensors",
                                   desc="Training memory model per GPU",
                                   note="tensors: saved tensors + sharded state; book: spec 17.4.5-17.4.8")
    sequence_parallel: OnOff = In("on", title="Sequence parallelism", unit="choice", example="on",
                                  desc="Sequence parallelism in the TP group (norms and dropout split over TP)",
                                  note="tensor model; Korthikanti et al. 2022 §4.2.2")
    flash_attention: OnOff = In("on", title="FlashAttention", unit="choice", example="on",
                                desc="FlashAttention (no s x s score tensors kept)", note="tensor model")
    dropout: OnOff = In("off", title="Dropout", unit="choice", example="off",
                        desc="Dropout in training (1-byte masks kept)", note="tensor model")
    pipeline_schedule: PipelineSchedule = In("1f1b", title="Pipeline schedule", unit="choice", example="1f1b",
                                             desc="Pipeline schedule (micro-batches in flight per stage)",
                                             note="tensor model; Megatron schedules.py")
    virtual_stages: int = In(1, title="Virtual stages", unit="count", example=2, ge=1, le=64,
                             desc="Model chunks per pipeline rank (interleaved schedule)",
                             note="interleaved only; 1 = plain 1F1B")
    mfu: float = In(0.40, title="MFU", unit="fraction", example=0.40, ge=0.05, le=0.9,
                    desc="Model FLOPs utilisation (MFU given), over the MFU peak basis",
                    note="plausible 20-60 % (spec 17.5.2)")
    mfu_peak: MfuPeak = In("bf16", title="MFU peak basis", unit="choice", example="bf16",
                           desc="The peak an MFU refers to: bf16 = the dense BF16 peak, precision = the dense "
                           "peak at the training precision (FP8 on an FP8 run)",
                           note="MFU given, and the MFU and HFU reported; bf16 unless the MFU is quoted against FP8")
    target_days: float = In(30.0, title="Target days", unit="days", example=30, ge=0.1, le=3650,
                            desc="Target training duration")
    overhead_factor: float = In(1.0, title="Overhead factor", unit="x", example=1.1, ge=1, le=3,
                                desc="Wall-clock overhead factor on compute time", note="spec 17.5.3: 1.10-1.15")
    act_GB: Optional[float] = In(None, title="Activation override", unit="GB", example=20, ge=0.001, le=1e5,
                                 desc="Activation memory per GPU override", note="blank = computed")
    runtime_overhead_GB: float = In(2.0, title="Runtime overhead (training)", unit="GB", example=2, ge=0, le=1e4,
                                    desc="Framework/runtime overhead per GPU")
    spare_fraction: float = In(0.0, title="Spare GPUs", unit="fraction", example=0.05, ge=0, le=1,
                               desc="Spare GPUs as a fraction of N", note="spec 17.5.4: 5-10 %")
    usable_hbm_frac: float = In(0.75, title="Usable HBM (GPU floor)", unit="fraction", example=0.75, ge=0.1, le=1,
                                desc="Planning margin: share of the catalogue HBM (hbm_GB) planned for ZeRO-3 "
                                "state in the Plan's GPU memory floor",
                                note="spec 17.5.10 step 2: 60 of 80 GB; not the fit check's hbm_allocatable_frac")
    hbm_allocatable_frac: float = In(0.885, title="Allocatable device memory", unit="fraction", example=0.885,
                                     ge=0.5, le=1,
                                     desc="Share of the device memory (nvidia-smi total, hbm_device_MiB) the "
                                     "allocator can fill with tensors: the tensor model's fit check",
                                     note="GMLake (arXiv 2401.08156) recovers 9.2 of 80 GB of PyTorch allocator "
                                     "fragmentation on average: 1 - 9.2/80; context, NCCL: runtime overhead")
    tp_overlap_frac: float = In(0.0, title="TP overlap", unit="fraction", example=0.5, ge=0, le=1,
                                desc="Fraction of TP communication hidden under compute",
                                note="spec 17.6.8: 50-60 %; 0 = none")
    # ---- step-time model (workbook.reference.step_time, docs/step_time.md; Step Time sheet)
    time_model: TimeModel = In("step", title="Time model", unit="choice", example="step",
                               desc="Training time model: step = the step-time model, mfu = MFU given, "
                               "measured = a measured hardware TFLOP/s per GPU",
                               note="step: Step Time sheet; mfu: 6PD / (N·peak·MFU); measured: hardware FLOPs "
                               "per step / (N·TFLOP/s)")
    measured_TFLOPS_per_gpu: Optional[float] = In(
        None, title="Measured TFLOP/s per GPU", unit="TFLOPS", example=153, ge=0.1, le=1e5,
        desc="Measured hardware TFLOP/s per GPU, recompute passes included (as a profiler or Megatron's log "
        "reports them)", note="time model measured; blank = the step model's hardware TFLOP/s",
        required_if="time_model=measured")
    last_stage_layers: Optional[int] = In(None, title="Layers on the last stage", unit="layers", example=7, ge=1,
                                          le=1000, desc="Layers on the last pipeline stage (it also holds the LM head)",
                                          note="blank = L/PP rounded up")
    dp_overlap_frac: float = In(1.0, title="DP overlap", unit="fraction", example=1.0, ge=0, le=1,
                                desc="Fraction of the DP gradient reduction hidden under the last backward",
                                note="1 = overlapped (DDP, FSDP); 0 = none")
    ep_overlap_frac: float = In(0.0, title="EP overlap", unit="fraction", example=0.0, ge=0, le=1,
                                desc="Fraction of the EP all-to-alls hidden under compute", note="0 = none")
    cp_overlap_frac: float = In(1.0, title="CP overlap", unit="fraction", example=1.0, ge=0, le=1,
                                desc="Fraction of the attention core that hides the CP ring", note="1 = ring attention")
    reshard_after_forward: OnOff = In("on", title="Reshard after forward", unit="choice", example="on",
                                      desc="ZeRO-3 / FSDP: free the gathered weights after each layer's forward "
                                      "and gather them again for its backward",
                                      note="ZeRO-3 only; off keeps them (one all-gather per micro-batch, more memory)")
    zero3_overlap_frac: float = In(1.0, title="ZeRO-3 overlap", unit="fraction", example=1.0, ge=0, le=1,
                                   desc="Fraction of the stage compute that hides the ZeRO-3 weight all-gathers",
                                   note="1 = prefetched")

    @model_validator(mode="after")
    def _layout_divides(self) -> "TrainingInputs":
        mp = self.tp * self.cp * self.pp
        if self.num_gpus % mp:
            raise ValueError(
                f"num_gpus={self.num_gpus} must be a multiple of tp*cp*pp={mp} (DP = num_gpus/(tp*cp*pp))"
            )
        etp = self.tp if self.etp is None else self.etp
        expert = etp * self.ep * self.pp
        if self.num_gpus % expert:
            raise ValueError(f"num_gpus={self.num_gpus} must be a multiple of etp*ep*pp={expert} "
                             "(expert-data-parallel degree; EP lives inside DP x CP)")
        return self

    @model_validator(mode="after")
    def _only_if(self) -> "TrainingInputs":
        for name, info in type(self).model_fields.items():
            cond = only_if(info)
            value, sibling = getattr(self, name), getattr(self, cond[0]) if cond else None
            if cond and value is not None and str(sibling) != cond[1]:
                raise ValueError(f"{name}={value} needs {cond[0]} {cond[1]} ({cond[0]} is {sibling}); "
                                 f"leave {name} blank")
        return self

    @model_validator(mode="after")
    def _required_if(self) -> "TrainingInputs":
        for name, info in type(self).model_fields.items():
            cond = required_if(info)
            if cond and getattr(self, name) is None and str(getattr(self, cond[0])) == cond[1]:
                raise ValueError(f"{cond[0]}={cond[1]} needs training.{name} (give a value; blank only "
                                 f"under another {cond[0]})")
        return self


class InferenceInputs(_Strict):
    """Serving inputs (spec 17.4.9-17.4.11, 17.8)."""

    prompt_tokens: int = In(2048, title="Prompt length", unit="tokens", example=2048, ge=1, le=10_000_000,
                            desc="Prompt length")
    output_tokens: int = In(512, title="Output length", unit="tokens", example=512, ge=1, le=10_000_000,
                            desc="Generated tokens per request")
    batch: int = In(32, title="Decode batch", unit="sequences", example=32, ge=1, le=1_000_000,
                    desc="Concurrent sequences in a decode batch")
    weight_precision: WeightPrecision = In("bf16", title="Weight precision", unit="choice", example="bf16",
                                           desc="Weight precision at inference")
    kv_precision: KvPrecision = In("bf16", title="KV precision", unit="choice", example="bf16",
                                   desc="KV-cache precision")
    tp: int = In(1, title="Serving TP", unit="GPUs", example=4, ge=1, le=64,
                 desc="Tensor-parallel degree of one serving replica")
    compute_efficiency: float = In(0.5, title="Prefill efficiency", unit="fraction", example=0.5, ge=0.05, le=1,
                                   desc="Achieved/peak FLOPS in prefill", note="eta_p")
    memory_efficiency: float = In(0.8, title="Decode bandwidth efficiency", unit="fraction", example=0.8,
                                  ge=0.05, le=1, desc="Achieved/peak HBM bandwidth in decode", note="eta_bw")
    runtime_overhead_GB: float = In(2.0, title="Runtime overhead (serving)", unit="GB", example=2, ge=0, le=1e4,
                                    desc="Runtime overhead per GPU")
    replicas: int = In(1, title="Serving replicas", unit="replicas", example=2, ge=1, le=1_000_000,
                       desc="Serving replicas", note="each of TP GPUs")
    decode_compute_efficiency: float = In(0.7, title="Decode compute efficiency", unit="fraction", example=0.7,
                                          ge=0.05, le=1, desc="Achieved/peak FLOPS in decode",
                                          note="eta_c, spec 17.8 F3; book 0.7")
    kv_usable_frac: float = In(1.0, title="Usable KV memory", unit="fraction", example=0.9, ge=0.1, le=1,
                               desc="Usable fraction of free HBM for the KV cache",
                               note="spec F5: 1 book, 0.9 paged, 0.96 seed 001")
    spec_draft_tokens: int = In(0, title="Draft tokens", unit="tokens", example=4, ge=0, le=64,
                                desc="Speculative decoding draft length K", note="0 = off (spec F8)")
    spec_accept_rate: float = In(0.8, title="Draft acceptance", unit="fraction", example=0.8, ge=0, le=1,
                                 desc="Speculative decoding acceptance probability alpha", note="spec F8")
    spec_draft_params: float = In(0.0, title="Draft model size", unit="params", example=1e9, ge=0, le=1e13,
                                  desc="Draft model parameters", note="spec F8")
    chunk_tokens: int = In(512, title="Prefill chunk", unit="tokens", example=512, ge=1, le=1_000_000,
                           desc="Chunked-prefill chunk size C", note="spec F9")
    # ---- measured-engine serving models (docs/serving.md; KV Cache and Inference sheets, srv_ rows)
    serving_model: ServingModel = In("engine", title="Serving model", unit="choice", example="engine",
                                     desc="Serving model in use: engine = measured-engine models, book = spec 17.8",
                                     note="engine: docs/serving.md; book: the roofline of spec 17.8")
    engine: str = In(DEFAULT_ENGINE, title="Serving engine", unit="id", example=DEFAULT_ENGINE, kind="engine",
                     min_length=1, max_length=64, desc="Serving-engine profile (Engines sheet)",
                     note="catalog/engines.yaml")
    ep: int = In(1, title="Serving EP", unit="GPUs", example=1, ge=1, le=1024,
                 desc="Expert-parallel degree of one serving group (DP attention + EP)",
                 note="group = TP x EP GPUs")
    redundant_experts: int = In(0, title="Redundant experts", unit="count", example=32, ge=0, le=4096,
                                desc="Redundant routed-expert replicas per MoE layer in the serving EP group",
                                note="EP > 1 only (EPLB); DeepSeek decode 32")
    ep_overlap_frac: Optional[float] = In(None, title="Serving EP overlap", unit="fraction", example=1.0, ge=0,
                                          le=1, desc="Share of the serving EP all-to-all hidden under the step's GPU work",
                                          note="blank = the engine profile's (DeepSeek's two micro-batches: 1; 0 = none)")
    disaggregated: OnOff = In("off", title="Disaggregated serving", unit="choice", example="on",
                              desc="Separate prefill and decode pools sized from the load (engine model)",
                              note="docs/serving.md Disaggregated serving; DeepSeek day 6")
    prefill_ep: Optional[int] = In(None, title="Prefill EP", unit="GPUs", example=32, ge=1, le=1024,
                                   desc="Expert-parallel degree of one prefill instance (disaggregated)",
                                   note="blank = Serving EP; the decode pool uses Serving TP x EP")
    cache_hit_frac: float = In(0.0, title="Prefix cache hits", unit="fraction", example=0.563, ge=0, le=0.99,
                               desc="Share of prompt tokens whose KV is found in a prefix cache (not recomputed)",
                               note="disaggregated prefill pool; DeepSeek day 6: 0.563")
    memory_fraction: Optional[float] = In(None, title="Engine memory fraction", unit="fraction", example=0.9,
                                          ge=0.01, le=1, desc="Engine memory fraction (vLLM gpu_memory_utilization, "
                                          "SGLang mem_fraction_static)", note="blank = the engine profile's")
    arrival_rate_rps: Optional[float] = In(None, title="Arrival rate", unit="requests/s", example=4, ge=1e-6,
                                           le=1e6, desc="Request arrival rate, all replicas",
                                           note="blank = offline (maximum throughput)")
    offline_requests: Optional[int] = In(None, title="Offline run size", unit="requests", example=5000, ge=1,
                                         le=10**12, desc="Requests of one offline run (a batch job or benchmark) "
                                         "queued at once, timed until the last one ends",
                                         note="blank = an endless queue (no drain)")
    output_lengths: OutputLengths = In("exponential", title="Output lengths", unit="choice", example="fixed",
                                       desc="Output lengths of the requests: exponential (a chat mix: they end "
                                       "one by one, and the running requests' mean context is prompt + output) or "
                                       "fixed (all the same, as benchmarks run with ignore_eos: they end in waves, "
                                       "and the mean context is prompt + output/2)",
                                       note="docs/serving.md Serving under load, A finite offline run")
    load: LoadModel = In("rate", title="Load model", unit="choice", example="concurrency",
                         desc="Serving load the in-use figures follow: rate (open-loop arrivals), concurrency "
                         "(closed-loop clients) or static (a batch run to the output length)",
                         note="engine model; docs/serving.md Three load models")
    concurrency: Optional[int] = In(None, title="Concurrent clients", unit="requests", example=64, ge=1,
                                    le=100_000_000, desc="Closed-loop clients, all replicas (each sends its next "
                                    "request when the last one ends)", note="blank = the decode batch")
    ttft_target_ms: Optional[float] = In(None, title="TTFT target", unit="ms", example=1000, ge=0.001, le=1e7,
                                         desc="Time-to-first-token target", note="blank = no target")
    tpot_target_ms: Optional[float] = In(None, title="TPOT target", unit="ms", example=50, ge=0.001, le=1e7,
                                         desc="Time-per-output-token target", note="blank = no target")
    measured_tokens_per_s_per_gpu: Optional[float] = In(
        None, title="Measured throughput", unit="tokens/s", example=900, ge=0.001, le=1e8,
        desc="Benchmarked output tokens/s per GPU (costs use it; the model figure stays beside it)",
        note="blank = the model's figure")


class NetworkInputs(_Strict):
    """Interconnect inputs (spec 17.1.2, 17.1.6, 17.6). null = catalogue default."""

    nic_Gbps: Optional[float] = In(None, title="NIC line rate", unit="Gbit/s", example=400, ge=1, le=1e5,
                                   desc="One NIC's line rate", note="blank = default")
    nics_per_node: Optional[int] = In(None, title="NICs per node", unit="count", example=8, ge=1, le=64,
                                      desc="NICs per node", note="blank = default")
    network_efficiency: Optional[float] = In(None, title="Network efficiency", unit="fraction", example=0.8,
                                             ge=0.05, le=1, desc="Achievable fraction of NIC line rate",
                                             note="blank = default")
    nvlink_efficiency: Optional[float] = In(None, title="NVLink efficiency", unit="fraction", example=0.8,
                                            ge=0.05, le=1, desc="Achievable fraction of NVLink rate",
                                            note="blank = default")
    nvlink_direction_factor: Optional[float] = In(None, title="NVLink direction factor", unit="x", example=1,
                                                  ge=0.1, le=1, desc="Factor on the quoted NVLink figure",
                                                  note="1 = book convention, 0.5 = one direction; blank = default")
    pcie_direction_factor: Optional[float] = In(None, title="PCIe direction factor", unit="x", example=1,
                                                ge=0.1, le=1, desc="Factor on the quoted PCIe figure",
                                                note="1 = book convention, 0.5 = one direction; blank = default")
    switch_ports: Optional[int] = In(None, title="Switch ports", unit="count", example=64, ge=1, le=4096,
                                     desc="Ports per network switch (prices the switches, TCO sheet)",
                                     note="blank = default")


class StorageInputs(_Strict):
    """Storage IO inputs (spec 17.7). null = catalogue default."""

    dataset_bytes_per_token: Optional[float] = In(None, title="Dataset bytes per token", unit="B/token", example=4,
                                                  ge=0.1, le=1e4, desc="Stored bytes per training token",
                                                  note="blank = default")
    ckpt_bytes_per_param: Optional[float] = In(None, title="Checkpoint bytes per parameter", unit="B/param",
                                               example=14, ge=0.5, le=64, desc="Checkpoint bytes per parameter",
                                               note="blank = default")
    ckpt_interval_steps: Optional[int] = In(None, title="Checkpoint interval", unit="steps", example=1000, ge=1,
                                            le=10_000_000, desc="Steps between checkpoints", note="blank = default")
    ckpt_keep: Optional[int] = In(None, title="Checkpoints kept", unit="checkpoints", example=5, ge=1, le=10_000,
                                  desc="Checkpoints retained", note="blank = default")
    mtbf_gpu_hours: Optional[float] = In(None, title="GPU MTBF", unit="h", example=50000, ge=1, le=1e9,
                                         desc="MTBF of one GPU", note="blank = default")
    fs_write_GBps: Optional[float] = In(None, title="File-system write bandwidth", unit="GB/s", example=100,
                                        ge=0.001, le=1e6, desc="File-system aggregate write bandwidth",
                                        note="blank = default")
    fs_read_GBps: Optional[float] = In(None, title="File-system read bandwidth", unit="GB/s", example=100,
                                       ge=0.001, le=1e6, desc="File-system aggregate read bandwidth",
                                       note="blank = default")


class CostInputs(_Strict):
    """Price and TCO inputs (spec 17.5.9, 17.8.11, 17.9). null = catalogue default."""

    price_basis: PriceBasis = In("on_demand", title="Price basis", unit="choice", example="reserved",
                                 desc="Which catalogue GPU-hour price applies")
    gpu_hour_usd: Optional[float] = In(None, title="Price override", unit="USD/GPU-h", example=2.0, ge=0.01,
                                       le=1e4, desc="Price per GPU-hour override",
                                       note="blank = the GPU's catalogue price for the basis")
    budget_usd: Optional[float] = In(None, title="Budget", unit="USD", example=2e6, ge=1, le=1e13,
                                     desc="Training budget", note="blank = no budget")
    electricity_usd_per_kWh: Optional[float] = In(None, title="Electricity price", unit="USD/kWh", example=0.1,
                                                  ge=0, le=10, desc="Electricity price", note="blank = default")
    pue: Optional[float] = In(None, title="PUE", unit="x", example=1.3, ge=1, le=5,
                              desc="Power usage effectiveness", note="blank = default")
    server_capex_usd: Optional[float] = In(None, title="Server capex", unit="USD", example=250000, ge=0, le=1e9,
                                           desc="Capex per server", note="blank = default")
    depreciation_years: Optional[float] = In(None, title="Depreciation period", unit="years", example=4, ge=0.5,
                                             le=TCO_MAX_YEARS, desc="Depreciation period (the TCO horizon)",
                                             note="blank = default; the TCO sheet has one row per year up to the maximum")
    api_usd_per_1M_tokens: float = In(10.0, title="API price", unit="USD/1M tokens", example=10, ge=0, le=1e4,
                                      desc="API price compared against, per 1M output tokens",
                                      note="GPT-4o 10, spec 17.8.11")
    infra_usd_per_1M_tokens: Optional[float] = In(None, title="Self-host adder", unit="USD/1M tokens", example=0.5,
                                                  ge=0, le=1e4, desc="Self-host infrastructure adder C_infra",
                                                  note="blank = default")
    utilisation_frac: float = In(1.0, title="Serving utilisation", unit="fraction", example=0.6, ge=0.01, le=1,
                                 desc="Average serving utilisation", note="share of peak throughput used (spec F11)")
    sensitivity_frac: float = In(0.2, title="Sensitivity step", unit="fraction", example=0.2, ge=0.01, le=0.9,
                                 desc="One-way sensitivity step: each driver moved down and up by this share",
                                 note="Sensitivity sheet: -20 % / +20 % by default")
    contingency_frac: float = In(0.0, title="Contingency", unit="fraction", example=0.1, ge=0, le=1,
                                 desc="Contingency on the training cost, shown apart from it",
                                 note="0 = none; Sensitivity sheet")
    ib_switch_usd: Optional[float] = In(None, title="Switch price", unit="USD/switch", example=50000, ge=0, le=1e8,
                                        desc="Price per network switch", note="blank = default")
    storage_usd_per_TB_month: Optional[float] = In(None, title="Storage price", unit="USD/TB-month", example=30, ge=0,
                                                   le=1e5, desc="Storage price per TB-month (owned, kept all horizon)",
                                                   note="blank = default")
    staff_usd_per_year: Optional[float] = In(None, title="Staff cost", unit="USD/year", example=500000, ge=0,
                                             le=1e10, desc="Staff cost of running the owned cluster, per year",
                                             note="blank = ceil(GPUs / staff_gpus_per_fte) x staff_usd_per_fte_year")
    support_frac_of_capex_per_year: Optional[float] = In(None, title="Support share", unit="fraction", example=0.08,
                                                         ge=0, le=1, desc="Vendor support per year as a share of "
                                                         "the hardware capex", note="blank = default (assumed 8 %)")
    optics_usd_per_link: Optional[float] = In(None, title="Optics per link", unit="USD/link", example=2500, ge=0,
                                              le=1e6, desc="Two transceivers and a cable per network link",
                                              note="blank = default (estimated)")
    host_power_W_per_server: Optional[float] = In(None, title="Host power", unit="W", example=4600, ge=0,
                                                  le=1e5, desc="Server power beside its GPUs: CPUs, memory, NICs, "
                                                  "fans", note="blank = default (DGX H100 10.2 kW - 8 x 700 W)")
    space_usd_per_kW_month: Optional[float] = In(None, title="Space price", unit="USD/kW-month", example=184, ge=0,
                                                 le=1e5, desc="Data-centre space per kW of IT load per month",
                                                 note="blank = default (CBRE H2 2024)")
    discount_rate_frac: Optional[float] = In(None, title="Discount rate", unit="fraction", example=0.08, ge=0,
                                             le=1, desc="Discount rate of the rent vs buy present values",
                                             note="blank = default (assumed 8 %)")
    residual_life_years: Optional[float] = In(None, title="Residual life", unit="years", example=5, ge=0.5, le=20,
                                              desc="Useful life over which the hardware's resale value falls "
                                              "straight-line", note="blank = default (5 years)")
    residual_floor_frac: Optional[float] = In(None, title="Residual floor", unit="fraction", example=0.1, ge=0,
                                              le=1, desc="Share of the capex the hardware keeps after its useful "
                                              "life", note="blank = default (assumed 10 %)")
    cash_start_year: Optional[int] = In(None, title="Cash flow start year", unit="year", example=2028, ge=2000,
                                        le=2100, desc="Calendar year of the Cash Flow sheet's first month",
                                        note="blank = default")
    cash_start_month: Optional[int] = In(None, title="Cash flow start month", unit="month", example=7, ge=1, le=12,
                                         desc="Calendar month (1-12) of the Cash Flow sheet's first month: the "
                                         "rental and the purchase start on its first day", note="blank = default")
    fiscal_year_start_month: Optional[int] = In(None, title="Fiscal year start month", unit="month", example=10,
                                                ge=1, le=12, desc="First calendar month (1-12) of the fiscal year; "
                                                "a fiscal year is named by the calendar year it ends in",
                                                note="blank = default (1: the calendar year)")


class Scenario(_Strict):
    """A named plan: model and GPU from the catalogue plus the inputs of each area."""

    name: str = Field(..., min_length=1, max_length=64, description="short unique name (column header)")
    description: str = Field("", max_length=2000)
    model: Optional[str] = Field(None, description="catalogue model id")
    model_arch: Optional[dict] = Field(None, description="inline architecture (catalogue model fields)")
    gpu: str = Field(..., description="catalogue GPU id")
    purpose: Purpose = In("both", title="Purpose", unit="choice", example="training",
                          desc="What the plan is for: its checks apply to training, serving or both")
    training: TrainingInputs = Field(default_factory=TrainingInputs)
    inference: InferenceInputs = Field(default_factory=InferenceInputs)
    network: NetworkInputs = Field(default_factory=NetworkInputs)
    storage: StorageInputs = Field(default_factory=StorageInputs)
    cost: CostInputs = Field(default_factory=CostInputs)
    #: where the scenario was read from (set by load_scenario; used for error messages)
    _source_file: Optional[str] = PrivateAttr(default=None)
    _source_lines: dict = PrivateAttr(default_factory=dict)
    #: network inputs the user gave (set by resolve before it fills the blanks): the step model takes its
    #: NIC from them only when given, else from the GPU's efficiency record (docs/step_time.md)
    _network_given: frozenset = PrivateAttr(default_factory=frozenset)

    @model_validator(mode="after")
    def _one_model(self) -> "Scenario":
        if (self.model is None) == (self.model_arch is None):
            raise ValueError("give exactly one of 'model' (a catalogue id) or 'model_arch' (inline)")
        return self
