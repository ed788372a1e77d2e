"""The figures docs/serving.md quotes for issue 22 (small prompts, the three load models, the queue against
the simulated scheduler). Print them with

    PYTHONPATH=. .venv/bin/python -m tests.reference.serving_load_models_table
"""

from __future__ import annotations

import statistics

from tests.reference import serving_validation as sv
from tests.reference.test_serving_closed_loop import _closed, _group, _static
from tests.reference.test_serving_queue import LOADS, _closed as _queue_closed, _quantile
from workbook.reference import prefill_time as pt
from workbook.reference import serving_queue as sq
from workbook.reference.serving_shape import model_shape


def idle_ttft_rows() -> list[str]:
    out = []
    for model, tp, eng in (("llama-3-8b", 1, "vllm-0.10"), ("llama-3-70b", 4, "vllm-0.10")):
        shape, e = model_shape(sv.CATALOG.models[model]), sv.ENGINES.profile(eng)
        cells = []
        for S in (100, 128, 2048, 20_000, 100_000):
            pf = pt.prefill_time(shape, prompt_tokens=S, hw=sv.H100, engine=e, tp=tp)
            ttft = pt.ttft_s(wait_s=0.0, prefill_s=pf["prefill_s"], overhead_s=pt.request_overhead_s(e))
            share = pf["linear_compute_s"] / pf["linear_s"]
            cells.append(f"{S:>7,}: {ttft * 1e3:9.1f} ms (GEMM at {share:.2f} of its FLOP rate)")
        out.append(f"idle TTFT {model} TP{tp} {eng} H100\n    " + "\n    ".join(cells))
    return out


def load_model_rows() -> list[str]:
    g = _group("vllm-0.10", (2000.0, 300.0))
    out = ["llama-3-70b TP4 H100 vllm-0.10, 2,000 / 300 tokens:",
           f"    idle TTFT {g['idle_ttft'] * 1e3:.1f} ms, offline {g['off']['throughput_tok_per_s']:.0f} tokens/s"]
    for n in (1, 25, 50, 200):
        c = _closed(g, n)
        out.append(f"    concurrency {n:>4}: TTFT {c['ttft_s'] * 1e3:8.1f} ms  TPOT {c['tpot_s'] * 1e3:6.2f} ms  "
                   f"{c['throughput_tok_per_s']:7.0f} tokens/s")
    for b in (1, 16, 64):
        s = _static(g, b)
        out.append(f"    static batch {b:>3}: TTFT {s['ttft_s'] * 1e3:8.1f} ms  TPOT {s['tpot_s'] * 1e3:6.2f} ms  "
                   f"{s['throughput_tok_per_s']:7.0f} tokens/s")
    return out


def queue_rows() -> list[str]:
    out = ["queue: closed form against the simulated scheduler (8,000 requests), TTFT mean / p90 / p99, TPOT p99 (ms)"]
    for load in LOADS:
        lam, td, tm, S, C, O, idle = load
        sim = sq.simulate_mixed_scheduler(rate_per_s=lam, decode_step_s=td, prefill_s_per_token=tm, prompt_tokens=S,
                                          chunk_tokens=C, output_tokens=O, idle_prefill_s=idle, requests=8000)
        cf = _queue_closed(*load)
        t = sim["ttft_s"]
        out.append(f"    rho {lam * S * tm:.2f}: sim {statistics.mean(t) * 1e3:7.1f} {_quantile(t, .9) * 1e3:7.1f} "
                   f"{_quantile(t, .99) * 1e3:7.1f} {_quantile(sim['tpot_s'], .99) * 1e3:6.1f} | closed form "
                   f"{cf['ttft'] * 1e3:7.1f} {cf['ttft_p90'] * 1e3:7.1f} {cf['ttft_p99'] * 1e3:7.1f} "
                   f"{cf['tpot_p99'] * 1e3:6.1f}")
    return out


if __name__ == "__main__":
    print("\n".join(idle_ttft_rows() + load_model_rows() + queue_rows()))
