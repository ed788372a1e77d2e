"""Training layouts a request allows (spec 17.5.8, 17.9.4 step 6), each convertible to a Scenario.

A :class:`Shape` is everything but the data-parallel degree: TP (divides the heads, inside a node,
at most 8), CP (divides the sequence), PP (divides the layers: the hard check
``check_pp_divides_layers`` refuses an uneven split, so ``last_stage_layers`` is never needed), EP
(MoE only: divides the routed experts; inside a node, TP·EP <= GPUs per node, unless the request
allows cross-node EP), micro-batch, recompute mode, ZeRO stage and precision. :func:`dp_options`
then lists the DP degrees that make whole nodes up to ``max_gpus``, let EP live inside DP·CP, and
reach the global batch with GA = ceil(B / (DP·B_micro)) >= PP micro-batches (1F1B fills the pipeline)
within the request's overshoot tolerance. Rules that remove a layout are counted in
:class:`Rules` with an example, so the report can say why a degree never appears.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Iterator

from workbook.errors import InputError
from workbook.planner.request import ModelByCount, ModelInline, PlanRequest
from workbook.reference.layout import TP_MAX

#: CP degrees tried when the request gives none: each CP rank keeps at least this many tokens
CP_MIN_TOKENS = 2048
CP_DEFAULT = (1, 2, 4, 8)


@dataclass(frozen=True, order=True)
class Shape:
    """A layout without its data-parallel degree."""

    tp: int
    cp: int
    pp: int
    ep: int
    micro_batch: int
    recompute: str
    zero_stage: int
    precision: str


@dataclass(frozen=True, order=True)
class Layout:
    """A full training layout: N = TP·CP·PP·DP GPUs, GA micro-batches per step."""

    shape: Shape
    dp: int
    grad_accum: int

    @property
    def num_gpus(self) -> int:
        s = self.shape
        return s.tp * s.cp * s.pp * self.dp

    def label(self) -> str:
        s = self.shape
        ep = f" EP{s.ep}" if s.ep > 1 else ""
        cp = f" CP{s.cp}" if s.cp > 1 else ""
        return (f"TP{s.tp}{cp} PP{s.pp} DP{self.dp}{ep}, mb {s.micro_batch} x GA {self.grad_accum}, "
                f"{s.recompute} recompute, ZeRO-{s.zero_stage}, {s.precision}")


@dataclass
class Rules:
    """Layouts removed by a layout rule: rule -> (count, an example)."""

    removed: dict[str, list] = field(default_factory=dict)

    def drop(self, rule: str, example: str, n: int = 1) -> None:
        entry = self.removed.setdefault(rule, [0, example])
        entry[0] += n

    def drop_lazy(self, rule: str, n: int, fmt: str, *args: Any) -> None:
        """``drop`` with the example ``fmt.format(*args)`` written only if it is the rule's first."""
        entry = self.removed.get(rule)
        if entry is None:
            self.removed[rule] = [n, fmt.format(*args)]
        else:
            entry[0] += n


def inline_model_of(req: PlanRequest):
    """The request's inline architecture as a catalogue Model (errors name model.arch fields)."""
    from workbook.scenario.resolve import inline_model

    assert isinstance(req.model, ModelInline)
    lines = {("model_arch",) + k[2:]: v for k, v in (req._source_lines or {}).items() if k[:2] == ("model", "arch")}
    probe = type("_Probe", (), {})()
    probe.model_arch, probe.name = req.model.arch, req.request_id
    probe._source_file, probe._source_lines = req._source_file, lines
    try:
        return inline_model(probe)
    except InputError as err:
        raise InputError(err.message, file=req._source_file, line=err.line,
                         field=(err.field or "model_arch").replace("model_arch", "model.arch", 1),
                         expected=err.expected) from None


def model_of(req: PlanRequest, catalog) -> tuple[Any, dict] | None:
    """(catalogue Model, the Scenario's model fields) or None when the request gives only a count."""
    if isinstance(req.model, ModelByCount):
        return None
    if isinstance(req.model, str):
        return catalog.model(req.model), {"model": req.model}
    return inline_model_of(req), {"model_arch": dict(req.model.arch)}


def _divisors(n: int, limit: int) -> list[int]:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def shapes(req: PlanRequest, model, gpu, rules: Rules) -> Iterator[Shape]:
    """Every Shape the request and the model allow on ``gpu``."""
    c, gpn = req.constraints, int(gpu.gpus_per_node)
    seq = req.training.seq_len
    tps = c.tp or [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= gpn]
    tp_ok = []
    for tp in tps:
        if tp > min(gpn, TP_MAX):
            rules.drop("tp_outside_node", f"TP{tp} > {min(gpn, TP_MAX)} GPUs of an NVLink node")
        elif model.n_heads % tp:
            rules.drop("tp_divides_heads", f"TP{tp} does not divide {model.n_heads} heads")
        else:
            tp_ok.append(tp)
    cps = c.cp or [x for x in CP_DEFAULT if seq // x >= CP_MIN_TOKENS]
    cp_ok = []
    for cp in cps:
        if seq % cp:
            rules.drop("cp_divides_seq", f"CP{cp} does not divide seq_len {seq}")
        else:
            cp_ok.append(cp)
    pps = _divisors(int(model.layers), c.pp_max)
    if model.moe and model.n_routed_experts:
        eps = _divisors(int(model.n_routed_experts), c.ep_max)
    else:
        eps = [1]
    recompute = list(c.recompute)
    if "op_selective" in recompute and (model.moe or model.attention == "mla"):
        # torchtitan's op-level selective AC is modelled for dense GQA/MHA models only (scenario.resolve)
        recompute.remove("op_selective")
        rules.drop("op_selective_dense_only", "recompute op_selective is modelled for dense GQA/MHA models only",
                   n=len(tp_ok) * len(eps) * len(cp_ok) * len(pps) * len(c.precisions) * len(c.micro_batches)
                   * len(c.zero_stages))
    for tp in tp_ok:
        for ep in eps:
            if tp * ep > gpn and not c.allow_cross_node_ep:
                rules.drop("ep_crosses_node", f"TP{tp} x EP{ep} = {tp * ep} GPUs > {gpn} per node",
                           n=len(cp_ok) * len(pps))
                continue
            for cp in cp_ok:
                for pp in pps:
                    for prec in c.precisions:
                        for mb in c.micro_batches:
                            for rc in recompute:
                                for z in c.zero_stages:
                                    yield Shape(tp, cp, pp, ep, mb, rc, z, prec)


class DpOptions(Sequence):
    """A shape's (DP, GA) pairs, DP ascending, held as runs of DP = k·step (k first..last) rather than
    one by one: the search reads only a few of them (``dp(i)``, ``index_at_least`` for its secant)."""

    def __init__(self, step: int, seqs: int, micro_batch: int, runs: list[tuple[int, int]]):
        self.step, self.seqs, self.micro_batch, self.runs = step, seqs, micro_batch, runs
        self._starts = list(itertools.accumulate((hi - lo + 1 for lo, hi in runs), initial=0))

    def __len__(self) -> int:
        return self._starts[-1]

    def dp(self, i: int) -> int:
        if not 0 <= i < self._starts[-1]:
            raise IndexError(i)
        r = 0 if len(self.runs) == 1 else bisect.bisect_right(self._starts, i) - 1
        return (self.runs[r][0] + i - self._starts[r]) * self.step

    def index_at_least(self, value: float) -> int:
        """The index of the smallest DP >= ``value`` (the length when there is none)."""
        for (lo, hi), start in zip(self.runs, self._starts):
            if hi * self.step >= value:
                k = max(lo, math.ceil(value / self.step))
                while k > lo and (k - 1) * self.step >= value:  # exact, whatever the division rounds to
                    k -= 1
                while k * self.step < value:
                    k += 1
                return start + k - lo
        return len(self)

    def __getitem__(self, i: int) -> tuple[int, int]:  # type: ignore[override]
        if i < 0:
            i += len(self)
        dp = self.dp(i)
        return dp, -(-self.seqs // (dp * self.micro_batch))


def dp_runs(shape: Shape, req: PlanRequest, gpu, rules: Rules) -> DpOptions:
    """(DP, GA) pairs for ``shape``, DP ascending (see the module docstring), as :class:`DpOptions`.

    With x = DP·B_micro, GA = ceil(B / x) falls as DP grows, so GA >= PP holds up to a last DP; the
    batch GA·x overshoots B by less than x, so no DP with x <= floor(B (1 + tol)) - B + 1 overshoots,
    and above that GA takes only a few values (about 1/tol), each on a run of DPs whose lower part
    stays within the tolerance. The rules count what they remove as a DP-by-DP walk would."""
    c, t, gpn = req.constraints, req.training, int(gpu.gpus_per_node)
    replica = shape.tp * shape.cp * shape.pp
    mb, pp = shape.micro_batch, shape.pp
    seqs = round(t.global_batch_tokens / t.seq_len)
    # whole nodes: N = replica·DP a multiple of the node; EP inside DP·CP: EP divides DP·CP
    node_step = gpn // math.gcd(replica, gpn) if c.whole_nodes else 1
    step = math.lcm(node_step, shape.ep // math.gcd(shape.ep, shape.cp))
    dp_max = c.max_gpus // replica
    if dp_max * mb > seqs:
        rules.drop_lazy("global_batch_too_small", 1, "DP x mb {} above {} sequences per step", mb, seqs)
        dp_max = seqs // mb
    k_max, u = dp_max // step, step * mb
    # GA >= PP  <=>  (PP - 1)·x < B
    k_last = k_max if pp == 1 else max(0, min(k_max, (seqs - 1) // ((pp - 1) * u)))
    limit = math.floor(seqs * (1 + t.global_batch_tolerance))  # GA·x <= B (1 + tol), GA·x an integer
    k_safe = min(k_last, (limit - seqs + 1) // u)
    runs = [(1, k_safe)] if k_safe >= 1 else []
    k = max(1, k_safe + 1)
    while k <= k_last:
        ga = -(-seqs // (k * u))
        k_end = k_last if ga == 1 else min(k_last, (seqs - 1) // ((ga - 1) * u))
        k_ok = min(k_end, limit // (ga * u))
        if k_ok >= k:
            runs.append((k, k_ok))
        if k_end > max(k_ok, k - 1):
            first = max(k, k_ok + 1)
            rules.drop_lazy("global_batch_overshoot", k_end - first + 1, "GA {} x DP{} x mb {} overshoots {}",
                            ga, first * step, mb, seqs)
        k = k_end + 1
    if k_last < k_max:
        dp = (k_last + 1) * step
        ga = -(-seqs // (dp * mb))
        rules.drop_lazy("ga_below_pp", 1, "GA {} < PP{} at DP{} (the 1F1B pipeline does not fill)", ga, pp, dp)
    return DpOptions(step, seqs, mb, runs)


def dp_options(shape: Shape, req: PlanRequest, gpu, rules: Rules) -> list[tuple[int, int]]:
    """(DP, GA) pairs for ``shape``, DP ascending, one by one (:func:`dp_runs` listed)."""
    return list(dp_runs(shape, req, gpu, rules))


def to_scenario(layout: Layout, req: PlanRequest, gpu_id: str, model_fields: dict, name: str,
                ckpt_interval_steps: int | None = None):
    """The layout as a validated :class:`workbook.scenario.model.Scenario` (step time and tensor memory,
    or the book's models under ``fidelity: book``: :mod:`workbook.planner.fidelity`)."""
    from workbook.planner.fidelity import storage_overrides, training_overrides
    from workbook.scenario.model import Scenario

    return Scenario.model_validate({
        "name": name,
        "description": f"{req.title} ({req.request_id}): {layout.label()}",
        **model_fields,
        "gpu": gpu_id,
        "purpose": "training",
        "training": {**training_fields(layout, req), **training_overrides(req, gpu_id)},
        "storage": {"ckpt_interval_steps": ckpt_interval_steps, **storage_overrides(req)},
        "cost": {"price_basis": req.price_basis, "gpu_hour_usd": req.gpu_hour_usd, "budget_usd": req.budget_usd},
    })


def training_fields(layout: Layout, req: PlanRequest) -> dict:
    """The Scenario ``training`` section of a layout."""
    s, t = layout.shape, req.training
    return {
        "tokens": req.tokens, "seq_len": t.seq_len, "micro_batch": s.micro_batch, "grad_accum": layout.grad_accum,
        "precision": s.precision, "optimizer": t.optimizer, "zero_stage": s.zero_stage, "recompute": s.recompute,
        "num_gpus": layout.num_gpus, "tp": s.tp, "pp": s.pp, "ep": s.ep, "cp": s.cp,
        "memory_model": "tensors", "time_model": "step", "target_days": req.target_days,
        "overhead_factor": t.overhead_factor, "spare_fraction": t.spare_fraction,
    }
