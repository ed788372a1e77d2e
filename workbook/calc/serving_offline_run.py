"""Inference sheet, offline run block: a run of N requests queued at once, timed until its last token.
The last requests drain at a shrinking batch, or end in a last wave when every output has the same length (docs/serving.md "A finite offline run";
workbook.reference.serving_offline_run). A blank run size means an endless queue: the run's figure
is the offline throughput, and the drain rows show one batch cap's drain for reference."""

from __future__ import annotations

import math

from workbook.calc.base import Context, Q
from workbook.calc.serving_step import decode, decode_quantities, decode_values
from workbook.reference import serving_offline_run as so

_S = "docs/serving.md"
NODES = len(so.GAUSS_NODES)

QUANTITIES = [
    Q("srv_run_given_flag", "0/1", "An offline run size is given (0 = an endless queue)", _S),
    Q("srv_run_requests_per_rank", "requests", "Requests of the offline run per attention-DP rank (blank run size: "
      "one batch cap)", _S),
    Q("srv_run_fixed_flag", "0/1", "The run's requests all have the same output length (1 = fixed: they end in "
      "waves; 0 = exponential)", _S),
    Q("srv_run_waves", "count", "Fixed output lengths: waves of the batch cap the run takes per rank (⌈N/B⌉)", _S),
    Q("srv_run_drain_requests", "requests", "Requests still running when the run's queue empties (exponential: "
      "the batch cap, at most the run; fixed: the last wave)", _S),
    Q("srv_run_drain_harmonic", "x", "Harmonic number of those requests: the exponential drain's length in mean "
      "outputs (ln n + γ + 1/(2n) − 1/(12n²))", _S),
    Q("srv_run_drain_length", "x", "Drain's length in mean outputs (exponential: the harmonic number; fixed: 1)", _S),
    *[q for i in range(1, NODES + 1) for q in (
        Q(f"srv_run_b{i}", "sequences", f"Drain: batch at quadrature node {i} (n0·e^(−u), at least 1; fixed: n0)",
          _S),
        *decode_quantities(f"srv_rund{i}", f"(offline run drain, node {i})"),
    )],
    Q("srv_run_drain_s", "s", "Drain: time from the empty queue to the run's last token (3-point Gauss quadrature)", _S),
    Q("srv_run_s", "s", "Offline run: time to its last token (full batch, then the drain)", _S),
    Q("srv_run_drain_frac", "fraction", "Share of the offline run spent draining (0 = no run size given)", _S),
    Q("srv_offline_run_tokens_per_s", "tokens/s", "Output tokens/s of the offline run of one serving group, to its "
      "last token (blank run size: the offline throughput)", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    inf, q = ctx.s.inference, ctx.q
    O = float(inf.output_tokens)
    cap, dp = q["srv_load_batch_cap_used"], q["srv_attention_dp"]
    given = inf.offline_requests is not None
    per_rank = float(inf.offline_requests) / dp if given else cap
    fixed = inf.output_lengths == "fixed"
    waves = float(math.ceil(per_rank / cap))
    n0 = so.last_wave_requests(per_rank, cap) if fixed else max(1.0, min(cap, per_rank))
    h = so.harmonic_number(n0)
    ctx_tok = float(q["srv_running_context_tokens"])
    out: dict[str, float] = {
        "srv_run_given_flag": float(given),
        "srv_run_requests_per_rank": per_rank,
        "srv_run_fixed_flag": float(fixed),
        "srv_run_waves": waves,
        "srv_run_drain_requests": n0,
        "srv_run_drain_harmonic": h,
        "srv_run_drain_length": so.drain_length(n0, fixed_lengths=fixed),
    }
    steps = {}
    for i, b in enumerate(so.drain_batches(n0, fixed_lengths=fixed), start=1):
        step = decode(ctx, b, ctx_tok)
        out[f"srv_run_b{i}"] = b
        out.update(decode_values(f"srv_rund{i}", step))
        steps[b] = step["step_s"]
    drain = so.drain_s(n0, output_steps=O, step_s=steps.__getitem__, fixed_lengths=fixed)
    run = per_rank * q["srv_off_s_per_request"] - n0 * O * q["srv_off_step_s"] / cap + drain
    out.update({
        "srv_run_drain_s": drain,
        "srv_run_s": run,
        "srv_run_drain_frac": drain / run if given else 0.0,
        "srv_offline_run_tokens_per_s": float(inf.offline_requests) * O / run if given
        else q["srv_offline_tokens_per_s"],
    })
    return out
