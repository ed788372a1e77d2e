"""What the plan sheets show by the plan's purpose (workbook.writer.planbook, planbook_serving, tornado and the
build's module order), without building: a serving-only plan lists no training inputs on Assumptions, labels its
storage as the weights served, charts the serving cost on Sensitivity and writes the serving block first."""

from __future__ import annotations

import pytest

from workbook.calc import modules, registry
from workbook.writer import UNASKED_TRAINING_TITLE, module_order
from workbook.writer.inputs import input_rows
from workbook.writer.planbook import PlanBook, applies, breakdown_blocks
from workbook.writer.planbook_serving import serves, trains
from workbook.writer.tornado import columns, specs

SERVING_ONLY = PlanBook("r", {"training": {"status": "not requested"}, "serving": {"status": "feasible"}})
TRAINING_ONLY = PlanBook("r", {"training": {"status": "feasible"}, "serving": {"status": "not requested"}})
BOTH = PlanBook("r", {"training": {"status": "feasible"}, "serving": {"status": "feasible"}})


def test_purpose_of_a_plan():
    assert (trains(SERVING_ONLY), serves(SERVING_ONLY)) == (False, True)
    assert (trains(TRAINING_ONLY), serves(TRAINING_ONLY)) == (True, False)
    assert (trains(BOTH), serves(BOTH)) == (True, True)


def test_assumptions_list_the_inputs_the_purpose_reads():
    keys = [r.key for r in input_rows()]
    serving = [k for k in keys if applies(k, False, True)]
    training = [k for k in keys if applies(k, True, False)]
    assert not [k for k in serving if k.startswith(("training.", "storage."))] and "cost.budget_usd" not in serving
    assert {"inference.arrival_rate_rps", "inference.tpot_target_ms", "cost.gpu_hour_usd", "gpu", "model",
            "cost.storage_usd_per_TB_month", "cost.electricity_usd_per_kWh"} <= set(serving)
    assert not [k for k in training if k.startswith("inference.")] and "training.tokens" in training
    assert [k for k in keys if applies(k, True, True)] == keys  # both: every input


def test_a_serving_breakdown_labels_the_storage_as_the_weights_served():
    serving = {name: label for _, rows in breakdown_blocks(False) for label, name, _ in rows}
    training = {name: label for _, rows in breakdown_blocks(True) for label, name, _ in rows}
    assert serving["tco_storage_TB"] == "Storage kept (the model weights served, one copy)"
    assert "checkpoints" in training["tco_storage_TB"]


@pytest.mark.parametrize("purpose, cols, titles", [
    ("training", (0, None), ["cost change", "training days"]),
    ("serving", (None, 0), ["serving cost per month", "serving cost per 1M output tokens"]),
    ("both", (0, 0), ["cost change", "training days", "serving cost per month", "serving cost per 1M output tokens"])])
def test_tornados_follow_the_first_columns_purpose(purpose, cols, titles):
    assert columns(purpose) == cols
    got = specs("x" if cols[0] is not None else None, "x" if cols[1] is not None else None)
    assert len(got) == len(titles) and all(t in g[0] for t, g in zip(titles, got))
    reg = registry()
    for spec in got:  # every bar and swing row is a quantity of the Sensitivity sheet
        for d in spec[3]:
            for tmpl in spec[4:7]:
                assert reg[tmpl.format(d=d)].sheet == "Sensitivity", tmpl


def test_a_plan_workbook_charts_its_recommended_training_and_serving_columns():
    """The plan's columns, not the first one's purpose: a plan of both charts its training column (the first) and
    its recommended serving column; a serving-only plan its serving column alone; a training-only plan its first."""
    assert columns("training", serving_plan=3, plan_trains=True) == (0, 3)
    assert columns("serving", serving_plan=0, plan_trains=False) == (None, 0)
    assert columns("training", serving_plan=None, plan_trains=True) == (0, None)


def test_a_serving_only_plan_writes_the_serving_sensitivity_first():
    mods = modules()
    order, titles = module_order(mods, SERVING_ONLY)
    names = [n for n, _ in order]
    assert sorted(names) == sorted(n for n, _ in mods)
    assert names.index("serving_sensitivity") == names.index("sensitivity") - 1
    assert names.index("serving_sensitivity") > names.index("cost")  # it reads the Cost sheet above it
    assert titles == {"sensitivity": UNASKED_TRAINING_TITLE}
    for plan in (None, BOTH, TRAINING_ONLY):  # the default build and plans that train keep the calc order
        assert module_order(mods, plan) == (mods, {})
