"""catalog/mfu.yaml: every run's implied MFU derived again from its validation point's published
figure, inside its row's range; ranges no wider than the runs plus the stated margin; the lookup."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbook.catalog import DEFAULT_DIR as CATALOG_DIR
from workbook.catalog import load_catalog
from workbook.catalog.mfu import MFU_FILE, RANGE_ROUNDING, load_mfu
from workbook.errors import InputError
from workbook.reference.params import model_param_counts
from workbook.reference.planning import mfu_lookup, mfu_lookup_measured
from workbook.validation import DEFAULT_DIR, load_validation_file

CATALOG = load_catalog()
ROWS = CATALOG.mfu
RUNS = [(row, run) for row in ROWS for run in row.runs]


def _case(point: str):
    fname, name = point.split(":")
    cases = [c for c in load_validation_file(DEFAULT_DIR / fname, catalog=CATALOG).cases if c.point.point == name]
    assert len(cases) == 1, point
    return cases[0]


def implied_mfu(case) -> float:
    """6 x P_active x (tokens/s per GPU) / BF16 dense peak, from the point's published figure."""
    sc, t, key = case.scenario, case.scenario.training, case.point.key
    if key == "train_job_gpu_hours":
        tok_s_gpu = t.tokens / (case.published * 3600)
    elif key == "train_tokens_per_s_per_gpu":
        tok_s_gpu = case.published
    elif key == "st_step_s":
        dp = t.num_gpus // (t.tp * t.cp * t.pp)
        tok_s_gpu = t.micro_batch * t.grad_accum * dp * t.seq_len / (t.num_gpus * case.published)
    else:
        raise AssertionError(f"{case.point.point}: {key} is not a GPU-hours, tokens/s or step-time point")
    p_active = model_param_counts(CATALOG.model(sc.model))["params_active"]
    return 6 * p_active * tok_s_gpu / (CATALOG.gpu(sc.gpu).bf16_dense_TFLOPS * 1e12)


def test_table_loads_with_the_three_settings():
    assert {r.setting for r in ROWS} == {"dense_single_node", "dense_multi_node", "moe_multi_node"}
    assert all(r.source.strip() and r.as_of and r.runs for r in ROWS)


@pytest.mark.parametrize("row, run", RUNS, ids=[run.point for _, run in RUNS])
def test_run_mfu_derives_from_its_validation_point_and_lies_in_its_row(row, run):
    case = _case(run.point)
    assert (case.scenario.model, case.scenario.gpu, case.scenario.training.num_gpus) == (run.model, run.gpu, run.gpus)
    got = implied_mfu(case)
    assert got == pytest.approx(run.implied_mfu, abs=5e-4)
    assert row.mfu_low <= got <= row.mfu_high
    assert row.gpus_min <= run.gpus <= row.gpus_max


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_range_is_the_runs_plus_the_margin_and_no_more(row):
    mfus = [implied_mfu(_case(run.point)) for run in row.runs]
    assert row.margin <= 0.02
    assert min(mfus) - row.margin - RANGE_ROUNDING <= row.mfu_low <= min(mfus)
    assert max(mfus) <= row.mfu_high <= max(mfus) + row.margin + RANGE_ROUNDING


def test_the_issue_runs_correct_the_book():
    """Issue 7 item 5: LLaMA-65B on 2048 A100 implies 0.478 (the book's table gives 0.30-0.39 there);
    DeepSeek-V3 implies 0.35 of the BF16 peak."""
    llama = implied_mfu(_case("llama1-a100.yaml:llama-65b-gpu-hours"))
    assert llama == pytest.approx(0.478, abs=1e-3)
    assert mfu_lookup(moe=False, num_gpus=2048, pick="high") < llama  # the book, unchanged
    assert mfu_lookup_measured(moe=False, num_gpus=2048) <= llama <= mfu_lookup_measured(moe=False, num_gpus=2048,
                                                                                         pick="high")
    ds = implied_mfu(_case("deepseek-v3-h800.yaml:pretrain-gpu-hours"))
    assert ds == pytest.approx(0.351, abs=1e-3)
    assert mfu_lookup_measured(moe=True, num_gpus=2048) <= ds <= mfu_lookup_measured(moe=True, num_gpus=2048,
                                                                                     pick="high")


def test_lookup_picks_setting_and_gpu_range_and_refuses_uncovered_counts():
    assert mfu_lookup_measured(moe=False, num_gpus=8) == 0.375
    assert mfu_lookup_measured(moe=False, num_gpus=512, pick="high") == 0.575
    assert mfu_lookup_measured(moe=False, num_gpus=16384, pick="mid") == pytest.approx((0.326 + 0.366) / 2)
    assert mfu_lookup_measured(moe=False, num_gpus=8, rows=ROWS) == mfu_lookup_measured(moe=False, num_gpus=8)
    with pytest.raises(ValueError, match="no measured MFU for dense_multi_node on 32768 GPUs"):
        mfu_lookup_measured(moe=False, num_gpus=32768)
    with pytest.raises(ValueError, match="covers 9-4096"):
        mfu_lookup_measured(moe=True, num_gpus=8192)
    with pytest.raises(ValueError, match="pick"):
        mfu_lookup_measured(moe=False, num_gpus=8, pick="median")


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    text = (CATALOG_DIR / MFU_FILE).read_text()
    assert old in text, old
    p = tmp_path / MFU_FILE
    p.write_text(text.replace(old, new, 1))
    return p


@pytest.mark.parametrize("old, new, fragments", [
    ("  mfu_high: 0.575", "  mfu_high: 0.60", ["dense-multi-node-1k", "wider than the runs plus the margin",
                                                "dense-multi-node-1k.mfu_high"]),
    ("  mfu_low: 0.480", "  mfu_low: 0.51", ["leaves out a run", "dense-multi-node-1k.mfu_low"]),
    ("      gpus: 280", "      gpus: 2800", ["outside 9-1024", "dense-multi-node-1k.runs[1].gpus"]),
    ("  gpus_min: 1025", "  gpus_min: 1000", ["overlap row 'dense-multi-node-1k'", "dense-multi-node-4k.gpus_min"]),
    ("      model: megatron-1t", "      model: megatron-2t", ["unknown model id 'megatron-2t'", "dense-multi-node-1k.runs[2].model"]),
    ("      basis: step_time", "      basis: guess", ["dense-single-node.runs[0].basis"]),
])
def test_bad_table_names_file_line_record_and_field(tmp_path, old, new, fragments):
    p = _edited(tmp_path, old, new)
    with pytest.raises(InputError) as err:
        load_mfu(p, gpu_ids=CATALOG.gpus, model_ids=CATALOG.models)
    text = str(err.value)
    assert err.value.file == str(p) and err.value.line is not None
    for f in fragments:
        assert f in text, (f, text)


def test_catalog_dir_needs_the_table(tmp_path):
    for f in ("gpus.yaml", "models.yaml", "defaults.yaml", "efficiency.yaml"):
        shutil.copy(CATALOG_DIR / f, tmp_path / f)
    with pytest.raises(InputError, match="mfu.yaml"):
        load_catalog(tmp_path)
