"""The cheap screen: memory per GPU, training days and cost of a layout from the reference functions
the calculation layer calls (no second copy of the physics).

Memory is ``workbook.reference.sharded_state.model_state_per_gpu``'s rows (``stage_holdings`` once
per TP, PP and EP, ``holding_states`` per ZeRO stage and DP·CP) plus
``workbook.reference.activations.activations_per_gpu`` (through ``workbook.calc.act_stages``) on the
most loaded rank plus the runtime overhead, as ``workbook.calc.sharded_state`` adds them; time is
``workbook.reference.step_time.step_time`` on ``workbook.calc.step_inputs.step_kwargs``; cost is
``workbook.reference.train_cost`` on the GPUs billed (whole nodes, spares included) as the Cost sheet
bills them. The bytes per parameter, the activation element size and the price come from one
``workbook.calc.compute`` of a base scenario per GPU and precision. What does not depend on DP is
kept per shape (the step keywords and ``step_time.stage_terms``) or per what it depends on (state,
activations); ``tests/planner/test_screen.py`` checks warm caches against the reference from
scratch. :func:`workbook.planner.search` later runs the full calculation on the best layouts and
keeps only those that pass its checks.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from types import SimpleNamespace

from workbook.calc import compute
from workbook.calc.act_stages import stage_activations
from workbook.calc.base import Context
from workbook.calc.plan import ceil_count_xl
from workbook.calc.sharded_state import recipe
from workbook.calc.step_inputs import step_kwargs
from workbook.planner.candidates import Layout, Shape, to_scenario
from workbook.planner.request import PlanRequest
from workbook.reference import sharded_state as ss
from workbook.reference import step_time as stm
from workbook.reference import train_cost as tc
from workbook.scenario.model import TrainingInputs
from workbook.units import GB, SECONDS_PER_DAY


@dataclass
class Screened:
    """One layout through the screen (``memory_GB`` None: not needed, not computed)."""

    gpu: str
    layout: Layout
    memory_GB: float | None
    hbm_GB: float
    days: float = float("nan")
    cost_usd: float = float("nan")
    cost_target_usd: float = float("nan")
    mfu: float = float("nan")

    @property
    def fits(self) -> bool:
        return self.memory_GB is not None and self.memory_GB <= self.hbm_GB

    @property
    def billed_cost_usd(self) -> float:
        """What the budget check compares: the larger of the actual and the target-days cost."""
        return max(self.cost_usd, self.cost_target_usd)


class Screen:
    """Screens layouts of one request on one GPU (caches the pieces that do not depend on DP)."""

    def __init__(self, req: PlanRequest, catalog, gpu, model, model_fields: dict, precision: str):
        self.req, self.gpu, self.model = req, gpu, model
        gpn = int(gpu.gpus_per_node)
        base = Layout(Shape(1, 1, 1, 1, 1, "full", 1, precision), dp=gpn, grad_accum=1)
        q = compute(to_scenario(base, req, gpu.id, model_fields, "screen-base"), catalog)
        self.recipe = recipe(q)
        self.act_bytes = q["train_act_bytes_per_elem"]
        self.overhead_GB = q["train_overhead_GB"]
        self.price = q["gpu_hour_usd"]
        #: what the calculation's memory fit compares with (tensor model: device bytes x allocatable share)
        self.capacity_GB = q["zero_hbm_capacity_GB"]
        self.eff = catalog.efficiency_of(gpu.id)
        self.defaults = catalog.defaults.as_dict()
        self._training = TrainingInputs().model_dump()
        self._state: dict = {}
        self._acts: dict = {}
        self._holdings: dict = {}
        self._step_kw: dict = {}
        self._billed: dict = {}
        self.calls = {"state": 0, "activations": 0, "step": 0}

    def _ctx(self, layout: Layout) -> Context:
        t = self.req.training
        s = layout.shape
        # the scenario's training inputs as attributes (defaults for what the layout does not set)
        training = SimpleNamespace(**self._training)
        training.__dict__.update(
            tokens=self.req.tokens, seq_len=t.seq_len, micro_batch=s.micro_batch, grad_accum=layout.grad_accum,
            precision=s.precision, zero_stage=s.zero_stage, recompute=s.recompute, num_gpus=layout.num_gpus,
            tp=s.tp, pp=s.pp, cp=s.cp, ep=s.ep, optimizer=t.optimizer)
        ctx = Context(s=SimpleNamespace(training=training), gpu=self.gpu, model=self.model, defaults=self.defaults,
                      eff=self.eff)
        ctx.q = {"plan_etp": float(s.tp), "train_act_bytes_per_elem": self.act_bytes}
        return ctx

    def memory_GB(self, layout: Layout) -> float:
        """Training memory per GPU on the most loaded rank (tensor model), overhead included."""
        s = layout.shape
        # the state depends on N only through DP·CP = N / (TP·PP) (the dense shard degree; EDP = DP·CP / EP);
        # ZeRO-0 shards nothing over it
        skey = (s.tp, s.pp, s.ep, s.zero_stage, s.precision, layout.dp * s.cp if s.zero_stage else 0)
        state = self._state.get(skey)
        if state is None:
            self.calls["state"] += 1
            hkey = (s.tp, s.pp, s.ep)
            if hkey not in self._holdings:
                self._holdings[hkey] = ss.stage_holdings(self.model, tp=s.tp, pp=s.pp, ep=s.ep, etp=s.tp)
            # model_state_per_gpu's rows, rank by rank, without copying a row per rank
            deg = ss.shard_degrees(num_gpus=layout.num_gpus, tp=s.tp, pp=s.pp, cp=s.cp, ep=s.ep, etp=s.tp)
            rows, index = ss.holding_states(self._holdings[hkey], dense_shard_degree=deg["dense"],
                                            expert_shard_degree=deg["expert"], zero_stage=s.zero_stage,
                                            recipe=self.recipe)
            totals = [r["total_bytes"] / GB for r in rows]
            state = self._state[skey] = [totals[j] for j in index]
        # 1F1B keeps min(PP - i, GA) micro-batches in flight on rank i: GA matters only up to PP
        akey = (s.tp, s.cp, s.pp, s.micro_batch, s.recompute, s.precision, min(layout.grad_accum, s.pp))
        acts = self._acts.get(akey)
        if acts is None:
            self.calls["activations"] += 1
            acts = self._acts[akey] = [r["peak_bytes"] / GB for r in stage_activations(self._ctx(layout))["per_stage"]]
        return max(map(operator.add, state, acts)) + self.overhead_GB

    def screen(self, layout: Layout, with_time: bool = True, with_memory: bool = True) -> Screened:
        """Memory (``with_memory``) and (``with_time``) days, MFU and cost of a layout."""
        out = Screened(self.gpu.id, layout, self.memory_GB(layout) if with_memory else None, self.capacity_GB)
        if with_time:
            self.add_time(out)
        return out

    def add_time(self, out: Screened) -> Screened:
        """Days, MFU and cost of a screened layout (``step_time`` at its DP and GA)."""
        layout = out.layout
        self.calls["step"] += 1
        r = stm.step_time(dp=layout.dp, micro_batches=layout.grad_accum, zero_stage=layout.shape.zero_stage,
                          stage=self._shape_step(layout)[1])
        out.days = self.req.tokens / r["tokens_per_s"] / SECONDS_PER_DAY * self.req.training.overhead_factor
        out.mfu = r["mfu"]
        billed, out.cost_target_usd = self._billed_and_target_cost(layout.num_gpus)
        out.cost_usd = tc.cloud_cost_usd(gpu_hours=tc.gpu_hours(num_gpus=billed, days=out.days),
                                         gpu_hour_usd=self.price)
        return out

    def step_kwargs(self, layout: Layout) -> dict:
        """``step_kwargs`` of the layout from what the screen keeps per shape: the keywords but
        ``dp`` = N / (TP·CP·PP), ``micro_batches`` = GA and ``zero_stage``, set per layout."""
        return {**self._shape_step(layout)[0], "dp": layout.dp, "micro_batches": layout.grad_accum,
                "zero_stage": layout.shape.zero_stage}

    def _shape_step(self, layout: Layout) -> tuple[dict, dict]:
        """(step_kwargs without dp, micro_batches and zero_stage, their step_time.stage_terms), once
        per shape but its ZeRO stage."""
        s = layout.shape
        key = (s.tp, s.cp, s.pp, s.ep, s.micro_batch, s.recompute, s.precision)
        got = self._step_kw.get(key)
        if got is None:
            kw = step_kwargs(self._ctx(layout))
            del kw["dp"], kw["micro_batches"], kw["zero_stage"]
            got = self._step_kw[key] = kw, stm.stage_terms(**kw)
        return got

    def _billed_and_target_cost(self, num_gpus: int) -> tuple[float, float]:
        if num_gpus not in self._billed:
            billed = self.billed_gpus(num_gpus)
            self._billed[num_gpus] = billed, tc.cloud_cost_usd(
                gpu_hours=tc.gpu_hours(num_gpus=billed, days=self.req.target_days), gpu_hour_usd=self.price)
        return self._billed[num_gpus]

    def billed_gpus(self, num_gpus: int) -> float:
        """GPUs billed: whole nodes with the spares (the Plan sheet's plan_gpus_to_buy)."""
        gpn = int(self.gpu.gpus_per_node)
        return ceil_count_xl(num_gpus * (1 + self.req.training.spare_fraction) / gpn) * gpn
