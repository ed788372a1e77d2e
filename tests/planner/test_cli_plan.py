"""`workbook plan`: the printed recommendation, --json, the plan workbook (verified), clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.planner.helpers import BASE
from workbook.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _request_file(tmp_path, **changes) -> Path:
    data = {**BASE, "target_days": 2.0, "budget_usd": 5e4, "request_id": "cli-1", **changes}
    p = tmp_path / "req.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbook", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.slow
def test_plan_prints_writes_and_the_workbook_verifies(tmp_path, capsys):
    from workbook.engines import available_engines
    from workbook.verify import verify

    req = _request_file(tmp_path)
    out = tmp_path / "out"
    assert main(["plan", str(req), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Recommended: h100 x " in text and "days" in text and "headroom" in text
    assert "Rejected (check: count, closest miss)" in text and "Serving: not requested" in text
    book = out / "cli-1.xlsx"
    assert book.is_file()
    report = verify(book, available_engines())
    assert report.ok
    # never overwrite silently
    assert main(["plan", str(req), "-o", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["plan", str(req), "-o", str(out), "--force", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rec = data["training"]["recommended"]
    assert rec["gpu"] == "h100" and rec["train_days"] <= 2.0 and rec["train_cost_usd"] <= 5e4
    assert rec["num_gpus"] == rec["tp"] * rec["cp"] * rec["pp"] * rec["dp"] and rec["num_gpus"] % 8 == 0
    assert data["workbook"] == str(book) and data["training"]["search"]["evaluated"] > 0


def test_bad_request_is_exit_2_naming_file_line_and_field(tmp_path):
    bad = _request_file(tmp_path, constraints={**BASE["constraints"], "max_gpus": 99999})
    r = _run("plan", str(bad), "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "req.yaml:" in r.stderr and "constraints.max_gpus" in r.stderr and "1 <= x <= 16384" in r.stderr
    bad = _request_file(tmp_path, colour="blue")
    r = _run("plan", str(bad), "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "colour: unknown field" in r.stderr
    assert not (tmp_path / "o").exists()


def test_infeasible_serving_request_gives_advice_and_no_workbook(tmp_path, capsys):
    data = yaml.safe_load((ROOT / "catalog" / "requests" / "serve-70b-chat.yaml").read_text())
    data["serving"]["ttft_ms"] = 20
    req = tmp_path / "req.yaml"
    req.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["plan", str(req), "-o", str(tmp_path / "o"), "--json"]) == 0
    sv = json.loads(capsys.readouterr().out)["serving"]
    assert sv["status"] == "infeasible" and sv["recommended"] is None
    assert [c["field"] for c in sv["infeasible"]["changes"]] == ["serving.ttft_ms"]
    assert sv["infeasible"]["changes"][0]["to"] > 20 and sv["load"]["requests_per_s"] == 20
    assert not (tmp_path / "o").exists()
    assert main(["plan", str(req), "-o", str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "No serving layout carries the load" in text and "serving.ttft_ms: 20 ->" in text
    assert "no plan workbook: no training plan and no serving plan carries the load" in text


def test_parameter_count_only_gives_the_estimate_and_no_workbook(tmp_path, capsys):
    req = _request_file(tmp_path, model={"params_total": 70e9}, tokens=3e12, target_days=60, budget_usd=2e6,
                        candidate_gpus=["h800"], price_basis="reserved", early_estimate={"mfu": 0.4})
    assert main(["plan", str(req), "-o", str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "640 GPUs (80 nodes)" in text and "57.57 days" in text and "$1,843,200" in text
    assert "not searched" in text and "no plan workbook" in text


def test_estimate_layout_the_model_cannot_take_is_stated_and_json_serialises_an_inline_model(tmp_path, capsys):
    """The quick path at TP 1 needs PP 64 for a 40-layer inline MoE: no estimate column, the reason, a plan."""
    text = (ROOT / "catalog/requests/17.9.2-moe-h800.yaml").read_text()
    assert "\n  tp: 8 " in text
    req = tmp_path / "r.yaml"
    req.write_text(text.replace("\n  tp: 8 ", "\n  tp: 1 "))
    assert main(["plan", str(req), "-o", str(tmp_path / "o"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["early_estimate"]["h800"]["PP"] == 64
    col = data["estimate_column"]
    assert col["scenario"] is None and not col["in_workbook"] and "pp=64 exceeds the model's 40 layers" in col["reason"]
    assert data["request"]["model"]["arch"]["as_of"] == "2026-12-01"
    assert data["training"]["recommended"]["num_gpus"] == 1024
