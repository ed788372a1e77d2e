"""`workbook catalog add-model`: a record from a Hugging Face config.json, the published counts within 1 %
(workbook/catalog/hf_config.py, commands.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from workbook.catalog import DEFAULT_DIR, Model, load_catalog
from workbook.catalog.hf_config import model_from_config
from workbook.catalog.load import load_records
from workbook.cli import main
from workbook.reference.params import model_param_counts

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"
CATALOG = load_catalog()
#: config file -> (published total, published active or None, the shipped record with the same architecture)
PUBLISHED = {
    "llama-2-7b.json": (6_738_415_616, None, "llama-7b"),          # dense, MHA
    "llama-3-8b.json": (8_030_261_248, None, "llama-3-8b"),        # GQA
    "llama-3-70b.json": (70_553_706_496, None, "llama-3-70b"),     # GQA
    "mixtral-8x7b.json": (46_702_792_704, 12.9e9, "mixtral-8x7b"),  # MoE
    "deepseek-v3.json": (671e9, 37e9, "deepseek-v3"),               # MLA + MoE
    "qwen1.5-moe-a2.7b.json": (14.3e9, 2.7e9, None),                 # Qwen-MoE: shared expert, QKV bias
}
ARCH = ["layers", "d_model", "d_ff", "n_heads", "n_kv_heads", "head_dim", "vocab", "tied_embeddings", "ffn",
        "attention", "qkv_bias", "norm", "norm_params_per_layer", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
        "qk_nope_head_dim", "v_head_dim", "moe", "n_routed_experts", "top_k", "n_shared_experts", "expert_d_ff",
        "n_dense_layers", "dense_d_ff"]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_counts_within_one_percent_of_published(name: str) -> None:
    total, active, _ = PUBLISHED[name]
    draft = model_from_config(CONFIGS / name, published_total=total, published_active=active)
    assert draft.derived_total == pytest.approx(total, rel=0.01)
    if active:
        assert draft.derived_active == pytest.approx(active, rel=0.02)  # Mixtral's 12.9B is rounded, V3's 37B too
    m = Model.model_validate(draft.record)
    assert model_param_counts(m)["params_total"] == draft.derived_total


@pytest.mark.parametrize("name", sorted(n for n in PUBLISHED if PUBLISHED[n][2]))
def test_architecture_equals_the_shipped_record(name: str) -> None:
    rec = model_from_config(CONFIGS / name).record
    shipped = CATALOG.model(PUBLISHED[name][2])
    assert {f: rec.get(f, getattr(Model.model_fields[f], "default", None)) for f in ARCH} == \
        {f: getattr(shipped, f) for f in ARCH}


def test_what_it_could_not_read_is_said(tmp_path: Path) -> None:
    cfg = json.loads((CONFIGS / "llama-3-8b.json").read_text())
    del cfg["num_key_value_heads"], cfg["tie_word_embeddings"]
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    draft = model_from_config(p)
    assert draft.record["attention"] == "mha"
    assert any("num_key_value_heads" in n for n in draft.notes) and any("tie_word_embeddings" in n for n in draft.notes)
    assert draft.record["field_sources"]["published_params_total"].startswith("derived")


def test_cli_prints_a_record_and_refuses_a_count_far_off(capsys) -> None:
    assert main(["catalog", "add-model", str(CONFIGS / "mixtral-8x7b.json"), "--published-params", "46.7e9",
                 "--published-active", "12.9e9"]) == 0
    out = capsys.readouterr()
    rec = yaml.safe_load(out.out)[0]
    assert rec["moe"] is True and rec["n_routed_experts"] == 8 and "published 46,700,000,000" in out.err
    assert main(["catalog", "add-model", str(CONFIGS / "llama-3-8b.json"), "--published-params", "9.6e9"]) == 2
    err = capsys.readouterr().err
    assert "9,600,000,000" in err and "8,030,261,248" in err


def test_cli_appends_to_a_catalogue_file(tmp_path: Path, capsys) -> None:
    models = tmp_path / "models.yaml"
    shutil.copy(DEFAULT_DIR / "models.yaml", models)
    argv = ["catalog", "add-model", str(CONFIGS / "llama-3-8b.json"), "--id", "llama-3-8b-copy", "-o", str(models)]
    assert main(argv) == 0
    assert "llama-3-8b-copy" in load_records(models, Model)
    assert main(argv) == 2  # the id is there now
    assert "already in the file" in capsys.readouterr().err


def test_add_gpu_template_explains_every_field(capsys) -> None:
    assert main(["catalog", "add-gpu", "--id", "x9", "--like", "h100"]) == 0
    out = capsys.readouterr().out
    for field in ("hbm_bw_GBps", "price_reserved_3y_usd_per_gpu_hour", "gemm_efficiency", "nic_GBps_per_gpu"):
        assert f"#   {field}:" in out
    docs = [d for d in yaml.safe_load_all(out.replace("\n- gpu:", "\n---\n- gpu:"))]
    eff = docs[-1][0]
    assert eff["gpu"] == "x9" and eff["source"].startswith("assumed: h100")


def test_add_gpu_like_a_tied_gpu_copies_its_factors_not_its_die(capsys) -> None:
    """--like h200 copies the H200's factors (the H100's die values); a new GPU is not on that die by default."""
    assert main(["catalog", "add-gpu", "--id", "x9", "--like", "h200"]) == 0
    out = capsys.readouterr().out
    eff = [d for d in yaml.safe_load_all(out.replace("\n- gpu:", "\n---\n- gpu:"))][-1][0]
    assert "compute_as" not in eff and eff["gemm_efficiency"] > 0


def test_cli_never_appends_through_a_link(tmp_path: Path, capsys) -> None:
    """-o FILE whose folder, or the file itself, is a symbolic link: one line, exit 2, the target unchanged."""
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(DEFAULT_DIR / "models.yaml", real / "models.yaml")
    before = (real / "models.yaml").read_bytes()
    (tmp_path / "cat").symlink_to(real)
    (tmp_path / "models.yaml").symlink_to(real / "models.yaml")
    for out, words in ((tmp_path / "cat" / "models.yaml", f"catalogue file folder is a symbolic link to {real}"),
                       (tmp_path / "models.yaml", "catalogue file path is a symbolic link")):
        argv = ["catalog", "add-model", str(CONFIGS / "llama-3-8b.json"), "--id", "llama-3-8b-copy", "-o", str(out)]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0], err
    assert (real / "models.yaml").read_bytes() == before and sorted(p.name for p in real.iterdir()) == ["models.yaml"]
