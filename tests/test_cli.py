"""The command line: calc output forms and clear errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from workbook.cli import main

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "catalog" / "scenarios" / "17.9.1-llama-7b-h800.yaml"
SERVE = ROOT / "catalog" / "scenarios" / "17.9.6-70b-inference-h20.yaml"


def test_calc_json_is_one_object_of_numbers(capsys):
    assert main(["calc", "--json", str(LLAMA)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params_total"] > 6.7e9
    assert all(isinstance(v, (int, float)) for v in data.values())


def test_calc_prints_scenarios_side_by_side(capsys):
    assert main(["calc", str(LLAMA), str(SERVE)]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert "llama-7b-h800x256" in header and "llama-3-70b-serve-h20-tp4" in header
    assert "params_total" in out and "[Plan]" in out


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbook", *args], capture_output=True, text=True, cwd=ROOT)


def test_unknown_model_is_exit_2_with_closest_ids_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmodel: llama-7c\ngpu: h800\n")
    r = _run("calc", str(bad))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert "bad.yaml" in r.stderr and "llama-7b" in r.stderr


def test_out_of_range_names_field_and_range(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmodel: llama-7b\ngpu: h800\ntraining:\n  mfu: 1.5\n")
    r = _run("calc", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "training.mfu" in r.stderr and ":5" in r.stderr


def test_nan_is_rejected(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmodel: llama-7b\ngpu: h800\ntraining:\n  tokens: .nan\n")
    r = _run("calc", str(bad))
    assert r.returncode == 2 and "training.tokens" in r.stderr
