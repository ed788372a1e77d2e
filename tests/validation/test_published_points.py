"""The shipped validation files hold the published points issue 7 asks for, each with its source,
notes, tolerance and holdout flag; no point compares MFU-given planning at the default MFU."""

from __future__ import annotations

import pytest

from workbook.calc import registry
from workbook.validation import default_files, load_validation_file

CASES = {(c.file.split("/")[-1], c.point.point): c
         for p in default_files() for c in load_validation_file(p).cases}

#: (file, point) -> (key, published value, holdout)
REQUIRED = {
    ("megatron-ptdp-530b-1t.yaml", "step-hw-tflops-530b-560"): ("st_hardware_TFLOPS_per_gpu", 171, False),
    ("megatron-ptdp-530b-1t.yaml", "step-hw-tflops-530b-1120"): ("st_hardware_TFLOPS_per_gpu", 167, True),
    ("megatron-ptdp-530b-1t.yaml", "step-hw-tflops-530b-2240"): ("st_hardware_TFLOPS_per_gpu", 159, False),
    ("megatron-ptdp-530b-1t.yaml", "step-hw-tflops-1t-3072"): ("st_hardware_TFLOPS_per_gpu", 163, False),
    ("megatron-ptdp-530b-1t.yaml", "train-days-530b-560"): ("plan_train_days_with_overhead", 156, False),
    ("korthikanti-gpt3-175b.yaml", "step-time-22b-full-recompute"): ("st_step_s", 1.42, False),
    ("korthikanti-gpt3-175b.yaml", "step-time-22b-selective-sp"): ("st_step_s", 1.10, False),
    ("korthikanti-gpt3-175b.yaml", "step-time-1t-full-recompute"): ("st_step_s", 94.42, False),
    ("korthikanti-gpt3-175b.yaml", "step-time-1t-selective-sp"): ("st_step_s", 71.49, True),
    ("llama1-a100.yaml", "llama-7b-gpu-hours"): ("train_job_gpu_hours", 82432, False),
    ("llama1-a100.yaml", "llama-13b-gpu-hours"): ("train_job_gpu_hours", 135168, False),
    ("llama1-a100.yaml", "llama-33b-gpu-hours"): ("train_job_gpu_hours", 530432, True),
    ("llama1-a100.yaml", "llama-65b-gpu-hours"): ("train_job_gpu_hours", 1022362, False),
    ("llama1-a100.yaml", "llama-65b-tokens-per-gpu"): ("train_tokens_per_s_per_gpu", 380, False),
    ("deepseek-v3-h800.yaml", "pretrain-gpu-hours"): ("train_job_gpu_hours", 2.664e6, False),
    ("params.yaml", "megatron-22b"): ("params_total", 22e9, False),
    ("params.yaml", "megatron-1t"): ("params_total", 1008.0e9, True),
}


@pytest.mark.parametrize("where", sorted(REQUIRED), ids=[f"{f}:{p}" for f, p in sorted(REQUIRED)])
def test_required_point_is_there_with_key_value_source_notes_and_holdout(where):
    key, value, holdout = REQUIRED[where]
    c = CASES[where]
    assert c.point.key == key and key in registry()
    assert c.published == pytest.approx(value)
    assert c.point.holdout is holdout
    assert "arXiv" in c.point.source and any(w in c.point.source for w in ("Table", "Section"))
    assert c.point.notes.strip() and c.point.as_of and c.point.tolerance > 0


def test_holdouts_are_a_minority_in_every_file_that_has_them():
    files = {f for f, _ in CASES}
    for f in files:
        pts = [c for (g, _), c in CASES.items() if g == f]
        assert sum(c.point.holdout for c in pts) * 2 < len(pts), f


def test_no_plan_point_runs_at_the_default_mfu():
    """A plan_* key (MFU given) only measures something at the MFU the paper implies (a FLOP-accounting
    check); at the default 0.40 it compares a typed guess."""
    for (f, name), c in CASES.items():
        if c.point.key.startswith("plan_"):
            assert "mfu" in c.scenario.training.model_fields_set, f"{f}:{name}"


def test_llama1_points_share_the_65b_layout_and_use_the_step_model():
    pts = [c for (f, _), c in CASES.items() if f == "llama1-a100.yaml"]
    layouts = {(t.num_gpus, t.tp, t.pp, t.micro_batch, t.grad_accum, t.seq_len, t.recompute, t.sequence_parallel,
                t.flash_attention, t.time_model) for t in (c.scenario.training for c in pts)}
    assert layouts == {(2048, 8, 1, 1, 8, 2048, "selective", "on", "on", "step")}


def test_deepseek_v3_overlaps_the_all_to_all_on_the_step_model():
    t = CASES[("deepseek-v3-h800.yaml", "pretrain-gpu-hours")].scenario.training
    assert (t.time_model, t.ep_overlap_frac, t.pipeline_schedule, t.ep, t.pp) == ("step", 1.0, "1f1b", 64, 16)
