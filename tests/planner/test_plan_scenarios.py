"""The plan's Scenarios sheet (issue 23): Base / Low / High beside the real alternatives with identical rows. After
an edit of the plan's price and overhead and a LibreOffice recalculation, Base reads the plan's recalculated rows,
Low and High follow the Sensitivity sheet's closed forms (days x overhead / MFU, rent = GPUs x days x hours x
price) with the drivers moved by the sensitivity step, and every alternative column reads its own scenario."""

from __future__ import annotations

import shutil

import openpyxl
import pytest

from tests.planner.helpers import plan_base_with_cli
from tests.writer.edits import EditBook, Layout, Recalc
from workbook.engines import recalculate_many
from workbook.engines.libreoffice import find_soffice
from workbook.writer.planbook_scenarios import FIRST, HEAD, ROWS, SHEET

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    return plan_base_with_cli(tmp_path_factory.mktemp("scn"), "scn", budget_usd=1e6)


def _col(values, col: int) -> dict:
    letter = chr(ord("A") + col)
    return {key: values[(SHEET, f"{letter}{HEAD + 2 + n}")] for n, (key, _, _) in enumerate(ROWS)}


def test_base_low_high_and_alternatives_after_an_edit(planned, tmp_path):
    xlsx, data = planned
    edited = tmp_path / "edited.xlsx"
    shutil.copyfile(xlsx, edited)
    b = EditBook(edited)
    b.plan("cost.gpu_hour_usd", 0, 2.5)
    b.plan("training.overhead_factor", 0, 1.1)
    b.save()
    values = recalculate_many([xlsx, edited], "libreoffice")
    lay = Layout(xlsx)
    wb = openpyxl.load_workbook(xlsx, data_only=True)
    names = [c.value for c in wb[SHEET][HEAD + 1][FIRST:]]
    assert names[0].startswith("Base: ") and names[1:3] == ["Low case (downside)", "High case (upside)"]
    assert len(names) == 3 + len(lay.names) - 1  # one column per other scenario
    def get(key: str, i: int) -> float:
        return Recalc(values[book], lay).get(next(t for t, rows in lay.rows.items() if key in rows), key, i)

    for book in (xlsx, edited):
        v = values[book]
        s = get("sens_step_frac", 0)
        base, low, high = (_col(v, FIRST + k) for k in range(3))
        assert base["days"] == pytest.approx(get("train_days", 0), rel=1e-12)
        assert base["run"] == pytest.approx(get("train_cost_usd", 0), rel=1e-12)
        assert base["price"] == (2.5 if book == edited else pytest.approx(data["training"]["recommended"]
                                                                             ["gpu_hour_usd"]))
        assert base["overhead"] == (1.1 if book == edited else 1.0)
        for case, sign in ((low, 1), (high, -1)):
            assert case["mfu"] == pytest.approx(base["mfu"] * (1 - sign * s), rel=1e-12)
            assert case["price"] == pytest.approx(base["price"] * (1 + sign * s), rel=1e-12)
            want_ovh = base["overhead"] * (1 + s) if sign > 0 else max(1.0, base["overhead"] * (1 - s))
            assert case["overhead"] == pytest.approx(want_ovh, rel=1e-12)
            days = base["days"] / (1 - sign * s) * case["overhead"] / base["overhead"]
            assert case["days"] == pytest.approx(days, rel=1e-12)
            assert case["run"] == pytest.approx(base["gpus"] * days * 24 * case["price"], rel=1e-12)
            window = base["gpus"] * base["target"] * 24 * case["price"]
            assert case["committed"] == pytest.approx(max(case["run"], window), rel=1e-12)
            assert case["headroom"] == pytest.approx(base["budget"] - case["committed"], rel=1e-12)
            assert case["buy"] == base["buy"] and case["budget_ok"] == "within it"
        assert low["days"] > base["days"] > high["days"] and low["run"] > base["run"] > high["run"]
        for j in range(1, len(lay.names)):
            alt = _col(v, FIRST + 2 + j)
            assert alt["days"] == pytest.approx(get("train_days", j), rel=1e-12)
            assert alt["run"] == pytest.approx(get("train_cost_usd", j), rel=1e-12)
            assert alt["buy"] == pytest.approx(get("tco_total_usd", j), rel=1e-12)
    assert _col(values[edited], FIRST + 1)["price"] == pytest.approx(2.5 * 1.2, rel=1e-12)
