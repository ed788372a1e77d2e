"""The plan workbook of a request that both trains and serves (a small LLaMA-3-8B run on H100 and a 10 requests/s
chat service): its Sensitivity charts the training run of the recommended training column and the serving cost of
the recommended serving column, its Assumptions list both kinds of input, and each column's TCO storage follows
its purpose (the training column the dataset and checkpoints, the serving column the weights it serves)."""

from __future__ import annotations

import openpyxl
import pytest

from tests.planner.helpers import chart_titles, plan_with_cli
from workbook.writer.layout import value_col_name

pytestmark = pytest.mark.slow

REQUEST = """title: "train and serve"
request_id: both-1
requester: tests
cost_centre: cc
model: llama-3-8b
tokens: 2.0e10
target_days: 2.0
budget_usd: 50000
candidate_gpus: [h100]
price_basis: on_demand
training: {seq_len: 4096, global_batch_tokens: 1048576}
constraints: {max_gpus: 64, zero_stages: [1], recompute: [full], micro_batches: [1], tp: [1, 2], cp: [1], pp_max: 4}
serving: {requests_per_s: 10, prompt_tokens: 1024, output_tokens: 256, ttft_ms: 2000, tpot_ms: 50}
"""


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    d = tmp_path_factory.mktemp("both")
    (d / "both.yaml").write_text(REQUEST)
    return plan_with_cli(str(d / "both.yaml"), d / "out", "both-1")


def _serving_column(xlsx, data) -> int:
    ws = openpyxl.load_workbook(xlsx)["Plan"]
    names = [c.value for c in ws[4]][5:]
    return names.index(data["serving"]["recommended"]["scenario"])


def test_sensitivity_charts_the_training_column_and_the_serving_column(planned):
    xlsx, data = planned
    i = _serving_column(xlsx, data)
    assert i > 0
    tornados = [(t, x) for t, x in chart_titles(xlsx) if t.startswith("Tornado")]
    train, serve = data["training"]["recommended"]["scenario"], data["serving"]["recommended"]["scenario"]
    assert [t.split(" of ")[0] for t, _ in tornados] == [
        "Tornado: cost change", "Tornado: training days", "Tornado: serving cost per month",
        "Tornado: serving cost per 1M output tokens"]
    assert all(train in t for t, _ in tornados[:2]) and all(serve in t for t, _ in tornados[2:])
    col = value_col_name(i)
    for _, x in tornados[2:]:  # the serving bars plot the serving column's rows, not the first column's
        assert f"Sensitivity!${col}$" in x and f"Sensitivity!${value_col_name(0)}$" not in x


def test_assumptions_list_training_and_serving_inputs(planned):
    ws = openpyxl.load_workbook(planned[0])["Assumptions"]
    keys = {ws.cell(r, 6).value for r in range(5, ws.max_row + 1)}
    assert {"training.tokens", "storage.ckpt_keep", "cost.budget_usd", "inference.arrival_rate_rps",
            "inference.tpot_target_ms"} <= keys


def test_each_columns_storage_follows_its_purpose(planned):
    xlsx, data = planned
    i = _serving_column(xlsx, data)
    tco = openpyxl.load_workbook(xlsx, data_only=True)["TCO"]
    sto = openpyxl.load_workbook(xlsx, data_only=True)["Storage"]
    row = {tco.cell(r, 5).value: r for r in range(1, tco.max_row + 1)}
    total = next(r for r in range(1, sto.max_row + 1) if sto.cell(r, 5).value == "storage_total_TB")
    assert tco.cell(row["tco_storage_TB"], 6).value == sto.cell(total, 6).value  # the training column
    served = tco.cell(row["tco_storage_TB"], 6 + i).value
    assert served == tco.cell(row["tco_serving_storage_TB"], 6 + i).value and served < sto.cell(total, 6 + i).value
    assert data["serving_tco"]["tco_storage_TB"] == served
