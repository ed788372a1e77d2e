"""Published serving measurements and what the serving reference predicts for them (docs/serving.md).

Run ``python -m tests.reference.serving_validation`` to print the table. The points:

- KV capacity, vllm-project/vllm issue 21348 (2025-07-22): Qwen3-235B-A22B-FP8 on 4 x H100, TP4.
  vLLM (V1, default gpu_memory_utilization 0.9): "Available KV cache memory: 8.11 GiB, GPU KV cache
  size: 178,880 tokens". SGLang (--mem-fraction-static 0.93): "#tokens: 367404, K size: 8.23 GB".
- Small-batch TPOT, LambdaLabsML/vllm-benchmark results/prompt_10/4xH100-80GB-SXM/
  Meta-Llama-3-70B-Instruct_tp4_len2048.json (vLLM 0.6.0, 10 scheduler steps, 10 ShareGPT prompts
  at once): median TPOT 18.12 ms; the last inter-token windows of the 741-token request, alone in the
  batch, 170-171 ms per 10 steps (17.0 ms per step at B = 1). results/prompt_80/...: windows 2-5 of
  the first request, 205/211/210/199 ms per 10 steps with about 55 requests decoding (20.6 ms).
- Under load and offline, sgl-project/sglang benchmark/benchmark_vllm_060/README.md: Llama 3.1 70B
  Instruct on 4 x H100, ShareGPT, vLLM 0.6.0 (--num-scheduler-steps 10, max_model_len 4096) and
  SGLang 0.3.0; median TPOT at 4 and 8 requests/s (23.58/29.15 and 25.03/33.07 ms); offline, 5000
  prompts at rate inf, 3700.64 and 3856.01 output tokens/s (SGLang with --mem-frac 0.88).
  Request mix: 194.4 output tokens per request (the offline table: 3700.64/19.04 = 3856.01/19.84);
  224 prompt tokens per request (sglang bench_serving ShareGPT, sgl-project/sglang issue 2805:
  369,103 input tokens for 1648 requests).
- Long-prompt TTFT, NVIDIA NIM benchmarking guide, Performance
  (docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance): Llama-3.3-70b-instruct (Llama-3-70B's
  architecture), NIM 1.8.0 (TensorRT-LLM), 2 x H100 80G, fp8 TP2, 5000 input / 500 output tokens,
  concurrency 1: TTFT 406.77 ms. A single-request latency: the batch-1 target (20%) is borrowed.
- DeepSeek-V3/R1 inference system, deepseek-ai/open-infra-index 202502OpenSourceWeek day 6: H800,
  prefill EP32 over 4 nodes (9 routed + 1 shared expert per GPU), decode EP144 over 18 nodes (2 routed
  + 1 shared expert per GPU, 32 redundant experts), average KV length 4,989 tokens, 20-22 output
  tokens/s per user, about 14.8k output tokens/s per decode node and 73.7k input tokens/s per prefill
  node (with the 56.3% of the input that hit the on-disk KV cache). 24 hours: 608B input tokens
  (342B cache hits), 168B output tokens, 226.75 nodes on average. Request mix for the disaggregated
  model (serving_disagg.size_pools): output/input = 168/608 and the running requests' mean context
  S_in + O = 4,989 (serving_load.running_context_tokens, exponential outputs), so S_in = 3,909 and O = 1,080
  (before 2026-12-04, with S_in + O/2: 4,383 and 1,212); the load is the day's average,
  608e9 / 86,400 s / 3,909 = 1,800 requests/s.

``points()`` returns one dict per point (name, quantity, unit, published, ours, error, target, matched,
book, source); ``error`` = ours/published - 1. ``matched`` says whether the point is inside its target;
the tests assert it for the points docs/serving.md reports as matched and xfail (strict) the others.
"""

from __future__ import annotations

import statistics
from functools import lru_cache

from workbook.catalog import load_catalog
from workbook.catalog.efficiency import load_efficiency
from workbook.catalog.engines import load_engines
from workbook.reference import decode_time as dt
from workbook.reference import engine_memory as em
from workbook.reference import prefill_time as pt
from workbook.reference import serving_load as sl
from workbook.reference import serving_offline_run as so
from workbook.reference.serving_shape import model_shape

CATALOG = load_catalog()
ENGINES = load_engines(gpu_ids=CATALOG.gpus)
EFF = load_efficiency(gpu_ids=CATALOG.gpus)

#: ShareGPT request mix of the sglang benchmark_vllm_060 runs (module docstring)
SHAREGPT_PROMPT = 224.0
SHAREGPT_OUTPUT = 194.4
#: prompts of the offline runs (--num-prompts 5000), all queued at once and timed to the last token
OFFLINE_REQUESTS = 5000
#: LambdaLabs prompt_10 run (first 10 ShareGPT prompts, seed 0): input and output lengths
LAMBDA10_INPUT = [13, 25, 27, 10, 329, 29, 399, 328, 4, 205]
LAMBDA10_OUTPUT = [120, 661, 233, 194, 101, 741, 0, 0, 6, 35]
LAMBDA10_TTFT_S = 0.1406  # median TTFT of the run (all ten prefilled together)
#: DeepSeek day 6
DS_KV_LEN = 4989
DS_USER_TOK_PER_S = 21.0  # "20-22 tokens per second"
DS_NODE_OUT_TOK_PER_S = 14.8e3
DS_EP = 144
DS_NODES = 18
DS_REDUNDANT = 32
#: NVIDIA NIM 1.8.0, Llama-3.3-70b-instruct on 2 x H100 80G, fp8 TP2, 5000 input / 500 output, concurrency 1
NIM_PROMPT = 5000.0
NIM_TTFT_MS = 406.77
DS_PREFILL_EP = 32
DS_CACHE_HIT = 0.563
DS_NODE_IN_TOK_PER_S = 73.7e3
DS_PROMPT = 3909.0  # output/input = 168/608 and prompt + output = 4,989, the running mean context (module docstring)
DS_OUTPUT = 1080.0
DS_RATE_RPS = 608e9 / 86_400 / DS_PROMPT  # the day's average load
DS_AVG_NODES = 226.75


def hardware(gpu_id: str) -> dict:
    return dt.serving_hardware(gpu=CATALOG.gpu(gpu_id), efficiency=EFF[gpu_id], device=ENGINES.device(gpu_id))


H100 = hardware("h100")
H800 = hardware("h800")
LLAMA70 = model_shape(CATALOG.model("llama-3-70b"))
QWEN235 = model_shape(CATALOG.model("qwen3-235b-a22b"))
DSV3 = model_shape(CATALOG.model("deepseek-v3"))


def closed_batch_median_tpot_s(shape, *, inputs, outputs, hw, engine, tp) -> float:
    """Median TPOT of a closed batch started together (benchmark_serving at rate inf with few prompts):
    decode steps run until each request has its output; each request's TPOT is the mean step time
    over its own steps."""
    live = [(p, o) for p, o in zip(inputs, outputs) if o >= 2]
    steps = max(o for _, o in live)
    times = []
    for k in range(1, steps):
        running = [(p, o) for p, o in live if o > k]
        ctx = statistics.mean(p + k for p, _ in running)
        times.append(dt.decode_step(shape, batch=len(running), context_tokens=ctx, hw=hw, engine=engine, tp=tp)["step_s"])
    tpots = [sum(times[: o - 1]) / (o - 1) for _, o in live]
    return statistics.median(tpots)


def _pt(name, quantity, unit, published, ours, target, source, book=None):
    err = ours / published - 1.0
    return {"name": name, "quantity": quantity, "unit": unit, "published": published, "ours": ours,
            "error": err, "target": target, "matched": abs(err) <= target, "book": book, "source": source}


@lru_cache(maxsize=1)
def points() -> tuple[dict, ...]:
    out = []
    # ---------------------------------------------------------------- KV capacity (vllm issue 21348)
    v1 = ENGINES.profile("vllm-0.10")
    sg4 = ENGINES.profile("sglang-0.4")
    book = em.book_kv_tokens(QWEN235, hbm_GB=80, tp=4, weight_precision="fp8", overhead_GB=2, usable_frac=0.9)
    kv_v = em.kv_capacity(QWEN235, engine=v1, device_total_GiB=H100["device_total_GiB"], tp=4, weight_precision="fp8")
    kv_s = em.kv_capacity(QWEN235, engine=sg4, device_total_GiB=H100["device_total_GiB"], tp=4, weight_precision="fp8",
                          memory_fraction=0.93)
    out.append(_pt("kv-vllm-qwen3-235b-fp8-tp4", "KV cache tokens (vLLM 0.10, util 0.9)", "tokens", 178_880,
                   kv_v["kv_tokens"], 0.05, "vllm issue 21348", book))
    out.append(_pt("kv-vllm-qwen3-235b-fp8-tp4-GiB", "KV memory per GPU (vLLM 0.10)", "GiB", 8.11,
                   kv_v["kv_budget_GiB"], 0.05, "vllm issue 21348"))
    out.append(_pt("kv-sglang-qwen3-235b-fp8-tp4", "KV cache tokens (SGLang, mem_fraction_static 0.93)", "tokens",
                   367_404, kv_s["kv_tokens"], 0.05, "vllm issue 21348", book))

    # ---------------------------------------------------------------- small-batch decode (LambdaLabs, vLLM 0.6.0)
    v06 = ENGINES.profile("vllm-0.6.0")
    tpot10 = closed_batch_median_tpot_s(LLAMA70, inputs=LAMBDA10_INPUT, outputs=LAMBDA10_OUTPUT, hw=H100,
                                        engine=v06, tp=4)
    book8 = dt.book_decode_step_s(LLAMA70, batch=8, context_tokens=300, hw=H100, tp=4, hbm_efficiency=0.8)
    out.append(_pt("tpot-llama70-tp4-10-prompts", "median TPOT, 10 prompts at once (batch 8 -> 1)", "ms", 18.12,
                   tpot10 * 1e3, 0.20, "LambdaLabs prompt_10 4xH100 Meta-Llama-3-70B-Instruct", book8 * 1e3))
    b1 = dt.decode_step(LLAMA70, batch=1, context_tokens=29 + 700, hw=H100, engine=v06, tp=4)["step_s"]
    book1 = dt.book_decode_step_s(LLAMA70, batch=1, context_tokens=729, hw=H100, tp=4, hbm_efficiency=0.8)
    out.append(_pt("step-llama70-tp4-batch1", "decode step, one request left (ITL / 10 steps)", "ms", 17.0,
                   b1 * 1e3, 0.20, "LambdaLabs prompt_10, last windows of the 741-token request", book1 * 1e3))
    b55 = dt.decode_step(LLAMA70, batch=55, context_tokens=230, hw=H100, engine=v06, tp=4)["step_s"]
    book55 = dt.book_decode_step_s(LLAMA70, batch=55, context_tokens=230, hw=H100, tp=4, hbm_efficiency=0.8)
    out.append(_pt("step-llama70-tp4-batch55", "decode step, about 55 decoding (ITL / 10 steps)", "ms", 20.6,
                   b55 * 1e3, 0.25, "LambdaLabs prompt_80, windows 2-5 of the first request", book55 * 1e3))

    # ---------------------------------------------------------------- long-prompt TTFT (NVIDIA NIM 1.8.0)
    trt = ENGINES.profile("tensorrt-llm")
    pf = pt.prefill_time(LLAMA70, prompt_tokens=NIM_PROMPT, batch=1, hw=H100, engine=trt, tp=2, weight_precision="fp8")
    book_pf = pt.book_prefill_s(LLAMA70, prompt_tokens=NIM_PROMPT, hw=H100, tp=2)
    out.append(_pt("ttft-llama70-fp8-tp2-5k-nim", "TTFT of one 5,000-token prompt (TensorRT-LLM, FP8, TP 2)", "ms",
                   NIM_TTFT_MS, pt.ttft_s(wait_s=0.0, prefill_s=pf["prefill_s"],
                                          overhead_s=pt.request_overhead_s(trt)) * 1e3, 0.20, "NVIDIA NIM benchmarking guide, Performance",
                   book_pf * 1e3))

    # ---------------------------------------------------------------- under load (sglang benchmark_vllm_060)
    sg3 = ENGINES.profile("sglang-0.3.0")
    kv06 = em.kv_capacity(LLAMA70, engine=v06, device_total_GiB=H100["device_total_GiB"], tp=4)["kv_tokens"]
    kv03 = em.kv_capacity(LLAMA70, engine=sg3, device_total_GiB=H100["device_total_GiB"], tp=4)["kv_tokens"]
    kv03_offline = em.kv_capacity(LLAMA70, engine=sg3, device_total_GiB=H100["device_total_GiB"], tp=4,
                                  memory_fraction=0.88)["kv_tokens"]
    for eng, kv, label, pub in ((v06, kv06, "vllm-0.6.0", {4: 23.58, 8: 29.15}),
                                (sg3, kv03, "sglang-0.3.0", {4: 25.03, 8: 33.07})):
        for rps, value in pub.items():
            st = sl.steady_state(LLAMA70, hw=H100, engine=eng, prompt_tokens=SHAREGPT_PROMPT,
                                 output_tokens=SHAREGPT_OUTPUT, arrival_rate_per_s=rps, tp=4, kv_tokens=kv)
            bk = dt.book_decode_step_s(LLAMA70, batch=st["batch"], context_tokens=st["context_tokens"], hw=H100, tp=4,
                                       hbm_efficiency=0.8)
            out.append(_pt(f"tpot-{label}-rps{rps}", f"median TPOT at {rps} req/s (batch {st['batch']:.0f})", "ms",
                           value, st["tpot_s"] * 1e3, 0.25, "sglang benchmark_vllm_060 README", bk * 1e3))
    for eng, kv, label, value in ((v06, kv06, "vllm-0.6.0", 3700.64), (sg3, kv03_offline, "sglang-0.3.0", 3856.01)):
        off = so.offline_run(LLAMA70, hw=H100, engine=eng, prompt_tokens=SHAREGPT_PROMPT,
                             output_tokens=SHAREGPT_OUTPUT, requests=OFFLINE_REQUESTS, tp=4, kv_tokens=kv)
        out.append(_pt(f"offline-{label}", f"output tok/s, 5000 prompts at rate inf to the last (batch {off['batch']:.0f})",
                       "tokens/s", value, off["throughput_tok_per_s"], 0.30, "sglang benchmark_vllm_060 README"))

    # ---------------------------------------------------------------- DeepSeek-V3/R1 decode (day 6)
    ds = ENGINES.profile("deepseek-v3-infer")
    kw = dict(tp=1, ep=DS_EP, redundant_experts=DS_REDUNDANT, weight_precision="fp8", ep_overlap_frac=1.0,
              ep_nodes=DS_NODES)
    pools = deepseek_pools()
    H800_GPUS_PER_NODE = CATALOG.gpu("h800").gpus_per_node
    out.append(_pt("deepseek-decode-node", "disaggregated: decode output tok/s per node at 21 tok/s/user "
                   f"(batch {pools['decode_batch_per_rank']:.0f}/GPU)", "tokens/s", DS_NODE_OUT_TOK_PER_S,
                   pools["decode_tokens_per_s_per_node_in_service"], 0.30, "open-infra-index day 6"))
    out.append(_pt("deepseek-prefill-node", "disaggregated: prefill input tok/s per node, EP32, 56.3% cache hits "
                   f"({pools['prefill_prompts_per_step']:.0f} prompts/step)", "tokens/s", DS_NODE_IN_TOK_PER_S,
                   pools["prefill_input_tokens_per_s_per_node_in_service"], 0.30, "open-infra-index day 6"))
    b_pub = DS_NODE_OUT_TOK_PER_S / H800_GPUS_PER_NODE / DS_USER_TOK_PER_S
    d_pub = dt.decode_step(DSV3, batch=b_pub, context_tokens=DS_KV_LEN, hw=H800, engine=ds, **kw)
    out.append(_pt("deepseek-decode-tpot", f"TPOT at the published batch ({b_pub:.0f}/GPU = 14.8k/8/21)", "ms",
                   1e3 / DS_USER_TOK_PER_S, d_pub["tpot_s"] * 1e3, 0.30, "open-infra-index day 6"))
    return tuple(out)


@lru_cache(maxsize=1)
def deepseek_pools() -> dict:
    """serving_disagg.size_pools with the published deployment at the day's average load."""
    from workbook.reference import serving_disagg as sd

    ds = ENGINES.profile("deepseek-v3-infer")
    kv = em.kv_capacity(DSV3, engine=ds, device_total_GiB=H800["device_total_GiB"], tp=1, ep=DS_EP,
                        redundant_experts=DS_REDUNDANT, weight_precision="fp8")["kv_tokens"]
    cap = sl.batch_capacity(engine=ds, kv_tokens=kv, prompt_tokens=DS_PROMPT, output_tokens=DS_OUTPUT)
    return sd.size_pools(DSV3, hw=H800, engine=ds, arrival_rate_per_s=DS_RATE_RPS, prompt_tokens=DS_PROMPT,
                         output_tokens=DS_OUTPUT, decode_batch_cap=cap, tpot_target_s=1.0 / DS_USER_TOK_PER_S,
                         cache_hit_frac=DS_CACHE_HIT, tp=1, ep=DS_EP, prefill_ep=DS_PREFILL_EP,
                         redundant_experts=DS_REDUNDANT, weight_precision="fp8", ep_overlap_frac=1.0)


def informational() -> list[dict]:
    """Published figures shown next to ours without a target (TTFT under load, DeepSeek prefill)."""
    v06 = ENGINES.profile("vllm-0.6.0")
    sg3 = ENGINES.profile("sglang-0.3.0")
    rows = []
    for eng, label, pub in ((v06, "vllm-0.6.0", {4: 179.15, 8: 207.12}), (sg3, "sglang-0.3.0", {4: 53.94, 8: 58.11})):
        kv = em.kv_capacity(LLAMA70, engine=eng, device_total_GiB=H100["device_total_GiB"], tp=4)["kv_tokens"]
        for rps, value in pub.items():
            st = sl.steady_state(LLAMA70, hw=H100, engine=eng, prompt_tokens=SHAREGPT_PROMPT,
                                 output_tokens=SHAREGPT_OUTPUT, arrival_rate_per_s=rps, tp=4, kv_tokens=kv)
            rows.append({"name": f"ttft-{label}-rps{rps}", "unit": "ms", "published": value, "ours": st["ttft_s"] * 1e3})
    ten = pt.prefill_time(LLAMA70, prompt_tokens=sum(LAMBDA10_INPUT) / 10, batch=10, hw=H100, engine=v06, tp=4)
    rows.append({"name": "ttft-lambdalabs-10-prompts (one prefill call)", "unit": "ms",
                 "published": LAMBDA10_TTFT_S * 1e3, "ours": ten["prefill_s"] * 1e3})
    pools = deepseek_pools()
    rows.append({"name": "deepseek-prefill-node, computed (uncached) tokens", "unit": "tokens/s",
                 "published": DS_NODE_IN_TOK_PER_S * (1 - DS_CACHE_HIT),
                 "ours": pools["prefill_tokens_per_s_per_gpu"] * CATALOG.gpu("h800").gpus_per_node})
    rows.append({"name": "deepseek nodes at the day's average load (both pools)", "unit": "nodes",
                 "published": DS_AVG_NODES, "ours": pools["total_nodes"]})
    return rows


def table() -> str:
    head = f"{'point':<36} {'unit':<9} {'published':>11} {'ours':>11} {'book':>10} {'error':>8} {'target':>7}  result"
    lines = [head, "-" * len(head)]
    for p in points():
        book = f"{p['book']:,.4g}" if p["book"] is not None else ""
        lines.append(f"{p['name']:<36} {p['unit']:<9} {p['published']:>11,.4g} {p['ours']:>11,.4g} {book:>10} "
                     f"{p['error']:>+7.1%} {p['target']:>6.0%}  {'PASS' if p['matched'] else 'FAIL'}")
    lines.append("")
    lines.append("informational (no target):")
    for r in informational():
        lines.append(f"  {r['name']:<60} {r['unit']:<9} published {r['published']:>10,.4g}  ours {r['ours']:>10,.4g}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
