"""training.recompute: op_selective typed into the workbook for an MoE or MLA model is an input error, as the
scenario loader refuses it (workbook.scenario.resolve); for a dense model it is not."""

from __future__ import annotations

import pytest

from tests.writer.edits import Layout, recalc_edited
from workbook.catalog import load_catalog
from workbook.engines.libreoffice import find_soffice
from workbook.scenario.model import Scenario
from workbook.writer import build

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]


def test_op_selective_is_an_input_error_for_moe_and_mla_models(tmp_path):
    cat = load_catalog()
    scs = [Scenario(name=f"s{i}", model=m, gpu="h100", training={"num_gpus": 16, "tp": 2, "recompute": "selective"})
           for i, m in enumerate(("llama-3-8b", "mixtral-8x7b", "deepseek-v2"))]
    src = tmp_path / "source.xlsx"
    build(src, scs, cat, [("Scenarios", "op_selective input check")])
    layout = Layout(src)

    def to_op(b):
        for i in range(3):
            b.plan("training.recompute", i, "op_selective")

    got = recalc_edited(src, tmp_path, {"unedited": [], "op": [to_op]}, layout)
    assert got["unedited"].row("Plan", "input_error_training_recompute")[:3] == [0, 0, 0]
    assert got["op"].row("Plan", "input_error_training_recompute")[:3] == [0, 1, 1]
