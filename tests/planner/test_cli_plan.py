"""`workbook plan`: the printed recommendation, --json, the plan workbook (verified), clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_serving_request_says_not_yet_searched(tmp_path, capsys):
    req = ROOT / "catalog" / "requests" / "serve-70b-chat.yaml"
    assert main(["plan", str(req), "-o", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["serving"]["status"].startswith("not yet searched")
    assert data["serving"]["load"]["requests_per_s"] == 20 and data["workbook"] is None
    assert not list(tmp_path.iterdir())


def test_parameter_count_only_gives_the_estimate_and_no_workbook(tmp_path, capsys):
    req = _request_file(tmp_path, model={"params_total": 70e9}, tokens=3e12, target_days=60, budget_usd=2e6,
                        candidate_gpus=["h800"], price_basis="reserved", early_estimate={"mfu": 0.4})
    assert main(["plan", str(req), "-o", str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "640 GPUs (80 nodes)" in text and "57.57 days" in text and "$1,843,200" in text
    assert "not searched" in text and "no plan workbook" in text
