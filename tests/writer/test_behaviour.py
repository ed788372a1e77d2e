"""Behaviour (wiring) tests: edit the built workbook as a person would in Excel, recalculate it
with LibreOffice, and check what must move and what must not.

Every edit is made on its own copy of the default workbook (openpyxl on the input cells: Plan,
Hardware, Defaults); all copies are recalculated with one LibreOffice start. Expectations are
derived from the catalogue (prices, TFLOPS), from ratios against the recalculated unedited copy,
or from equalities between cells; never from the cached values the writer stored.

Scenarios of the default workbook (shipped files, sorted):
  0 llama-7b-h800x256            h800, reserved, no price override, training
  1 deepseek-v2-h800x1024        h800, reserved, no override, both
  2 gpt4-class-moe-h800x16384    h800, reserved, no override, both
  3 llama-3-70b-plan-h800x640    h800, reserved, no override, both, budget $2M
  4 llama-3-70b-serve-h20-tp4    h20, on_demand, no override, serving
  5 llama-3-70b-serve-h800-tp4   h800, on_demand, override $2.50, serving
The fixture checks these facts, so a change in the shipped scenarios fails loudly, not quietly.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import pytest

from tests.writer.edits import ENGINES, Copies, EditBook, Layout, Recalc, recalculate_copies
from workbook.calc.checks import HARD, WARNINGS
from workbook.engines.libreoffice import find_soffice
from workbook.writer.input_guard import INPUT_ERROR_TEXT
from workbook.writer.layout import CALC_SHEETS

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

REL = 1e-9
LABEL = {n: label for n, label, *_ in HARD + WARNINGS}
TRAINING_CHECKS = [n for n, _, _, scope in HARD + WARNINGS if scope == "training"]
TRAINING_VERDICTS = ["summary_train_memory", "summary_target_days", "summary_budget", "summary_layout",
                     "summary_gpu_count", "summary_comm_share", "summary_ckpt_interval"]
H800_RESERVED = [0, 1, 2, 3]  # scenarios on the H800 at the reserved price, no override
H20_SC, OVERRIDE_SC = 4, 5

#: edit name -> function(EditBook, catalog) that edits the copy; None = the file copied byte for byte
EDITS: dict[str, Callable | None] = {"unedited": None}


def edit(name: str):
    def register(fn):
        assert name not in EDITS, name
        EDITS[name] = fn
        return fn
    return register


def close(a, b, rel=REL) -> bool:
    return isinstance(a, float) and math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def plan_addr(layout: Layout, key: str, i: int) -> str:
    return "Plan!" + layout.cell("Plan", key, i)


# ---------------------------------------------------------------- the edits


@edit("roundtrip")  # loaded and saved with openpyxl, nothing changed: the baseline of every ratio below
def _(b, cat):
    pass


@edit("price_reserved_x2")
def _(b, cat):
    b.gpu("h800", "price_reserved_usd_per_gpu_hour", 2 * cat.gpus["h800"].price_reserved_usd_per_gpu_hour)


@edit("price_on_demand_x2")
def _(b, cat):
    b.gpu("h800", "price_on_demand_usd_per_gpu_hour", 2 * cat.gpus["h800"].price_on_demand_usd_per_gpu_hour)


@edit("gpu_dropdown")
def _(b, cat):
    b.plan("gpu", 0, "a100-80gb")


@edit("gpu_without_price")  # the L40S has no reserved price in the catalogue
def _(b, cat):
    b.plan("gpu", 0, "l40s")


@edit("basis_on_demand")
def _(b, cat):
    b.plan("cost.price_basis", 0, "on_demand")


@edit("basis_spot")
def _(b, cat):
    b.plan("cost.price_basis", 1, "spot")


@edit("override_typed")
def _(b, cat):
    b.plan("cost.gpu_hour_usd", 0, 3.3)


@edit("override_cleared")
def _(b, cat):
    b.plan("cost.gpu_hour_usd", OVERRIDE_SC, None)


@edit("tokens_x2")
def _(b, cat):
    b.plan("training.tokens", 0, 2 * b.plan_cell("training.tokens", 0).value)


@edit("target_days_short")
def _(b, cat):
    b.plan("training.target_days", 1, 20)


@edit("mfu_blank")
def _(b, cat):
    b.plan("training.mfu", 2, None)


@edit("tokens_text")
def _(b, cat):
    b.plan("training.tokens", 0, "abc")


@edit("mfu_zero")
def _(b, cat):
    b.plan("training.mfu", 1, 0)


@edit("mfu_1.5")
def _(b, cat):
    b.plan("training.mfu", 1, 1.5)


@edit("rename")
def _(b, cat):
    b.plan("name", 2, "GPT-4 class, renamed")


@edit("gpu_added")
def _(b, cat):
    b.add_gpu("h800", "h800-cheap", name="H800 at a negotiated price", price_reserved_usd_per_gpu_hour=1.25)
    b.add_efficiency("h800", "h800-cheap")
    b.plan("gpu", 0, "h800-cheap")


@edit("gpu_added_without_factors")  # a new GPU on Hardware only: the step model has no factors for it
def _(b, cat):
    b.add_gpu("h800", "h800-new", name="H800 without step-time factors")
    b.plan("gpu", 0, "h800-new")


@edit("time_model_step")  # scenario 0 switches from the MFU given to the step-time model
def _(b, cat):
    b.plan("training.time_model", 0, "step")


@edit("gemm_efficiency_half")  # the H800's matmul factor halved, scenario 0 on the step model
def _(b, cat):
    b.efficiency("h800", "gemm_efficiency", cat.efficiency["h800"].gemm_efficiency / 2)
    b.plan("training.time_model", 0, "step")


@edit("model_switch")
def _(b, cat):
    b.plan("model", 0, "llama-3-70b")


@edit("defaults_nic")  # scenario 1 types the old default; the others leave the input blank
def _(b, cat):
    b.plan("network.nic_Gbps", 1, cat.defaults.as_dict()["nic_Gbps"])
    b.default("nic_Gbps", cat.defaults.as_dict()["nic_Gbps"] / 2)


@edit("defaults_electricity")  # scenario 2 types the old default; the others leave the input blank
def _(b, cat):
    b.plan("cost.electricity_usd_per_kWh", 2, cat.defaults.as_dict()["electricity_usd_per_kWh"])
    b.default("electricity_usd_per_kWh", 2.5 * cat.defaults.as_dict()["electricity_usd_per_kWh"])


@edit("budget_low")
def _(b, cat):
    b.plan("cost.budget_usd", 3, 1e6)


@edit("budget_added_low")  # scenario 0 had no budget
def _(b, cat):
    b.plan("cost.budget_usd", 0, 1e5)


@edit("purpose_serving")
def _(b, cat):
    b.plan("purpose", 3, "serving")


@edit("purpose_serving_target_missed")  # a training deadline that cannot be met no longer counts
def _(b, cat):
    b.plan("purpose", 3, "serving")
    b.plan("training.target_days", 3, 1)


@edit("allocatable_full")  # scenario 0 on the tensor model with 60 GB of activations, all device bytes allocatable
def _(b, cat):
    b.plan("training.memory_model", 0, "tensors")
    b.plan("training.act_GB", 0, 60)
    b.plan("training.hbm_allocatable_frac", 0, 1.0)


@edit("allocatable_half")  # the same with half the device allocatable; scenario 1 (book model) too
def _(b, cat):
    b.plan("training.memory_model", 0, "tensors")
    b.plan("training.act_GB", 0, 60)
    b.plan("training.hbm_allocatable_frac", 0, 0.5)
    b.plan("training.hbm_allocatable_frac", 1, 0.5)


# ---------------------------------------------------------------- fixture


#: LibreOffice converts one file after another (about 1.5 s each), and openpyxl is single-threaded:
#: the copies are made and recalculated in this many worker processes, each with its own soffice run
WORKERS = max(1, min(4, os.cpu_count() or 1))


def _make_copies(jobs: list[tuple[str, str, str]]) -> dict[str, tuple[str, bool]]:
    """Worker: make each edited copy (edit name, source, destination). Returns {edit name: (the copy's path, or
    the text of the edit's error; whether its formulas are the source's)}."""
    import traceback

    from workbook.catalog import load_catalog

    catalog = load_catalog()
    out = {}
    for name, src, dst in jobs:
        try:
            shutil.copyfile(src, dst)
            fn, kept = EDITS[name], True
            if fn is not None:
                book = EditBook(dst)
                fn(book, catalog)
                book.save()
                kept = book.formulas_kept
            out[name] = (dst, kept)
        except Exception:  # reported by the tests that use this edit, not by every test
            out[name] = ("ERROR " + traceback.format_exc(), False)
    return out


class Recalculated(dict):
    """{edit name: Recalc}; an edit that could not be made fails the tests that use it."""

    def __init__(self, values: dict, layout: Layout):
        super().__init__({n: Recalc(v, layout) for n, v in values.items() if not isinstance(v, str)})
        self.failed = {n: v for n, v in values.items() if isinstance(v, str)}

    def __missing__(self, name):
        pytest.fail(f"edit {name!r} could not be made:\n{self.failed.get(name, 'unknown edit')}", pytrace=False)


@pytest.fixture(scope="module")
def layout(built):
    return Layout(built[0])


def _chunks(items: list, n: int = WORKERS) -> list[list]:
    return [items[k::n] for k in range(n) if items[k::n]]


@pytest.fixture(scope="module")
def edited(built, tmp_path_factory) -> Copies:
    """{edit name: path of its edited copy (or "ERROR" and the traceback)}, made once for both engines."""
    folder = tmp_path_factory.mktemp("behaviour")
    jobs = [(name, str(built[0]), str(folder / f"{name}.xlsx")) for name in EDITS]
    chunks = _chunks(jobs)
    with ProcessPoolExecutor(len(chunks), mp_context=multiprocessing.get_context("spawn")) as pool:
        made = {name: r for part in pool.map(_make_copies, chunks) for name, r in part.items()}
    return Copies({n: p for n, (p, _) in made.items()}, {n: built[0] for n, (_, kept) in made.items() if kept})


@pytest.fixture(scope="module", params=ENGINES)
def rc(request, edited, layout) -> Recalculated:
    """{edit name: its recalculated copy}, in LibreOffice and in Gnumeric (the engine that follows Excel).
    The copies are split over WORKERS processes."""
    made = [(n, p) for n, p in edited.items() if not p.startswith("ERROR ")]
    chunks = [Copies(c, edited.formulas_of) for c in _chunks(made)]  # each worker: its copies, one engine start
    with ProcessPoolExecutor(len(chunks), mp_context=multiprocessing.get_context("spawn")) as pool:
        values = {name: v for part in pool.map(partial(recalculate_copies, engine=request.param), chunks)
                  for name, v in part.items()}
    values.update({n: p[len("ERROR "):] for n, p in edited.items() if p.startswith("ERROR ")})
    return Recalculated(values, layout)


@pytest.fixture(scope="module")
def base(rc) -> Recalc:
    return rc["roundtrip"]


def test_scenarios_are_the_ones_the_tests_assume(built, catalog, base):
    b = EditBook(built[0])  # read only: never saved
    col = lambda key: [b.plan_cell(key, i).value for i in range(6)]  # noqa: E731
    assert col("gpu") == ["h800"] * 4 + ["h20", "h800"]
    assert col("cost.price_basis") == ["reserved"] * 4 + ["on_demand"] * 2
    assert col("cost.gpu_hour_usd") == [None] * 5 + [2.5]
    assert col("purpose") == ["training", "both", "both", "both", "serving", "serving"]
    assert col("network.nic_Gbps") == [None] * 6
    assert col("cost.electricity_usd_per_kWh") == [None] * 6
    assert col("cost.budget_usd") == [None] * 3 + [2e6, None, None]
    assert col("training.time_model") == ["mfu"] * 6  # the book's cases keep the MFU given
    assert catalog.gpus["l40s"].price_reserved_usd_per_gpu_hour is None
    h800, h20 = catalog.gpus["h800"], catalog.gpus["h20"]
    assert base.row("Plan", "gpu_hour_usd") == [h800.price_reserved_usd_per_gpu_hour] * 4 + [
        h20.price_on_demand_usd_per_gpu_hour, 2.5]


# ---------------------------------------------------------------- the tests


@pytest.mark.parametrize("name", ["unedited", "roundtrip"])
def test_unedited_copy_passes_without_error_values(rc, layout, name):
    r = rc[name]
    assert r.master == "ALL CHECKS PASS"
    assert r.errors() == {}
    assert all(s.startswith("PASS") for s in r.row("Checks", "scenario_status"))
    assert r.row("Plan", "input_errors_count") == [0.0] * 6
    assert [n for n, _ in r.cover_scenarios] == layout.names
    assert [s for _, s in r.cover_scenarios] == r.row("Checks", "scenario_status")
    if name == "roundtrip":  # saving with openpyxl changes nothing the engine computes
        assert r.values == rc["unedited"].values


def test_catalogue_price_x2_moves_cost_of_every_scenario_on_that_gpu_and_basis(rc, base, catalog):
    r = rc["price_reserved_x2"]
    new = 2 * catalog.gpus["h800"].price_reserved_usd_per_gpu_hour
    for i in H800_RESERVED:
        assert close(r.get("Plan", "gpu_hour_catalogue_usd", i), new)
        assert close(r.get("Plan", "gpu_hour_usd", i), new)
        assert close(r.get("Cost", "train_cost_usd", i), 2 * base.get("Cost", "train_cost_usd", i))
        assert close(r.get("Cost", "infer_hourly_cost_usd", i), 2 * base.get("Cost", "infer_hourly_cost_usd", i))
        assert close(r.get("Summary", "train_cost_usd", i), r.get("Cost", "train_cost_usd", i))
        # a price is not a speed
        assert r.get("Cost", "train_days_actual", i) == base.get("Cost", "train_days_actual", i)
        assert r.get("Plan", "plan_train_days_with_overhead", i) == base.get("Plan", "plan_train_days_with_overhead", i)
    # the H800 override scenario (on-demand basis, $2.50 typed) and the H20 scenario do not move
    for i in (H20_SC, OVERRIDE_SC):
        for sheet, key in (("Plan", "gpu_hour_usd"), ("Cost", "train_cost_usd"), ("Cost", "infer_hourly_cost_usd")):
            assert r.get(sheet, key, i) == base.get(sheet, key, i), (key, i)
    # the budget scenario (cost $1.84M at $2) now exceeds its $2M budget
    assert r.get("Checks", "check_within_budget", 3) == 1.0
    assert r.get("Checks", "scenario_status", 3) == "FAIL: " + LABEL["check_within_budget"]


def test_catalogue_price_x2_of_an_overridden_basis_moves_catalogue_price_not_price_used(rc, base, catalog):
    r = rc["price_on_demand_x2"]
    i = OVERRIDE_SC
    assert close(r.get("Plan", "gpu_hour_catalogue_usd", i), 2 * catalog.gpus["h800"].price_on_demand_usd_per_gpu_hour)
    assert r.get("Plan", "gpu_hour_usd", i) == 2.5  # the typed override
    assert r.get("Cost", "infer_hourly_cost_usd", i) == base.get("Cost", "infer_hourly_cost_usd", i)
    assert r.get("Cost", "infer_usd_per_1M_tokens", i) == base.get("Cost", "infer_usd_per_1M_tokens", i)
    for i in H800_RESERVED:  # reserved-basis scenarios read the other column
        assert r.get("Plan", "gpu_hour_usd", i) == base.get("Plan", "gpu_hour_usd", i)
        assert r.get("Cost", "train_cost_usd", i) == base.get("Cost", "train_cost_usd", i)
    assert r.master == "ALL CHECKS PASS"


def test_gpu_dropdown_takes_that_gpus_price_and_peak(rc, base, catalog):
    r, g, i = rc["gpu_dropdown"], catalog.gpus["a100-80gb"], 0
    old = catalog.gpus["h800"]
    assert close(r.get("Plan", "gpu_bf16_dense_TFLOPS", i), g.bf16_dense_TFLOPS)
    assert close(r.get("Plan", "train_peak_TFLOPS", i), g.bf16_dense_TFLOPS)  # bf16 training
    assert close(r.get("Plan", "gpu_hbm_GB", i), g.hbm_GB)
    assert close(r.get("Plan", "gpu_hour_usd", i), g.price_reserved_usd_per_gpu_hour)  # the scenario's basis
    # same job on a slower GPU: days scale with the peak ratio, cost with days x price
    ratio = old.bf16_dense_TFLOPS / g.bf16_dense_TFLOPS
    assert close(r.get("Cost", "train_days_actual", i), ratio * base.get("Cost", "train_days_actual", i))
    assert close(r.get("Cost", "train_cost_usd", i), base.get("Cost", "train_cost_usd", i) * ratio
                 * g.price_reserved_usd_per_gpu_hour / old.price_reserved_usd_per_gpu_hour)
    # 9.7 days x 3.2 > the 10-day target: the plan now misses its deadline
    assert r.get("Checks", "check_meets_target_days", i) == 1.0
    assert r.get("Summary", "gpu", i) == "a100-80gb"
    for j in range(1, 6):  # the other columns do not move
        assert r.get("Cost", "train_cost_usd", j) == base.get("Cost", "train_cost_usd", j)
    assert r.errors() == {}


def test_gpu_without_a_price_for_the_basis_is_an_input_error(rc, base, layout):
    r = rc["gpu_without_price"]
    assert r.get("Plan", "gpu_hour_usd", 0) == 0.0
    want = f"INPUT ERROR: {plan_addr(layout, 'cost.gpu_hour_usd', 0)} GPU-hour price"
    assert r.get("Checks", "scenario_status", 0).startswith(want)
    assert r.master.startswith(f"CHECKS FAIL: {layout.names[0]}: {want}")
    assert r.errors() == {}  # the calculations after the price read "input error" (no #DIV/0! on Sensitivity)
    assert r.get("Sensitivity", "sens_cost_with_contingency_usd", 0) == INPUT_ERROR_TEXT
    assert r.get("Cost", "train_cost_usd", 0) == INPUT_ERROR_TEXT
    assert r.get("Cost", "train_cost_usd", 1) == base.get("Cost", "train_cost_usd", 1)  # other columns compute


@pytest.mark.parametrize("name, i, basis", [("basis_on_demand", 0, "on_demand"), ("basis_spot", 1, "spot")])
def test_price_basis_takes_that_basis_catalogue_price(rc, base, catalog, name, i, basis):
    r = rc[name]
    price = getattr(catalog.gpus["h800"], f"price_{basis}_usd_per_gpu_hour")
    assert close(r.get("Plan", "gpu_hour_catalogue_usd", i), price)
    assert close(r.get("Plan", "gpu_hour_usd", i), price)
    reserved = catalog.gpus["h800"].price_reserved_usd_per_gpu_hour
    assert close(r.get("Cost", "train_cost_usd", i), base.get("Cost", "train_cost_usd", i) * price / reserved)
    assert r.get("Cost", "train_days_actual", i) == base.get("Cost", "train_days_actual", i)
    assert r.master == "ALL CHECKS PASS"


def test_typed_override_is_the_price_used(rc, base, catalog):
    r, i = rc["override_typed"], 0
    assert r.get("Plan", "gpu_hour_usd", i) == 3.3
    assert close(r.get("Plan", "gpu_hour_catalogue_usd", i), catalog.gpus["h800"].price_reserved_usd_per_gpu_hour)
    assert close(r.get("Cost", "train_cost_usd", i), base.get("Cost", "train_cost_usd", i) * 3.3 / 2.0)
    assert close(r.get("Summary", "gpu_hour_usd", i), 3.3)
    assert r.get("Cost", "train_days_actual", i) == base.get("Cost", "train_days_actual", i)


def test_cleared_override_falls_back_to_the_catalogue_price(rc, base, catalog):
    r, i = rc["override_cleared"], OVERRIDE_SC
    price = catalog.gpus["h800"].price_on_demand_usd_per_gpu_hour
    assert close(r.get("Plan", "gpu_hour_usd", i), price)
    assert close(r.get("Cost", "infer_hourly_cost_usd", i), base.get("Cost", "infer_hourly_cost_usd", i) * price / 2.5)
    assert close(r.get("Cost", "infer_usd_per_1M_tokens", i),
                 base.get("Cost", "infer_usd_per_1M_tokens", i) * price / 2.5)
    assert r.get("Plan", "input_errors_count", i) == 0.0  # a blank override is allowed
    assert r.master == "ALL CHECKS PASS"


def test_tokens_x2_doubles_training_days_and_cost(rc, base):
    r, i = rc["tokens_x2"], 0
    for sheet, key in (("Cost", "train_days_actual"), ("Plan", "plan_train_days_with_overhead"),
                       ("Cost", "train_cost_usd"), ("Cost", "train_gpu_hours")):
        assert close(r.get(sheet, key, i), 2 * base.get(sheet, key, i)), key
    for sheet, key in (("Plan", "gpu_hour_usd"), ("Plan", "params_total"), ("Plan", "train_peak_TFLOPS"),
                       ("Plan", "plan_tokens_per_day"), ("Cost", "train_cost_target_usd")):
        assert r.get(sheet, key, i) == base.get(sheet, key, i), key
    # 2 x 9.72 days is past the 10-day target
    days, target = r.get("Plan", "plan_train_days_with_overhead", i), 10
    assert days > target and r.get("Checks", "check_meets_target_days", i) == 1.0


def test_target_days_past_reach_fails_the_deadline_check_and_the_cover_names_it(rc, base, layout):
    r, i = rc["target_days_short"], 1
    assert base.get("Plan", "plan_train_days_with_overhead", i) > 20  # about 36 days
    assert r.get("Checks", "check_meets_target_days", i) == 1.0
    status = "FAIL: " + LABEL["check_meets_target_days"]
    assert "target days" in status
    assert r.get("Checks", "scenario_status", i) == status
    assert r.master == f"CHECKS FAIL: {layout.names[i]}: {status}"
    assert r.cover_scenarios[i] == (layout.names[i], status)
    assert r.get("Summary", "summary_target_days", i) == "FAIL"
    assert r.get("Summary", "scenario_status", i) == status
    assert r.get("Checks", "master_check", 0) == 1.0
    assert r.get("Plan", "plan_train_days_with_overhead", i) == base.get("Plan", "plan_train_days_with_overhead", i)
    for j in range(6):
        if j != i:
            assert r.get("Checks", "scenario_status", j) == base.get("Checks", "scenario_status", j)


INPUT_ERRORS = [  # (edit, scenario, input key, title in the status text)
    ("mfu_blank", 2, "training.mfu", "MFU"),
    ("tokens_text", 0, "training.tokens", "Training tokens"),
    ("mfu_zero", 1, "training.mfu", "MFU"),
    ("mfu_1.5", 1, "training.mfu", "MFU"),
]


@pytest.mark.parametrize("name, i, key, title", INPUT_ERRORS, ids=[e[0] for e in INPUT_ERRORS])
def test_bad_input_is_an_input_error_naming_its_cell(rc, layout, name, i, key, title):
    r = rc[name]
    status = f"INPUT ERROR: {plan_addr(layout, key, i)} {title}"
    assert r.get("Checks", "scenario_status", i) == status
    assert r.get("Plan", "input_error_" + key.replace(".", "_"), i) == 1.0
    assert r.get("Plan", "input_errors_count", i) == 1.0
    assert r.get("Checks", "status_code", i) == 3.0
    assert r.master == f"CHECKS FAIL: {layout.names[i]}: {status}"
    assert r.cover_scenarios[i] == (layout.names[i], status)
    assert r.get("Summary", "scenario_status", i) == status
    # the other scenarios are untouched
    assert [s.startswith("PASS") for j, s in enumerate(r.row("Checks", "scenario_status")) if j != i] == [True] * 5
    # no error value anywhere: every calculated cell of the column reads "input error" (the guard)
    assert r.errors() == {}
    assert r.get("Step Time", "train_days", i) == INPUT_ERROR_TEXT


@pytest.mark.parametrize("name", [n for n, *_ in INPUT_ERRORS])
def test_bad_input_leaves_no_error_value_on_the_summary(rc, name):
    """A figure that cannot be computed reads "input error" (the status row names the cell), never #DIV/0!."""
    assert rc[name].errors("Summary") == {}
    # MFU 1.5 is out of range but computable: it reads "input error" too (every figure of the column does)
    assert INPUT_ERROR_TEXT in rc[name].row("Summary", "plan_train_days_with_overhead")


def test_renamed_scenario_header_follows_on_every_sheet_and_the_cover(rc, layout):
    r, i, new = rc["rename"], 2, "GPT-4 class, renamed"
    for sheet in CALC_SHEETS[1:] + ("Summary",):
        assert r.header(sheet, i) == new, sheet
    assert r.cover_scenarios[i][0] == new
    for j in range(6):
        if j != i:
            assert r.cover_scenarios[j][0] == layout.names[j]
            assert r.header("Summary", j) == layout.names[j]
    assert r.master == "ALL CHECKS PASS"
    assert r.get("Plan", "input_error_name", i) == 0.0


def test_gpu_typed_into_the_next_empty_row_joins_the_lookups(rc, base, catalog):
    r, i = rc["gpu_added"], 0
    h800 = catalog.gpus["h800"]
    assert r.get("Plan", "input_error_gpu", i) == 0.0
    assert r.get("Plan", "gpu_hour_usd", i) == 1.25
    assert close(r.get("Cost", "train_cost_usd", i), base.get("Cost", "train_cost_usd", i) * 1.25
                 / h800.price_reserved_usd_per_gpu_hour)
    assert close(r.get("Plan", "gpu_bf16_dense_TFLOPS", i), h800.bf16_dense_TFLOPS)  # the copied values
    assert r.get("Cost", "train_days_actual", i) == base.get("Cost", "train_days_actual", i)
    assert r.get("Summary", "gpu", i) == "h800-cheap"
    assert r.master == "ALL CHECKS PASS"


def test_gpu_without_efficiency_factors_is_an_input_error(rc, layout):
    r, i = rc["gpu_added_without_factors"], 0
    assert r.get("Plan", "input_error_gpu", i) == 0.0
    assert r.get("Plan", "input_error_efficiency", i) == 1.0
    status = r.get("Checks", "scenario_status", i)
    assert status.startswith(f"INPUT ERROR: {plan_addr(layout, 'gpu', i)}") and "step-time factors" in status
    assert r.master.startswith("CHECKS FAIL")
    assert r.errors() == {}  # the Step Time rows that lack factors read "input error", as every figure of the column


def test_time_model_step_drives_cost_and_the_deadline(rc, base):
    r, i = rc["time_model_step"], 0
    days = r.get("Step Time", "st_train_days_with_overhead", i)
    assert close(days, base.get("Step Time", "st_train_days_with_overhead", i))  # the model ran before too
    assert r.get("Step Time", "train_days", i) == days and r.get("Cost", "train_days_actual", i) == days
    assert not close(days, base.get("Cost", "train_days_actual", i))
    assert r.get("Plan", "plan_train_days_with_overhead", i) == base.get("Plan", "plan_train_days_with_overhead", i)
    assert close(r.get("Cost", "train_cost_usd", i), base.get("Cost", "train_cost_usd", i) * days
                 / base.get("Cost", "train_days_actual", i))
    assert r.get("Summary", "train_days", i) == days
    assert r.get("Summary", "training.time_model", i) == "step"
    target = r.get("Summary", "training.target_days", i)
    assert r.get("Checks", "check_meets_target_days", i) == (0.0 if days <= target else 1.0)
    for j in range(1, 6):  # the other scenarios keep the MFU given
        assert r.get("Cost", "train_days_actual", j) == base.get("Cost", "train_days_actual", j)


def test_efficiency_factor_moves_the_step_model_of_that_gpu(rc, base):
    r = rc["gemm_efficiency_half"]
    for i in H800_RESERVED:
        assert close(r.get("Step Time", "st_gemm_mb_s", i), 2 * base.get("Step Time", "st_gemm_mb_s", i))
        assert r.get("Step Time", "st_attention_mb_s", i) == base.get("Step Time", "st_attention_mb_s", i)
        assert r.get("Step Time", "st_step_s", i) > base.get("Step Time", "st_step_s", i)
    assert r.get("Step Time", "st_step_s", H20_SC) == base.get("Step Time", "st_step_s", H20_SC)
    assert r.get("Cost", "train_days_actual", 0) == r.get("Step Time", "st_train_days_with_overhead", 0)
    assert r.get("Cost", "train_days_actual", 1) == base.get("Cost", "train_days_actual", 1)  # MFU given


def test_model_dropdown_takes_that_models_parameters(rc, base, catalog):
    r, i = rc["model_switch"], 0
    want = base.get("Plan", "params_total", 3)  # scenario 3 is on llama-3-70b
    assert base.get("Plan", "params_total", i) != want
    assert r.get("Plan", "params_total", i) == want
    assert math.isclose(want, catalog.models["llama-3-70b"].published_params_total, rel_tol=0.01)
    assert r.get("Plan", "model_layers", i) == catalog.models["llama-3-70b"].layers
    assert r.get("Summary", "model", i) == "llama-3-70b"
    # a 10x larger model on the same GPUs: training FLOPs and days grow about as the parameters do
    grow = r.get("Cost", "train_days_actual", i) / base.get("Cost", "train_days_actual", i)
    assert grow > 5
    assert r.get("Plan", "gpu_hour_usd", i) == base.get("Plan", "gpu_hour_usd", i)


def test_defaults_nic_rate_moves_scenarios_that_leave_it_blank(rc, base, catalog):
    r, d = rc["defaults_nic"], catalog.defaults.as_dict()["nic_Gbps"]
    for i in range(6):
        if i == 1:  # typed on Plan: the Defaults sheet does not apply
            assert r.get("Plan", "net_nic_Gbps", i) == d
            for key in ("node_network_GBps", "nic_port_GBps"):
                assert r.get("Plan", key, i) == base.get("Plan", key, i)
            assert r.get("Comm", "comm_ib_per_gpu_GBps", i) == base.get("Comm", "comm_ib_per_gpu_GBps", i)
            assert r.get("Comm", "comm_dp_time_s", i) == base.get("Comm", "comm_dp_time_s", i)
        else:
            assert r.get("Plan", "net_nic_Gbps", i) == d / 2
            for key in ("node_network_GBps", "nic_port_GBps"):
                assert close(r.get("Plan", key, i), base.get("Plan", key, i) / 2), (key, i)
            assert close(r.get("Comm", "comm_ib_per_gpu_GBps", i), base.get("Comm", "comm_ib_per_gpu_GBps", i) / 2)
    # scenario 0 is multi-node data parallel: its gradient all-reduce slows down
    assert r.get("Comm", "comm_dp_time_s", 0) > base.get("Comm", "comm_dp_time_s", 0)
    for i in range(6):  # the network is not in the price or the compute time
        assert r.get("Cost", "train_cost_usd", i) == base.get("Cost", "train_cost_usd", i)


def test_defaults_electricity_price_moves_power_cost_of_scenarios_that_leave_it_blank(rc, base, catalog):
    r, d = rc["defaults_electricity"], catalog.defaults.as_dict()["electricity_usd_per_kWh"]
    for i in range(6):
        if i == 2:  # typed on Plan
            assert r.get("Cost", "cost_electricity_usd_per_kWh", i) == d
            for key in ("power_usd_per_gpu_hour", "self_build_power_usd", "tco_usd_per_gpu_hour"):
                assert r.get("Cost", key, i) == base.get("Cost", key, i), key
        else:
            assert close(r.get("Cost", "cost_electricity_usd_per_kWh", i), 2.5 * d)
            for key in ("power_usd_per_gpu_hour", "self_build_power_usd"):
                assert close(r.get("Cost", key, i), 2.5 * base.get("Cost", key, i)), (key, i)
            assert r.get("Cost", "tco_usd_per_gpu_hour", i) > base.get("Cost", "tco_usd_per_gpu_hour", i)
        # the cloud price and training cost do not depend on electricity
        assert r.get("Plan", "gpu_hour_usd", i) == base.get("Plan", "gpu_hour_usd", i)
        assert r.get("Cost", "train_cost_usd", i) == base.get("Cost", "train_cost_usd", i)


@pytest.mark.parametrize("name, i, budget", [("budget_low", 3, 1e6), ("budget_added_low", 0, 1e5)])
def test_budget_below_the_cost_fails_the_budget_check(rc, base, layout, name, i, budget):
    r = rc[name]
    cost = max(base.get("Cost", "train_cost_usd", i), base.get("Cost", "train_cost_target_usd", i))
    assert cost > budget
    assert r.get("Cost", "budget_given_flag", i) == 1.0
    assert close(r.get("Cost", "budget_headroom_usd", i), budget - cost)
    assert r.get("Cost", "within_budget_flag", i) == 0.0
    assert r.get("Checks", "check_within_budget", i) == 1.0
    status = "FAIL: " + LABEL["check_within_budget"]
    assert r.get("Checks", "scenario_status", i) == status
    assert r.get("Summary", "summary_budget", i) == "FAIL"
    assert r.master == f"CHECKS FAIL: {layout.names[i]}: {status}"
    assert r.get("Cost", "train_cost_usd", i) == base.get("Cost", "train_cost_usd", i)


@pytest.mark.parametrize("name", ["purpose_serving", "purpose_serving_target_missed"])
def test_purpose_serving_turns_training_checks_off(rc, base, name):
    r, i = rc[name], 3
    assert base.get("Plan", "purpose_training_flag", i) == 1.0
    assert base.get("Checks", "warn_comm_share", i) == 1.0  # a training warning before the switch
    assert r.get("Plan", "purpose_training_flag", i) == 0.0
    assert r.get("Plan", "purpose_serving_flag", i) == 1.0
    for check in TRAINING_CHECKS:
        assert r.get("Checks", check, i) == 0.0, check
    assert r.get("Checks", "warnings_count", i) == 0.0
    for key in TRAINING_VERDICTS:
        assert r.get("Summary", key, i) == "n/a", key
    assert r.get("Summary", "summary_serving_memory", i) == "PASS"
    assert r.get("Checks", "check_infer_memory_fits", i) == base.get("Checks", "check_infer_memory_fits", i)
    assert r.get("Checks", "scenario_status", i) == "PASS"
    assert r.master == "ALL CHECKS PASS"
    if name == "purpose_serving_target_missed":  # the plan does miss the 1-day deadline; it just does not count
        assert r.get("Plan", "plan_meets_target_flag", i) == 0.0


def test_allocatable_share_of_the_device_bytes_drives_the_tensor_models_fit(rc, base, catalog):
    """Scenario 0 (ZeRO-3, 256 H800) on the tensor model needs about 63 GB with 60 GB of activations:
    inside the H800's 81,559 MiB (85.5 GB), outside half of it. The book model keeps its 80 GB."""
    zero = "ZeRO"
    device = catalog.gpus["h800"].hbm_device_MiB * 2**20 / 1e9
    for name, frac, fits in (("allocatable_full", 1.0, 1.0), ("allocatable_half", 0.5, 0.0)):
        r = rc[name]
        need = r.get(zero, "zero_total_per_gpu_GB", 0)
        assert close(need, r.get(zero, "state_total_per_gpu_GB", 0))
        assert r.get(zero, "zero_gathered_layer_GB", 0) > 0  # ZeRO-3: the gathered block is held
        assert close(r.get(zero, "zero_hbm_capacity_GB", 0), device * frac)
        assert close(r.get(zero, "zero_hbm_headroom_GB", 0), device * frac - need)
        assert r.get(zero, "zero_fits_hbm_flag", 0) == fits
        assert r.get("Checks", "check_train_memory_fits", 0) == 1.0 - fits
        assert r.get("Summary", "summary_train_memory", 0) == ("PASS" if fits else "FAIL")
    half = rc["allocatable_half"]
    assert half.get(zero, "zero_hbm_capacity_GB", 1) == base.get(zero, "zero_hbm_capacity_GB", 1) == 80
    assert half.get(zero, "zero_fits_hbm_flag", 1) == base.get(zero, "zero_fits_hbm_flag", 1)
