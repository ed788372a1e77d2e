"""The cheap screen of ``fidelity: book`` layouts (:mod:`workbook.planner.fidelity`): the book's memory
per GPU and the MFU-given days and cost, from the reference functions the calculation layer calls.

Memory is ``workbook.reference.zero.zero_per_gpu_GB`` (the 16 B/param ledger split over TP·PP, ZeRO
over DP·CP, as ``workbook.calc.zero`` computes the book model) plus the activations and the overhead the
request states; days are ``workbook.reference.training.train_time_s`` (C / (N·peak·MFU) x overhead),
cost ``workbook.reference.train_cost`` on the GPUs billed, as :class:`workbook.planner.screen.Screen`
bills them. C, the bytes per parameter, the MFU peak and the price come from one
``workbook.calc.compute`` of a base scenario per GPU and precision. Same interface as ``Screen``; a
test checks it against the full calculation on every evaluated layout.
"""

from __future__ import annotations

from workbook.calc import compute
from workbook.planner.candidates import Layout, Shape, to_scenario
from workbook.planner.fidelity import book_act_GB, book_mfu, book_overhead_GB
from workbook.planner.request import PlanRequest
from workbook.planner.screen import Screen, Screened
from workbook.reference import train_cost as tc
from workbook.reference import training as tr
from workbook.reference import zero as zr
from workbook.units import SECONDS_PER_DAY


class BookScreen:
    """Screens book-fidelity layouts of one request on one GPU."""

    def __init__(self, req: PlanRequest, catalog, gpu, model, model_fields: dict, precision: str):
        self.req, self.gpu, self.model = req, gpu, model
        self.mfu = book_mfu(req, gpu, model)
        gpn = int(gpu.gpus_per_node)
        base = Layout(Shape(1, 1, 1, 1, 1, "full", 0, precision), dp=gpn, grad_accum=1)
        q = compute(to_scenario(base, req, gpu.id, model_fields, "screen-base"), catalog)
        self.params = q["params_total"]
        self.bytes = dict(weight_bytes=q["train_weight_bytes_per_param"], grad_bytes=q["train_grad_bytes_per_param"],
                          optimizer_bytes=q["train_optimizer_bytes_per_param"])
        self.flops = q["train_total_FLOPs"]
        self.peak = q["mfu_peak_TFLOPS"]
        self.price = q["gpu_hour_usd"]
        self.act_GB, self.overhead_GB = book_act_GB(req), book_overhead_GB(req)
        #: the book model compares with the catalogue HBM ("80 GB")
        self.capacity_GB = float(gpu.hbm_GB)
        self.calls = {"state": 0, "activations": 0, "step": 0}

    def memory_GB(self, layout: Layout) -> float:
        """The book's training memory per GPU (static at the ZeRO stage + activations + overhead)."""
        s = layout.shape
        self.calls["state"] += 1
        mp = s.tp * s.pp
        static = zr.zero_per_gpu_GB(params=self.params, stage=s.zero_stage, n=layout.num_gpus // mp,
                                    model_parallel=mp, **self.bytes)
        return static + self.act_GB + self.overhead_GB

    #: memory (``with_memory``) and (``with_time``) days, MFU and cost of a layout, as the measured screen
    screen = Screen.screen

    def add_time(self, out: Screened) -> Screened:
        """Days (MFU given), MFU and cost of a screened layout."""
        layout, t = out.layout, self.req.training
        self.calls["step"] += 1
        out.days = tr.train_time_s(total_FLOP=self.flops, num_gpus=layout.num_gpus, peak_TFLOPS=self.peak,
                                   mfu=self.mfu) * t.overhead_factor / SECONDS_PER_DAY
        out.mfu = self.mfu
        billed = self.billed_gpus(layout.num_gpus)
        out.cost_usd = tc.cloud_cost_usd(gpu_hours=tc.gpu_hours(num_gpus=billed, days=out.days),
                                         gpu_hour_usd=self.price)
        out.cost_target_usd = tc.cloud_cost_usd(gpu_hours=tc.gpu_hours(num_gpus=billed, days=self.req.target_days),
                                                gpu_hour_usd=self.price)
        return out

    #: GPUs billed: whole nodes with the spares, as the measured screen bills them
    billed_gpus = Screen.billed_gpus


def screen_class(req: PlanRequest):
    """The screen for the request's fidelity."""
    return BookScreen if req.fidelity == "book" else Screen
