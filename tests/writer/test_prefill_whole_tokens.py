"""Prefill counts whole tokens (docs/serving.md "Prefill"): a load refinement whose fractional batch of prompts puts
its prompt tokens just above a chunk boundary has exact chunks, and `workbook verify` passes in every engine with no
prefill cell left to conditioning.

Two scenarios: batch x prompt 1e-10 token above two chunks (floating-point noise: two full chunks), and 1e-4 token
above (a token more: a third chunk of one token). Counted in fractional tokens, that last chunk of 1e-4 token was a
difference of two numbers near 8,192, and Gnumeric's last bits put it 1e-8 apart from the reference (conditioning)."""

from __future__ import annotations

import re

import openpyxl
import pytest

from tests.calc.prefill_boundary import boundary_scenario
from workbook.readback import key_rows
from workbook.verify import verify
from workbook.writer import build
from workbook.writer.layout import value_col

pytestmark = pytest.mark.slow

ROWS = ("tokens", "chunks", "last_tokens")


@pytest.fixture(scope="module")
def boundary_book(tmp_path_factory, catalog):
    noise, kc = boundary_scenario(catalog, 1e-10, name="prefill-boundary-noise")
    token, _ = boundary_scenario(catalog, 1e-4, name="prefill-boundary-token")
    path = tmp_path_factory.mktemp("boundary") / "boundary.xlsx"
    build(path, [noise, token], catalog, [("Scenarios", "prefill just above a chunk boundary")])
    return path, kc


def test_prefill_just_above_a_chunk_boundary_has_whole_chunks_and_verifies(boundary_book):
    path, kc = boundary_book
    ws = openpyxl.load_workbook(path, data_only=True)["Inference"]
    rows = key_rows(ws)
    cached = {r: [ws.cell(rows[f"srv_ss1_pf_{r}"] + 1, value_col(i) + 1).value for i in range(2)] for r in ROWS}
    assert cached == {"tokens": [kc, kc + 1], "chunks": [2, 3], "last_tokens": [kc / 2, 1]}

    report = verify(path)  # every engine installed
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:20])
    blocks = tuple(k[:-len("last_tokens")] for k in rows if k.endswith("_last_tokens"))  # every prefill block
    prefill_rows = {rows[k] + 1 for k in rows if k.startswith(blocks)}
    assert [str(m) for m in report.conditioned
            if m.sheet == "Inference" and int(re.sub(r"\D", "", m.cell)) in prefill_rows] == []
