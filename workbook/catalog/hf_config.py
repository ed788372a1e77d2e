"""A catalogue model record from a Hugging Face ``config.json`` on disk (no network): dense, GQA/MQA, MoE
(Mixtral, Qwen-MoE, DeepSeek style) and MLA (DeepSeek-V2/V3 style). ``workbook catalog add-model``.

What the file does not say, or says in a way the catalogue cannot hold, is listed in ``ModelDraft.notes``
(read by the command, written into the record's ``notes``) instead of being guessed silently.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from workbook.catalog.models import Model
from workbook.errors import InputError

#: model types whose attention projections carry a bias although their config does not say so
_QKV_BIAS_TYPES = {"qwen2", "qwen2_moe"}
#: model types with an RMSNorm on the queries and on the keys of every layer (head_dim each)
_QK_NORM_TYPES = {"qwen3", "qwen3_moe"}
#: model types with four norms per layer (before and after attention and FFN)
_FOUR_NORM_TYPES = {"gemma2"}


@dataclass
class ModelDraft:
    """The record read from a config, what was read from where, and what could not be read."""

    record: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    derived_total: float = 0.0
    derived_active: float = 0.0


def _first(cfg: dict, *keys: str) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return None


def _need(cfg: dict, path: Path, *keys: str) -> int:
    v = _first(cfg, *keys)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise InputError(f"config.json has no usable {' / '.join(keys)} (got {v!r})", file=str(path),
                         field=keys[0], expected="a positive integer")
    return v


def load_config(path: str | Path) -> dict:
    """The config as a dict (a multimodal config's ``text_config`` when it has one). InputError if unreadable."""
    path = Path(path)
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", file=str(path)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not a JSON config: {exc}", file=str(path)) from None
    if not isinstance(cfg, dict):
        raise InputError("config.json must be one JSON object", file=str(path))
    if isinstance(cfg.get("text_config"), dict):
        cfg = {**cfg, **cfg["text_config"]}
    return cfg


def default_id(cfg: dict, path: Path) -> str:
    """An id from ``_name_or_path`` or the config's folder name: lowercase [a-z0-9.-]."""
    stem = path.resolve().parent.name if path.name == "config.json" else path.stem
    raw = str(cfg.get("_name_or_path") or stem or "model").split("/")[-1]
    rid = re.sub(r"[^a-z0-9.-]+", "-", raw.lower()).strip("-.") or "model"
    return rid[:64]


def _ffn(cfg: dict, notes: list[str]) -> str:
    act = str(_first(cfg, "hidden_act", "hidden_activation", "activation_function") or "")
    mtype = str(cfg.get("model_type", ""))
    if act in ("silu", "swish"):
        return "swiglu"
    if act.startswith("gelu") and mtype.startswith("gemma"):
        return "geglu"
    if act.startswith("gelu"):
        return "gelu"
    notes.append(f"hidden_act {act or '(none)'!r} not recognised: ffn assumed swiglu")
    return "swiglu"


def _attention(cfg: dict, path: Path, d: int, notes: list[str]) -> dict[str, Any]:
    n_heads = _need(cfg, path, "num_attention_heads", "n_head", "num_heads")
    if cfg.get("kv_lora_rank"):
        out = {"attention": "mla", "n_heads": n_heads, "n_kv_heads": n_heads,
               "head_dim": _need(cfg, path, "v_head_dim"), "kv_lora_rank": cfg["kv_lora_rank"],
               "q_lora_rank": cfg.get("q_lora_rank"), "qk_rope_head_dim": _need(cfg, path, "qk_rope_head_dim"),
               "qk_nope_head_dim": _need(cfg, path, "qk_nope_head_dim"), "v_head_dim": _need(cfg, path, "v_head_dim")}
        if out["q_lora_rank"] is None:
            notes.append("q_lora_rank null: queries are projected directly (DeepSeek-V2-Lite style)")
        return out
    n_kv = _first(cfg, "num_key_value_heads", "num_kv_heads")
    if n_kv is None:
        notes.append("num_key_value_heads not given: multi-head attention assumed (n_kv_heads = n_heads)")
        n_kv = n_heads
    head_dim = cfg.get("head_dim") or d // n_heads
    if not cfg.get("head_dim") and d % n_heads:
        notes.append(f"hidden_size {d} not divisible by {n_heads} heads and no head_dim given")
    kind = "mha" if n_kv == n_heads else ("mqa" if n_kv == 1 else "gqa")
    return {"attention": kind, "n_heads": n_heads, "n_kv_heads": n_kv, "head_dim": head_dim}


def _moe(cfg: dict, path: Path, layers: int, d_ff_dense: Optional[int], notes: list[str]) -> dict[str, Any]:
    experts = _first(cfg, "num_local_experts", "n_routed_experts", "num_experts")
    if not experts:
        return {"moe": False}
    expert_ff = _first(cfg, "moe_intermediate_size") or d_ff_dense
    out: dict[str, Any] = {"moe": True, "n_routed_experts": experts,
                           "top_k": _need(cfg, path, "num_experts_per_tok", "num_experts_per_token", "top_k"),
                           "expert_d_ff": expert_ff, "d_ff": expert_ff, "n_shared_experts": 0, "n_dense_layers": 0}
    if cfg.get("n_shared_experts"):
        out["n_shared_experts"] = int(cfg["n_shared_experts"])
    shared_ff = cfg.get("shared_expert_intermediate_size")
    if shared_ff:
        if shared_ff % expert_ff == 0:
            out["n_shared_experts"] = shared_ff // expert_ff
            notes.append(f"shared expert of {shared_ff} counted as {shared_ff // expert_ff} experts of {expert_ff}; "
                         "its sigmoid gate (hidden_size weights per layer) is not counted")
        else:
            notes.append(f"shared_expert_intermediate_size {shared_ff} is not a multiple of the expert size "
                         f"{expert_ff}: shared expert NOT counted")
    dense = int(cfg.get("first_k_dense_replace") or 0)
    if dense:
        out["n_dense_layers"], out["dense_d_ff"] = dense, d_ff_dense
    if cfg.get("moe_layer_freq", 1) != 1 or cfg.get("decoder_sparse_step", 1) != 1 or cfg.get("mlp_only_layers"):
        notes.append("MoE on only some layers (moe_layer_freq / decoder_sparse_step / mlp_only_layers) beyond the "
                     "leading dense ones: the catalogue counts every later layer as MoE")
    if cfg.get("num_nextn_predict_layers"):
        notes.append(f"{cfg['num_nextn_predict_layers']} multi-token-prediction layer(s) not counted (as the "
                     "published totals of DeepSeek-V3 leave them out)")
    return out


def model_from_config(path: str | Path, *, model_id: Optional[str] = None, name: Optional[str] = None,
                      source: Optional[str] = None, published_total: Optional[float] = None,
                      published_active: Optional[float] = None, today: Optional[dt.date] = None) -> ModelDraft:
    """Read ``config.json`` and return the record (validated by the catalogue's Model) with notes."""
    from workbook.reference.params import model_param_counts

    path = Path(path)
    cfg = load_config(path)
    notes: list[str] = []
    d = _need(cfg, path, "hidden_size", "n_embd", "d_model")
    layers = _need(cfg, path, "num_hidden_layers", "n_layer", "num_layers")
    d_ff = _first(cfg, "intermediate_size", "n_inner", "ffn_hidden_size")
    if d_ff is None:
        d_ff = 4 * d
        notes.append("intermediate_size not given: d_ff = 4 x hidden_size assumed")
    mtype = str(cfg.get("model_type", ""))
    att = _attention(cfg, path, d, notes)
    moe = _moe(cfg, path, layers, d_ff, notes)
    norm = "rmsnorm" if _first(cfg, "rms_norm_eps", "rms_norm_epsilon") is not None else "layernorm"
    per_norm = d * (2 if norm == "layernorm" else 1)
    norm_params = (4 if mtype in _FOUR_NORM_TYPES else 2) * per_norm
    if mtype in _QK_NORM_TYPES:
        norm_params += 2 * att["head_dim"]
    if "tie_word_embeddings" not in cfg:
        notes.append("tie_word_embeddings not given: untied assumed (the input embedding and LM head are counted twice)")
    vocab = _need(cfg, path, "vocab_size")
    record: dict[str, Any] = {
        "id": model_id or default_id(cfg, path), "name": name or str(cfg.get("_name_or_path") or default_id(cfg, path)),
        "family": mtype.split("_")[0] or "unknown",
        "source": source or f"config.json read by `workbook catalog add-model` from {path.name} (model_type {mtype!r})",
        "as_of": today or dt.date.today(), "field_sources": {},
        "layers": layers, "d_model": d, "d_ff": d_ff, **{k: v for k, v in att.items() if k != "attention"},
        "vocab": vocab, "tied_embeddings": bool(cfg.get("tie_word_embeddings", False)), "ffn": _ffn(cfg, notes),
        "attention": att["attention"],
        "qkv_bias": bool(cfg.get("attention_bias", cfg.get("qkv_bias", mtype in _QKV_BIAS_TYPES))),
        "norm": norm, "norm_params_per_layer": norm_params, **moe,
    }
    if record["qkv_bias"] and "attention_bias" not in cfg:
        notes.append(f"qkv_bias true: {mtype} puts a bias on the Q, K and V projections (not stated in the config)")
    for skip in ("sliding_window", "rope_scaling", "quantization_config"):
        if cfg.get(skip) and not (skip == "sliding_window" and cfg.get("use_sliding_window") is False):
            notes.append(f"{skip} read but not used by the catalogue (no effect on the parameter count)")
    probe = Model.model_validate({**record, "published_params_total": 1.0,
                                  "published_params_active": 1.0 if record.get("moe") else None})
    counts = model_param_counts(probe)
    total, active = counts["params_total"], counts["params_active"]
    record["published_params_total"] = published_total if published_total else total
    if not published_total:
        record["field_sources"]["published_params_total"] = "derived from the architecture (no published count given)"
    if record.get("moe"):
        record["published_params_active"] = published_active if published_active else active
        if not published_active:
            record["field_sources"]["published_params_active"] = "derived from the architecture (no published count given)"
    if notes:
        record["notes"] = "; ".join(notes)[:2000]
    Model.model_validate(record)
    return ModelDraft(record=record, notes=notes, derived_total=total, derived_active=active)
