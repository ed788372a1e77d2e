"""Plan requests (catalog/requests/*.yaml): what a person needs, validated like scenarios.

A request names the model (a catalogue id, an inline architecture, or only a parameter count for the
early estimate of spec 17.9.4), the training job (tokens, target days, budget), the candidate GPUs and
price basis, optionally a serving load, and the constraints the search must respect. Errors name the
file, line and field and the allowed range (:func:`workbook.catalog.yamlio.to_input_error`).
"""

from __future__ import annotations

import datetime as dt

from pathlib import Path
from typing import Annotated, Literal, Optional, Union

from pydantic import (BaseModel, ConfigDict, Discriminator, Field, PrivateAttr, Tag, ValidationError, field_validator,
                      model_validator)

from workbook.catalog.yamlio import load_mapping, to_input_error
from workbook.errors import InputError
from workbook.scenario.model import Precision, PriceBasis, Recompute, WeightPrecision

#: the largest cluster the planner searches (the issue's 16,384 GPUs)
MAX_GPUS = 16384


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ModelByCount(_Strict):
    """A model known only by its parameter count: the early estimate (spec 17.9.4 steps 1, 2, 4, 5, 10)."""

    params_total: float = Field(..., ge=1e6, le=1e14, description="total parameters P")
    params_active: Optional[float] = Field(None, ge=1e6, le=1e14, description="active parameters (MoE); blank = P")
    moe: bool = Field(False, description="mixture of experts (the MFU lookup's MoE row)")


class ModelInline(_Strict):
    """An inline architecture: the catalogue model fields (catalog/models.yaml)."""

    arch: dict = Field(..., description="catalogue model fields (layers, d_model, ...)")


def _model_kind(v) -> str:
    """Which form the ``model`` field takes (the tags hold '(' so error locations drop them)."""
    if isinstance(v, dict):
        return "(inline)" if "arch" in v else "(count)"
    return "(id)" if isinstance(v, str) else "(count)"


ModelSpec = Annotated[
    Union[Annotated[str, Tag("(id)")], Annotated[ModelInline, Tag("(inline)")], Annotated[ModelByCount, Tag("(count)")]],
    Discriminator(_model_kind),
]


class EarlyEstimate(_Strict):
    """Inputs of the early estimate (spec 17.9.4 §5 quick path); blank = from the model and the book."""

    params_total: Optional[float] = Field(None, ge=1e6, le=1e14,
                                          description="P of the estimate (the book rounds 70.55B to 70e9)")
    params_active: Optional[float] = Field(None, ge=1e6, le=1e14, description="active P (MoE)")
    mfu: Optional[float] = Field(None, ge=0.05, le=0.9, description="MFU; blank = the book's lookup (step 3)")
    act_GB: float = Field(3.0, ge=1, le=8, description="M_act (spec: 1-8 GB)")
    overhead_GB: float = Field(2.0, ge=2, le=5, description="M_overhead (spec: 2-5 GB)")
    tp: int = Field(8, ge=1, le=64, description="TP of the factorisation (step 6)")
    dp_multiple: int = Field(8, ge=1, le=1024,
                             description="DP rounded up to a multiple of this ('a convenient DP': 615 -> 640)")
    grad_accum: int = Field(16, ge=1, le=65536, description="GA of step 8")
    fs_write_GBps: float = Field(100.0, gt=0, le=1e6, description="file-system write bandwidth (step 9)")


#: how the search models a layout: "measured" the step-time model and the tensor memory model (the
#: default), "book" the book's models (memory_model book, time_model mfu), as the 17.9 cases use them
Fidelity = Literal["measured", "book"]


class BookFidelity(_Strict):
    """The book's modelling choices for ``fidelity: book`` (spec 17.9.1-17.9.4; blank = the early estimate's)."""

    mfu: Optional[float] = Field(None, ge=0.05, le=0.9,
                                 description="MFU of every layout; blank = the early estimate's (early_estimate.mfu, "
                                             "else the book's step-3 lookup at the estimate's GPU count)")
    act_GB: Optional[float] = Field(None, ge=0.001, le=1e5,
                                    description="activations per GPU as the case states them; blank = early_estimate.act_GB")
    overhead_GB: Optional[float] = Field(None, ge=0, le=1e4,
                                         description="runtime overhead per GPU; blank = early_estimate.overhead_GB")
    ckpt_bytes_per_param: float = Field(10.0, ge=1, le=64, description="checkpoint bytes per parameter (spec T7: 10P)")


class TrainingRequest(_Strict):
    """How the training job runs, beyond tokens and days."""

    seq_len: int = Field(4096, ge=16, le=10_000_000, description="sequence length S")
    global_batch_tokens: float = Field(4194304, ge=16, le=1e9, description="global batch target (tokens)")
    global_batch_tolerance: float = Field(0.25, ge=0, le=4,
                                          description="allowed overshoot of the global batch (GA rounds up)")
    optimizer: Literal["adam", "adam_mv", "adam_8bit", "sgd_momentum", "adam_mini", "sgd"] = "adam"
    spare_fraction: float = Field(0.0, ge=0, le=1, description="spare GPUs as a fraction of N (spec 17.5.4)")
    overhead_factor: float = Field(1.0, ge=1, le=3, description="wall-clock overhead on compute time")

    @model_validator(mode="after")
    def _whole_sequences(self) -> "TrainingRequest":
        seqs = self.global_batch_tokens / self.seq_len
        if seqs < 1 or abs(seqs - round(seqs)) > 1e-9:
            raise ValueError(f"global_batch_tokens={self.global_batch_tokens:g} must be a whole number of "
                             f"sequences of seq_len={self.seq_len}")
        return self


#: the serving loads a request can give, exactly one (the scenario's load models rate, concurrency, static)
LOADS = ("requests_per_s", "concurrency", "static_batch")
#: which serving deployments the serving search sizes (serving_search, serving_disagg_search)
Disaggregation = Literal["auto", "off", "only"]


class ServingRequest(_Strict):
    """A serving load: the serving search sizes GPU type, TP/EP and replicas for it (serving_search)."""

    requests_per_s: Optional[float] = Field(None, gt=0, le=1e7, description="arrival rate (requests/s)")
    concurrency: Optional[int] = Field(None, ge=1, le=10_000_000, description="concurrent requests")
    static_batch: Optional[int] = Field(None, ge=1, le=1_000_000,
                                        description="requests run together to their output length (a static batch, "
                                                    "as batch benchmarks and batch jobs run them)")
    prompt_tokens: int = Field(..., ge=1, le=10_000_000, description="prompt length")
    output_tokens: int = Field(..., ge=1, le=10_000_000, description="output length")
    ttft_ms: float = Field(..., gt=0, le=1e7, description="time-to-first-token target (ms)")
    tpot_ms: float = Field(..., gt=0, le=1e6, description="time-per-output-token target (ms)")
    engine: Optional[str] = Field(None, min_length=1, max_length=64,
                                  description="serving-engine profile (catalog/engines.yaml); blank = the default")
    disaggregation: Disaggregation = Field(
        "off", description="off = co-located groups only (the default: the disaggregated TTFT has no prefill "
                           "queueing, docs/planner.md); auto = co-located groups and disaggregated prefill/decode "
                           "pools compete on cost; only = disaggregated pools only")
    weight_precision: Optional[WeightPrecision] = Field(
        None, description="weight precision of the served model (inference.weight_precision); blank = bf16")

    @model_validator(mode="after")
    def _one_load(self) -> "ServingRequest":
        given = [k for k in LOADS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of " + ", ".join(f"'{k}'" for k in LOADS)
                             + (f" (got {', '.join(given)})" if given else ""))
        if self.static_batch is not None and self.disaggregation != "off":
            raise ValueError("'static_batch' needs disaggregation 'off' (disaggregated pools are sized for an arrival "
                             "rate or a concurrency)")
        return self


class Constraints(_Strict):
    """What the search may choose (spec 17.5.8 layout rules on top)."""

    max_gpus: int = Field(MAX_GPUS, ge=1, le=MAX_GPUS, description="largest job (GPUs)")
    whole_nodes: bool = Field(True, description="GPU counts in whole nodes")
    precisions: list[Precision] = Field(default_factory=lambda: ["bf16"], min_length=1)
    zero_stages: list[int] = Field(default_factory=lambda: [0, 1, 2, 3], min_length=1)
    recompute: list[Recompute] = Field(default_factory=lambda: ["none", "selective", "full"], min_length=1)
    allow_cross_node_ep: bool = Field(False, description="EP may span nodes (DeepSeek-V3: EP64 over 8 nodes)")
    micro_batches: list[int] = Field(default_factory=lambda: [1, 2, 4], min_length=1)
    tp: Optional[list[int]] = Field(None, min_length=1, description="TP degrees; blank = 1, 2, 4, 8 in a node")
    cp: Optional[list[int]] = Field(None, min_length=1, description="CP degrees; blank = 1-8 with >= 2048 tokens each")
    pp_max: int = Field(64, ge=1, le=512, description="largest PP degree")
    ep_max: int = Field(256, ge=1, le=1024, description="largest EP degree")

    @model_validator(mode="after")
    def _ranges(self) -> "Constraints":
        for name, vals, lo, hi in (("zero_stages", self.zero_stages, 0, 3), ("micro_batches", self.micro_batches, 1, 65536),
                                   ("tp", self.tp or [1], 1, 64), ("cp", self.cp or [1], 1, 1024)):
            bad = [v for v in vals if not lo <= v <= hi]
            if bad:
                raise ValueError(f"{name}: {bad[0]} is outside {lo} to {hi}")
        return self


class PlanRequest(_Strict):
    """One plan request (catalog/requests/*.yaml)."""

    title: str = Field(..., min_length=1, max_length=200)
    request_id: str = Field(..., pattern=r"^[A-Za-z0-9._-]+$", min_length=1, max_length=48)
    requester: str = Field(..., min_length=1, max_length=120)
    cost_centre: str = Field(..., min_length=1, max_length=64)
    description: str = Field("", max_length=4000)
    prepared_by: str = Field("", max_length=120, description="who prepared the plan (Cover; blank = to fill in)")
    reviewed_by: str = Field("", max_length=120, description="who reviewed it (Cover)")
    approved_by: str = Field("", max_length=120, description="who approved it (Cover)")
    date: Optional[dt.date] = Field(None, description="date of the request (Cover, PDF footer); not today's: "
                                                     "the output stays deterministic")
    status: Literal["Draft", "For approval"] = Field("Draft", description="status printed on the Cover")
    start_date: Optional[dt.date] = Field(None, description="when the rental starts (the Cover's ask; blank = on "
                                                           "approval)")
    model: ModelSpec = Field(..., description="catalogue id, {arch: ...} or {params_total: ...}")
    tokens: Optional[float] = Field(None, ge=1e6, le=1e16, description="training tokens D")
    target_days: Optional[float] = Field(None, ge=0.1, le=3650, description="target training days")
    budget_usd: Optional[float] = Field(None, ge=1, le=1e13, description="training budget (USD); blank = none")
    candidate_gpus: list[str] = Field(..., min_length=1, max_length=16, description="catalogue GPU ids")
    price_basis: PriceBasis = "on_demand"
    gpu_hour_usd: Optional[float] = Field(None, ge=0.01, le=1e4, description="price override (USD/GPU-h)")
    rent_vs_buy: bool = Field(False, description="also compare owned hardware (cost breakdown: a later step)")
    training: TrainingRequest = Field(default_factory=TrainingRequest)
    early_estimate: EarlyEstimate = Field(default_factory=EarlyEstimate)
    serving: Optional[ServingRequest] = None
    compare_priced_gpus: bool = Field(
        False, description="also search every other catalogue GPU priced for the basis and say why each lost")
    fidelity: Fidelity = Field("measured", description="measured = step-time and tensor memory models; "
                                                       "book = the book's memory model and MFU-given time")
    book: Optional[BookFidelity] = Field(None, description="the book's choices (fidelity: book only)")
    constraints: Constraints = Field(default_factory=Constraints)
    _source_file: Optional[str] = PrivateAttr(default=None)
    _source_lines: dict = PrivateAttr(default_factory=dict)
    _book_mfu: dict = PrivateAttr(default_factory=dict)  # (GPU id, inputs) -> MFU (fidelity book; workbook.planner.fidelity)

    @model_validator(mode="after")
    def _job(self) -> "PlanRequest":
        if (self.tokens is None) != (self.target_days is None):
            raise ValueError("give both 'tokens' and 'target_days' for a training plan, or neither")
        if self.tokens is None and self.serving is None:
            raise ValueError("a request needs a training job (tokens, target_days) or a serving load")
        if len(set(self.candidate_gpus)) != len(self.candidate_gpus):
            raise ValueError("candidate_gpus lists a GPU twice")
        return self

    @field_validator("book")
    @classmethod
    def _book_needs_book_fidelity(cls, v, info):
        if v is not None and info.data.get("fidelity", "measured") != "book":
            raise ValueError("the 'book' section applies only with fidelity: book")
        return v

    @property
    def book_choices(self) -> BookFidelity:
        """The ``book`` section (its defaults when the request gives none)."""
        return self.book or BookFidelity()

    @property
    def wants_training(self) -> bool:
        return self.tokens is not None


def load_request(path: str | Path, catalog=None) -> PlanRequest:
    """One request file -> PlanRequest; GPU and model ids checked against the catalogue when given."""
    path = Path(path)
    data, lines = load_mapping(path, "a request file", "title:, request_id:, ...")
    try:
        req = PlanRequest.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc, data, file=str(path), lines=lines) from None
    req._source_file = str(path)
    req._source_lines = lines
    if catalog is not None:
        check_ids(req, catalog)
    return req


def _first_error(exc: ValidationError, data: dict, *, file: str, lines: dict) -> InputError:
    """The request's first error; one in a ``model:`` mapping is re-read against its own form so the
    message gives that form's allowed range."""
    loc = exc.errors(include_url=False)[0]["loc"]
    spec = data.get("model")
    if loc and loc[0] == "model" and isinstance(spec, dict):
        cls = ModelInline if _model_kind(spec) == "(inline)" else ModelByCount
        try:
            cls.model_validate(spec)
        except ValidationError as sub:
            return to_input_error(sub, file=file, lines=lines, model=cls, prefix=("model",))
    return to_input_error(exc, file=file, lines=lines, model=PlanRequest)


def check_ids(req: PlanRequest, catalog) -> None:
    """GPU ids, the model id and an inline architecture against the catalogue (InputError with the line)."""
    from workbook.catalog.yamlio import line_of

    lines, file = req._source_lines, req._source_file
    for i, gid in enumerate(req.candidate_gpus):
        where = dict(file=file, line=line_of(lines, ("candidate_gpus", i)), field=f"candidate_gpus[{i}]")
        try:
            gpu = catalog.gpu(gid)
        except InputError as err:
            raise InputError(err.message, expected=err.expected, **where) from None
        if req.gpu_hour_usd is None and gpu.price_usd_per_gpu_hour(req.price_basis) is None:
            raise InputError(f"GPU {gid!r} has no {req.price_basis} price in the catalogue; give gpu_hour_usd "
                             "or another price_basis", **where)
        if gid not in catalog.efficiency:
            raise InputError(f"GPU {gid!r} has no efficiency record (catalog/efficiency.yaml), which the "
                             "step-time model needs", **where)
    if req.serving is not None and req.serving.engine is not None:
        try:
            catalog.engines.profile(req.serving.engine)
        except InputError as err:
            raise InputError(err.message, file=file, line=line_of(lines, ("serving", "engine")), field="serving.engine",
                             expected=err.expected) from None
    if isinstance(req.model, str):
        try:
            catalog.model(req.model)
        except InputError as err:
            raise InputError(err.message, file=file, line=line_of(lines, ("model",)), field="model",
                             expected=err.expected) from None
    elif isinstance(req.model, ModelInline):
        from workbook.planner.candidates import inline_model_of

        inline_model_of(req)
