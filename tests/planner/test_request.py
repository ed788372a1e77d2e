"""Plan requests: the shipped ones load; bad ones fail with file, line, field and the allowed range."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.planner.helpers import CATALOG
from workbook.errors import InputError
from workbook.planner.request import ModelByCount, ModelInline, load_request

ROOT = Path(__file__).resolve().parents[2]
REQUESTS = sorted((ROOT / "catalog" / "requests").glob("*.yaml"))

GOOD = """title: t
request_id: r-1
requester: me
cost_centre: cc
model: llama-3-8b
tokens: 1e11
target_days: 10
candidate_gpus: [h100]
"""


def _write(tmp_path, text: str) -> Path:
    p = tmp_path / "req.yaml"
    p.write_text(text)
    return p


def _error(tmp_path, text: str) -> InputError:
    with pytest.raises(InputError) as exc:
        load_request(_write(tmp_path, text), CATALOG)
    return exc.value


def test_shipped_requests_load():
    assert len(REQUESTS) >= 3
    reqs = {r.request_id: r for r in (load_request(p, CATALOG) for p in REQUESTS)}
    assert reqs["17.9.4-70b-h800"].tokens == 3e12 and reqs["17.9.4-70b-h800"].target_days == 60
    assert reqs["serve-70b-chat"].serving.requests_per_s == 20 and not reqs["serve-70b-chat"].wants_training
    assert CATALOG.model(reqs["moe-mixtral-8x7b"].model).moe


def test_good_request_and_model_forms(tmp_path):
    assert load_request(_write(tmp_path, GOOD), CATALOG).model == "llama-3-8b"
    r = load_request(_write(tmp_path, GOOD.replace("model: llama-3-8b", "model: {params_total: 7e10}")), CATALOG)
    assert isinstance(r.model, ModelByCount) and r.model.params_total == 7e10
    arch = ("model:\n  arch: {layers: 2, d_model: 256, d_ff: 1024, n_heads: 4, n_kv_heads: 4, head_dim: 64,"
            " vocab: 1000, tied_embeddings: true, ffn: swiglu, attention: mha, qkv_bias: false, norm: rmsnorm,"
            " norm_params_per_layer: 512}")
    r = load_request(_write(tmp_path, GOOD.replace("model: llama-3-8b", arch)), CATALOG)
    assert isinstance(r.model, ModelInline)


def test_unknown_field_names_file_line_and_allowed_fields(tmp_path):
    err = _error(tmp_path, GOOD + "constraints:\n  max_gpu: 64\n")
    assert err.file.endswith("req.yaml") and err.line == 10 and err.field == "constraints.max_gpu"
    assert "unknown field" in str(err) and "max_gpus" in err.expected


def test_out_of_range_gives_the_range(tmp_path):
    err = _error(tmp_path, GOOD + "constraints:\n  max_gpus: 20000\n")
    assert (err.line, err.field) == (10, "constraints.max_gpus")
    assert err.expected == "1 <= x <= 16384"
    err = _error(tmp_path, GOOD.replace("target_days: 10", "target_days: 0"))
    assert (err.line, err.field, err.expected) == (7, "target_days", "0.1 <= x <= 3650")


def test_bad_value_type_and_choice(tmp_path):
    err = _error(tmp_path, GOOD.replace("tokens: 1e11", "tokens: lots"))
    assert (err.line, err.field) == (6, "tokens") and "lots" in str(err)
    err = _error(tmp_path, GOOD + "price_basis: cheap\n")
    assert err.field == "price_basis" and "on_demand" in err.expected


def test_model_forms_errors(tmp_path):
    err = _error(tmp_path, GOOD.replace("model: llama-3-8b", "model:\n  params_total: 7e20"))
    assert (err.line, err.field, err.expected) == (6, "model.params_total", "1000000 <= x <= 1e+14")
    err = _error(tmp_path, GOOD.replace("model: llama-3-8b", "model: llama-3-8c"))
    assert err.field == "model" and err.line == 5 and "llama-3-8b" in str(err)
    err = _error(tmp_path, GOOD.replace("model: llama-3-8b", "model:\n  arch: {layers: 0}"))
    assert err.field.startswith("model.arch") and err.line == 6


def test_unknown_gpu_names_its_line(tmp_path):
    err = _error(tmp_path, GOOD.replace("[h100]", "\n  - h100\n  - h900"))
    assert err.field == "candidate_gpus[1]" and err.line == 10


def test_request_level_rules(tmp_path):
    err = _error(tmp_path, GOOD.replace("target_days: 10\n", ""))
    assert "both 'tokens' and 'target_days'" in str(err)
    serving = "serving: {prompt_tokens: 10, output_tokens: 10, ttft_ms: 100, tpot_ms: 10}\n"
    err = _error(tmp_path, GOOD + serving)
    assert err.field == "serving" and "requests_per_s" in str(err) and "static_batch" in str(err)
    both = serving.replace("{prompt", "{concurrency: 4, static_batch: 8, prompt")
    err = _error(tmp_path, GOOD + both)
    assert err.field == "serving" and "got concurrency, static_batch" in str(err)
    static = serving.replace("{prompt", "{static_batch: 8, disaggregation: auto, prompt")
    err = _error(tmp_path, GOOD + static)
    assert err.field == "serving" and "'static_batch' needs disaggregation 'off'" in str(err)
    ok = load_request(_write(tmp_path, GOOD + serving.replace("{prompt", "{static_batch: 8, prompt")), CATALOG)
    assert ok.serving.static_batch == 8 and ok.serving.requests_per_s is None
    err = _error(tmp_path, GOOD + serving.replace("{prompt", "{static_batch: 2000000, prompt"))
    assert err.field == "serving.static_batch" and err.expected == "1 <= x <= 1000000"
    err = _error(tmp_path, GOOD + "training: {seq_len: 4096, global_batch_tokens: 5000}\n")
    assert err.field == "training" and "whole number of sequences" in str(err)


def test_candidate_gpu_needs_a_price_for_the_basis(tmp_path):
    err = _error(tmp_path, GOOD.replace("[h100]", "[l40s]") + "price_basis: reserved\n")
    assert err.field == "candidate_gpus[0]" and "no reserved price" in str(err)
    assert load_request(_write(tmp_path, GOOD.replace("[h100]", "[l40s]") + "price_basis: reserved\n"
                               "gpu_hour_usd: 5\n"), CATALOG).gpu_hour_usd == 5


def test_fidelity_choice_and_the_book_section(tmp_path):
    err = _error(tmp_path, GOOD + "fidelity: books\n")
    assert (err.line, err.field) == (9, "fidelity") and "'measured' or 'book'" in err.expected
    err = _error(tmp_path, GOOD + "book: {mfu: 0.38}\n")
    assert (err.line, err.field) == (9, "book") and "only with fidelity: book" in str(err)
    err = _error(tmp_path, GOOD + "fidelity: book\nbook:\n  mfu: 1.5\n")
    assert (err.line, err.field, err.expected) == (11, "book.mfu", "0.05 <= x <= 0.9")
    err = _error(tmp_path, GOOD + "fidelity: book\nbook: {overhead_GB: -1}\n")
    assert err.field == "book.overhead_GB" and err.expected == "0 <= x <= 10000"
    r = load_request(_write(tmp_path, GOOD + "fidelity: book\nbook: {mfu: 0.38, act_GB: 1}\n"), CATALOG)
    assert (r.fidelity, r.book.mfu, r.book.act_GB, r.book.overhead_GB) == ("book", 0.38, 1, None)
    assert load_request(_write(tmp_path, GOOD), CATALOG).fidelity == "measured"


def test_serving_engine_must_be_a_catalogue_profile(tmp_path):
    serving = "serving:\n  requests_per_s: 1\n  prompt_tokens: 10\n  output_tokens: 10\n  ttft_ms: 100\n  tpot_ms: 10\n" \
              "  engine: vllm-9\n"
    err = _error(tmp_path, GOOD + serving)
    assert err.field == "serving.engine" and err.line == 15 and "vllm-9" in str(err) and "vllm-0.10" in str(err)
    ok = load_request(_write(tmp_path, GOOD + serving.replace("vllm-9", "sglang-0.4")), CATALOG)
    assert ok.serving.engine == "sglang-0.4"
