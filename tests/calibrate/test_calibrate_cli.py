"""`workbook calibrate`: the fit, the overlay it writes (accepted by calc, validate, build), bad input exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from workbook.catalog import load_catalog
from workbook.cli import main
from workbook.validation import DEFAULT_DIR

ROOT = Path(__file__).resolve().parents[2]
LLAMA = DEFAULT_DIR / "llama1-a100.yaml"
SCENARIO = ROOT / "catalog" / "scenarios" / "17.9.1-llama-7b-h800.yaml"


@pytest.fixture(scope="module")
def overlay(tmp_path_factory):
    out = tmp_path_factory.mktemp("cal") / "overlay"
    assert main(["calibrate", str(LLAMA), "-o", str(out), "--as-of", "2026-12-04"]) == 0
    return out


def test_calibrate_writes_whole_efficiency_records_with_source_as_of_and_fit_error(overlay):
    recs = yaml.safe_load((overlay / "efficiency.yaml").read_text())
    # the fitted record and the GPUs on its compute die (compute_as), which take the same value
    assert [r["gpu"] for r in recs] == ["a100-40gb", "a100-80gb", "a800"]
    assert len({r["gemm_efficiency"] for r in recs}) == 1
    r = recs[1]
    assert r["source"] == "calibrated from llama1-a100.yaml" and str(r["as_of"]) == "2026-12-04"
    assert "mean |error|" in r["field_sources"]["gemm_efficiency"] and "leave-one-point-out" in r["notes"]
    shipped = load_catalog().efficiency["a100-80gb"]
    assert 0.2 < r["gemm_efficiency"] < 0.95 and r["attention_efficiency"] == shipped.attention_efficiency
    report = json.loads((overlay / "calibration.json").read_text())
    assert [f["factor"] for f in report["factors"]] == ["efficiency[a100-80gb].gemm_efficiency"]
    assert "efficiency[a100-80gb].attention_efficiency" in report["unconstrained"]
    assert report["cv_grouping"] == "point"


def test_overlay_is_accepted_by_calc_and_validate_and_moves_the_numbers(overlay, capsys):
    assert main(["validate", "--json", str(LLAMA)]) in (0, 1)
    before = json.loads(capsys.readouterr().out)["points"]
    assert main(["validate", "--json", "--catalog", str(overlay), str(LLAMA)]) in (0, 1)
    after = json.loads(capsys.readouterr().out)["points"]
    assert [p["ours"] for p in before] != [p["ours"] for p in after]
    assert main(["calc", "--json", "--catalog", str(overlay), str(SCENARIO)]) == 0
    assert json.loads(capsys.readouterr().out)["params_total"] > 0


def test_overlay_is_accepted_by_build(overlay, tmp_path):
    out = tmp_path / "b.xlsx"
    assert main(["build", "--catalog", str(overlay), "--scenarios", str(SCENARIO), "-o", str(out)]) == 0
    assert out.is_file()


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbook", *args], capture_output=True, text=True, cwd=ROOT)


def _bad(tmp_path: Path, old: str, new: str) -> Path:
    p = tmp_path / "bad.yaml"
    p.write_text(LLAMA.read_text().replace(old, new, 1))
    return p


@pytest.mark.parametrize("case", ["unknown-key", "not-expressible", "unknown-factor", "too-many-factors",
                                  "onto-catalogue"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case, capsys):
    out = tmp_path / "o"
    files = [str(LLAMA)]
    extra: list[str] = []
    expect = ""
    if case == "unknown-key":
        files = [str(_bad(tmp_path, "key: train_job_gpu_hours", "key: train_job_gpu_hourz"))]
    elif case == "not-expressible":
        text = LLAMA.read_text().replace("key: train_job_gpu_hours\n    value: 82432\n    unit: GPU-h",
                                         "key: storage_dataset_total_TB\n    value: 4\n    unit: TB", 1)
        assert "storage_dataset_total_TB" in text
        (tmp_path / "bad.yaml").write_text(text)
        files = [str(tmp_path / "bad.yaml")]
        expect = "calibration cannot use"
    elif case == "unknown-factor":
        extra = ["--factors", "efficiency.no_such_factor"]
    elif case == "too-many-factors":  # one GPU-hours point cannot tell two factors apart
        one = tmp_path / "one.yaml"
        data = yaml.safe_load(LLAMA.read_text())
        data["points"] = [p for p in data["points"] if p["point"] == "llama-65b-gpu-hours"]
        one.write_text(yaml.safe_dump(data))
        files = [str(one)]
        extra = ["--factors", "efficiency.gemm_efficiency,efficiency.network_efficiency"]
        expect = "tell only 1 apart"
    elif case == "onto-catalogue":
        out = DEFAULT_DIR.parent
    code = main(["calibrate", *files, "-o", str(out), *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert expect in err
    assert not (tmp_path / "o").exists()


def test_bad_input_from_the_shell_has_no_traceback(tmp_path):
    r = _run("calibrate", str(LLAMA), "-o", str(tmp_path / "o"), "--factors", "engine.nope")
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_an_existing_overlay_is_kept_unless_force(overlay, capsys):
    before = (overlay / "efficiency.yaml").read_text()
    assert main(["calibrate", str(LLAMA), "-o", str(overlay)]) == 2
    assert "already holds an overlay" in capsys.readouterr().err
    assert (overlay / "efficiency.yaml").read_text() == before
    assert main(["calibrate", str(LLAMA), "-o", str(overlay), "--force", "--as-of", "2026-12-04"]) == 0
    assert (overlay / "efficiency.yaml").read_text() == before


def test_a_factor_the_record_leaves_out_is_refused_in_one_line(tmp_path, capsys):
    """--factors efficiency[a100-80gb].fp8_gemm_efficiency: the A100 has no FP8 units, its record leaves the field
    out; exit 2 with one line that says so (not a traceback)."""
    from workbook.cli import main
    from workbook.validation import DEFAULT_DIR

    assert main(["calibrate", str(DEFAULT_DIR / "llama1-a100.yaml"), "-o", str(tmp_path / "o"),
                 "--factors", "efficiency[a100-80gb].fp8_gemm_efficiency"]) == 2
    assert not (tmp_path / "o").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "leaves this field out" in err[0]


def test_a_link_at_the_overlay_folder_or_file_is_refused(tmp_path, capsys):
    """-o DIR that is a link (planted in a shared folder) and a link planted at efficiency.yaml: one line, exit 2,
    nothing written where they point (workbook/safe_write.py)."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "o").symlink_to(real)
    assert main(["calibrate", str(LLAMA), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{tmp_path / 'o'}: the output folder is a symbolic link to {real}" in err[0]
    assert list(real.iterdir()) == []
    out = tmp_path / "out"
    out.mkdir()
    (out / "efficiency.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    assert main(["calibrate", str(LLAMA), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "efficiency.yaml: the output path is a symbolic link" in err[0]
    assert not (tmp_path / "elsewhere.yaml").exists() and [p.name for p in out.iterdir()] == ["efficiency.yaml"]
