"""Activation memory per GPU, built from the tensors each transformer layer saves for backward.

Sources (cited per function):

* Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
  (arXiv 2205.05198), §4.1-4.3 and Table 2: per layer ``sbh(34 + 5as/h)`` bytes without
  parallelism, ``sbh(10 + 24/t + 5as/(ht))`` with tensor parallelism, ``sbh(34/t + 5as/(ht))``
  with tensor + sequence parallelism, ``sbh(10 + 24/t)`` / ``sbh(34/t)`` with selective
  recompute, ``2sbh`` with full recompute; the first pipeline stage holds ``L`` layers' worth
  (``p`` micro-batches of ``L/p`` layers), times ``1 + (p-1)/(p·m)`` for the interleaved schedule;
  the output layer keeps ``4sbh(1 + v/h)/t`` (fp32 logits).
* Megatron-LM ``megatron/training/theoretical_memory_usage.py`` (the same formulas, plus 8 bytes of
  token ids and the embedding-dropout mask per micro-batch in flight), ``pipeline_parallel/
  schedules.py`` (warm-up micro-batches per rank) and ``transformer_config.py``
  (``recompute_modules``: core_attn, layernorm, mla_up_proj, mlp, moe_act, moe, shared_experts).
* Calculon (calculon-ai/calculon, ``calculon/llm/llm.py``): the same idea of a layer as a list of
  operations each of which stores its input for backward.
* torchtitan (pytorch/torchtitan; Liang et al. 2024, arXiv 2410.06511) op-level selective activation
  checkpointing (``selective_ac_option = "op"``): ``_save_list`` of
  ``torchtitan/models/llama3/infra/parallelize.py`` (commit bcdeaa37c92d, 2025; ``torchtitan/parallelisms/
  parallelize_llama.py`` ``no_recompute_list`` at 0413364349, 2024): the outputs of ``aten.mm``, the SDPA
  kernels (flash, efficient), ``reduce_scatter_tensor`` and ``aten.max`` are saved, "except every second
  mm" (the mm counter runs per block, forward order); everything else is recomputed in backward
  (``torchtitan/distributed/activation_checkpoint.py`` ``SelectiveAC`` keeps the policy today).
* DeepSeek-V3 technical report (arXiv 2412.19437) §3.2.2 Table 2 (DualPipe keeps PP+1
  micro-batches of activations), §3.2.3 and §3.3.2 (recompute RMSNorm and MLA up-projection,
  FP8-cached Linear and SwiGLU inputs).

Notation: s sequence length, b micro-batch, h = d_model, a heads, t = TP, p = PP, v virtual
stages, cp context parallel, etp expert tensor parallel. Element sizes are bytes per element;
BF16 (2) by default, dropout masks 1 byte, softmax statistics / router scores / logits fp32.

How a tensor is split over GPUs (``shard`` of each saved tensor):

* ``hidden``: the residual-stream layout (norm inputs and outputs, dropout masks, column-parallel
  linear inputs): replicated over TP without sequence parallelism, divided by t with it.
* ``tp``: head- or d_ff-sharded tensors (Q, K, V, scores, FFN intermediates): divided by t.
* ``routed``: MoE tokens after dispatch: (tokens/t)·top_k·etp per GPU with a balanced router
  (EP moves tokens but does not change their number per GPU on average; expert TP all-gathers the
  tokens of its group and splits d_ff).

Every token count is divided by cp (context parallelism splits the sequence).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

from workbook.units import GiB

RECOMPUTE_MODES = ("none", "selective", "full", "book_selective", "op_selective")
#: Megatron's ``--recompute-modules`` choices modelled here (transformer_config.py)
RECOMPUTE_MODULES = frozenset({"core_attn", "layernorm", "mla_up_proj", "mlp", "moe_act", "moe",
                               "shared_experts"})
#: Megatron's (and Korthikanti's) selective recompute: the core attention only
DEFAULT_SELECTIVE_MODULES = frozenset({"core_attn"})
SCHEDULES = ("1f1b", "interleaved", "dualpipe")

MASK_BYTES = 1.0  # dropout mask, one byte per element (Korthikanti §4.1)
FP32_BYTES = 4.0  # softmax statistics, norm statistics, router scores, fp32 logits
TOKEN_ID_BYTES = 8.0  # int64 token ids (Megatron theoretical_memory_usage.py)

GATED_FFNS = frozenset({"swiglu", "geglu"})
PLAIN_FFNS = frozenset({"gelu", "relu", "plain"})
ATTENTIONS = frozenset({"mha", "gqa", "mqa", "mla"})
NORMS = frozenset({"layernorm", "rmsnorm"})


def bytes_to_GiB(value_bytes: float) -> float:
    """Bytes to GiB (2**30 bytes)."""
    return value_bytes / GiB


def _pos(**values: float) -> None:
    for k, v in values.items():
        if v is None or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{k} must be a finite positive number, got {v!r}")


def _nonneg(**values: float) -> None:
    for k, v in values.items():
        if v is None or not math.isfinite(v) or v < 0:
            raise ValueError(f"{k} must be a finite non-negative number, got {v!r}")


def _tensor(name: str, block: str, shard: str, tokens: float, width: float, elem_bytes: float,
            modules: Iterable[str] = ()) -> dict[str, Any]:
    return {"name": name, "block": block, "shard": shard, "modules": frozenset(modules),
            "tokens": tokens, "width": width, "bytes_per_element": elem_bytes,
            "bytes": tokens * width * elem_bytes}


# --------------------------------------------------------------------------- closed forms (Table 2)
def korthikanti_layer_bytes(*, seq_len: float, micro_batch: float, d_model: float, n_heads: float,
                            tp: int = 1, sequence_parallel: bool = False,
                            recompute: str = "none") -> float:
    """Korthikanti et al. 2022 Table 2, activation bytes per layer per GPU (GPT: MHA, GELU MLP with
    d_ff = 4h, LayerNorm, dropout, no FlashAttention, 16-bit elements).

    none: sbh(10 + 24/t + 5as/(ht)) (TP) or sbh(34/t + 5as/(ht)) (TP + SP); t = 1 gives
    sbh(34 + 5as/h). selective: the 5as/h terms dropped. full: 2sbh (the layer input).
    """
    _pos(seq_len=seq_len, micro_batch=micro_batch, d_model=d_model, n_heads=n_heads, tp=tp)
    sbh = seq_len * micro_batch * d_model
    scores = 5 * n_heads * seq_len / (d_model * tp)
    if recompute == "full":
        return 2 * sbh
    if recompute not in ("none", "selective"):
        raise ValueError(f"recompute must be none, selective or full, got {recompute!r}")
    linear = 34 / tp if sequence_parallel else 10 + 24 / tp
    return sbh * (linear + (scores if recompute == "none" else 0.0))


def megatron_layer_bytes(*, seq_len: float, micro_batch: float, d_model: float, d_ff: float,
                         tp: int = 1) -> float:
    """Megatron's per-layer estimate with SP and selective recompute (theoretical_memory_usage.py):
    sbh(18 + 4·d_ff/h)/t — Table 2's sbh·34/t with d_ff = 4h."""
    _pos(seq_len=seq_len, micro_batch=micro_batch, d_model=d_model, d_ff=d_ff, tp=tp)
    return seq_len * micro_batch * d_model * (18 + 4 * d_ff / d_model) / tp


# --------------------------------------------------------------------------- one layer, tensor by tensor
def layer_saved_tensors(
    *,
    seq_len: float,
    micro_batch: float,
    d_model: float,
    n_heads: float,
    d_ff: float,
    head_dim: float | None = None,
    n_kv_heads: float | None = None,
    attention: str = "mha",
    q_lora_rank: float | None = None,
    kv_lora_rank: float | None = None,
    qk_rope_head_dim: float | None = None,
    qk_nope_head_dim: float | None = None,
    v_head_dim: float | None = None,
    ffn: str = "gelu",
    norm: str = "layernorm",
    moe: bool = False,
    n_experts: float | None = None,
    top_k: float | None = None,
    expert_d_ff: float | None = None,
    n_shared_experts: float = 0,
    tp: int = 1,
    cp: int = 1,
    etp: int | None = None,
    sequence_parallel: bool = False,
    flash_attention: bool = False,
    dropout: bool = True,
    recompute: str = "none",
    recompute_modules: Iterable[str] | None = None,
    distribute_saved_activations: bool = False,
    bytes_per_element: float = 2.0,
    linear_input_bytes: float | None = None,
    expert_act_input_bytes: float | None = None,
    moe_load_factor: float = 1.0,
) -> list[dict[str, Any]]:
    """The tensors one transformer layer keeps for backward, per GPU, for one micro-batch.

    Each entry: name, block (attention / mlp / moe / layer), shard (hidden / tp / routed), modules
    (the Megatron recompute modules that discard it), tokens, width (elements per token),
    bytes_per_element and bytes. The defaults are Korthikanti's setting (GPT: MHA, GELU, LayerNorm,
    dropout on, no FlashAttention), for which the sum is Table 2 (see ``korthikanti_layer_bytes``).

    Attention (Korthikanti §4.1, generalised): norm input (+ fp32 statistics: mean and rstd for
    LayerNorm, rstd for RMSNorm), the shared QKV input (norm output), Q (a·d_h), K and V
    (g·d_h each: GQA/MQA); MLA instead keeps the query latent (norm input and up-projection input,
    q_lora_rank wide), the KV latent (kv_lora_rank + rope, and kv_lora_rank), then Q, K
    (a·(nope + rope)) and V (a·v_head_dim) from the up-projections. Scores without FlashAttention:
    softmax output (2 bytes·a·s per token) plus, with dropout, its 1-byte mask and the 2-byte dropout
    output — Korthikanti's 5as²b; with FlashAttention only the fp32 log-sum-exp (a per token). Then
    the output-projection input (a·d_h) and the 1-byte residual-dropout mask.

    MLP: norm input (+ statistics), the fc1 input (norm output), then GELU: fc1 output and fc2
    input (2·d_ff, Korthikanti's 16sbh) or SwiGLU/GeGLU: gate, up and fc2 input (3·d_ff); dropout
    mask. MoE: norm input, norm output (router and expert input), fp32 router scores
    (n_experts), per routed token copy (×top_k): expert fc1 input (d), fc1 output (2·d_ff_e
    gated), fc2 input (d_ff_e) — with Megatron's probs multiplied in the activation function, no
    extra combine tensor — and the shared experts as a dense MLP of n_shared·d_ff_e.

    ``recompute``: ``none``; ``selective`` drops the tensors of ``recompute_modules`` (Megatron's
    names, default ``{"core_attn"}`` = Korthikanti's selective recompute: the score terms);
    ``full`` keeps only the layer input (Table 2: 2sbh; divided by t with SP or
    ``distribute_saved_activations``); ``book_selective`` keeps the attention input and output
    (the book's 17.4.6 variant, 2·d per token); ``op_selective`` keeps what torchtitan's op-level
    selective AC saves (``_op_sac_tensors``; dense GQA/MHA layers only). ``linear_input_bytes`` (default
    ``bytes_per_element``) sizes the saved inputs of Linear layers (1 for FP8-cached inputs,
    DeepSeek-V3 §3.3.2 / Transformer Engine FP8); ``expert_act_input_bytes`` the routed experts'
    SwiGLU input (DeepSeek caches it in FP8). ``moe_load_factor`` scales routed tokens (1 =
    balanced router).
    """
    _pos(seq_len=seq_len, micro_batch=micro_batch, d_model=d_model, n_heads=n_heads, d_ff=d_ff,
         tp=tp, cp=cp, bytes_per_element=bytes_per_element, moe_load_factor=moe_load_factor)
    attention = attention.lower()
    ffn = ffn.lower()
    norm = norm.lower()
    if attention not in ATTENTIONS:
        raise ValueError(f"unknown attention {attention!r}; expected one of {sorted(ATTENTIONS)}")
    if ffn not in GATED_FFNS | PLAIN_FFNS:
        raise ValueError(f"unknown ffn {ffn!r}")
    if norm not in NORMS:
        raise ValueError(f"unknown norm {norm!r}; expected layernorm or rmsnorm")
    if recompute not in RECOMPUTE_MODES:
        raise ValueError(f"unknown recompute {recompute!r}; expected one of {RECOMPUTE_MODES}")
    etp = tp if etp is None else etp
    _pos(etp=etp)
    act = float(bytes_per_element)
    lin = act if linear_input_bytes is None else float(linear_input_bytes)
    eact = act if expert_act_input_bytes is None else float(expert_act_input_bytes)
    _pos(linear_input_bytes=lin, expert_act_input_bytes=eact)

    tokens = seq_len * micro_batch / cp  # tokens of this micro-batch on one CP rank
    t_hidden = tokens / tp if sequence_parallel else tokens
    heads = math.ceil(n_heads / tp)  # query heads per TP rank
    norm_stats_width = 2.0 if norm == "layernorm" else 1.0

    if recompute == "full":
        div = tp if (sequence_parallel or distribute_saved_activations) else 1
        return [_tensor("layer_input", "layer", "hidden", tokens / div, d_model, act)]
    if recompute == "book_selective":
        return [_tensor("attention_input", "layer", "hidden", t_hidden, d_model, act),
                _tensor("attention_output", "layer", "hidden", t_hidden, d_model, act)]
    if recompute == "op_selective" and (attention == "mla" or moe):
        raise ValueError("recompute 'op_selective' is modelled for dense GQA/MHA layers only (not MLA, not MoE)")

    out: list[dict[str, Any]] = []
    # ---- attention block
    out.append(_tensor("attn_norm_input", "attention", "hidden", t_hidden, d_model, act))
    out.append(_tensor("attn_norm_stats", "attention", "hidden", t_hidden, norm_stats_width,
                       FP32_BYTES, {"layernorm"}))
    out.append(_tensor("qkv_input", "attention", "hidden", t_hidden, d_model, lin, {"layernorm"}))
    if attention == "mla":
        for name, v in (("kv_lora_rank", kv_lora_rank), ("qk_rope_head_dim", qk_rope_head_dim),
                        ("qk_nope_head_dim", qk_nope_head_dim), ("v_head_dim", v_head_dim)):
            if v is None:
                raise ValueError(f"attention 'mla' needs {name}")
        qk_head = qk_nope_head_dim + qk_rope_head_dim
        if q_lora_rank:
            out.append(_tensor("q_down_output", "attention", "hidden", t_hidden, q_lora_rank,
                               act))
            out.append(_tensor("q_up_input", "attention", "hidden", t_hidden, q_lora_rank, lin))
        out.append(_tensor("kv_down_output", "attention", "hidden", t_hidden,
                           kv_lora_rank + qk_rope_head_dim, act))
        out.append(_tensor("kv_up_input", "attention", "hidden", t_hidden, kv_lora_rank, lin))
        up = {"mla_up_proj"}
        out.append(_tensor("q", "attention", "tp", tokens, heads * qk_head, act, up))
        out.append(_tensor("k", "attention", "tp", tokens, heads * qk_head, act, up))
        out.append(_tensor("v", "attention", "tp", tokens, heads * v_head_dim, act, up))
        o_width = heads * v_head_dim
    else:
        hd = d_model / n_heads if head_dim is None else head_dim
        g = n_heads if n_kv_heads is None else n_kv_heads
        kv_heads = math.ceil(g / tp)  # KV heads replicate when fewer than TP ranks
        out.append(_tensor("q", "attention", "tp", tokens, heads * hd, act))
        out.append(_tensor("k", "attention", "tp", tokens, kv_heads * hd, act))
        out.append(_tensor("v", "attention", "tp", tokens, kv_heads * hd, act))
        o_width = heads * hd
    core = {"core_attn"}
    if flash_attention:
        out.append(_tensor("softmax_lse", "attention", "tp", tokens, heads, FP32_BYTES, core))
    else:
        out.append(_tensor("softmax_output", "attention", "tp", tokens, heads * seq_len, act, core))
        if dropout:
            out.append(_tensor("attn_dropout_mask", "attention", "tp", tokens, heads * seq_len,
                               MASK_BYTES, core))
            out.append(_tensor("attn_dropout_output", "attention", "tp", tokens, heads * seq_len,
                               act, core))
    out.append(_tensor("out_proj_input", "attention", "tp", tokens, o_width, lin))
    if dropout:
        out.append(_tensor("attn_residual_dropout_mask", "attention", "hidden", t_hidden, d_model,
                           MASK_BYTES))

    # ---- MLP or MoE block
    block = "moe" if moe else "mlp"
    out.append(_tensor("mlp_norm_input", block, "hidden", t_hidden, d_model, act))
    out.append(_tensor("mlp_norm_stats", block, "hidden", t_hidden, norm_stats_width, FP32_BYTES,
                       {"layernorm"}))
    out.append(_tensor("mlp_input", block, "hidden", t_hidden, d_model, lin, {"layernorm"}))
    gated = ffn in GATED_FFNS
    if not moe:
        out.extend(_ffn_tensors("mlp", "mlp", "tp", tokens, d_ff / tp, gated, act, lin, {"mlp"}))
    else:
        for name, v in (("n_experts", n_experts), ("top_k", top_k), ("expert_d_ff", expert_d_ff)):
            if v is None:
                raise ValueError(f"moe needs {name}")
        if top_k > n_experts:
            raise ValueError(f"top_k={top_k} exceeds n_experts={n_experts}")
        out.append(_tensor("router_scores", "moe", "hidden", t_hidden, n_experts, FP32_BYTES, {"moe"}))
        routed = tokens / tp * top_k * etp * moe_load_factor
        out.append(_tensor("expert_fc1_input", "moe", "routed", routed, d_model, lin, {"moe"}))
        out.append(_tensor("expert_act_input", "moe", "routed", routed,
                           (2 if gated else 1) * expert_d_ff / etp, eact, {"moe"}))
        out.append(_tensor("expert_fc2_input", "moe", "routed", routed, expert_d_ff / etp, lin,
                           {"moe", "moe_act"}))
        if n_shared_experts:
            out.extend(_ffn_tensors("shared_expert", "moe", "tp", tokens,
                                    n_shared_experts * expert_d_ff / tp, gated, act, lin,
                                    {"moe", "shared_experts"}))
    if dropout:
        out.append(_tensor("mlp_residual_dropout_mask", block, "hidden", t_hidden, d_model, MASK_BYTES))

    if recompute == "op_selective":
        return _op_sac_tensors(out, tokens=tokens, t_hidden=t_hidden, d_model=d_model, tp=tp,
                               sequence_parallel=sequence_parallel, ffn=ffn, act=act)
    if recompute == "selective":
        mods = DEFAULT_SELECTIVE_MODULES if recompute_modules is None else frozenset(recompute_modules)
        unknown = mods - RECOMPUTE_MODULES
        if unknown:
            raise ValueError(f"unknown recompute modules {sorted(unknown)}; expected {sorted(RECOMPUTE_MODULES)}")
        out = [x for x in out if not (x["modules"] & mods)]
    return out


def op_sac_matmuls(*, d_model: float, n_heads: float, d_ff: float, head_dim: float | None = None,
                   n_kv_heads: float | None = None, ffn: str = "swiglu") -> list[dict[str, Any]]:
    """The matmuls of one dense transformer block in torchtitan's forward order (Llama: wq, wk, wv, wo,
    then w1 gate, w3 up, w2 down; a GELU MLP: fc1, fc2), each with its weight's input and output widths
    (whole layer, before TP) and whether op-level selective AC saves its output: the 1st, 3rd, 5th, ...
    (``_save_list``: "saves output of all compute ops, except every second mm"; the counter restarts in
    each block). Llama-3: wq, wv, w1, w2 saved; wk, wo, w3 recomputed."""
    _pos(d_model=d_model, n_heads=n_heads, d_ff=d_ff)
    hd = d_model / n_heads if head_dim is None else head_dim
    g = n_heads if n_kv_heads is None else n_kv_heads
    shapes = [("q", d_model, n_heads * hd), ("k", d_model, g * hd), ("v", d_model, g * hd), ("o", n_heads * hd, d_model)]
    if ffn.lower() in GATED_FFNS:
        shapes += [("gate", d_model, d_ff), ("up", d_model, d_ff), ("down", d_ff, d_model)]
    else:
        shapes += [("fc1", d_model, d_ff), ("fc2", d_ff, d_model)]
    return [{"name": n, "in_width": i, "out_width": o, "saved": k % 2 == 0} for k, (n, i, o) in enumerate(shapes)]


def op_sac_gemm_recompute_frac(**shape: Any) -> float:
    """Share of a dense layer's matmul FLOPs that op-level selective AC runs again in backward: the
    matmuls whose outputs it does not save (``op_sac_matmuls``), weighted by their weight sizes (a
    matmul's FLOPs are 2 x tokens x in x out). Llama-3-8B: (wk + wo + w3) / all = 0.365."""
    mms = op_sac_matmuls(**shape)
    total = sum(m["in_width"] * m["out_width"] for m in mms)
    return sum(m["in_width"] * m["out_width"] for m in mms if not m["saved"]) / total


#: op-level selective AC: the tensors of the no-recompute list it keeps (the outputs of the saved matmuls
#: Q, V and the gate or fc1, and the attention op's outputs); everything else of that list is recomputed
OP_SAC_KEPT = frozenset({"q", "v", "softmax_lse", "softmax_output", "attn_dropout_mask", "attn_dropout_output",
                         "out_proj_input", "mlp_gate", "mlp_fc1_output"})


def _op_sac_tensors(none: list[dict[str, Any]], *, tokens: float, t_hidden: float, d_model: float, tp: int,
                    sequence_parallel: bool, ffn: str, act: float) -> list[dict[str, Any]]:
    """What op-level selective AC keeps of one dense layer (torchtitan; ``op_sac_matmuls``): the block
    input (the checkpoint's input), the outputs of the saved matmuls (Q, V, the gate or fc1 output and,
    gated, the down projection's output: tokens x d on each TP rank, before its reduce-scatter), the
    attention op's outputs (the O-projection input and the fp32 LSE with FlashAttention; without it the
    score tensors of the no-recompute list), and with TP and SP the two reduce-scatter outputs. The
    element-wise ops (norms, rotary, SiLU x up, residual adds, dropout) are all recomputed."""
    out = [_tensor("layer_input", "layer", "hidden", t_hidden, d_model, act)]
    out += [x for x in none if x["name"] in OP_SAC_KEPT]
    if ffn in GATED_FFNS:
        out.append(_tensor("mlp_down_output", "mlp", "tp", tokens, d_model, act))
    if tp > 1 and sequence_parallel:
        out.append(_tensor("attn_reduce_scatter_output", "attention", "hidden", t_hidden, d_model, act))
        out.append(_tensor("mlp_reduce_scatter_output", "mlp", "hidden", t_hidden, d_model, act))
    return out


def _ffn_tensors(prefix: str, block: str, shard: str, tokens: float, width: float, gated: bool,
                 act: float, lin: float, modules: set[str]) -> list[dict[str, Any]]:
    """FFN intermediates: GELU keeps fc1 output and fc2 input; SwiGLU/GeGLU gate, up, fc2 input."""
    if gated:
        return [_tensor(f"{prefix}_gate", block, shard, tokens, width, act, modules),
                _tensor(f"{prefix}_up", block, shard, tokens, width, act, modules),
                _tensor(f"{prefix}_fc2_input", block, shard, tokens, width, lin, modules)]
    return [_tensor(f"{prefix}_fc1_output", block, shard, tokens, width, act, modules),
            _tensor(f"{prefix}_fc2_input", block, shard, tokens, width, lin, modules)]


def layer_activation_bytes(**kwargs: Any) -> float:
    """Sum of ``layer_saved_tensors`` (same keywords): one layer, one micro-batch, one GPU.
    Memoised on all the keywords when they are hashable (a search asks for the same layer at many
    pipeline and data-parallel degrees)."""
    key = tuple(kwargs.items())
    try:
        return _layer_bytes_memo(key)
    except TypeError:  # an unhashable keyword (a list of recompute modules): computed afresh
        return sum(x["bytes"] for x in layer_saved_tensors(**kwargs))


@functools.lru_cache(maxsize=4096, typed=True)
def _layer_bytes_memo(key: tuple) -> float:
    return sum(x["bytes"] for x in layer_saved_tensors(**dict(key)))


# --------------------------------------------------------------------------- embedding and output stages
def embedding_saved_bytes(*, seq_len: float, micro_batch: float, d_model: float, tp: int = 1,
                          cp: int = 1, sequence_parallel: bool = False, dropout: bool = True) -> float:
    """First stage, per micro-batch: int64 token ids (8 bytes/token) and the embedding-dropout
    mask (1 byte·h per token, /t with SP) (Korthikanti §4.3; Megatron theoretical_memory_usage)."""
    _pos(seq_len=seq_len, micro_batch=micro_batch, d_model=d_model, tp=tp, cp=cp)
    tokens = seq_len * micro_batch / cp
    t_hidden = tokens / tp if sequence_parallel else tokens
    return tokens * TOKEN_ID_BYTES + (t_hidden * d_model * MASK_BYTES if dropout else 0.0)


def output_layer_saved_bytes(*, seq_len: float, micro_batch: float, d_model: float, vocab: float,
                             tp: int = 1, cp: int = 1, sequence_parallel: bool = False,
                             norm: str = "layernorm", bytes_per_element: float = 2.0,
                             linear_input_bytes: float | None = None,
                             logits_bytes: float = FP32_BYTES) -> float:
    """Last stage, per micro-batch: final-norm input (2sbh), LM-head input (2sbh) and the logits
    s·b·V/t (fp32 for the cross entropy: 4sbv/t) — Korthikanti §4.3's 4sbh(1 + v/h)/t with SP,
    Megatron's pp = 1 term; norm statistics added."""
    _pos(seq_len=seq_len, micro_batch=micro_batch, d_model=d_model, vocab=vocab, tp=tp, cp=cp,
         logits_bytes=logits_bytes)
    tokens = seq_len * micro_batch / cp
    t_hidden = tokens / tp if sequence_parallel else tokens
    lin = bytes_per_element if linear_input_bytes is None else linear_input_bytes
    stats = (2.0 if norm.lower() == "layernorm" else 1.0) * FP32_BYTES
    return (t_hidden * (d_model * (bytes_per_element + lin) + stats)
            + tokens * vocab / tp * logits_bytes)


# --------------------------------------------------------------------------- pipeline schedules
def interleaved_memory_factor(*, pp: int, vp: int) -> float:
    """Interleaved 1F1B memory factor on the first stage, 1 + (p − 1)/(p·v) (Korthikanti §4.2.3;
    Megatron theoretical_memory_usage.py)."""
    _pos(pp=pp, vp=vp)
    return 1 + (pp - 1) / (pp * vp)


def in_flight_microbatches(*, pp: int, stage: int = 0, schedule: str = "1f1b", vp: int = 1,
                           num_microbatches: int | None = None) -> float:
    """Micro-batches whose activations a pipeline rank holds at its peak, in units of one
    micro-batch through the rank's whole share of layers (L/p layers).

    1F1B: p − stage (Megatron: warm-up p − rank − 1, plus the one in 1F1B), at most the number of
    micro-batches; the first stage thus holds L layers' worth (Korthikanti §4.2.3).
    Interleaved with v model chunks of L/(p·v) layers: warm-up 2(p − rank − 1) + (v − 1)·p chunks
    plus one (Megatron schedules.py), divided by v; for rank 0 that is p·(1 + (p − 1)/(p·v)).
    DualPipe: p + 1 (DeepSeek-V3 Table 2), stage-independent. With ``num_microbatches`` m the count
    is at most m (Megatron clamps the warm-up to the micro-batches there are).
    """
    _pos(pp=pp, vp=vp)
    if not 0 <= stage < pp:
        raise ValueError(f"stage must be in 0..{pp - 1}, got {stage}")
    return in_flight_per_stage(pp=pp, schedule=schedule, vp=vp, num_microbatches=num_microbatches)[stage]


def in_flight_per_stage(*, pp: int, schedule: str = "1f1b", vp: int = 1,
                        num_microbatches: int | None = None) -> list[float]:
    """``in_flight_microbatches`` of every pipeline rank, rank 0 first (checked once)."""
    _pos(pp=pp, vp=vp)
    if schedule == "1f1b":
        out = [float(pp - stage) for stage in range(pp)]
    elif schedule == "interleaved":
        if pp == 1:
            raise ValueError("the interleaved schedule needs pp > 1")
        out = [(2 * (pp - stage - 1) + (vp - 1) * pp + 1) / vp for stage in range(pp)]
    elif schedule == "dualpipe":
        out = [float(pp + 1)] * pp
    else:
        raise ValueError(f"unknown schedule {schedule!r}; expected one of {SCHEDULES}")
    if num_microbatches is not None:
        _pos(num_microbatches=num_microbatches)
        m = float(num_microbatches)
        out = [min(n, m) for n in out]
    return out


def stage_layer_counts(*, layers: int, pp: int) -> list[int]:
    """Layers per pipeline stage: an even split, earlier stages taking the remainder."""
    _pos(layers=layers, pp=pp)
    if pp > layers:
        raise ValueError(f"pp={pp} exceeds layers={layers}")
    base, extra = divmod(int(layers), int(pp))
    return [base + (1 if i < extra else 0) for i in range(int(pp))]


# --------------------------------------------------------------------------- whole model, one GPU
def _get(m: Any, name: str, default: Any = None) -> Any:
    v = getattr(m, name, default)
    return default if v is None else v


def layer_shape_from_model(m: Any, *, moe_layer: bool) -> dict[str, Any]:
    """``layer_saved_tensors`` architecture keywords from a catalogue Model (docs/contract.md).

    ``moe_layer`` picks an MoE layer (routed + shared experts) or a dense one (``dense_d_ff`` in an
    MoE model's leading dense layers, ``d_ff`` otherwise).
    """
    attention = str(_get(m, "attention", "mha")).lower()
    kw: dict[str, Any] = {
        "d_model": float(m.d_model), "n_heads": float(m.n_heads),
        "ffn": str(_get(m, "ffn", "swiglu")), "norm": str(_get(m, "norm", "rmsnorm")),
        "attention": attention,
    }
    if attention == "mla":
        kw.update(q_lora_rank=_get(m, "q_lora_rank"), kv_lora_rank=m.kv_lora_rank,
                  qk_rope_head_dim=m.qk_rope_head_dim, qk_nope_head_dim=m.qk_nope_head_dim,
                  v_head_dim=m.v_head_dim)
    else:
        kw.update(head_dim=float(_get(m, "head_dim", m.d_model / m.n_heads)),
                  n_kv_heads=float(_get(m, "n_kv_heads", m.n_heads)))
    is_moe_model = bool(_get(m, "moe", False))
    if is_moe_model and moe_layer:
        expert_d_ff = float(_get(m, "expert_d_ff", m.d_ff))
        kw.update(moe=True, d_ff=expert_d_ff, n_experts=float(m.n_routed_experts),
                  top_k=float(m.top_k), expert_d_ff=expert_d_ff,
                  n_shared_experts=float(_get(m, "n_shared_experts", 0)))
    else:
        kw.update(moe=False, d_ff=float(_get(m, "dense_d_ff", m.d_ff)) if is_moe_model else float(m.d_ff))
    return kw


def activations_per_gpu(
    m: Any,
    *,
    seq_len: float,
    micro_batch: float = 1,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    etp: int | None = None,
    schedule: str = "1f1b",
    vp: int = 1,
    num_microbatches: int | None = None,
    stage: int | None = None,
    stage_layers: Sequence[int] | None = None,
    sequence_parallel: bool = False,
    flash_attention: bool = False,
    dropout: bool = True,
    recompute: str = "none",
    recompute_modules: Iterable[str] | None = None,
    distribute_saved_activations: bool = False,
    bytes_per_element: float = 2.0,
    linear_input_bytes: float | None = None,
    expert_act_input_bytes: float | None = None,
    moe_load_factor: float = 1.0,
    logits_bytes: float = FP32_BYTES,
    vocab: float | None = None,
) -> dict[str, Any]:
    """Activation memory of one pipeline rank (``stage``; None = the rank with the largest peak).

    stored = in-flight micro-batches × (the rank's layers, one micro-batch) + embedding saved
    tensors on the first rank (same in-flight count) + output layer on the last rank (one
    micro-batch: the last rank starts each backward right after its forward). peak = stored + the
    working set of recomputing one layer (full: one layer without recompute; selective: the
    recomputed tensors of one layer). Layers: leading ``n_dense_layers`` dense, then MoE
    (catalogue order); an interleaved rank's layers are counted as its contiguous share (exact when
    all layers are alike). DualPipe ranks hold stages ``i`` and ``p − 1 − i`` (DeepSeek-V3 §3.2.2):
    their in-flight micro-batches spread over both chunks, counted at the chunks' mean size.

    Returns bytes: ``layers_bytes``, ``embedding_bytes``, ``output_layer_bytes``, ``stored_bytes``,
    ``recompute_working_bytes``, ``peak_bytes``, with ``stage``, ``in_flight`` and ``per_stage``
    (the same for every rank) and the GiB of stored and peak.
    """
    L = int(m.layers)
    layer_counts = list(stage_layers) if stage_layers is not None else stage_layer_counts(layers=L, pp=pp)
    if len(layer_counts) != pp or sum(layer_counts) != L:
        raise ValueError(f"stage_layers must give {pp} stages summing to {L} layers")
    n_dense = int(_get(m, "n_dense_layers", 0)) if bool(_get(m, "moe", False)) else L
    common = dict(seq_len=seq_len, micro_batch=micro_batch, tp=tp, cp=cp, etp=etp,
                  sequence_parallel=sequence_parallel, flash_attention=flash_attention, dropout=dropout,
                  bytes_per_element=bytes_per_element, linear_input_bytes=linear_input_bytes,
                  expert_act_input_bytes=expert_act_input_bytes, moe_load_factor=moe_load_factor,
                  distribute_saved_activations=distribute_saved_activations)
    per_kind = {}
    for kind in (False, True):
        shape = layer_shape_from_model(m, moe_layer=kind)
        stored = layer_activation_bytes(**shape, **common, recompute=recompute,
                                        recompute_modules=recompute_modules)
        none = layer_activation_bytes(**shape, **common, recompute="none")
        # op-level SAC under TP can keep more than no recompute (it saves the down projection's tokens x d
        # partial sums): nothing is recomputed beyond the layer's own tensors, so the working set is at least 0
        per_kind[kind] = (stored, max(0.0, none - stored))

    starts = list(itertools.accumulate(layer_counts[:-1], initial=0))  # first layer of each stage

    chunks: dict[tuple[int, int], tuple[float, float]] = {}

    def chunk(i: int) -> tuple[float, float]:
        # the dense layers lead, so a stage's layers are its dense ones then its MoE ones: stages with
        # as many of each hold the same bytes (summed once)
        dense = max(0, min(starts[i] + layer_counts[i], n_dense) - starts[i])
        key = (dense, layer_counts[i] - dense)
        if key not in chunks:
            kinds = [False] * key[0] + [True] * key[1]
            chunks[key] = (sum(per_kind[k][0] for k in kinds), max((per_kind[k][1] for k in kinds), default=0.0))
        return chunks[key]

    emb = embedding_saved_bytes(seq_len=seq_len, micro_batch=micro_batch, d_model=m.d_model, tp=tp, cp=cp,
                                sequence_parallel=sequence_parallel, dropout=dropout)
    head = output_layer_saved_bytes(
        seq_len=seq_len, micro_batch=micro_batch, d_model=m.d_model,
        vocab=float(vocab if vocab is not None else m.vocab), tp=tp, cp=cp,
        sequence_parallel=sequence_parallel, norm=str(_get(m, "norm", "rmsnorm")),
        bytes_per_element=bytes_per_element, linear_input_bytes=linear_input_bytes,
        logits_bytes=logits_bytes)

    per_stage = []
    in_flight = in_flight_per_stage(pp=pp, schedule=schedule, vp=vp, num_microbatches=num_microbatches)
    dualpipe = schedule == "dualpipe"
    for i in range(pp):
        n = in_flight[i]
        if dualpipe and pp - 1 - i != i:
            held = [i, pp - 1 - i]
            chunk_bytes = [chunk(j) for j in held]
            layers_b = n * sum(c[0] for c in chunk_bytes) / len(held)
            emb_b = (n / len(held)) * emb if 0 in held else 0.0
            head_b = head if pp - 1 in held else 0.0
            work = max(c[1] for c in chunk_bytes)
        else:  # one stage held: the same sums with one term
            layer_b, work = chunk(i)
            layers_b = n * layer_b
            emb_b = n * emb if i == 0 else 0.0
            head_b = head if i == pp - 1 else 0.0
        stored = layers_b + emb_b + head_b
        per_stage.append({"stage": i, "in_flight": n, "layers_bytes": layers_b, "embedding_bytes": emb_b,
                          "output_layer_bytes": head_b, "stored_bytes": stored,
                          "recompute_working_bytes": work, "peak_bytes": stored + work})
    pick = max(per_stage, key=lambda r: r["peak_bytes"]) if stage is None else per_stage[stage]
    res = dict(pick)
    res["stored_GiB"] = bytes_to_GiB(res["stored_bytes"])
    res["peak_GiB"] = bytes_to_GiB(res["peak_bytes"])
    res["per_stage"] = per_stage
    return res
