"""FP8 training recipes as the step-time model sees them (docs/step_time.md "FP8 training").

An FP8 recipe runs the linear layers' GEMMs (forward, input gradient, weight gradient) with FP8
operands and higher-precision accumulation; the attention core (QK^T, softmax, AV), the LM head,
the MoE router, norms and the optimizer stay in BF16/FP32 (Transformer Engine user guide "Using FP8";
torchao.float8 "Quantized Training": ``to_fp8(input) @ to_fp8(weight)`` for the three GEMMs of a
linear; DeepSeek-V3 report, arXiv 2412.19437 §3.3.1: Fprop, Dgrad and Wgrad in FP8, embedding,
output head, gating, normalisation and attention in BF16/FP32).

What a recipe changes, per field of :data:`RECIPES`:

- ``gemm_rate_frac``: the FP8 GEMM rate as a fraction of (FP8 dense peak x the GPU's
  ``gemm_efficiency``), the serving models' convention for an FP8 GEMM (docs/serving.md). Per-tensor
  scaling (delayed, current) runs the plain FP8 tensor-core GEMM: 1. Row-wise and block-wise scales
  are applied inside the GEMM's main loop or epilogue: below 1 (estimates, see the sources).
- ``cast_bytes_per_elem``: HBM bytes moved per element of a GEMM operand that is quantised (reads of
  the BF16 tensor, writes of the FP8 copies). Delayed scaling reads once and writes the FP8 tensor and
  its transpose (2 + 1 + 1 = 4; TE fused cast-transpose); current scaling reads once more for the
  amax (6; TE docs: "two tensor reads per quantization"); row-wise scales need a second, column-wise
  quantisation of the transpose for the backward (2 + 1 + 2 + 1 = 6; torchao rowwise); block-wise
  (1 x 128 tiles, 128 x 1 for the transpose) quantises both in one read (4; TE Float8BlockScaling).
- ``weight_bytes``: bytes per weight in the ZeRO-3 / FSDP all-gather: 1 where the recipe
  all-gathers FP8 weights (torchao tensorwise ``enable_fsdp_float8_all_gather``, Megatron
  ``--fp8-param-gather`` with per-tensor scaling), else 2 (BF16 weights gathered, cast after).

Quantised operand elements per token and layer (forward): the inputs of the Q/K/V, output, FFN-up
and FFN-down projections, 2 d + a d_v + d_ff(active); the backward quantises the output gradients of
the same GEMMs (taken as many); a full recompute quantises the forward inputs again.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbook.reference.args import nonnegative as _nonneg

DEFAULT_RECIPE = "delayed"


@dataclass(frozen=True)
class Fp8Recipe:
    """The step model's view of one FP8 recipe (fields: module docstring)."""

    gemm_rate_frac: float
    cast_bytes_per_elem: float
    weight_bytes: float
    source: str


RECIPES: dict[str, Fp8Recipe] = {
    "delayed": Fp8Recipe(1.0, 4.0, 1.0, "Transformer Engine DelayedScaling (user guide, FP8 Delayed Scaling: one read "
                         "per quantisation, amax history); fused cast + transpose"),
    "current": Fp8Recipe(1.0, 6.0, 1.0, "Transformer Engine Float8CurrentScaling (user guide: two tensor reads per "
                         "quantisation, one for the amax); torchao float8 tensorwise"),
    "rowwise": Fp8Recipe(0.9, 6.0, 2.0, "torchao.float8 rowwise (docs 'Quantized Training'); estimate: GEMM 0.9 of "
                         "the per-tensor rate (row-scaled epilogue); torchtitan Llama 3 8B on 8 H100: rowwise 6,424 "
                         "tokens/s vs tensorwise with FP8 all-gather 7,186 (commit 7a04053)"),
    "blockwise": Fp8Recipe(0.95, 4.0, 2.0, "DeepSeek-V3 (arXiv 2412.19437 §3.3): 1x128 activation tiles, 128x128 "
                           "weight blocks, scales in the main loop; Transformer Engine Float8BlockScaling; estimate: "
                           "GEMM 0.95 (DeepGEMM H800 README: up to 1520 of 1979 TFLOP/s on large shapes)"),
}
#: the recipes of the scenario input training.fp8_recipe, in the table's order (the default first; the Step Time
#: sheet's recipe table and its MATCH index follow it)
FP8_RECIPES = tuple(RECIPES)


def recipe(name: str) -> Fp8Recipe:
    """The recipe record; ValueError names the allowed ones."""
    if name not in RECIPES:
        raise ValueError(f"unknown fp8_recipe {name!r}; expected one of {FP8_RECIPES}")
    return RECIPES[name]


def fp8_gemm_peak_TFLOPS(*, bf16_dense_TFLOPS: float, fp8_dense_TFLOPS: float | None, gemm_rate_frac: float) -> float:
    """Peak an FP8 GEMM of the recipe is timed against: the FP8 dense peak x the recipe's rate fraction;
    a GPU without FP8 tensor cores (fp8_dense_TFLOPS null) runs at its BF16 peak (no gain)."""
    _nonneg(bf16_dense_TFLOPS=bf16_dense_TFLOPS, gemm_rate_frac=gemm_rate_frac)
    if not fp8_dense_TFLOPS:
        return bf16_dense_TFLOPS
    return fp8_dense_TFLOPS * gemm_rate_frac


def cast_elems_per_token(*, d_model: float, n_heads: float, v_head_dim: float, ffn_width: float) -> float:
    """GEMM-operand elements quantised per token and layer in one forward: inputs of Q/K/V (d), output
    projection (a d_v), FFN up (d) and FFN down (d_ff active)."""
    _nonneg(d_model=d_model, n_heads=n_heads, v_head_dim=v_head_dim, ffn_width=ffn_width)
    return 2 * d_model + n_heads * v_head_dim + ffn_width
