"""A finite offline run: N requests queued at once, timed until the last one ends (docs/serving.md
"A finite offline run"; issue 8).

serving_load.offline_throughput is the rate of an endless queue: every step runs at the batch cap B.
A benchmark or a batch job of N requests ends instead when its last request finishes, and the last
requests finish at a shrinking batch. Per attention-DP rank (N_r = N/DP requests):

- while requests wait, the rank runs at B; once the queue is empty, n0 = min(B, N_r) requests are
  still running;
- output lengths are taken as exponential with mean O (geometric in tokens). A running request's
  remaining output is then again exponential with mean O, so after s decode steps
  b(s) = n0·e^(−s/O) requests remain;
- the last one ends after O·H(n0) steps on average (H the harmonic number: the mean of the largest of
  n0 exponentials).

The drain takes t_drain = (O/τ)·∫_0^H t_d(n0·e^(−u)) du, with τ tokens per request per step (1 without
MTP) and t_d the decode step at the running requests' mean context (serving_load.running_context_tokens:
S_in + O for exponential outputs, S_in + O/2 for fixed ones; at least one request). The integral is taken by
three-point Gauss–Legendre quadrature in u: nodes u_i = (H/2)(1 + x_i), x = −√(3/5), 0, √(3/5),
weights 5/9, 8/9, 5/9 (times H/2). A step model that is compute-bound at the cap and memory-bound
below bends sharply within the drain; on the two 70B offline points the quadrature is within 0.1 %
(vLLM, B = 256) and 2.0 % (SGLang 0.3, B = 1432) of the integral summed over 4,000 steps, where the
decode step at the drain's mean batch (one point) is 1 % and 7.5 % short. The run:

    T_run = N_r·t_req − n0·(O/τ)·t_d(B)/B + t_drain,     output tokens/s = N·O / T_run

t_req = S_in·t_pf + (O/τ)·t_d(B)/B is offline_throughput's time per request. The drain's n0·O tokens
leave the full-batch account and run at the drain's batch instead; every prompt's prefill stays in
the full-batch part. Largest error of H(n) ≈ ln n + γ + 1/(2n) − 1/(12 n²): 0.6 % at n = 1, 0.03 % at
n = 2, 2e-5 at n = 4, 3e-7 at n = 10.

**Fixed output lengths** (``output_lengths="fixed"``: synthetic benchmarks whose every request has exactly O output
tokens, e.g. TensorRT-LLM's perf overview, prepare_dataset.py token-norm-dist with --output-stdev 0, which
trtllm-bench runs to the requested length). Requests admitted together end together: the run goes in
waves of B, and once the queue is empty only the last wave is left, n0 = N_r − B·(⌈N_r/B⌉ − 1) requests
(1 <= n0 <= B; N_r when the run fits one wave), all running O/τ steps at batch n0. The same formula holds
with that n0 and the drain t_drain = (O/τ)·t_d(n0): the quadrature with its three batches at n0 and its
length 1 mean output instead of H (``drain_length``). Admission staggered by long prefills spreads the
waves; that case is not modelled (the waves are an upper bound on the last wave's batch).

The exponential shape is an assumption about the mix, not a fitted factor. The ShareGPT runs of
sglang's benchmark_vllm_060 give a check: median E2E minus median TTFT, over median TPOT, puts the
median output near 116-119 tokens, against a mean of 194.4. That is 0.60-0.61 of the mean; an
exponential gives ln 2 = 0.69.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from workbook.reference.attention_dp import attention_dp_degree
from workbook.reference.decode_time import decode_step
from workbook.reference.serving_load import offline_throughput, output_length_cv2, running_context_tokens
from workbook.reference.serving_shape import ModelShape

#: Euler–Mascheroni constant (the harmonic number's expansion)
EULER_GAMMA = 0.5772156649015329


def harmonic_number(n: float) -> float:
    """H(n) ≈ ln n + γ + 1/(2n) − 1/(12 n²), for n ≥ 1 (the mean of the largest of n unit exponentials)."""
    if not n >= 1:
        raise ValueError(f"n must be at least 1, got {n!r}")
    return math.log(n) + EULER_GAMMA + 1.0 / (2.0 * n) - 1.0 / (12.0 * n * n)


#: three-point Gauss–Legendre nodes on [−1, 1] and their weights
GAUSS_NODES = (-math.sqrt(0.6), 0.0, math.sqrt(0.6))
GAUSS_WEIGHTS = (5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0)


def last_wave_requests(requests_per_rank: float, batch: float) -> float:
    """Fixed output lengths: requests of the last wave, N_r − B·(⌈N_r/B⌉ − 1), at least 1."""
    if not (requests_per_rank > 0 and batch >= 1):
        raise ValueError(f"need requests_per_rank > 0 and batch >= 1, got {requests_per_rank!r}, {batch!r}")
    return max(1.0, requests_per_rank - batch * (math.ceil(requests_per_rank / batch) - 1))


def drain_length(n0: float, *, fixed_lengths: bool = False) -> float:
    """The drain's length in mean outputs: H(n0) for exponential outputs, 1 for fixed ones (one wave)."""
    return 1.0 if fixed_lengths else harmonic_number(n0)


def drain_batches(n0: float, *, fixed_lengths: bool = False) -> tuple[float, ...]:
    """The batches the drain's quadrature evaluates the decode step at: n0·e^(−u_i), at least 1 (fixed
    output lengths: n0 at every node, the last wave's batch throughout)."""
    if fixed_lengths:
        return tuple(max(1.0, n0) for _ in GAUSS_NODES)
    h = harmonic_number(n0)
    return tuple(max(1.0, n0 * math.exp(-h / 2.0 * (1.0 + x))) for x in GAUSS_NODES)


def drain_s(n0: float, *, output_steps: float, step_s: Callable[[float], float], fixed_lengths: bool = False) -> float:
    """Time for n0 running requests (mean ``output_steps`` decode steps) to all finish, ``step_s(b)`` the
    decode step at b requests: output_steps·(L/2)·Σ w_i·step_s(b_i), L = ``drain_length``."""
    length = drain_length(n0, fixed_lengths=fixed_lengths)
    batches = drain_batches(n0, fixed_lengths=fixed_lengths)
    return output_steps * length / 2.0 * sum(w * step_s(b) for w, b in zip(GAUSS_WEIGHTS, batches))


def offline_run(shape: ModelShape, *, hw: dict, engine: Any, prompt_tokens: float, output_tokens: float,
                requests: float, tp: int = 1, ep: int = 1, tokens_per_step: float = 1.0,
                output_lengths: str = "exponential", **kw: Any) -> dict[str, float]:
    """Output tokens/s of a run of ``requests`` prompts all queued at once, timed to its last token
    (``output_lengths``: "fixed", every request has exactly ``output_tokens``; "exponential", a mix).
    ``kw`` is offline_throughput's (kv_tokens, max_num_seqs, precisions, EP keywords)."""
    if not (isinstance(requests, (int, float)) and math.isfinite(requests) and requests >= 1):
        raise ValueError(f"requests must be a finite number of at least 1, got {requests!r}")
    fixed_lengths = output_length_cv2(output_lengths) == 0.0  # ValueError names the choices
    off = offline_throughput(shape, hw=hw, engine=engine, prompt_tokens=prompt_tokens, output_tokens=output_tokens,
                             tp=tp, ep=ep, tokens_per_step=tokens_per_step, output_lengths=output_lengths, **kw)
    dp = attention_dp_degree(ep=ep)
    B, t_full = off["batch"], off["decode_step_s"]
    per_rank = requests / dp
    n0 = last_wave_requests(per_rank, B) if fixed_lengths else max(1.0, min(B, per_rank))
    h = harmonic_number(n0)
    decode_kw = {k: v for k, v in kw.items() if k in ("weight_precision", "kv_precision", "redundant_experts",
                                                      "ep_overlap_frac", "ep_nodes", "query_tokens_per_seq")}
    ctx = running_context_tokens(prompt_tokens=prompt_tokens, output_tokens=output_tokens, output_lengths=output_lengths)
    batches = drain_batches(n0, fixed_lengths=fixed_lengths)
    t_nodes = [decode_step(shape, batch=b, context_tokens=ctx, hw=hw, engine=engine, tp=tp, ep=ep,
                           tokens_per_step=tokens_per_step, **decode_kw)["step_s"] for b in batches]
    steps = output_tokens / tokens_per_step
    t_req = dp * output_tokens / off["throughput_tok_per_s"]
    drain = drain_s(n0, output_steps=steps, step_s=dict(zip(batches, t_nodes)).__getitem__,
                    fixed_lengths=fixed_lengths)
    run_s = per_rank * t_req - n0 * steps * t_full / B + drain
    return {
        "batch": B,
        "drain_requests": n0,
        "drain_harmonic": h,
        "drain_length": drain_length(n0, fixed_lengths=fixed_lengths),
        **{f"drain_batch_{i + 1}": b for i, b in enumerate(batches)},
        **{f"drain_step_{i + 1}_s": t for i, t in enumerate(t_nodes)},
        "drain_s": drain,
        "run_s": run_s,
        "throughput_tok_per_s": requests * output_tokens / run_s,
        "endless_tok_per_s": off["throughput_tok_per_s"],
    }
