"""The plan workbook of the disaggregated serving request (`workbook plan
catalog/requests/serve-deepseek-v3-h800.yaml`): the recommended column has disaggregated serving on
with the search's prefill EP; every workbook rule and `workbook verify` pass; after a LibreOffice
recalculation the Recommendation's pools, GPUs, TTFT, TPOT and costs read the search's figures; twice
the arrival rate in the column sizes larger pools live."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from tests.planner.helpers import plan_with_cli
from tests.writer.edits import EditBook
from workbook.audit import rules
from workbook.engines import recalculate_many
from workbook.engines.libreoffice import find_soffice

pytestmark = pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")
REQUEST = "catalog/requests/serve-deepseek-v3-h800.yaml"


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    return plan_with_cli(REQUEST, tmp_path_factory.mktemp("serve-disagg"), "serve-deepseek-v3-h800")


def _cells(path: Path, sheet: str = "Recommendation") -> dict[str, str]:
    ws = openpyxl.load_workbook(path)[sheet]
    out: dict[str, str] = {}
    for (c,) in ws.iter_rows(min_col=1, max_col=1):
        if isinstance(c.value, str):
            out.setdefault(c.value, f"B{c.row}")  # the serving plan's block comes before the comparison
    return out


def test_the_book_passes_every_rule_and_verifies(planned):
    xlsx, data = planned
    assert data["serving"]["recommended"]["kind"] == "disaggregated"
    wb = openpyxl.load_workbook(xlsx)
    for rule in rules.ALL_RULES:
        assert rule(wb) == [], rule.__name__
    run = subprocess.run([sys.executable, "-m", "workbook", "verify", str(xlsx)], capture_output=True, text=True)
    assert run.returncode == 0 and "OK" in run.stdout, run.stdout + run.stderr


def test_recommendation_reads_the_pools_live_and_twice_the_load_takes_larger_pools(planned, tmp_path):
    xlsx, data = planned
    rec = data["serving"]["recommended"]
    cells = _cells(xlsx)
    doubled = tmp_path / "doubled.xlsx"
    shutil.copyfile(xlsx, doubled)
    b = EditBook(doubled)
    b.plan("inference.arrival_rate_rps", 0, 2 * rec["load_rps"])
    b.save()
    values = recalculate_many([xlsx, doubled], "libreoffice")
    v, d = values[xlsx], values[doubled]

    def at(vals, label):
        return vals[("Recommendation", cells[label])]

    assert at(v, "Disaggregated serving (separate prefill and decode pools)") == "on"
    assert (at(v, "EP per prefill instance"), at(v, "EP per decode instance")) == (rec["prefill_ep"], rec["ep"])
    assert at(v, "Prefill instances") == rec["prefill_instances"] and at(v, "Decode instances") == rec["decode_instances"]
    assert at(v, "Prefill pool GPUs") == rec["prefill_gpus"] and at(v, "Decode pool GPUs") == rec["decode_gpus"]
    assert at(v, "GPUs (both pools)") == rec["num_gpus"] == 1712
    assert at(v, "Decode batch per attention-DP rank at the TPOT target") == rec["decode_batch_per_rank"]
    assert at(v, "TTFT (prefill pool)") == pytest.approx(rec["ttft_ms"], rel=1e-9)
    assert at(v, "TPOT (decode pool)") == pytest.approx(rec["tpot_ms"], rel=1e-9)
    assert at(v, "Output tokens/s served") == pytest.approx(rec["tokens_per_s"], rel=1e-9)
    assert at(v, "Serving cost per 1M output tokens") == pytest.approx(rec["usd_per_1M_tokens"], rel=1e-9)
    from workbook.writer.planbook_serving import MONTH_LABEL

    assert at(v, MONTH_LABEL) == pytest.approx(rec["usd_per_month"], rel=1e-12)
    assert at(v, "Serving checks failed (load, TTFT, TPOT, memory)") == 0
    # twice the load: both pools grow with it, the decode pool keeps its batch and TPOT, cost per token stays close
    assert at(d, "Prefill instances") == pytest.approx(2 * rec["prefill_instances"], abs=1)
    assert at(d, "Decode instances") == pytest.approx(2 * rec["decode_instances"], abs=1)
    assert at(d, "GPUs (both pools)") > 1.9 * rec["num_gpus"]
    assert at(d, "TPOT (decode pool)") == pytest.approx(rec["tpot_ms"], rel=1e-9)
    assert at(d, "Serving checks failed (load, TTFT, TPOT, memory)") == 0
