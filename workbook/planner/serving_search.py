"""The serving search of the planner: GPU type, TP/EP and replicas for a serving load within its
TTFT and TPOT targets (docs/planner.md "The serving search").

Per candidate GPU and layout (TP 1, 2, 4, 8 dividing the heads inside a node; EP dividing the
routed experts inside a node for a MoE model; the request's engine profile, else the catalogue
default) one serving group is sized with the functions the workbook's calculation layer calls:
``calc.serving_memory.capacity`` (engine_memory.kv_capacity) for weights and KV, then
``reference.serving_load.max_load`` for the largest arrival rate one group carries within both
targets, with the same keywords as ``calc.serving_load`` (the batch cap from the KV pool). The load
needs ``replicas = ceil(load / per-group rate)`` groups (a ``concurrency`` load: the requests in the
system at that rate, Little's law, over the group's batch), GPUs = replicas x TP x EP; the cost per
month is GPU-hours x the price basis, and per 1M output tokens the same over the tokens served.
Plans rank by cost per month, then $/1M, then fewer GPUs. A layout that fails records the check,
its value, the limit and the relative excess. With ``constraints.allow_cross_node_ep`` a group may
also span whole nodes (TP x EP a multiple of the GPUs per node, EP up to ``ep_max``), as DeepSeek's
EP32 prefill and EP144 decode instances do.

``serving.disaggregation`` (off, the default; auto; only) adds or keeps only the disaggregated
candidates of ``serving_disagg_search`` (separate prefill and decode pools,
``reference.serving_disagg.size_pools``); both kinds rank together on the same keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from workbook.calc.base import Context
from workbook.planner.request import PlanRequest
from workbook.planner.search import Rejection
from workbook.reference import engine_memory as em
from workbook.reference import infer_cost as ic
from workbook.reference import serving_load as sl
from workbook.reference.tco import MONTHS_PER_YEAR
from workbook.units import HOURS_PER_YEAR, MS_PER_S

TP_CHOICES = (1, 2, 4, 8)
HOURS_PER_MONTH = HOURS_PER_YEAR / MONTHS_PER_YEAR
#: a load within this relative distance of k groups' capacity takes k groups (binary noise)
RATE_EPS = 1e-9
#: bisection steps of the per-group rate that holds a given concurrency
CONCURRENCY_STEPS = 60


@dataclass(frozen=True)
class ServingLayout:
    """A co-located serving group (``prefill_ep`` None) or a disaggregated deployment: decode
    instances of TP x EP and prefill instances of TP x ``prefill_ep``."""

    gpu: str
    tp: int
    ep: int
    engine: str
    prefill_ep: int | None = None

    @property
    def disaggregated(self) -> bool:
        return self.prefill_ep is not None

    @property
    def kind(self) -> str:
        return "disaggregated" if self.disaggregated else "co-located"

    def label(self) -> str:
        def group(ep: int) -> str:
            return f"TP{self.tp}" + (f" EP{ep}" if ep > 1 else "")

        if self.disaggregated:
            return f"{self.gpu} prefill {group(self.prefill_ep)} + decode {group(self.ep)} ({self.engine})"
        return f"{self.gpu} {group(self.ep)} ({self.engine})"


@dataclass
class ServingRejection(Rejection):
    """A layout that cannot carry the load: the check, its value and the limit it missed."""

    stage: str = "serving"
    detail: str = ""
    ttft_ms: float | None = None  # at the smallest load (target checks only)
    tpot_ms: float | None = None


@dataclass
class ServingPlan:
    """A layout that carries the load, with the figures of its scenario column."""

    layout: ServingLayout
    replicas: int
    num_gpus: int
    load_rps: float  # total arrival rate (a concurrency load: the rate that holds it)
    group_rate_rps: float
    max_group_rate_rps: float
    group_batch: float
    max_group_batch: float
    ttft_ms: float
    tpot_ms: float
    tokens_per_s: float  # output tokens/s of all groups
    gpu_hour_usd: float
    usd_per_month: float
    usd_per_1M_tokens: float
    weights_per_gpu_GiB: float
    kv_tokens_per_gpu: float
    kv_requests: float
    pools: dict[str, float] | None = None  # disaggregated: serving_disagg.size_pools of the deployment
    static_wall_s: float | None = None  # a static batch: wall time of one group's batch (prefill, then decode)

    @property
    def kind(self) -> str:
        return self.layout.kind

    def key(self) -> tuple:
        return (self.usd_per_month, self.usd_per_1M_tokens, self.num_gpus, self.layout.disaggregated, self.layout.tp,
                self.layout.ep, self.layout.prefill_ep or 0, self.layout.gpu)


@dataclass
class ServingResult:
    plans: list[ServingPlan] = field(default_factory=list)  # ranked
    rejections: list[ServingRejection] = field(default_factory=list)
    layouts: int = 0  # co-located layouts evaluated
    disaggregated: int = 0  # disaggregated (decode layout, prefill EP) candidates evaluated
    removed: dict[str, list] = field(default_factory=dict)  # layout rule -> [count, example]

    def best_per_gpu(self) -> dict[str, ServingPlan]:
        out: dict[str, ServingPlan] = {}
        for p in self.plans:
            out.setdefault(p.layout.gpu, p)
        return out

    def best_of_kind(self, kind: str) -> ServingPlan | None:
        """The best plan of one kind (co-located or disaggregated), None when none carries the load."""
        return next((p for p in self.plans if p.kind == kind), None)


def engine_id(req: PlanRequest) -> str:
    """The request's engine profile, else the catalogue default (scenario ``inference.engine``)."""
    from workbook.scenario.model import DEFAULT_ENGINE

    return req.serving.engine or DEFAULT_ENGINE


def ep_choices(req: PlanRequest, model, gpu) -> list[int]:
    """EP degrees dividing the routed experts (1 for a dense model): up to a node, or up to ``ep_max``
    with ``allow_cross_node_ep``."""
    if not (model.moe and model.n_routed_experts):
        return [1]
    c = req.constraints
    top = min(c.ep_max, int(model.n_routed_experts)) if c.allow_cross_node_ep else int(gpu.gpus_per_node)
    return [e for e in range(1, top + 1) if int(model.n_routed_experts) % e == 0]


def group_rule(req: PlanRequest, gpu, tp: int, ep: int) -> tuple[str, str] | None:
    """The layout rule a TP x EP group breaks (rule, example), None when it may be laid out: inside a
    node, or with ``allow_cross_node_ep`` over whole nodes within ``max_gpus``."""
    gpn, n = int(gpu.gpus_per_node), tp * ep
    if n <= gpn:
        return None
    if not req.constraints.allow_cross_node_ep:
        return "tp_ep_outside_node", f"TP{tp} x EP{ep} > {gpn} GPUs of a node"
    if n % gpn:
        return "tp_ep_whole_nodes", f"TP{tp} x EP{ep} = {n} GPUs is not whole nodes of {gpn}"
    if n > req.constraints.max_gpus:
        return "tp_ep_over_max_gpus", f"TP{tp} x EP{ep} = {n} GPUs > max_gpus {req.constraints.max_gpus}"
    return None


def layouts(req: PlanRequest, model, gpu, removed: dict[str, list] | None = None) -> list[ServingLayout]:
    """TP 1, 2, 4, 8 inside a node dividing the heads; EP (MoE) dividing the experts, TP x EP in a
    node (or whole nodes, ``allow_cross_node_ep``)."""
    removed = {} if removed is None else removed
    gpn, eng = int(gpu.gpus_per_node), engine_id(req)

    def drop(rule: str, example: str) -> None:
        removed.setdefault(rule, [0, example])[0] += 1

    out = []
    eps = ep_choices(req, model, gpu)
    for tp in TP_CHOICES:
        if tp > gpn:
            drop("tp_outside_node", f"TP{tp} > {gpn} GPUs of a node")
            continue
        if model.n_heads % tp:
            drop("tp_divides_heads", f"TP{tp} does not divide {model.n_heads} heads")
            continue
        for ep in eps:
            broken = group_rule(req, gpu, tp, ep)
            if broken:
                drop(*broken)
                continue
            out.append(ServingLayout(gpu.id, tp, ep, eng))
    return out


def scenario(req: PlanRequest, lay: ServingLayout, model_fields: dict, *, replicas: int = 1,
             arrival_rate_rps: float | None = None, name: str | None = None):
    """The layout as a serving Scenario (engine model); ``arrival_rate_rps`` is the total over all
    replicas (the Inference sheet divides it by the replicas)."""
    from workbook.scenario.model import Scenario

    sv = req.serving
    ep = f"-ep{lay.ep}" if lay.ep > 1 else ""
    if lay.disaggregated:
        default = f"serve-{lay.gpu}-disagg-pf-tp{lay.tp}-ep{lay.prefill_ep}-dec-tp{lay.tp}{ep}"
        what = f"serving {lay.label()}, prefill and decode pools sized for the load"
    else:
        default = f"serve-{lay.gpu}-tp{lay.tp}{ep}-x{replicas}"
        what = f"serving {lay.label()} x {replicas} replicas"
    inference = {"serving_model": "engine", "engine": lay.engine, "tp": lay.tp, "ep": lay.ep,
                 "replicas": replicas, "arrival_rate_rps": arrival_rate_rps,
                 "prompt_tokens": sv.prompt_tokens, "output_tokens": sv.output_tokens,
                 "ttft_target_ms": sv.ttft_ms, "tpot_target_ms": sv.tpot_ms}
    if sv.weight_precision is not None:
        inference["weight_precision"] = sv.weight_precision
    if sv.concurrency is not None:  # the closed-loop rows (Inference sheet) show the clients beside the rate
        inference["concurrency"] = sv.concurrency
    if sv.static_batch is not None:  # each group runs its share of the batch together (the static load model)
        inference.update(load="static", batch=static_share(sv.static_batch, replicas), arrival_rate_rps=None)
    if lay.disaggregated:
        inference.update(disaggregated="on", prefill_ep=lay.prefill_ep)
    return Scenario.model_validate({
        "name": name or default, "description": f"{req.title} ({req.request_id}): {what}",
        **model_fields, "gpu": lay.gpu, "purpose": "serving",
        "inference": inference,
        "cost": {"price_basis": req.price_basis, "gpu_hour_usd": req.gpu_hour_usd},
    })


def static_share(batch: int, replicas: int) -> int:
    """Requests of a static batch each of ``replicas`` groups runs: ceil(batch / replicas)."""
    return max(1, math.ceil(batch / replicas))


def context(sc, catalog) -> Context:
    """The calculation context of a scenario (for the calc layer's serving helpers)."""
    from workbook.scenario.resolve import resolve

    s, gpu, model = resolve(sc, catalog)
    return Context(s=s, gpu=gpu, model=model, defaults=catalog.defaults.as_dict(), eff=catalog.efficiency_of(gpu.id),
                   engines=catalog.engines)


class Group:
    """One serving group of a layout, sized as calc.serving_memory / calc.serving_load size it."""

    def __init__(self, req: PlanRequest, lay: ServingLayout, catalog, model_fields: dict):
        from workbook.calc.serving_memory import capacity, engine_of, ep_overlap_frac
        from workbook.calc.serving_step import decode_kwargs
        from workbook.reference.serving_shape import model_shape

        self.ctx = context(scenario(req, lay, model_fields), catalog)
        self.cap = capacity(self.ctx)
        self.engine = engine_of(self.ctx)
        self.shape = model_shape(self.ctx.model)
        sv = req.serving
        self.prompt, self.output = float(sv.prompt_tokens), float(sv.output_tokens)
        inf, kw = self.ctx.s.inference, decode_kwargs(self.ctx)
        self.batch_cap = sl.batch_capacity(engine=self.engine, kv_tokens=self.cap["kv_tokens"],
                                           prompt_tokens=self.prompt, output_tokens=self.output,
                                           output_lengths=inf.output_lengths)
        self.kw = dict(hw=kw["hw"], engine=self.engine, prompt_tokens=self.prompt, output_tokens=self.output,
                       tp=lay.tp, ep=lay.ep, kv_tokens=None, max_num_seqs=max(self.batch_cap, 1.0),
                       weight_precision=inf.weight_precision, kv_precision=inf.kv_precision,
                       ep_nodes=kw["ep_nodes"], redundant_experts=inf.redundant_experts,
                       ep_overlap_frac=ep_overlap_frac(self.ctx), output_lengths=inf.output_lengths)

    def steady(self, rate_rps: float) -> dict[str, float]:
        return sl.steady_state(self.shape, arrival_rate_per_s=rate_rps, **self.kw)

    def max_load(self, ttft_s: float, tpot_s: float) -> dict[str, float]:
        return sl.max_load(self.shape, ttft_target_s=ttft_s, tpot_target_s=tpot_s, **self.kw)

    def trickle(self) -> dict[str, float]:
        """The steady state at the smallest load max_load tries (offline rate x 1e-6)."""
        off = sl.offline_throughput(self.shape, **self.kw)
        return self.steady(off["request_rate_per_s"] * 1e-6)

    def rate_for_batch(self, batch: float, hi: float) -> float:
        """The arrival rate at which the group holds ``batch`` requests (Little's law; the batch rises
        with the rate), found by bisection below ``hi``."""
        lo = 0.0
        for _ in range(CONCURRENCY_STEPS):
            mid = 0.5 * (lo + hi)
            st = self.steady(mid)
            if st["saturated"] or st["batch"] > batch:
                hi = mid
            else:
                lo = mid
        return lo


def weights_room_GiB(g: Group) -> float:
    """Weights per GPU at which the engine's KV budget reaches 0 (the ledger of kv_capacity)."""
    c, eng = g.cap, g.engine
    budget0 = em.kv_budget_bytes(rule=eng.memory_rule, memory_fraction=c["memory_fraction"],
                                 device_total_bytes=c["device_total_GiB"], weights_bytes=0.0,
                                 activation_bytes=c["activation_GiB"], non_torch_bytes=c["non_torch_GiB"],
                                 context_bytes=c["context_GiB"], graph_bytes=c["graph_GiB"],
                                 graph_in_budget=eng.cuda_graph_in_budget)
    return budget0 / c["memory_fraction"] if eng.memory_rule == "free_fraction" else budget0


def target_miss(reject, sv, ttft_ms: float, tpot_ms: float, where: str) -> ServingRejection:
    """The target the smallest load misses by more (relative), with both figures ``where`` they were taken."""
    if ttft_ms / sv.ttft_ms >= tpot_ms / sv.tpot_ms:
        r = reject("serving_ttft_target", ttft_ms, sv.ttft_ms, "ms", f"TTFT {where} (TPOT {tpot_ms:.4g} ms)")
    else:
        r = reject("serving_tpot_target", tpot_ms, sv.tpot_ms, "ms", f"TPOT {where} (TTFT {ttft_ms:.4g} ms)")
    r.ttft_ms, r.tpot_ms = ttft_ms, tpot_ms
    return r


def evaluate(req: PlanRequest, lay: ServingLayout, catalog, model_fields: dict) -> ServingPlan | ServingRejection:
    """One layout: a plan for the whole load, or the first check it fails."""
    sv = req.serving
    g = Group(req, lay, catalog, model_fields)
    label = lay.label()

    def reject(check: str, value: float, limit: float, unit: str, detail: str = "") -> ServingRejection:
        return ServingRejection(lay.gpu, label, check, value, limit, unit, detail=detail)

    if g.cap["kv_budget_GiB"] <= 0:
        return reject("serving_weights_fit", g.cap["weights_GiB"], weights_room_GiB(g), "GiB",
                      "weights per GPU against the room the engine's memory rule leaves them")
    if g.cap["concurrent_requests"] < 1:
        return reject("serving_kv_holds_request", sv.prompt_tokens + sv.output_tokens, g.cap["kv_tokens"], "tokens",
                      "one full-context request against the KV pool per GPU")
    if sv.static_batch is not None:
        return evaluate_static(req, lay, catalog, model_fields, g, reject)
    best = g.max_load(sv.ttft_ms / MS_PER_S, sv.tpot_ms / MS_PER_S)
    if best["request_rate_per_s"] <= 0:
        st = g.trickle()
        if st["saturated"]:
            return reject("serving_load_stable", 1.0, 0.0, "0/1", "even a trickle saturates the group")
        return target_miss(reject, sv, st["ttft_s"] * MS_PER_S, st["tpot_s"] * MS_PER_S, "at the smallest load")
    rmax, bmax = best["request_rate_per_s"], best["batch"]
    if sv.requests_per_s is not None:
        replicas = max(1, math.ceil(sv.requests_per_s / rmax - RATE_EPS))
        rate = sv.requests_per_s / replicas
    else:
        replicas = max(1, math.ceil(sv.concurrency / bmax - RATE_EPS))
        rate = g.rate_for_batch(sv.concurrency / replicas, rmax) if replicas * bmax > sv.concurrency else rmax
    n = replicas * lay.tp * lay.ep
    if n > req.constraints.max_gpus:
        return reject("serving_max_gpus", n, req.constraints.max_gpus, "GPUs",
                      f"{replicas} replicas of {lay.tp * lay.ep} GPUs")
    st = g.steady(rate)
    price = float(g.ctx.s.cost.gpu_hour_usd)
    tok = st["throughput_tok_per_s"] * replicas
    return ServingPlan(
        layout=lay, replicas=replicas, num_gpus=n, load_rps=rate * replicas, group_rate_rps=rate,
        max_group_rate_rps=rmax, group_batch=st["batch"], max_group_batch=bmax, ttft_ms=st["ttft_s"] * MS_PER_S,
        tpot_ms=st["tpot_s"] * MS_PER_S, tokens_per_s=tok, gpu_hour_usd=price,
        usd_per_month=ic.hourly_cost_usd(num_gpus=n, gpu_hour_usd=price) * HOURS_PER_MONTH,
        usd_per_1M_tokens=ic.cost_per_1M_tokens_usd(num_gpus=n, gpu_hour_usd=price, throughput_tok_per_s=tok),
        weights_per_gpu_GiB=g.cap["weights_GiB"], kv_tokens_per_gpu=g.cap["kv_tokens"],
        kv_requests=g.cap["concurrent_requests"])


def evaluate_static(req: PlanRequest, lay: ServingLayout, catalog, model_fields: dict, g: Group,
                    reject) -> ServingPlan | ServingRejection:
    """A static batch: the groups whose largest static batch within both targets (the Inference sheet's
    srv_static_max_batch) runs it, ``replicas = ceil(B / that batch)``, each running ceil(B / replicas) requests
    together; the figures are the full calculation of the plan's column (its static load rows)."""
    from workbook.calc import compute

    sv = req.serving

    def column(replicas: int, batch: int | None = None) -> dict[str, float]:
        sc = scenario(req, lay, model_fields, replicas=replicas)
        if batch is not None:
            sc = sc.model_copy(update={"inference": sc.inference.model_copy(update={"batch": batch})})
        return compute(sc, catalog)

    one = column(1, 1)
    bmax = one["srv_static_max_batch"]
    if bmax < 1:  # a static batch of 1 is an idle request: the targets it misses
        return target_miss(reject, sv, one["srv_static_ttft_ms"], one["srv_static_tpot_ms"], "of a static batch of 1")
    replicas = max(1, math.ceil(sv.static_batch / bmax - RATE_EPS))
    n = replicas * lay.tp * lay.ep
    if n > req.constraints.max_gpus:
        return reject("serving_max_gpus", n, req.constraints.max_gpus, "GPUs",
                      f"{replicas} replicas of {lay.tp * lay.ep} GPUs")
    q = column(replicas)
    at_max = column(1, int(bmax))
    share = static_share(sv.static_batch, replicas)
    price = float(g.ctx.s.cost.gpu_hour_usd)
    tok = q["srv_tokens_per_s_total_in_use"]
    wall = q["srv_static_wall_s"]
    return ServingPlan(
        layout=lay, replicas=replicas, num_gpus=n, load_rps=share * replicas / wall, group_rate_rps=share / wall,
        max_group_rate_rps=bmax / at_max["srv_static_wall_s"], group_batch=float(share), max_group_batch=bmax,
        ttft_ms=q["srv_ttft_ms_in_use"], tpot_ms=q["srv_tpot_ms_in_use"], tokens_per_s=tok, gpu_hour_usd=price,
        usd_per_month=ic.hourly_cost_usd(num_gpus=n, gpu_hour_usd=price) * HOURS_PER_MONTH,
        usd_per_1M_tokens=ic.cost_per_1M_tokens_usd(num_gpus=n, gpu_hour_usd=price, throughput_tok_per_s=tok),
        weights_per_gpu_GiB=g.cap["weights_GiB"], kv_tokens_per_gpu=g.cap["kv_tokens"],
        kv_requests=g.cap["concurrent_requests"], static_wall_s=wall)


def search_serving(req: PlanRequest, catalog, gpus: list[str] | None = None) -> ServingResult:
    """Every layout of every candidate GPU (or ``gpus``), co-located and (``serving.disaggregation``)
    disaggregated; plans of both kinds ranked by $/month, then $/1M."""
    from workbook.planner.candidates import model_of
    from workbook.planner.serving_disagg_search import search_disaggregated

    model, fields = model_of(req, catalog)
    res = ServingResult()
    mode = req.serving.disaggregation
    for gid in gpus or req.candidate_gpus:
        lays = layouts(req, model, catalog.gpu(gid), res.removed)
        if mode != "only":
            for lay in lays:
                res.layouts += 1
                got = evaluate(req, lay, catalog, fields)
                (res.plans if isinstance(got, ServingPlan) else res.rejections).append(got)
        if mode != "off":
            search_disaggregated(req, model, lays, catalog, fields, res)
    res.plans.sort(key=ServingPlan.key)
    return res


def plan_scenario(req: PlanRequest, plan: ServingPlan, model_fields: dict):
    """The plan as a workbook column: its replicas (disaggregated: 1, the pools are sized from the
    load) and the total arrival rate they share."""
    return scenario(req, plan.layout, model_fields, replicas=1 if plan.layout.disaggregated else plan.replicas,
                    arrival_rate_rps=plan.load_rps)  # a static batch's column drops it (scenario)


__all__ = ["ServingLayout", "ServingPlan", "ServingRejection", "ServingResult", "search_serving", "plan_scenario",
           "layouts", "ep_choices", "group_rule", "evaluate", "evaluate_static", "static_share", "target_miss",
           "engine_id", "context", "Group", "weights_room_GiB",
           "HOURS_PER_MONTH"]
