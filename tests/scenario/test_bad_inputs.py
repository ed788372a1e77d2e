"""The bad-input corpus (tests/data/bad/*.yaml): each file gives InputError with file, line, field."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.catalog import Gpu, load_catalog
from workbook.catalog.load import load_records
from workbook.errors import InputError
from workbook.scenario import load_scenario
from workbook.scenario.resolve import resolve

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
CATALOG = load_catalog()

#: file -> (line, field, words the message must contain)
EXPECTED: dict[str, tuple[int, str | None, tuple[str, ...]]] = {
    "malformed_yaml.yaml": (6, None, ("malformed YAML",)),
    "unknown_field.yaml": (6, "training.sequence_length", ("unknown field", "seq_len")),
    "wrong_type.yaml": (6, "training.num_gpus", ("valid integer", "'many'")),
    "out_of_range.yaml": (6, "training.mfu", ("1.5", "0.05 <= x <= 0.9")),
    "nan_value.yaml": (6, "network.network_efficiency", ("finite", "nan")),
    "inf_value.yaml": (6, "storage.fs_write_GBps", ("finite", "inf")),
    "missing_field.yaml": (2, "gpu", ("required field is missing",)),
    "unknown_model.yaml": (4, "model", ("unknown model id 'llama-3-70'", "closest: llama-3-70b")),
    "unknown_gpu.yaml": (3, "gpu", ("unknown GPU id 'h100-sxm'", "closest: h100")),
    "duplicate_key.yaml": (7, "training.mfu", ("duplicate key 'mfu'", "line 6")),
    "bad_layout.yaml": (4, "training", ("multiple of tp*cp*pp=16",)),
    "measured_without_rate.yaml": (4, "training", ("time_model=measured needs training.measured_TFLOPS_per_gpu",)),
    "bad_expert_layout.yaml": (6, "training.ep", ("ep=3 must divide the model's 8 routed experts",)),
    "bad_pp_layers.yaml": (6, "training.pp", ("pp=16 exceeds the model's 12 layers",)),
    "bad_inline_arch.yaml": (10, "model_arch.vocab", ("-5", "1 <= x <= 10000000")),
    "duplicate_gpu_ids.yaml": (17, "x1.id", ("duplicate id 'x1'", "line 1")),
    "catalog_out_of_range.yaml": (5, "x2.hbm_GB", ("-80", "0 < x <= 10000")),
    "catalog_unknown_field.yaml": (17, "x1.hbm_bandwidth", ("unknown field", "did you mean hbm_bw_GBps?")),
    "catalog_missing_field.yaml": (1, "x1.hbm_device_MiB", ("required field is missing", "also missing: hbm_bw_GBps")),
    "negative_gpus.yaml": (6, "training.num_gpus", ("-8", "1 <= x <= 1000000")),
    "negative_tokens.yaml": (6, "training.tokens", ("-2000000000000", "1000000 <= x <= 1e+16")),
    "negative_price.yaml": (6, "cost.gpu_hour_usd", ("-2.5", "0.01 <= x <= 10000")),
    "negative_inf.yaml": (6, "cost.pue", ("finite", "-inf")),
    "nan_tokens.yaml": (6, "training.tokens", ("finite", "nan")),
    "zero_target_days.yaml": (6, "training.target_days", ("got 0", "0.1 <= x <= 3650")),
    "zero_price.yaml": (6, "cost.gpu_hour_usd", ("got 0", "0.01 <= x")),
    "zero_seq_len.yaml": (6, "training.seq_len", ("got 0", "16 <= x")),
    "bad_mfu_zero.yaml": (6, "training.mfu", ("got 0", "0.05 <= x <= 0.9")),
    "absurd_tokens.yaml": (6, "training.tokens", ("1e+40", "x <= 1e+16")),
    "absurd_gpus.yaml": (6, "training.num_gpus", ("100000000000", "x <= 1000000")),
    "unit_suffix.yaml": (6, "storage.fs_write_GBps", ("valid number", "'100GB/s'")),
    "unit_suffix_tokens.yaml": (6, "training.tokens", ("valid number", "'2T'")),
    "wrong_type_bool.yaml": (6, "inference.batch", ("valid integer",)),
    "wrong_type_choice.yaml": (6, "training.precision", ("'bf17'", "'fp32', 'bf16', 'fp16' or 'fp8'")),
    "wrong_type_section.yaml": (4, "training", ("valid dictionary", "42")),
    "unknown_section.yaml": (4, "trainig", ("unknown field", "training")),
    "unknown_top_field.yaml": (4, "budget", ("unknown field", "cost")),
    "missing_name.yaml": (1, "name", ("required field is missing",)),
    "both_models.yaml": (1, None, ("exactly one of 'model'",)),
    "empty_name.yaml": (1, "name", ("at least 1 character",)),
    "long_name.yaml": (1, "name", ("at most 64 characters",)),
    "not_a_mapping.yaml": (1, None, ("must be a mapping",)),
    "empty.yaml": (1, None, ("must be a mapping",)),
    "comment_only.yaml": (1, None, ("must be a mapping",)),
    "tab_indent.yaml": (5, None, ("malformed YAML", "'\\t'")),
    "unclosed_quote.yaml": (4, None, ("malformed YAML", "quoted scalar")),
    "non_utf8.yaml": (3, None, ("not UTF-8 text", "0xff", "UTF-8 encoded")),
    # issue 24: YAML 1.2 numbers and booleans, dates, control characters, bounded parsing
    "yes_as_number.yaml": (6, "training.num_gpus", ("valid integer", "'yes'")),
    "leading_zero_number.yaml": (6, None, ("ambiguous number '0400'", "leading zero")),
    "invalid_date.yaml": (8, None, ("invalid date '2026-02-30'", "day is out of range")),
    "control_vt.yaml": (1, None, ("control character U+000B",)),
    "control_fffe.yaml": (1, None, ("control character U+FFFE",)),
    "control_nul.yaml": (1, None, ("control character U+0000",)),
    "recursive_alias.yaml": (4, None, ("recursive structure",)),
    "deep_nesting.yaml": (4, None, ("nested more than 64 levels",)),
    "alias_bomb.yaml": (10, None, ("once aliases are expanded",)),
}
CATALOG_FILES = {"duplicate_gpu_ids.yaml", "catalog_out_of_range.yaml", "catalog_unknown_field.yaml",
                 "catalog_missing_field.yaml"}


def _load(path: Path) -> None:
    if path.name in CATALOG_FILES:
        load_records(path, Gpu)
    else:
        resolve(load_scenario(path), CATALOG)


def test_corpus_is_complete() -> None:
    assert {p.name for p in BAD.glob("*.yaml")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input(name: str) -> None:
    line, field, words = EXPECTED[name]
    path = BAD / name
    with pytest.raises(InputError) as info:
        _load(path)
    err = info.value
    text = str(err)
    assert err.file == str(path) and text.startswith(f"{path}:{line}: ")
    assert err.line == line
    assert err.field == field
    for w in words:
        assert w in text, f"{w!r} not in {text!r}"
