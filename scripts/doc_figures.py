"""The figures the README and docs quote, computed now (tests/test_docs.py checks the docs still quote them).

    PYTHONPATH=. python scripts/doc_figures.py           # prints "key: text" lines; each text appears in its doc
    PYTHONPATH=. python scripts/doc_figures.py --write   # also rewrites every generated block and figure

FIGURES: each figure is one short text a doc contains verbatim, behind ``<!-- figure KEY (scripts/doc_figures.py)
-->``; when a change moves a number, the test fails and names the doc and the new text, and ``--write`` puts it in
where only numbers moved (it names the figures whose words changed, to paste by hand). BLOCKS: a longer text (a command's output, a table) that a doc
holds between ``<!-- block KEY:begin (scripts/doc_figures.py) -->`` and ``<!-- block KEY:end -->``; ``--write``
replaces it, and the test fails while the doc holds another text.
"""

from __future__ import annotations

import io
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable

from workbook.planner.report import usd

ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=None)
def _outcome(request: str):
    """The planner's outcome for a shipped request (computed once per process)."""
    from workbook.catalog import load_catalog
    from workbook.planner.plan import plan_request
    from workbook.planner.request import load_request

    return plan_request(load_request(ROOT / "catalog" / "requests" / request), load_catalog())


def _plan(request: str) -> dict:
    return _outcome(request).data["training"]


def plan_output(request: str) -> str:
    """What `workbook plan catalog/requests/REQUEST -o out/plans` prints, the search time left out (it varies:
    docs/performance.md), up to the files it writes."""
    from workbook.planner.report import print_report

    out = io.StringIO()
    print_report(_outcome(request).data, out)
    text = re.sub(r"(passed); \d+(\.\d+)? s$", r"\1; (time: docs/performance.md)", out.getvalue(), flags=re.M)
    return re.sub(r"^(  .*search took) [\d.]+ s", r"\1 (time: docs/performance.md)", text, flags=re.M)


def _serving_cell(p, ttft: bool = False) -> str:
    cell = f"{p.num_gpus} GPUs (TP{p.layout.tp} x {p.replicas}), "
    cell += f"TTFT {p.ttft_ms:,.0f} ms" if ttft else f"${p.usd_per_month:,.0f}/month, ${p.usd_per_1M_tokens:.3f}/1M"
    return cell


def _h20_load(prompt: int, output: int, ttft_ms: float, basis: str):
    from tests.planner.test_serving_search import serving_request
    from workbook.catalog import load_catalog
    from workbook.planner.serving_search import search_serving

    return search_serving(serving_request(model="llama-3-70b", gpus=("h800", "h20"), basis=basis, requests_per_s=20,
                                          prompt_tokens=prompt, output_tokens=output, ttft_ms=ttft_ms, tpot_ms=50),
                          load_catalog())


def table_1796() -> str:
    """Spec 17.9.6 H800 vs H20 as the serving search decides it, per load and price basis (docs/engineering.md;
    the loads of tests/planner/test_serving_1796.py)."""
    from workbook.catalog import load_catalog

    gpus = load_catalog().gpus
    lines = ["| load (LLaMA-3-70B, 20 req/s, TPOT 50 ms) | prices (H800 / H20, $/GPU-h) | H800 best | H20 best | pick |",
             "|---|---|---|---|---|"]
    loads = (("256 prompt / 1024 output, TTFT 2 s (`serve-70b-h20-short-prompt.yaml`)", 256, 1024, 2000, False),
             ("4096 prompt / 128 output, TTFT 500 ms", 4096, 128, 500, True))
    for label, prompt, output, ttft, show_ttft in loads:
        for basis in ("on_demand", "reserved"):
            res = _h20_load(prompt, output, ttft, basis)
            best = res.best_per_gpu()
            price = " / ".join(f"${getattr(gpus[g], f'price_{basis}_usd_per_gpu_hour'):.2f}" for g in ("h800", "h20"))
            cells = []
            for g in ("h800", "h20"):
                if g in best:
                    cells.append(_serving_cell(best[g], show_ttft))
                else:
                    miss = min((r for r in res.rejections if r.gpu == g and r.check == "serving_ttft_target"),
                               key=lambda r: r.value, default=None)
                    cells.append(f"none: TTFT {miss.value:,.0f} ms at the smallest load" if miss else "none")
            lines.append(f"| {label} | {basis.replace('_', '-')} {price} | {cells[0]} | {cells[1]} | "
                         f"{res.plans[0].layout.gpu.upper() if res.plans else 'none'} |")
    return "\n".join(lines)


def loose_ttft_1796() -> str:
    """The 4K-prompt load with TTFT <= 5 s at on-demand prices: the H20's and the H800's best (docs/engineering.md)."""
    best = _h20_load(4096, 128, 5000, "on_demand").best_per_gpu()
    return (f"{best['h20'].num_gpus} H20, ${best['h20'].usd_per_month:,.0f}/month against "
            f"{best['h800'].num_gpus} H800, ${best['h800'].usd_per_month:,.0f}")


def table_deepseek_serving() -> str:
    """The DeepSeek-V3 serving plan: the recommended plan and the best of the other kind (docs/engineering.md)."""
    sv = _outcome("serve-deepseek-v3-h800.yaml").data["serving"]
    lines = ["| plan | GPUs | TTFT | TPOT | $/month | $/1M output tokens |", "|---|---|---|---|---|---|"]
    for label, p in (("recommended", sv["recommended"]), ("best of the other kind", sv.get("other_kind"))):
        if not p:
            continue
        if p["kind"] == "disaggregated":
            what = (f"{label}, disaggregated: {p['prefill_instances']:.0f} prefill instances TP{p['tp']} "
                    f"EP{p['prefill_ep']} + {p['decode_instances']:.0f} decode instances TP{p['tp']} EP{p['ep']}")
            gpus = f"{p['num_gpus']:,} ({p['prefill_gpus']:,.0f} + {p['decode_gpus']:,.0f})"
        else:
            what = f"{label}, co-located: {p['replicas']} groups TP{p['tp']} EP{p['ep']}"
            gpus = f"{p['num_gpus']:,}"
        lines.append(f"| {what} | {gpus} | {p['ttft_ms']:,.0f} ms | {p['tpot_ms']:.1f} ms | ${p['usd_per_month']:,.0f} "
                     f"| ${p['usd_per_1M_tokens']:.3f} |")
    return "\n".join(lines)


def deepseek_pools() -> str:
    """The recommended DeepSeek-V3 plan's decode and prefill pools, in words (docs/engineering.md)."""
    p = _outcome("serve-deepseek-v3-h800.yaml").data["serving"]["recommended"]
    per_node = p["tokens_per_s"] / (p["decode_gpus"] / 8)
    return (f"The decode pool serves {per_node / 1e3:.1f}k output tokens/s per node ({p['decode_batch_per_rank']:.0f} "
            f"requests per DP rank); the prefill pool is {100 * p['prefill_busy_frac']:.1f} % busy")


@lru_cache(maxsize=None)
def _calc(scenario: str) -> dict:
    """Every named quantity of a shipped scenario (catalog/scenarios/SCENARIO.yaml)."""
    from workbook.calc import compute
    from workbook.catalog import load_catalog
    from workbook.scenario import load_scenarios

    return compute(load_scenarios([ROOT / "catalog" / "scenarios" / f"{scenario}.yaml"])[0], load_catalog())


def book_cases_step() -> str:
    """What the step model says of the shipped book cases, which run at the MFU given (docs/engineering.md)."""
    cases = (("17.9.1 (LLaMA-7B, 256 H800)", "17.9.1-llama-7b-h800"),
             ("17.9.4 (70B, TP 8 x PP 2 on 640 H800)", "17.9.4-70b-plan-h800"),
             ("17.9.3 (the GPT-4-class MoE on 16,384 H800)", "17.9.3-gpt4-class-moe-h800"))
    out = []
    for label, sc in cases:
        v = _calc(sc)
        out.append(f"{label} {v['st_train_days_with_overhead']:.1f} days against "
                   f"{v['plan_train_days_with_overhead']:.1f} (predicted MFU {v['st_mfu']:.2f})")
    return "; ".join(out)


def gpus_needed_17_9_4() -> str:
    """The GPUs 17.9.4 needs for its target days by the MFU given and by the step model (docs/engineering.md)."""
    v = _calc("17.9.4-70b-plan-h800")
    return f"the MFU given says {v['plan_gpus_needed']:,.0f} GPUs, the step model {v['st_gpus_needed']:,.0f}"


@lru_cache(maxsize=None)
def _deviations() -> dict:
    """The examples tests' DEVIATIONS (record -> {key: (record value, ours, why)}), in the tests' order."""
    import contextlib
    import importlib

    devs: dict = {}
    for f in sorted((ROOT / "tests" / "examples").glob("test_examples_*.py")):
        with contextlib.redirect_stdout(io.StringIO()):  # the modules print their coverage when imported
            devs.update(getattr(importlib.import_module(f"tests.examples.{f.stem}"), "DEVIATIONS", {}))
    return devs


def book_examples() -> str:
    """How many of the book's worked-example records the examples tests run, and how many deviate
    (docs/engineering.md)."""
    import json

    records = sum(len(json.loads(f.read_text(encoding="utf-8")))
                  for f in sorted((ROOT / "tests" / "data" / "examples").glob("*.json")))
    devs = _deviations()
    return (f"all {records} records of `../shared/spec/examples`; deviations: "
            f"{sum(len(v) for v in devs.values())} keys in {len(devs)} records")


def deviations_table() -> str:
    """Every deviation of the examples tests from a spec record, with its derivation (docs/engineering.md)."""
    def why(text: str) -> str:
        return text if len(text) <= 150 else text[:150].rstrip() + " ..."

    lines = ["| record | key | record value | ours | why |", "|---|---|---|---|---|"]
    lines += [f"| {rec} | {key} | {book:g} | {ours:.10g} | {why(text)} |"
              for rec, keys in _deviations().items() for key, (book, ours, text) in keys.items()]
    return "\n".join(lines)


def step_time_table() -> str:
    """The step model against its published points, as `python -m tests.reference.test_step_time` prints them
    (docs/step_time.md): the headline table and Narayanan Table 2's supplementary rows."""
    from tests.reference import test_step_time as t

    def rows(points, title: str) -> list[str]:
        rs = t.evaluate(points)
        errs = [abs(r[4]) for r in rs]
        out = [f"**{title}**", "", "| point | quantity | published | ours | error |", "|---|---|---:|---:|---:|"]
        out += [f"| {name} | {key} | {pub:,.2f} | {ours:,.2f} | {100 * err:+.1f}% |" for name, key, pub, ours, err in rs]
        out.append(f"| **{len(rs)} points** | | | **mean {100 * sum(errs) / len(errs):.2f}%** | "
                   f"**max {100 * max(errs):.1f}%** |")
        return out + [""]

    return "\n".join(rows(t.HEADLINE, "Headline points") + rows(t.narayanan_t2(), "Supplementary: Narayanan "
                      "Table 2, PTD-P rows (the schedule is not stated, 1F1B assumed)")).rstrip() + "\n"


def step_time_means() -> str:
    """The step model's mean |error| on Korthikanti's 8 cases and on all headline points (docs/step_time.md)."""
    from tests.reference import test_step_time as t

    def mean(points) -> str:
        rs = t.evaluate(list(points))
        return f"{100 * sum(abs(r[4]) for r in rs) / len(rs):.2f}% on {len(rs)} points"

    return f"this model gets {mean(t.korthikanti_t5())} of Korthikanti and {mean(t.HEADLINE)} in all"


def llama3_interleaving() -> str:
    """The Llama 3 points at the interleaving depths the paper does not rule out (docs/step_time.md)."""
    from tests.reference import test_step_time as t

    base = [p for p in t.HEADLINE if not p[0].startswith("Llama3")]
    out = []
    for v in (2, 8):
        rows = t.evaluate(list(t.llama3_t4(v)))
        worst = max(rows, key=lambda r: abs(r[4]))
        every = t.evaluate(base) + rows
        out.append(f"with v = {v} the worst Llama 3 point ({worst[0]}) is {100 * worst[4]:+.1f}% and the mean over "
                   f"{len(every)} points {100 * sum(abs(r[4]) for r in every) / len(every):.2f}%")
    return "; ".join(out)


def llama3_128k() -> str:
    """The Llama 3 128K point (CP 16) under the choices the paper does not state: attention FLOPs counted in full,
    FlashAttention-2's efficiency, and how much of the CP exchange is exposed (docs/step_time.md)."""
    from tests.reference import test_step_time as t
    from workbook.reference import step_time as stm

    name, key, pub, kw = next(p for p in t.llama3_t4() if "CP16" in p[0])
    r = stm.step_time(**kw)
    full = stm.step_time(**{**kw, "attention_mask_frac": 1.0})["model_FLOPs_per_step"] / r["model_FLOPs_per_step"]
    fa2 = stm.step_time(**{**kw, "attention_efficiency": 0.35})[key] / pub - 1
    return (f"If Meta had counted the full s x s matrix, our TFLOP/s would read {full:.2f}x higher in that "
            f"convention, {100 * (r[key] * full / pub - 1):+.0f}%, which rules that reading out. The attention "
            f"efficiency is {kw['attention_efficiency']:.3g} (calibrated; its prior is FlashAttention-3's 0.55). At "
            f"FlashAttention-2's 0.35 on H100 the point would be {100 * fa2:+.0f}%. Meta's CP is all-gather based, and "
            f"the model overlaps it with attention (exposed {1e3 * r['cp_exposed_mb_s']:.0f} of "
            f"{1e3 * r['cp_comm_mb_s']:.0f} ms per micro-batch)")


def moe_fused_call() -> str:
    """The fused-MoE terms of the decode step (engines.yaml moe_layer_us, moe_expert_us) on DeepSeek-R1 FP8 at TP 8 on
    an H200 under the sglang-0.4 profile, at one and at 32 requests (docs/serving.md "Decode step")."""
    from tests.reference import serving_validation as sv
    from workbook.reference import decode_time as dt

    eng, hw = sv.ENGINES.profile("sglang-0.4"), sv.hardware("h200")
    off = eng.model_copy(update={"moe_layer_us": 0.0, "moe_expert_us": 0.0})
    parts = []
    for b in (1, 32):
        kw = dict(batch=b, context_tokens=500, hw=hw, tp=8, weight_precision="fp8")
        on, no = dt.decode_step(sv.DSV3, engine=eng, **kw), dt.decode_step(sv.DSV3, engine=off, **kw)
        parts.append(f"{1e3 * on['moe_experts_s']:.2f} ms at {b} request{'s' if b > 1 else ''} "
                     f"({on['distinct_experts_per_gpu']:.0f} expert slices per layer; a {1e3 * on['step_s']:.1f} ms step "
                     f"against {1e3 * no['step_s']:.1f} ms without)")
    return "the two terms add " + " and ".join(parts)


def serving_intro() -> str:
    """The book's roofline against measured engines: a 70B decode step and Qwen3-235B's KV tokens (docs/serving.md;
    the settings of tests/reference/test_decode_time.py and test_engine_memory.py)."""
    from tests.reference import serving_validation as sv
    from workbook.reference import decode_time as dt
    from workbook.reference import engine_memory as em

    step = dt.book_decode_step_s(sv.LLAMA70, batch=1, context_tokens=0, hw=sv.H100, tp=4, hbm_efficiency=0.8)
    kv = em.book_kv_tokens(sv.QWEN235, hbm_GB=80, tp=4, weight_precision="fp8", overhead_GB=2, usable_frac=0.9)
    return (f"the roofline gives {1e3 * step:.1f} ms per token against 17-19 ms measured at batch 1-8, and {kv:,.0f} "
            "KV tokens for Qwen3-235B-A22B-FP8 against vLLM's 178,880")


def qwen_weights() -> str:
    """Qwen3-235B-A22B-FP8's weights per GPU at TP 4 (docs/serving.md)."""
    from tests.reference import serving_validation as sv
    from workbook.reference import serving_shape as ss
    from workbook.units import GiB

    w = ss.weights_per_gpu_bytes(sv.QWEN235, weight_precision="fp8", tp=4)
    return f"Qwen3-235B-A22B-FP8 at TP4 gives {w / GiB:.2f} GiB per GPU"


def prefill_call() -> str:
    """vLLM 0.6's CPU time per separate prefill call on the 70B (4 x H100) and the 8B (A100), and LambdaLabs' ten
    prompts at once (docs/serving.md "Prefill"; tests/reference/test_cpu_per_seq.py)."""
    from tests.reference import serving_validation as sv
    from workbook.reference import prefill_time as pt

    v06 = sv.ENGINES.profile("vllm-0.6.0")
    c70 = pt.prefill_call_cpu_s(sv.LLAMA70, hw=sv.H100, engine=v06, tp=4)
    from tests.reference.test_cpu_per_seq import _setups

    shape8, a100, _ = _setups()["8b-a100"]  # the A100 as the workbook takes a GPU without a device record
    c8 = pt.prefill_call_cpu_s(shape8, hw=a100, engine=v06)
    ten = pt.prefill_time(sv.LLAMA70, prompt_tokens=sum(sv.LAMBDA10_INPUT) / 10, batch=10, hw=sv.H100, engine=v06, tp=4)
    gpu = ten["prefill_s"] - ten["call_cpu_s"]
    return (f"For vLLM 0.6 ({v06.cpu_overhead_frac:g} x {v06.scheduler_steps:g}) that is "
            f"{v06.cpu_overhead_frac * v06.scheduler_steps:g} such steps: {1e3 * c70:.1f} ms for Llama-3-70B on 4 x H100, "
            f"{1e3 * c8:.0f} ms for the 8B on an A100. LambdaLabs' 10 prompts at once wait {1e3 * sv.LAMBDA10_TTFT_S:.1f} "
            f"ms for the first token; the model gives {1e3 * gpu:.1f} + {1e3 * ten['call_cpu_s']:.1f} = "
            f"{1e3 * ten['prefill_s']:.1f} ms")


def _deepseek_prefill(overlap: float) -> dict:
    """DeepSeek's balanced prefill profile: 4 prompts of 4,096 tokens per GPU at EP32 on 4 H800 nodes."""
    from tests.reference import serving_validation as sv
    from workbook.reference import prefill_time as pt

    return pt.prefill_time(sv.DSV3, prompt_tokens=4096, batch=4, hw=sv.H800, engine=sv.ENGINES.profile("deepseek-v3-infer"),
                           tp=1, ep=sv.DS_PREFILL_EP, ep_nodes=4, weight_precision="fp8", ep_overlap_frac=overlap,
                           call_cpu_s=0.0)


def prefill_alltoall() -> str:
    """The EP all-to-all of DeepSeek-V3's prefill at EP32 on 4 nodes (docs/serving.md "Prefill")."""
    from tests.reference import serving_validation as sv
    from workbook.reference import prefill_time as pt

    ds = sv.ENGINES.profile("deepseek-v3-infer")
    a = pt.prefill_alltoall(sv.DSV3, hw=sv.H800, engine=ds, ep=sv.DS_PREFILL_EP, ep_nodes=4)
    on, off = _deepseek_prefill(1.0), _deepseek_prefill(0.0)
    ex, gpu, f = on["ep_alltoall_s"], on["full_gpu_s"], a["comm_sm_frac"]
    hides = "so the overlap hides it" if ex <= gpu else "so the overlap hides part of it"
    return (f"For DeepSeek-V3 at EP32 on 4 nodes a token reaches {a['remote_nodes']:.1f} remote nodes and "
            f"{a['other_gpus']:.1f} other GPUs. The {on['tokens']:,.0f} tokens of a full chunk take {ex:.2f} s to "
            f"exchange, against {gpu:.2f} s of GPU work, {hides}, but the {ds.prefill_comm_sms:g} SMs it holds stretch "
            f"the step to {on['prefill_s']:.2f} s ({gpu:.2f} + {f:.2f} x {ex:.2f}); without the overlap the step takes "
            f"{off['prefill_s']:.2f} s")


def moe_layout() -> str:
    """The MoE dispatch layout's bytes and time in DeepSeek-V3's EP32 prefill, and the small ops per layer
    (docs/serving.md "Prefill")."""
    from tests.reference import serving_validation as sv
    from workbook.reference import prefill_time as pt

    b = pt.moe_layout_bytes_per_token(sv.DSV3, ep=sv.DS_PREFILL_EP)
    bw = sv.H800["hbm_bw_GBps"] * 1e9 * sv.H800["hbm_efficiency"]
    on = _deepseek_prefill(1.0)
    return (f"DeepSeek-V3 at EP32: {b / 1e6:.1f} MB per token, {b * on['tokens'] / 1e9:,.0f} GB in a "
            f"{on['tokens']:,.0f}-token chunk, {b * on['tokens'] / bw:.2f} s at {bw / 1e12:.1f} TB/s")


def moe_layout_small_ops() -> str:
    """DeepSeek-V3's small ops per layer in the EP32 prefill, the dispatch layout included (docs/serving.md)."""
    from tests.reference import serving_validation as sv

    s = _deepseek_prefill(1.0)["small_kernels_s"]
    return f"our small ops with the layout are {1e3 * s / sv.DSV3.layers:.1f} ms per layer ({s:.2f} s over {sv.DSV3.layers} layers)"


def decode_exchange() -> str:
    """DeepSeek-V3's decode at EP144 and the published 88 requests per GPU: the exchange, the part on the SMs and
    the step (docs/serving.md "Decode step")."""
    from tests.reference import serving_validation as sv

    d = _deepseek_decode(sv.DS_NODE_OUT_TOK_PER_S / 8 / sv.DS_USER_TOK_PER_S, sv.DS_KV_LEN, sv.DS_EP, sv.DS_NODES,
                         sv.DS_REDUNDANT)
    return (f"the {1e3 * d['ep_alltoall_s']:.1f} ms exchange leaves {1e3 * d['ep_exposed_s']:.1f} ms exposed, a "
            f"{1e3 * d['step_s']:.1f} ms step ({1e3 * (d['step_s'] - d['ep_exposed_s']):.1f} ms with f_sm = 0)")


@lru_cache(maxsize=None)
def _offline_drains() -> tuple:
    """The 5,000-prompt offline runs of vLLM 0.6 and SGLang 0.3 (Llama-3-70B, 4 x H100; the reference table's):
    per engine the run, its quadrature drain against the step summed over 4,000 points, and the step at the
    drain's mean batch alone (docs/serving.md "A finite offline run")."""
    import math

    from tests.reference import serving_validation as sv
    from workbook.reference import decode_time as dt
    from workbook.reference import engine_memory as em
    from workbook.reference import serving_offline_run as so
    from workbook.reference.serving_load import mean_context_tokens

    out = []
    for name, frac in (("vllm-0.6.0", None), ("sglang-0.3.0", 0.88)):
        eng = sv.ENGINES.profile(name)
        kv = em.kv_capacity(sv.LLAMA70, engine=eng, device_total_GiB=sv.H100["device_total_GiB"], tp=4,
                            memory_fraction=frac)["kv_tokens"]
        kw = dict(hw=sv.H100, engine=eng, prompt_tokens=sv.SHAREGPT_PROMPT, output_tokens=sv.SHAREGPT_OUTPUT, tp=4)
        run = so.offline_run(sv.LLAMA70, requests=sv.OFFLINE_REQUESTS, kv_tokens=kv, **kw)
        ctx = mean_context_tokens(prompt_tokens=sv.SHAREGPT_PROMPT, output_tokens=sv.SHAREGPT_OUTPUT)

        def step(b: float) -> float:
            return dt.decode_step(sv.LLAMA70, batch=max(1.0, b), context_tokens=ctx, hw=sv.H100, engine=eng, tp=4)["step_s"]

        n0, h, points = run["drain_requests"], run["drain_harmonic"], 4000
        exact = sv.SHAREGPT_OUTPUT * h / points * sum(step(n0 * math.exp(-h * (i + 0.5) / points)) for i in range(points))
        mean = sv.SHAREGPT_OUTPUT * h * step(n0 * (1 - math.exp(-h)) / h)
        out.append((run, run["drain_s"] / exact - 1, 1 - mean / exact))
    return tuple(out)


def offline_quadrature() -> str:
    """How close the drain's three-point quadrature and a single mean-batch step come to the step summed over
    4,000 points (docs/serving.md "A finite offline run")."""
    (v, qv, mv), (s, qs, ms) = _offline_drains()
    return (f"the quadrature is within {100 * abs(qv):.1f} % (vLLM, B = {v['batch']:,.0f}) and {100 * abs(qs):.1f} % "
            f"(SGLang 0.3, B = {s['batch']:,.0f}); the step at the drain's mean batch (a single point) is "
            f"{100 * mv:.1f} % and {100 * ms:.1f} % short")


def offline_drain_share() -> str:
    """The drain's share of the 5,000-prompt runs (docs/serving.md "A finite offline run")."""
    (v, _, _), (s, _, _) = _offline_drains()
    return (f"the drain is {100 * v['drain_s'] / v['run_s']:.0f} % of vLLM's run ({v['drain_s']:.1f} s of "
            f"{v['run_s']:.1f} s, B = {v['batch']:,.0f}) and {100 * s['drain_s'] / s['run_s']:.0f} % of SGLang 0.3's "
            f"({s['drain_s']:.1f} s of {s['run_s']:.1f} s, B = {s['batch']:,.0f}")


def disagg_queue() -> str:
    """The DeepSeek request's prefill pool: prompts per step, step, busy share, wait, TTFT and instances
    (docs/serving.md "Disaggregated serving")."""
    p = _outcome("serve-deepseek-v3-h800.yaml").data["serving"]["recommended"]
    q = _plan_q("serve-deepseek-v3-h800.yaml", p["scenario"])
    k, ep, wait = q["srv_dis_pf_queue_prompts"], q["srv_dis_pf_ep"], q["srv_dis_pf_wait_s"]
    return (f"The DeepSeek request (K = {k / ep:g} x {ep:g} = {k:.0f} prompts per EP{ep:g} step of "
            f"{q['srv_dis_ttft_ms'] / 1e3 - wait:.2f} s, {100 * q['srv_dis_pf_busy_frac']:.1f} % busy) waits {wait:.2f} s: "
            f"TTFT {q['srv_dis_ttft_ms']:,.0f} ms, with {q['srv_dis_pf_instances']:.0f} instances")


def prefill_call_limit() -> str:
    """How far the model's TTFT of LambdaLabs' ten prompts falls under the published one (docs/serving.md
    "Limits")."""
    from tests.reference import serving_validation as sv
    from workbook.reference import prefill_time as pt

    ten = pt.prefill_time(sv.LLAMA70, prompt_tokens=sum(sv.LAMBDA10_INPUT) / 10, batch=10, hw=sv.H100,
                          engine=sv.ENGINES.profile("vllm-0.6.0"), tp=4)
    err = ten["prefill_s"] / sv.LAMBDA10_TTFT_S - 1
    return f"LambdaLabs' 10-prompt TTFT, {100 * abs(err):.1f} % {'under' if err < 0 else 'over'} with that"


#: the non-torch memory of vLLM's debug log of Qwen3-235B-A22B-FP8 at TP 4 (vllm PR 21429), a published figure
QWEN235_LOG_NON_TORCH_GIB = 2.04


def qwen_kv_ledger() -> str:
    """vLLM 0.10's KV pool for Qwen3-235B-A22B-FP8 at TP 4 on an H100: the model's ledger, its error, and the pool
    with the non-torch memory of vLLM's own log of that model (docs/serving.md "What does not match")."""
    from tests.reference import serving_validation as sv
    from workbook.reference import engine_memory as em
    from workbook.units import GiB

    k = em.kv_capacity(sv.QWEN235, engine=sv.ENGINES.profile("vllm-0.10"), device_total_GiB=sv.H100["device_total_GiB"],
                       tp=4, weight_precision="fp8")
    r = _results("serving-kv-qwen3-235b-h100:kv-vllm-tokens")[0]
    logged = (k["kv_budget_GiB"] - (QWEN235_LOG_NON_TORCH_GIB - k["non_torch_GiB"])) * GiB / k["kv_bytes_per_token"]
    return (f"The ledger is util {k['memory_fraction']:g} x {k['device_total_GiB']:g} = "
            f"{k['memory_fraction'] * k['device_total_GiB']:.2f} GiB, minus weights {k['weights_GiB']:.2f}, minus "
            f"activation peak {k['activation_GiB']:.2f}, minus non-torch {k['non_torch_GiB']:.2f}, leaving "
            f"{k['kv_budget_GiB']:.2f} GiB: {k['kv_tokens']:,.0f} tokens, {100 * r.error_frac:+.1f} %. With the log's "
            f"{QWEN235_LOG_NON_TORCH_GIB:.2f} GiB of non-torch memory it would be {logged / 1e3:.1f}k tokens "
            f"({100 * (logged / r.published - 1):+.1f} %)")


def _deepseek_decode(batch: float, context: float, ep: int, nodes: int, redundant: int, query: float = 1.0) -> dict:
    """DeepSeek-V3's decode step on H800 under the deepseek-v3-infer profile (FP8, TP 1, the EP exchange overlapped)."""
    from tests.reference import serving_validation as sv
    from workbook.reference import decode_time as dt

    return dt.decode_step(sv.DSV3, batch=batch, context_tokens=context, hw=sv.H800,
                          engine=sv.ENGINES.profile("deepseek-v3-infer"), tp=1, ep=ep, redundant_experts=redundant,
                          weight_precision="fp8", ep_overlap_frac=1.0, ep_nodes=nodes, query_tokens_per_seq=query)


def deepseek_decode_parts() -> str:
    """DeepSeek-V3's decode step at the batch day 6's figures imply, against the published TPOT, and its parts
    (docs/serving.md "What does not match")."""
    from tests.reference import serving_validation as sv

    d = _deepseek_decode(sv.DS_NODE_OUT_TOK_PER_S / 8 / sv.DS_USER_TOK_PER_S, sv.DS_KV_LEN, sv.DS_EP, sv.DS_NODES,
                         sv.DS_REDUNDANT)
    tpot = 1e3 / sv.DS_USER_TOK_PER_S
    return (f"the step is {1e3 * d['step_s']:.1f} ms, {100 * (1e3 * d['step_s'] / tpot - 1):+.1f} % against "
            f"{tpot:.1f} ms. Its parts: GEMMs {1e3 * d['gemm_s']:.1f} ms (weight reads {1e3 * d['weight_read_s']:.1f} "
            f"ms, FLOPs {1e3 * d['gemm_compute_s']:.1f} ms), attention {1e3 * d['attention_s']:.1f} ms, small kernels "
            f"{1e3 * d['small_kernels_s']:.1f} ms and launches {1e3 * d['launch_s']:.1f} ms; the EP all-to-all takes "
            f"{1e3 * d['ep_alltoall_s']:.1f} ms over both passes, {1e3 * d['ep_exposed_s']:.1f} ms of it on the SMs")


def deepseek_profile(style: str) -> str:
    """DeepSeek's decode profile (EP128 on 16 nodes, 128 requests per GPU, 4K context, balanced routing): the
    validation point's error (``step``), the step verifying 2 tokens per request against the LMSYS chart's 86.6 ms
    (``mtp``), the all-to-all per layer (``alltoall``) (docs/serving.md "What does not match")."""
    from tests.reference import serving_validation as sv

    if style == "step":
        r = _results("serving-deepseek-v3-h800:profile-decode-step")[0]
        return f"gives 55.06 ms per output token, against our {r.ours:.2f} ms step ({100 * r.error_frac:+.1f} %)"
    if style == "mtp":
        two = _deepseek_decode(128, 4096, 128, 16, 0, query=2.0)["step_s"] * 1e3
        return f"is {two:.1f} ms, {100 * (two / 86.6 - 1):+.0f} % against 86.6 ms"
    a2a = _deepseek_decode(128, 4096, 128, 16, 0)["ep_alltoall_s"] / sv.DSV3.layers
    return f"Our all-to-all time per layer is {1e3 * a2a:.2f} ms for 128 tokens per GPU"


def deepseek_prefill_layer() -> str:
    """DeepSeek-V3's balanced prefill profile per layer: our GPU work and linear FLOPs against the LMSYS chart's
    31.5 and 20.8 ms (docs/serving.md "What does not match")."""
    from tests.reference import serving_validation as sv

    p = _deepseek_prefill(1.0)
    return (f"about 31.5 ms per layer against our {1e3 * p['full_gpu_s'] / sv.DSV3.layers:.1f} ms: its MoE and dense "
            f"GEMMs take 20.8 ms per layer against our {1e3 * p['linear_s'] / sv.DSV3.layers:.1f} ms of linear FLOPs")


def serving_informational() -> str:
    """The published figures the serving reference table shows beside ours without a target: TTFT under load and
    DeepSeek's nodes for the day's load (docs/serving.md "What does not match")."""
    from tests.reference import serving_validation as sv

    by = {r["name"]: r for r in sv.informational()}

    def pair(label: str) -> str:
        rs = [by[f"ttft-{label}-rps{n}"] for n in (4, 8)]
        name = label.replace("vllm-", "vLLM ").replace("sglang-", "SGLang ")
        return (f"{name} {rs[0]['published']:.0f} / {rs[1]['published']:.0f} ms published against "
                f"{rs[0]['ours']:.0f} / {rs[1]['ours']:.0f} ms")

    nodes = by["deepseek nodes at the day's average load (both pools)"]
    return (f"median TTFT at 4 / 8 req/s: {pair('vllm-0.6.0')}, {pair('sglang-0.3.0')}; DeepSeek's nodes for the "
            f"day's load: {nodes['published']:g} published against {nodes['ours']:.0f}")


def deepseek_prefill_service() -> str:
    """How far the model's prefill tokens per node in service are above DeepSeek's day-6 figure, and the share of
    a real prefill step that leaves to effects the model lacks (docs/serving.md "What does not match")."""
    r = _results("serving-deepseek-v3-h800-disagg:disagg-prefill-node")[0]
    ratio = r.ours / r.published
    return (f"The model computes {ratio:.1f} times the published input tokens per node ({r.ours / 1e3:.1f}k against "
            f"{r.published / 1e3:.1f}k). So these effects must cost about {100 * (1 - 1 / ratio):.0f} % of a real "
            "prefill step")


def serving_load_models() -> str:
    """Idle TTFT, the three load models and the queue against the simulated scheduler, as
    `python -m tests.reference.serving_load_models_table` prints them (docs/serving.md)."""
    from tests.reference import serving_load_models_table as t

    return "\n".join(t.idle_ttft_rows() + t.load_model_rows() + t.queue_rows())


def serving_reference_summary() -> str:
    """How many points of the serving reference table (tests/reference/serving_validation.py) meet their targets
    (docs/serving.md)."""
    from tests.reference import serving_validation as sv

    pts = sv.points()
    ok = sum(p["matched"] for p in pts)
    return f"{ok} of {len(pts)} points of the reference table are inside their targets ({len(pts) - ok} are not)"


def activations_table() -> str:
    """Korthikanti Figure 1 against the tensor memory model (docs/activations.md; tests/reference/test_activations.py)."""
    from tests.reference import test_activations as t

    modes = {"none": "no recompute", "seqsel": "SP + selective"}
    lines = ["| model | layout | mode | published GiB | ours, layers | error | ours, + embedding/output | error |",
             "|---|---|---|---|---|---|---|---|"]
    for name, mode, pub, layers, total in t.validation_rows():
        _, tp, pp, v, b = t.KORTHIKANTI[name]
        layout = f"TP{tp} PP{pp}, " + (f"v={v}, " if v > 1 else "") + f"b={b}"
        lines.append(f"| {name} | {layout} | {modes[mode]} | {pub:.2f} | {layers:.2f} | {100 * (layers / pub - 1):+.2f}% | "
                     f"{total:.2f} | {100 * (total / pub - 1):+.1f}% |")
    return "\n".join(lines)


def op_sac_table() -> str:
    """The torchtitan and Trainy points (op-level selective AC, FSDP2, reserved memory) against the models
    (docs/activations.md)."""
    files = ("torchtitan-a100-fsdp2.yaml", "trainy-h200-llama3-8b.yaml")
    lines = ["| file:point | quantity | published | ours | error | result |", "|---|---|---|---|---|---|"]
    for r in _validation():
        if r.file in files:
            kind = "reserved GB per GPU" if r.key == "state_reserved_per_gpu_GB" else "tokens/s per GPU"
            lines.append(f"| {r.file.removesuffix('.yaml')}:{r.point} | {kind} | {r.published:,.1f} | {r.ours:,.1f} | "
                         f"{100 * r.error_frac:+.1f}% | {'PASS' if r.passed else 'FAIL'}{' (holdout)' if r.holdout else ''} |")
    return "\n".join(lines)


def op_sac_llama3_8b() -> str:
    """One Llama-3-8B layer at s = 8192, b = 2 without TP under op_selective, none and full, and the recomputed
    matmul share (docs/activations.md)."""
    from workbook.catalog import load_catalog
    from workbook.reference import activations as ra
    from workbook.units import GB

    m = load_catalog().model("llama-3-8b")
    shape = ra.layer_shape_from_model(m, moe_layer=False)
    kw = dict(seq_len=8192, micro_batch=2, flash_attention=True, dropout=False, **shape)
    op, none, full = (ra.layer_activation_bytes(**kw, recompute=r) / GB for r in ("op_selective", "none", "full"))
    frac = ra.op_sac_gemm_recompute_frac(d_model=m.d_model, n_heads=m.n_heads, d_ff=m.d_ff, head_dim=m.head_dim,
                                         n_kv_heads=m.n_kv_heads, ffn=m.ffn)
    return (f"keeps {op:.2f} GB per layer against {none:.2f} GB without recompute and {full:.2f} GB with full "
            f"recompute, and recomputes {frac:.3f} of its matmul FLOPs")
def _pct(x: float, digits: int) -> str:
    """A signed percentage with a typographic minus, as docs/activations.md prints errors."""
    return f"{'−' if x < 0 else '+'}{abs(x):.{digits}f}%"


def activations_fig7_table() -> str:
    """Korthikanti Figure 7 (percent of the TP-only no-recompute baseline, transformer layers): published / ours
    (docs/activations.md; tests/reference/test_activations.py)."""
    from tests.reference import test_activations as t

    modes = ("seq", "sel", "seqsel", "full")
    lines = ["| model | SP | selective | SP + selective | full |", "|---|---|---|---|---|"]
    for name, pubs in t.FIG7_PCT.items():
        base = t.korthikanti_run(name, "none")["layers_bytes"]
        cells = []
        for mode in modes:
            ours = t.korthikanti_run(name, mode)["layers_bytes"] / base * 100
            cells.append(f"{pubs[mode]:.2f} / {ours:.2f} ({_pct(100 * (ours / pubs[mode] - 1), 1)})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def activations_limits(style: str) -> str:
    """How far the embedding-dropout masks take the full-recompute totals above Figure 7's bars, and how close the
    layer-only figures stay (``figure7``); how close Figure 1's published values are to Table 2's formulas
    (``figure1``) (docs/activations.md "Limits"; tests/reference/test_activations.py)."""
    from tests.reference import test_activations as t

    def pct(name: str, mode: str, part: str) -> float:
        return t.korthikanti_run(name, mode)[part] / t.korthikanti_run(name, "none")[part] * 100

    fig1 = max(abs(layers / pub - 1) for _, _, pub, layers, _ in t.validation_rows())
    above = [pct(n, "full", "stored_bytes") / t.FIG7_PCT[n]["full"] - 1 for n in ("530B", "1T")]
    layers = max(abs(pct(n, m, "layers_bytes") / pub - 1) for n, pubs in t.FIG7_PCT.items() for m, pub in pubs.items())
    if style == "figure1":
        return f"agree with Table 2's formulas to within {100 * fig1:.2f}%"
    return (f"Next to full recompute at PP 35 and PP 64, the masks make our total {100 * above[0]:.0f}% and "
            f"{100 * above[1]:.0f}% above Figure 7's bars. The layer-only numbers match to within {100 * layers:.1f}%.")


def state_embedding_share() -> str:
    """How much more the most loaded rank (with the embedding) holds than Korthikanti's published state figure
    (docs/activations.md "Limits")."""
    from tests.reference import test_sharded_state as t
    from workbook.reference import sharded_state as ss

    errs = [ss.model_state_per_gpu(m, num_gpus=n, tp=tp, pp=pp, recipe="bf16_fp32_grads")["total_GiB"] / pub - 1
            for m, n, tp, pp, pub in t.FIG1_STATE.values()]
    return f"so it is {100 * min(errs):.0f}–{100 * max(errs):.0f}% higher"


def activations_state_table() -> str:
    """Korthikanti Figure 1's weights and optimizer state per GPU at 18 B/param: published, the middle stage and
    the embedding stage (docs/activations.md; tests/reference/test_sharded_state.py)."""
    from tests.reference import test_sharded_state as t
    from workbook.reference import sharded_state as ss

    lines = ["| model | layout | published GiB | ours, middle stage | error | ours, embedding stage (the most loaded) "
             "| error |", "|---|---|---|---|---|---|---|"]
    for name, (m, n, tp, pp, pub) in t.FIG1_STATE.items():
        most = ss.model_state_per_gpu(m, num_gpus=n, tp=tp, pp=pp, recipe="bf16_fp32_grads")["total_GiB"]
        if pp > 1:
            mid = ss.model_state_per_gpu(m, num_gpus=n, tp=tp, pp=pp, stage=pp // 2)["total_GiB"]
            middle = f"{mid:.2f} | {_pct(100 * (mid / pub - 1), 2)}"
        else:
            middle = "— | —"
        lines.append(f"| {name} | TP{tp} PP{pp} | {pub:.2f} | {middle} | {most:.2f} | {_pct(100 * (most / pub - 1), 1)} |")
    return "\n".join(lines)


_DSV3 = dict(num_gpus=2048, tp=1, pp=16, ep=64, zero_stage=1, recipe="deepseek_v3")  # as test_sharded_state.py


@lru_cache(maxsize=None)
def _deepseek_memory():
    """DeepSeek-V3 on 2,048 H800 (PP16 x EP64, ZeRO-1, DualPipe, 1 x 4096 tokens): the worst rank's state,
    activations and total with the runtime overhead, per activation setting (docs/activations.md; the setting of
    tests/reference/test_sharded_state.py::test_deepseek_v3_fits_80GB_h800)."""
    from workbook.catalog import load_catalog
    from workbook.reference import activations as act
    from workbook.reference import sharded_state as ss
    from workbook.reference.train_memory import DEFAULT_OVERHEAD_GB
    from workbook.units import GB

    catalog = load_catalog()
    m, hbm = catalog.model("deepseek-v3"), catalog.gpu("h800").hbm_GB
    state = ss.model_state_per_gpu(m, **_DSV3, dualpipe=True)["per_stage"]
    kw = dict(seq_len=4096, micro_batch=1, tp=1, pp=16, schedule="dualpipe", flash_attention=True, dropout=False)
    settings = (("no recompute", dict(recompute="none")),
                ("selective (core_attn)", dict(recompute="selective")),
                ("report's measures: layernorm, mla_up_proj, moe_act recomputed; FP8 Linear and SwiGLU inputs",
                 dict(recompute="selective", recompute_modules={"layernorm", "mla_up_proj", "moe_act"},
                      linear_input_bytes=1, expert_act_input_bytes=1)),
                ("full recompute", dict(recompute="full")))
    rows = []
    for label, extra in settings:
        per = act.activations_per_gpu(m, **kw, **extra)["per_stage"]
        total, st, peak = max((s["total_bytes"] + a["peak_bytes"] + DEFAULT_OVERHEAD_GB * GB, s["total_bytes"],
                               a["peak_bytes"]) for s, a in zip(state, per))
        rows.append((label, st / GB, peak / GB, total / GB, total < hbm * GB))
    return hbm, rows


def activations_deepseek_table() -> str:
    """The DeepSeek-V3 rows of _deepseek_memory as a table (docs/activations.md)."""
    hbm, rows = _deepseek_memory()
    lines = [f"| activation setting | state GB | activations GB (peak) | total GB | fits {hbm:g} GB? |",
             "|---|---|---|---|---|"]
    lines += [f"| {label} | {st:.1f} | {peak:.1f} | {total:.1f} | {'yes' if fits else 'no'} |"
              for label, st, peak, total, fits in rows]
    return "\n".join(lines)


def memory_models_finance() -> str:
    """The tensor memory model on Korthikanti's GPT-3 175B (Figure 1, embedding and output included) and on
    DeepSeek-V3 with full recompute (docs/finance.md)."""
    from tests.reference import test_activations as t

    by = {(name, mode): (pub, total) for name, mode, pub, _, total in t.validation_rows()}
    (p0, o0), (p1, o1) = by[("175B", "none")], by[("175B", "seqsel")]
    hbm, rows = _deepseek_memory()
    full = next(r for r in rows if r[0] == "full recompute")
    return (f"({o0:.1f} GiB without recompute, {o1:.1f} GiB selective + SP, against {p0:.1f} and {p1:.1f}) and "
            f"{'fits' if full[4] else 'does not fit'} DeepSeek-V3 on 2,048 H800 at PP 16 x EP 64, ZeRO-1, full "
            f"recompute ({full[3]:.1f} GB per GPU)")


def _zero3_llama3_70b() -> dict:
    """Llama-3-70B on 64 GPUs at ZeRO-3: the tensor model's state with its gathered layer, DeepSpeed's estimator, the
    plain (w + g + o)/N at 18 and 16 B/param, the embedding and a block (tests/reference/test_zero.py)."""
    from workbook.catalog import load_catalog
    from workbook.reference import sharded_state as ss
    from workbook.reference import zero as zr

    m = load_catalog().model("llama-3-70b")
    r = ss.model_state_per_gpu(m, num_gpus=64, zero_stage=3, recipe="bf16_fp32_grads")
    c = ss.sharding_param_counts(m)
    emb = m.vocab * m.d_model
    return dict(r=r, plain16=ss.model_state_per_gpu(m, num_gpus=64, zero_stage=3, recipe="bf16_bf16_grads")["total_GB"],
                ds=zr.deepspeed_zero3_gpu_bytes(total_params=r["dense_params"], largest_layer_params=emb, total_gpus=64),
                emb=emb, block=ss.block_params_per_gpu(c, moe_layer=False))


def zero3_llama3_70b(style: str) -> str:
    """The ZeRO-3 working set on Llama-3-70B, 64 GPUs (docs/finance.md: ``finance``; docs/activations.md:
    ``activations``)."""
    from workbook.units import GiB

    z = _zero3_llama3_70b()
    r = z["r"]
    if style == "finance":
        return (f"{r['model_states_GB']:.2f} GB of model states per GPU (`state_model_states_per_gpu_GB`), DeepSpeed's "
                f"{z['ds'] / 1e9:.2f}e9 B; the book formula (w + g + o)/N gives {r['total_GB']:.1f} GB "
                f"({z['plain16']:.1f} GB at the 16-byte ledger)")
    return (f"Llama-3-70B: {z['emb'] / 1e9:.2f}B against {z['block'] / 1e9:.2f}B, {r['model_states_GB']:.2f} GB per "
            f"GPU on 64 GPUs with FP32 gradients, DeepSpeed's {z['ds'] / GiB:.2f} \"GB\" = GiB printout")


def deepseek_state_without_ep() -> str:
    """DeepSeek-V3's state per GPU without EP sharding the experts (docs/activations.md)."""
    from workbook.catalog import load_catalog
    from workbook.reference import sharded_state as ss

    m = load_catalog().model("deepseek-v3")
    dual = ss.model_state_per_gpu(m, **{**_DSV3, "ep": 1}, dualpipe=True)["total_GB"]
    single = ss.model_state_per_gpu(m, **{**_DSV3, "ep": 1})["total_GB"]
    return f"the state alone would be {dual:.0f} GB per GPU with DualPipe ({single:.0f} GB without)"


def bad_corpus() -> str:
    """The size of the bad-input corpus (docs/engineering.md)."""
    return f"The corpus of {len(list((ROOT / 'tests' / 'data' / 'bad').glob('*.yaml')))} bad files"


@lru_cache(maxsize=None)
def _validation() -> tuple:
    """`workbook validate` on the shipped files (every point's result)."""
    from workbook.validation import default_files, validate

    return tuple(validate(default_files()))


def validate_summary() -> str:
    """The three summary lines `workbook validate` ends with (docs/validation.md)."""
    from workbook.validation import print_table

    out = io.StringIO()
    print_table(list(_validation()), out)
    return "".join(out.getvalue().splitlines(keepends=True)[-3:])


def validation_counts() -> str:
    """How many shipped points, files and publications, by kind (docs/validation.md)."""
    rs = _validation()
    serving = [r for r in rs if r.key.startswith("srv_")]
    training = [r for r in rs if not r.key.startswith("srv_")]  # with the parameter counts and FLOP accounting

    def files(group) -> int:
        return len({r.file for r in group})

    return (f"{len(rs)} points in {files(rs)} files from {len({r.publication for r in rs})} publications: "
            f"{len(training)} training points in {files(training)} files, {len(serving)} serving points in "
            f"{files(serving)}")


def _results(*refs: str) -> list:
    by = {f"{r.file.removesuffix('.yaml')}:{r.point}": r for r in _validation()}
    return [by[ref] for ref in refs]


def error_range(*files: str, keys: tuple[str, ...] = ("st_",)) -> str:
    """How many points of the files on quantities starting with ``keys`` pass, and their error range."""
    rs = [r for r in _validation() if r.file.removesuffix(".yaml") in files and r.key.startswith(keys)]
    errs = sorted(100 * r.error_frac for r in rs)
    return f"{sum(r.passed for r in rs)} of {len(rs)} pass, from {errs[0]:+.1f} % to {errs[-1]:+.1f} %"


def step_model_summary() -> str:
    """The mean error of the step model's points of the original training files, and those past 15 %."""
    files = ("korthikanti-gpt3-175b", "megatron-ptdp-gpt3-175b", "megatron-ptdp-530b-1t", "llama3-405b-h100",
             "llama1-a100", "deepseek-v3-h800")
    rs = [r for r in _validation() if r.file.removesuffix(".yaml") in files]
    st = [r for r in rs if r.key.startswith("st_")]
    runs = [r for r in rs if r.key in ("train_job_gpu_hours", "train_tokens_per_s_per_gpu")]
    both = st + runs
    past = [f"{r.file.removesuffix('.yaml')}:{r.point} ({100 * r.error_frac:+.1f} %)" for r in both
            if abs(r.error_frac) > 0.15]
    return (f"{len(both)} step-model points ({len(st)} `st_*` and {len(runs)} whole-run `train_job_gpu_hours` / "
            f"`train_tokens_per_s_per_gpu`) the mean absolute error is "
            f"{100 * sum(abs(r.error_frac) for r in both) / len(both):.1f} % (the {len(st)} `st_*` alone: "
            f"{100 * sum(abs(r.error_frac) for r in st) / len(st):.1f} %); past 15 %: {', '.join(past) or 'none'}")


#: the rows of docs/validation.md's table of serving points: (what, the points "file-stem:point", one or two)
SERVING_ROWS = (
    ("vLLM 0.10 KV tokens, Qwen3-235B-A22B FP8, 4 x H100 TP4 (vllm issue 21348)", ("serving-kv-qwen3-235b-h100:kv-vllm-tokens",)),
    ("same, KV memory per GPU", ("serving-kv-qwen3-235b-h100:kv-vllm-GiB",)),
    ("SGLang KV tokens, mem_fraction_static 0.93 (same issue)", ("serving-kv-qwen3-235b-h100:kv-sglang-tokens",)),
    ("Llama-3-70B TP4 H100 decode step, batch 1 (LambdaLabs vllm-benchmark, vLLM 0.6.0)", ("serving-llama3-70b-h100:step-batch1",)),
    ("same, about 55 decoding", ("serving-llama3-70b-h100:step-batch55",)),
    ("median TPOT at 4 / 8 req/s, vLLM 0.6.0 (sglang benchmark_vllm_060)",
     ("serving-llama3-70b-h100:tpot-vllm-rps4", "serving-llama3-70b-h100:tpot-vllm-rps8")),
    ("median TPOT at 4 / 8 req/s, SGLang 0.3.0 (its CPU per running sequence, `cpu_per_seq_us`, comes from these runs' median ITL)",
     ("serving-llama3-70b-h100:tpot-sglang-rps4", "serving-llama3-70b-h100:tpot-sglang-rps8")),
    ("offline output tok/s, 5,000 ShareGPT prompts timed to the last, vLLM 0.6.0 / SGLang 0.3.0",
     ("serving-llama3-70b-h100:offline-vllm", "serving-llama3-70b-h100:offline-sglang")),
    ("TTFT of one 5,000-token prompt, Llama-3.3-70B FP8, 2 x H100 TP2, TensorRT-LLM (NIM 1.8.0)",
     ("serving-ttft-llama3-70b-h100:ttft-5k-nim-tp2-fp8",)),
    ("DeepSeek-V3 decode TPOT, H800 EP144, 88 requests per GPU (open-infra-index day 6)", ("serving-deepseek-v3-h800:decode-tpot",)),
    ("DeepSeek-V3 decode step of DeepSeek's balanced profile, EP128, 128 requests per GPU, 4K context (profile-data)",
     ("serving-deepseek-v3-h800:profile-decode-step",)),
    ("DeepSeek-V3 decode output tok/s per node in service, disaggregated model (decode EP144 on 18 nodes)",
     ("serving-deepseek-v3-h800-disagg:disagg-decode-node",)),
    ("DeepSeek-V3 prefill input tok/s per node in service, disaggregated model (prefill EP32 on 4 nodes, 56.3 % cache hits)",
     ("serving-deepseek-v3-h800-disagg:disagg-prefill-node",)),
    ("DeepSeek-V3 prefill of DeepSeek's balanced profile, EP32, 4 x 4,096 tokens per GPU (profile-data)",
     ("serving-deepseek-v3-h800-disagg:profile-prefill-node",)),
)


def serving_points_table() -> str:
    """The published serving points a scenario expresses, today's value and error (docs/validation.md)."""
    from workbook.validation.report import _num

    lines = ["| point | published | workbook | error | tolerance | result |", "|---|---|---|---|---|---|"]
    for what, refs in SERVING_ROWS:
        rs = _results(*refs)
        unit = rs[0].unit if rs[0].unit not in ("tokens/s", "tokens", "count") else ""

        def join(f) -> str:
            return " / ".join(f(r) for r in rs)

        lines.append(f"| {what} | {join(lambda r: _num(r.published))}{' ' + unit if unit else ''} | "
                     f"{join(lambda r: _num(r.ours))}{' ' + unit if unit else ''} | "
                     f"{join(lambda r: f'{100 * r.error_frac:+.1f}')} % | {100 * rs[0].tolerance:.0f} % | "
                     f"{join(lambda r: 'PASS' if r.passed else 'FAIL')} |")
    return "\n".join(lines)


def llama3_8b_sentence() -> str:
    """serving-llama3-8b-a100.yaml's points in words (docs/validation.md)."""
    f = "serving-llama3-8b-a100:"

    def pair(a: str, b: str) -> str:
        return errors(f + a, f + b).replace(" %, ", " / ")

    rs = [r for r in _validation() if r.file == "serving-llama3-8b-a100.yaml"]
    verdict = "all PASS" if all(r.passed for r in rs) else f"{sum(r.passed for r in rs)} of {len(rs)} PASS"
    return (f"median TPOT at 4 / 8 req/s {pair('tpot-vllm-8b-rps4', 'tpot-vllm-8b-rps8')} (vLLM 0.6.0) and "
            f"{pair('tpot-sglang-8b-rps4', 'tpot-sglang-8b-rps8')} (SGLang 0.3.0), offline "
            f"{pair('offline-vllm-8b', 'offline-sglang-8b')}, decode step at batch 1 and 6 "
            f"{pair('step-batch1-8b', 'step-batch6-8b')}; {verdict}")


def measured_gpt3_days() -> str:
    """GPT-3 175B at Narayanan Table 2's 153 TFLOP/s on 384 A100 under the measured time model, against the
    table's days and the paper's eq. 3 (docs/step_time.md, docs/engineering.md)."""
    r = _results("megatron-ptdp-gpt3-175b:measured-train-days-384")[0]
    b, s, l, h, v = 1536, 2048, 96, 12288, 51200  # eq. 3 at Table 2's 175B row (tests/reference/test_measured.py)
    step_s = 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h)) / (384 * 153e12)
    eq3 = 300e9 / (b * s / step_s) / 86400
    return (f"{r.ours:.2f} days against Table 2's {r.published:g} ({100 * r.error_frac:+.1f} %; eq. 3 itself gives "
            f"{eq3:.2f})")


def _deepseek_mfu() -> tuple[float, float, float, float]:
    """DeepSeek-V3's implied MFU (catalog/mfu.yaml, re-derived by tests/validation/test_mfu_table.py) over the H800's
    BF16 and FP8 dense peaks: (MFU over BF16, BF16 peak, MFU over FP8, FP8 peak)."""
    from workbook.catalog import load_catalog
    from workbook.catalog.mfu import load_mfu

    run = next(r for row in load_mfu() for r in row.runs if r.model == "deepseek-v3")
    gpu = load_catalog().gpu(run.gpu)
    bf16, fp8 = gpu.bf16_dense_TFLOPS, gpu.fp8_dense_TFLOPS
    return run.implied_mfu, bf16, run.implied_mfu * bf16 / fp8, fp8


def deepseek_mfu(style: str) -> str:
    """DeepSeek-V3's MFU over the BF16 and over the FP8 peak (docs/engineering.md: ``engineering``,
    docs/step_time.md: ``step_time``)."""
    m_bf16, bf16, m_fp8, fp8 = _deepseek_mfu()
    if style == "engineering":
        return f"imply MFU {m_bf16:.2f} of the H800's BF16 peak, {m_fp8:.2f} of its FP8 peak"
    return (f"(DeepSeek-V3's {m_fp8:.2f} of {fp8:g}) is about half the same run's MFU against BF16 ({m_bf16:.2f} of "
            f"{bf16:g})")


def deepseek_fp8() -> str:
    """DeepSeek-V3's pre-training GPU-hours with the blockwise FP8 recipe (the shipped point) and with every GEMM at
    the BF16 rate (`precision: bf16`) (docs/frameworks.md)."""
    from workbook.calc import compute
    from workbook.catalog import load_catalog
    from workbook.validation.load import load_validation_file

    cat = load_catalog()
    case = next(c for c in load_validation_file(ROOT / "catalog" / "validation" / "deepseek-v3-h800.yaml", cat).cases
                if c.point.point == "pretrain-gpu-hours")
    r = _results("deepseek-v3-h800:pretrain-gpu-hours")[0]
    sc = case.scenario.model_copy(update={"training": case.scenario.training.model_copy(
        update={"precision": "bf16", "fp8_recipe": None})})
    bf16 = compute(sc, cat)["train_job_gpu_hours"]
    return (f"{r.ours / 1e6:.3f}M GPU-hours ({100 * r.error_frac:+.1f} %, {'PASS' if r.passed else 'FAIL'}) with the "
            f"blockwise recipe and the GEMM smooth roofline, {bf16 / 1e6:.3f}M ({100 * (bf16 / r.published - 1):+.1f} %) "
            "with every GEMM at the BF16 rate")


def mfu_table() -> str:
    """catalog/mfu.yaml as a table: each row's setting, GPU range, MFU range and the runs behind it
    (docs/validation.md)."""
    from workbook.catalog.mfu import load_mfu

    lines = ["| row | setting | GPUs | MFU | runs: model, GPUs, basis (implied MFU) |", "|---|---|---|---|---|"]
    for row in load_mfu():
        runs = "; ".join(f"{r.model}, {r.gpus:,} {r.gpu}, {r.basis.replace('_', ' ')} ({r.implied_mfu:.3f})"
                         for r in row.runs)
        lines.append(f"| {row.id} | {row.setting.replace('_', ' ')} | {row.gpus_min:,}-{row.gpus_max:,} | "
                     f"{row.mfu_low:.3f}-{row.mfu_high:.3f} | {runs} |")
    return "\n".join(lines)


def param_count_points() -> str:
    """How many parameter counts the validation files check (docs/validation.md)."""
    return f"{sum(r.key.startswith('params_') for r in _validation())} parameter counts (2 %)"


def publications() -> str:
    """How many publications the shipped validation files come from (README)."""
    return f"{len({r.publication for r in _validation()})} publications"


def errors(*refs: str) -> str:
    """Today's signed errors of the named points ("file-stem:point"), as "+0.4 %, +1.7 %" (docs/validation.md)."""
    by = {f"{r.file.removesuffix('.yaml')}:{r.point}": r for r in _validation()}
    return ", ".join(f"{100 * by[ref].error_frac:+.1f} %" for ref in refs)


def _short(p: dict) -> str:
    return f"{p['gpu']} x {p['num_gpus']} ({p['nodes']:.0f} nodes), {p['train_days']:.2f} days, ${p['train_cost_usd']:,.0f}"


def plan_17_9_4() -> str:
    """The recommended plan of the shipped 17.9.4 request (README tour)."""
    return _short(_plan("17.9.4-70b-h800.yaml")["recommended"])


def cover_17_9_4() -> str:
    """The 17.9.4 plan's Cover title and sentence, in the words of workbook/writer/cover_ask.py (docs/planner.md)."""
    t = _outcome("17.9.4-70b-h800.yaml")
    p, r = t.data["training"]["recommended"], t.data["request"]
    target = r["target_days"]
    return (f"`Recommendation: {p['gpu'].upper()} x {p['num_gpus']}, rent`; `Not feasible: {p['gpu'].upper()} x "
            f"{p['num_gpus']}, rent: <what fails>` in red when a hard check fails: the Checks status of the column), "
            f"one sentence (`Rent {p['num_gpus']} {p['gpu'].upper()} GPUs ({p['nodes']:.0f} nodes) for "
            f"{target:.1f} days from approval (the run takes {p['train_days']:.1f}): "
            f"${max(p['train_cost_usd'], p['train_cost_target_usd']) / 1e6:.2f}M of a ${r['budget_usd'] / 1e6:.2f}M "
            f"budget; finishes {target - p['train_days']:.1f} days before the deadline`)")


def compare_17_9_4() -> str:
    """Every GPU priced for reserved with a plan for the 17.9.4 request, cheapest first (docs/engineering.md)."""
    rows = _plan("17.9.4-70b-h800.yaml")["compared"]
    return "; ".join(f"{r['gpu']} x {r['plan']['num_gpus']} ${r['plan']['train_cost_usd']:,.0f}" for r in rows if r["plan"])


def priced_17_9_4() -> str:
    """The other GPUs priced for the 17.9.4 request's basis, which `compare_priced_gpus` also plans (README)."""
    t = _plan("17.9.4-70b-h800.yaml")
    rec = t["recommended"]["gpu"]
    return ", ".join(r["gpu"].upper() for r in t["compared"] if (r["plan"] or "rests_on" in r) and r["gpu"] != rec)


def compare_losers_17_9_4() -> str:
    """Which check each priced GPU without a plan for 17.9.4 fails (docs/engineering.md)."""
    checks = {"target days": "the target days", "budget": "the budget"}
    by: dict[str, list[str]] = {}
    for r in _plan("17.9.4-70b-h800.yaml")["compared"]:
        if r["plan"] is None and "rests_on" in r:
            what = next((v for k, v in checks.items() if k in r["why"]), r["why"])
            by.setdefault(what, []).append(r["gpu"].upper())
    return "; ".join(f"{', '.join(g)} miss{'es' if len(g) == 1 else ''} {what}" for what, g in by.items())


def plan_mixtral() -> str:
    """The recommended plan and the alternatives of the shipped Mixtral request (docs/engineering.md)."""
    t = _plan("moe-mixtral-8x7b.yaml")
    plans = [t["recommended"], *[a for a in t.get("alternatives", {}).values() if a]]
    return "; ".join(f"{p['gpu'].upper()} x {p['num_gpus']}, {p['train_days']:.2f} days, ${p['train_cost_usd']:,.0f}"
                     for p in plans)


def tco_17_9_4() -> str:
    """The owned cluster's full bill and rent vs buy by NPV of the 17.9.4 request's plan (docs/finance.md)."""
    t = _outcome("17.9.4-70b-h800.yaml").data["tco"]
    return (f"{t['tco_leaf_switches']:.0f} leaves + {t['tco_spine_switches']:.0f} spines, capex "
            f"${t['tco_capex_usd']:,.0f}, opex ${t['tco_opex_per_year_usd']:,.0f} a year, {t['tco_years']:g}-year TCO "
            f"${t['tco_total_usd']:,.0f}; NPV at {t['tco_discount_rate_frac']:.0%}: buy "
            f"${t['tco_npv_owned_usd']:,.0f} (residual ${t['tco_residual_usd']:,.0f}), rent "
            f"${t['tco_npv_rent_usd']:,.0f}")


def tco_17_9_4_verdict() -> str:
    """Which of rent and buy is cheaper by NPV for the 17.9.4 request's GPUs (docs/finance.md)."""
    t = _outcome("17.9.4-70b-h800.yaml").data["tco"]
    what = "Buying" if t["tco_buy_cheaper_flag"] else "Renting"
    return (f"{what} the same {t['tco_gpus_owned']:,.0f} GPUs{' 24/7' if what == 'Renting' else ''} for "
            f"{t['tco_years']:g} years is the cheaper option by NPV")


def _signed(x: float, digits: int = 0) -> str:
    return f"{'-' if x < 0 else '+'}${abs(x):,.{digits}f}"


@lru_cache(maxsize=None)
def _plan_q(request: str, scenario: str) -> dict:
    """Every named quantity of one column of a shipped request's plan workbook (its full calculation)."""
    from workbook.calc import compute
    from workbook.catalog import load_catalog

    sc = next(s for s in _outcome(request).scenarios if s.name == scenario)
    return compute(sc, load_catalog())


def tco_table(request: str) -> str:
    """The owned-cluster TCO of a shipped request's recommended plan, as `workbook plan --json`'s `tco` holds it
    (docs/finance.md)."""
    o = _outcome(request).data
    t = o["tco"]
    serving = t["purpose"] == "serving"
    p = o["serving"]["recommended"] if serving else o["training"]["recommended"]
    years = f"{t['tco_years']:g} years"
    if serving:
        what = (f"{p['layout']}" if p["kind"] == "disaggregated" else
                f"{p['replicas']} replicas of {p['gpu'].upper()} TP{p['tp']}")
        plan = f"{what}, {p['num_gpus']:,} GPUs at ${p['gpu_hour_usd']:.2f}/GPU-h ({o['request']['price_basis']})"
    else:
        plan = (f"{p['gpu'].upper()} x {p['num_gpus']:,} ({p['nodes']:.0f} nodes) at ${p['gpu_hour_usd']:.2f}/GPU-h "
                f"({o['request']['price_basis']})")
    if t["tco_spine_switches"]:
        switches = f"{t['tco_leaf_switches']:,.0f} leaves + {t['tco_spine_switches']:,.0f} spines"
    else:
        switches = f"{t['tco_leaf_switches']:,.0f} leaf" + ("" if t["tco_leaf_switches"] == 1 else "s")
    rent = f"{usd(t['tco_rent_total_usd'])} over {years}"
    if serving:
        rent = f"{usd(t['tco_rent_per_year_usd'])} a year = 12 x the plan's {usd(p['usd_per_month'])}/month; " + rent
    saving = t["tco_npv_buy_saving_usd"]
    rows = [
        ("plan", plan),
        ("GPUs owned / servers bought", f"{t['tco_gpus_owned']:,.0f} / {t['tco_nodes']:,.0f}"),
        ("servers", usd(t["tco_server_capex_usd"])),
        ("switches", f"{switches} ({usd(t['tco_switch_capex_usd'])}) and {t['tco_links']:,.0f} links of optics "
                     f"({usd(t['tco_optics_capex_usd'])})"),
        ("hardware capex", usd(t["tco_capex_usd"])),
        ("opex", f"{usd(t['tco_opex_per_year_usd'])} a year (power with PUE {usd(t['tco_power_per_year_usd'])}, "
                 f"space {usd(t['tco_space_per_year_usd'])}, storage {usd(t['tco_storage_per_year_usd'])}, "
                 f"staff {usd(t['tco_staff_per_year_usd'])}, support {usd(t['tco_support_per_year_usd'])})"),
        ("TCO", f"{usd(t['tco_total_usd'])} over {years}, or ${t['tco_all_in_usd_per_gpu_hour']:.2f} per GPU-hour "
                "all-in"),
        ("renting the same GPUs 24/7", f"{rent} (TCO is {100 * t['tco_vs_rent_frac']:.1f} % of it)"),
        (f"NPV at {100 * t['tco_discount_rate_frac']:g} %, buy (residual {usd(t['tco_residual_usd'])}) vs rent",
         f"{usd(t['tco_npv_owned_usd'])} vs {usd(t['tco_npv_rent_usd'])}: "
         f"{'buying' if saving > 0 else 'renting'} is cheaper by {usd(abs(saving))}"),
    ]
    return "\n".join(["| item | value |", "|---|---:|", *(f"| {k} | {v} |" for k, v in rows)])


def tco_default_1796() -> str:
    """The default workbook's 17.9.6 70B serving scenario on H800: the GPUs it owns and its TCO (docs/finance.md)."""
    v = _calc("17.9.6-70b-inference-h800")
    return (f"owns {v['tco_gpus_owned']:,.0f} GPUs in {v['tco_nodes']:,.0f} server"
            f"{'' if v['tco_nodes'] == 1 else 's'}: capex {usd(v['tco_capex_usd'])}, {v['tco_years']:g}-year TCO "
            f"{usd(v['tco_total_usd'])}, or ${v['tco_all_in_usd_per_gpu_hour']:.2f} per GPU-hour, "
            f"{100 * v['tco_vs_rent_frac']:.0f} % of renting its {v['tco_gpus_owned']:,.0f} GPUs 24/7 "
            f"({usd(v['tco_rent_total_usd'])})")


def serving_storage() -> str:
    """What a serving column stores: the 70B's weights in BF16, one copy (serve-70b-chat; docs/finance.md)."""
    t = _outcome("serve-70b-chat.yaml").data["tco"]
    return f"{t['tco_storage_TB']:.3f} TB and {usd(t['tco_storage_per_year_usd'])} a year for the 70B in BF16"


def serving_storage_planner() -> str:
    """The same storage, in docs/planner.md's words."""
    t = _outcome("serve-70b-chat.yaml").data["tco"]
    return f"BF16: {t['tco_storage_TB']:.3f} TB, {usd(t['tco_storage_per_year_usd'])} a year"


def _step(request: str, scenario: str) -> float:
    """The sensitivity step (`cost.sensitivity_frac`) of one column of a request's plan workbook."""
    return float(next(s for s in _outcome(request).scenarios if s.name == scenario).cost.sensitivity_frac)


def _chat_sensitivity() -> tuple[dict, dict, dict, dict]:
    """serve-70b-chat's recommended plan, its full calculation, and the H20 alternative's."""
    sv = _outcome("serve-70b-chat.yaml").data["serving"]
    rec, h20 = sv["recommended"], sv["alternatives"]["h20"]
    return rec, _plan_q("serve-70b-chat.yaml", rec["scenario"]), h20, _plan_q("serve-70b-chat.yaml", h20["scenario"])


def serving_sensitivity_table() -> str:
    """The serving block of serve-70b-chat's Sensitivity sheet, and its TCO storage (docs/finance.md)."""
    rec, q, h20, qh = _chat_sensitivity()
    t = _outcome("serve-70b-chat.yaml").data["tco"]

    def pair(d: str, per: str, digits: int) -> str:
        return f"{_signed(q[f'srv_sens_{d}_{per}_low_usd'], digits)} / {_signed(q[f'srv_sens_{d}_{per}_high_usd'], digits)}"

    rows = [
        ("plan", f"{rec['replicas']} x {rec['gpu'].upper()} TP{rec['tp']} at ${rec['gpu_hour_usd']:.2f}/GPU-h, "
                 f"{rec['load_rps']:g} requests/s; step {100 * _step('serve-70b-chat.yaml', rec['scenario']):g} %"),
        ("serving cost per month", usd(q["srv_sens_month_usd"])),
        ("GPU-hour price -/+", f"{pair('price', 'dmonth', 0)} per month; {pair('price', 'd1M', 3)} per 1M output tokens"),
        (f"arrival rate -/+ (replicas {q['srv_sens_replicas_low']:.0f} / "
         f"{q['srv_sens_replicas_high']:.0f})", f"{pair('load', 'dmonth', 0)} per month; {pair('load', 'd1M', 3)} per 1M"),
        ("output tokens -/+", f"{pair('output', 'd1M', 3)} per 1M (cost per 1M ${q['srv_sens_1M_usd']:.3f})"),
        ("power price -/+", f"{pair('power', 'dmonth', 0)} per month (the owned fleet's power bill: GPUs, hosts, "
                            "network, PUE)"),
        (f"H20 alternative ({h20['replicas']} replicas, {usd(h20['usd_per_month'])}/month)",
         f"replicas {qh['srv_sens_replicas_low']:.0f} / {qh['srv_sens_replicas_high']:.0f} at the rate -/+"),
        ("TCO storage", f"{t['tco_storage_TB']:.3f} TB, ${t['tco_storage_per_year_usd']:,.2f} a year; "
                        f"{t['tco_years']:g}-year TCO {usd(t['tco_total_usd'])}"),
    ]
    return "\n".join(["| row | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])


def serving_sensitivity_words() -> str:
    """serve-70b-chat's serving sensitivity in docs/planner.md's words."""
    rec, q, _, _ = _chat_sensitivity()

    def g(d: str, per: str, tag: str, digits: int = 0) -> str:
        return _signed(q[f"srv_sens_{d}_{per}_{tag}_usd"], digits)

    s = f"{100 * _step('serve-70b-chat.yaml', rec['scenario']):g} %"
    return (f"M = {usd(q['srv_sens_month_usd'])}, price +/- ${q['srv_sens_price_dmonth_high_usd']:,.0f}; rate -{s} "
            f"{q['srv_sens_replicas_low']:.0f} replicas ({g('load', 'dmonth', 'low')}), +{s} "
            f"{q['srv_sens_replicas_high']:.0f} ({g('load', 'dmonth', 'high')}); power +/- "
            f"${q['srv_sens_power_dmonth_high_usd']:,.0f}; U = ${q['srv_sens_1M_usd']:.3f}, price +/- "
            f"${q['srv_sens_price_d1M_high_usd']:.3f}, output -{s} {g('output', 'd1M', 'low', 3)} / +{s} "
            f"{g('output', 'd1M', 'high', 3)}, rate {g('load', 'd1M', 'low', 3)} / {g('load', 'd1M', 'high', 3)}")


def serving_sensitivity_plan() -> str:
    """The serve-70b-chat plan whose serving sensitivity docs/planner.md quotes (replicas, GPU, TP, load, step)."""
    rec = _chat_sensitivity()[0]
    return (f"{rec['replicas']} x {rec['gpu'].upper()} TP {rec['tp']}, {rec['load_rps']:g} requests/s, step "
            f"{100 * _step('serve-70b-chat.yaml', rec['scenario']):g} %")


def assumption_counts(style: str) -> str:
    """How many Plan inputs a serving-only and a training-only plan's Assumptions sheet lists
    (workbook.writer.planbook.applies; docs/planner.md: ``planner``, docs/finance.md: ``finance``)."""
    from workbook.writer.inputs import input_rows
    from workbook.writer.planbook import applies

    keys = [r.key for r in input_rows() if r.key != "name"]
    serving, training = sum(applies(k, False, True) for k in keys), sum(applies(k, True, False) for k in keys)
    if style == "planner":
        return f"{serving} inputs of {len(keys)}; a training-only plan leaves out `inference.*` ({training} of {len(keys)})"
    return f"({serving} of {len(keys)} inputs); a training-only plan no `inference.*` ({training})"


def disagg_pools_validation() -> str:
    """The disaggregated pools' published points per node against the model (docs/planner.md)."""
    d, p = _results("serving-deepseek-v3-h800-disagg:disagg-decode-node", "serving-deepseek-v3-h800-disagg:disagg-prefill-node")
    return (f"decode {100 * d.error_frac:+.1f} % ({'PASS' if d.passed else 'FAIL'}), prefill {100 * p.error_frac:+.1f} % "
            f"({'PASS' if p.passed else 'FAIL'})")


@lru_cache(maxsize=None)
def _chat_auto():
    """serve-70b-chat planned with `disaggregation: auto`."""
    from workbook.catalog import load_catalog
    from workbook.planner.plan import plan_request

    req = _book_request("serve-70b-chat.yaml")
    req = req.model_copy(update={"serving": req.serving.model_copy(update={"disaggregation": "auto"})})
    return plan_request(req, load_catalog()).data["serving"]


def chat_auto() -> str:
    """What `disaggregation: auto` does to the 70B chat request (docs/planner.md, docs/engineering.md)."""
    sv = _chat_auto()
    rec, other = sv["recommended"], sv.get("other_kind")
    if rec["kind"] != "co-located":
        return (f"The 70B chat request changes its answer with `auto`: {rec['num_gpus']:,} GPUs disaggregated, "
                f"{usd(rec['usd_per_month'])}/month")
    if other and other["usd_per_month"] == rec["usd_per_month"]:
        return (f"The 70B chat request keeps its co-located answer with `auto`: the best disaggregated plan ties at "
                f"{other['num_gpus']:,} GPUs, and a tie goes to the co-located plan")
    return ("The 70B chat request keeps its co-located answer with `auto`: " +
            (f"the best disaggregated plan costs {usd(other['usd_per_month'] - rec['usd_per_month'])}/month more"
             if other else "no disaggregated plan carries the load"))


def both_scenarios(style: str) -> str:
    """The training and serving GPUs of the shipped scenarios of purpose `both` (docs/planner.md: ``planner``,
    docs/finance.md: ``finance``)."""
    from workbook.scenario import load_scenarios

    both = [f.stem for f in sorted((ROOT / "catalog" / "scenarios").glob("*.yaml"))
            if load_scenarios([f])[0].purpose == "both"]
    train = sorted(_calc(s)["train_gpus_billed"] for s in both)
    serve = sorted(_calc(s)["srv_gpus_in_use"] for s in both)
    sep = "-" if style == "planner" else " to "
    return (f"train on {train[0]:,.0f}{sep}{train[-1]:,.0f} GPUs and serve on {serve[0]:,.0f}{sep}{serve[-1]:,.0f}")


def early_estimate_17_9_4(style: str) -> str:
    """The 17.9.4 request's early estimate (spec 17.9.4 steps 1, 2, 4, 5, 10) in docs/planner.md's words
    (``planner``) or docs/engineering.md's (``engineering``)."""
    o = _outcome("17.9.4-70b-h800.yaml").data
    e, days = o["early_estimate"]["h800"], o["request"]["target_days"]
    g, c = "H800", f"{e['C_total_FLOPs']:.3g}".replace("e+", "e")
    if style == "planner":
        return (f"C = {c}, MFU {e['MFU']:.2f}, {e['N_chosen']:.0f} {g} ({e['nodes']:.0f} nodes), "
                f"TP {e['TP']:.0f} x PP {e['PP']:.0f} x DP {e['DP']:.0f}, {e['T_actual_days']:.2f} days, "
                f"{usd(e['cost_target_USD'])} for {days:g} days at ${e['gpu_hour_usd']:g}/GPU-h")
    return (f"C = {c} FLOPs, {e['N_chosen']:.0f} {g} ({e['nodes']:.0f} nodes) at MFU {e['MFU']:.2f}, "
            f"{e['T_actual_days']:.2f} days, ${e['cost_target_USD'] / 1e6:.2f}M for the {days:g} days at "
            f"${e['gpu_hour_usd']:g}/GPU-h")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def shipped_checks() -> str:
    """What the hard checks and warnings say of the shipped scenarios (`workbook calc --json
    catalog/scenarios/*.yaml`; docs/finance.md)."""
    from workbook.calc.checks import WARNINGS
    from workbook.catalog import load_catalog
    from workbook.scenario import load_scenarios

    files = sorted((ROOT / "catalog" / "scenarios").glob("*.yaml"))
    v = {f.stem: _calc(f.stem) for f in files}
    sc = {f.stem: load_scenarios([f])[0] for f in files}

    def case(n: str) -> str:
        return n.split("-")[0]

    def fired(key: str) -> list[str]:
        return [n for n in v if v[n][key]]

    parts = []
    if comm := fired("warn_comm_share"):
        limit = float(load_catalog().defaults.value("comm_max_frac"))
        shares = [f"{100 * v[n]['comm_share_frac']:.0f} %" for n in comm]
        parts.append(f"{_and([case(n) for n in comm])} spend {_and(shares)} of a step communicating (17.6.9, no "
                     f"overlap) against the {100 * limit:.0f} % guideline")
    if ckpt := fired("warn_ckpt_interval"):
        every = sorted({f"{v[n]['sto_ckpt_interval_steps']:,.0f}" for n in ckpt})
        allowed = [f"{v[n]['ckpt_interval_max_steps']:,.0f}" for n in ckpt]
        parts.append(f"{_and([case(n) for n in ckpt])} checkpoint every {_and(every)} steps where the MTBF rule "
                     f"allows {_and(allowed)} at their GPU counts (17.7.4)")
    for n in fired("warn_pipeline_fill"):
        parts.append(f"{case(n)} runs GA = {sc[n].training.grad_accum} micro-batches on PP = {sc[n].training.pp} "
                     "stages (under 4 x PP)")
    for key, label, *_ in WARNINGS:
        if key not in ("warn_comm_share", "warn_ckpt_interval", "warn_pipeline_fill") and fired(key):
            parts.append(f"{_and([case(n) for n in fired(key)])}: {label[0].lower() + label[1:]}")
    hard = sum(v[n]["hard_failures_count"] for n in v)
    head = "pass every hard check" if hard == 0 else f"fail {hard:.0f} hard checks"
    warns = sum(v[n]["warnings_count"] for n in v)
    tail = ("; ".join(parts[:-1]) + "; and " + parts[-1]) if len(parts) > 1 else "".join(parts)
    return (f"{head} and show {warns:.0f} warnings, which are the book's own plans taken at their word "
            f"(`workbook calc --json catalog/scenarios/*.yaml`)" + (f": {tail}." if parts else "."))


def tco_17_9_3_network() -> str:
    """The 17.9.3 scenario's servers and the fat tree the TCO sheet prices for it (docs/finance.md)."""
    v = _calc("17.9.3-gpt4-class-moe-h800")
    per_server = v["tco_server_capex_usd"] / v["tco_nodes"]
    ports = (v["tco_leaf_switches"] + v["tco_spine_switches"]) * v["tco_switch_ports"] / v["tco_nic_ports"]
    return (f"servers ${v['tco_server_capex_usd'] / 1e6:.1f}M ({v['tco_nodes']:,.0f} x ${per_server / 1e3:.0f}K); "
            f"the sheet prices {v['tco_leaf_switches']:,.0f} leaves + {v['tco_spine_switches']:,.0f} spines, "
            f"{ports:g} ports per NIC")


@lru_cache(maxsize=None)
def _book_search(request: str, **update):
    """The layout search of a shipped book-case request, with fields of the request changed (price basis,
    fidelity)."""
    from workbook.catalog import load_catalog
    from workbook.planner.request import load_request
    from workbook.planner.search import search

    catalog = load_catalog()
    return search(load_request(ROOT / "catalog" / "requests" / request, catalog).model_copy(update=update), catalog)


def _book_layout(ev) -> str:
    s, lay = ev.screened.layout.shape, ev.screened.layout
    return f"TP{s.tp} PP{s.pp} DP{lay.dp} ZeRO-{s.zero_stage}, mb {s.micro_batch} x GA {lay.grad_accum}"


def book_17_9_1() -> str:
    """What the search answers for 17.9.1: GPUs, days, billed and actual cost, reserved and on-demand, layout and
    memory (docs/planner.md)."""
    res, od = _book_search("17.9.1-llama-7b-h800.yaml"), _book_search("17.9.1-llama-7b-h800.yaml", price_basis="on_demand")
    ev = res.plans[0]
    q, qo, n = ev.q, od.plans[0].q, ev.screened.layout.num_gpus
    return (f"{n} GPUs ({q['plan_nodes']:.0f} nodes), {q['train_days']:.4f} days, {usd(q['train_cost_target_usd'])} "
            f"billed, {usd(q['train_cost_usd'])} actual ({usd(qo['train_cost_target_usd'])} / "
            f"{usd(qo['train_cost_usd'])} on-demand), {_book_layout(ev)}, {q['zero_total_per_gpu_GB']:.2f} GB per GPU")


@lru_cache(maxsize=None)
def _book_17_9_2_at(mfu: float, target_days: float):
    """17.9.2 searched at the book's other MFU and a deadline it just meets (tests/planner/test_book_cases.py)."""
    from workbook.catalog import load_catalog
    from workbook.planner.search import search

    catalog = load_catalog()
    req = _book_request("17.9.2-moe-h800.yaml")
    book = req.book.model_copy(update={"mfu": mfu})
    return search(req.model_copy(update={"book": book, "target_days": target_days}), catalog)


def _shape(ev) -> str:
    s, lay = ev.screened.layout.shape, ev.screened.layout
    return f"TP{s.tp} PP{s.pp} DP{lay.dp} ZeRO-{s.zero_stage}"


def book_17_9_2() -> str:
    """What the search answers for 17.9.2, and at the book's 256 GPUs with MFU 0.35 (docs/planner.md)."""
    ev = _book_search("17.9.2-moe-h800.yaml").plans[0]
    q, lay = ev.q, ev.screened.layout
    other = _book_17_9_2_at(0.35, 131.7).plans[0]
    return (f"{lay.num_gpus} GPUs, {q['train_days']:.2f} days ({other.screened.layout.num_gpus} GPUs, "
            f"{other.q['train_days']:.2f} days at {other.q['train_mfu']:.2f}); {_shape(ev)}, "
            + ("no EP" if lay.shape.ep == 1 else f"EP {lay.shape.ep}"))


def book_17_9_3() -> str:
    """What the screen gives every layout of 17.9.3 that fits and meets the deadline, reserved and on-demand
    (docs/planner.md)."""
    r = _book_search("17.9.3-1.8t-moe.yaml").feasible_screened[0]
    ro = _book_search("17.9.3-1.8t-moe.yaml", price_basis="on_demand").feasible_screened[0]
    gpu_h = r.cost_usd / _calc_gpu_price("h800", "reserved")
    return (f"every screened layout: {r.layout.num_gpus:,} GPUs, {r.days:.2f} days, {gpu_h / 1e6:.2f}M GPU-h, "
            f"${r.cost_usd / 1e6:.1f}M / ${ro.cost_usd / 1e6:.1f}M")


def _calc_gpu_price(gpu: str, basis: str) -> float:
    from workbook.catalog import load_catalog

    return getattr(load_catalog().gpus[gpu], f"price_{basis}_usd_per_gpu_hour")


@lru_cache(maxsize=None)
def _book_request(request: str):
    from workbook.catalog import load_catalog
    from workbook.planner.request import load_request

    return load_request(ROOT / "catalog" / "requests" / request, load_catalog())


def _book_layout_q(request: str, tp: int, pp: int, ep: int, dp: int, mb: int, ga: int, zero: int) -> dict:
    """The full calculation of one book-fidelity layout (the book's own, which the search does not pick; as
    tests/planner/test_book_cases.py builds it)."""
    from tests.planner.test_book_cases import _layout_q

    req = _book_request(request)
    return _layout_q(req if req.fidelity == "book" else req.model_copy(update={"fidelity": "book"}),
                     tp, pp, ep, dp, mb, ga, zero=zero)


def book_17_9_4() -> str:
    """17.9.4 searched with the book's models (`fidelity: book`): the GPU count and why, days, cost of the target
    days, layout, and the book's own layout's memory and communication share (docs/planner.md)."""
    ev = _book_search("17.9.4-70b-h800.yaml", fidelity="book").plans[0]
    q, lay = ev.q, ev.screened.layout
    book = _book_layout_q("17.9.4-70b-h800.yaml", 8, 2, 1, 40, 1, 16, zero=0)
    passed = "every hard check passed" if book["hard_failures_count"] == 0 else "a hard check failed"
    return (f"{lay.num_gpus} GPUs (the smallest whole-node count: N_time {q['plan_gpus_time_raw']:.1f} with the real "
            f"{q['params_total'] / 1e9:.2f}B), {q['train_days']:.2f} days, {usd(q['train_cost_target_usd'])} for "
            f"{_book_request('17.9.4-70b-h800.yaml').target_days:g} days; {_shape(ev)}: the book's TP8 x PP2 "
            f"({book['zero_total_per_gpu_GB']:.2f} GB, {passed}) has a communication share of "
            f"{book['comm_share_frac']:.3f}")


#: the book-fidelity requests of the book's end-to-end cases 17.9.1-17.9.3
BOOK_CASES = (("17.9.1", "17.9.1-llama-7b-h800.yaml"), ("17.9.2", "17.9.2-moe-h800.yaml"),
              ("17.9.3", "17.9.3-1.8t-moe.yaml"))


def _gpus_of(layout: str) -> int:
    """The GPUs of a layout as the search names it ("TP8 PP2 DP1023, mb 1 x GA 5, ...": TP x CP x PP x DP)."""
    n = 1
    for dim in ("TP", "CP", "PP", "DP"):
        m = re.search(rf"\b{dim}(\d+)\b", layout)
        n *= int(m.group(1)) if m else 1
    return n


def book_targets() -> str:
    """Each book case's target days and the largest GPU count that misses them (docs/planner.md)."""
    out = []
    for case, request in BOOK_CASES:
        miss = min((r for r in _book_search(request).rejections if r.check == "check_meets_target_days"),
                   key=lambda r: r.value)
        out.append(f"{case}: {_book_request(request).target_days:g} days, {_gpus_of(miss.layout):,} GPUs take "
                   f"{miss.value:.2f}")
    return "; ".join(out)


def _book_gpus(request: str) -> int:
    res = _book_search(request)
    return (res.plans[0].screened if res.plans else res.feasible_screened[0]).layout.num_gpus


def book_real_models() -> str:
    """The active parameters of the catalogue's real DeepSeek-V2 and gpt4-class-moe, and the days 17.9.2 and 17.9.3
    would take with them at the book's GPUs and MFU (docs/planner.md)."""
    from workbook.catalog import load_catalog
    from workbook.reference import params as pa
    from workbook.reference import training as tr

    cat = load_catalog()
    active, days = [], []
    for model, request in (("deepseek-v2", "17.9.2-moe-h800.yaml"), ("gpt4-class-moe", "17.9.3-1.8t-moe.yaml")):
        req, p = _book_request(request), pa.model_param_counts(cat.model(model))["params_active"]
        active.append(f"{p / 1e9:.1f}B")
        days.append(f"{tr.train_time_days(total_FLOP=6 * p * req.tokens, num_gpus=_book_gpus(request), mfu=req.book.mfu, peak_TFLOPS=cat.gpu('h800').bf16_dense_TFLOPS):.4g}")
    return (f"the catalogue's real DeepSeek-V2 and its gpt4-class-moe have {' and '.join(active)} active, which "
            f"would give {' and '.join(days)} days")


def book_layouts_fail() -> str:
    """Where the book's own layouts of 17.9.2 and 17.9.3 fail here, and what the planner does instead
    (docs/planner.md; the layouts of tests/planner/test_book_cases.py)."""
    z1 = _book_layout_q("17.9.2-moe-h800.yaml", 1, 1, 8, 1024, 1, 4, zero=1)
    z3 = _book_layout_q("17.9.2-moe-h800.yaml", 1, 1, 8, 1024, 1, 4, zero=3)
    rec = _book_search("17.9.2-moe-h800.yaml").plans[0]
    fits = "it fits" if z3["hard_failures_count"] == 0 else "it still fails a hard check"
    s = rec.screened.layout.shape
    ep = "no EP" if s.ep == 1 else f"EP {s.ep}"
    moe = ("- **17.9.2, EP 8 with ZeRO-1**: "
           f"{z1['zero_total_per_gpu_GB']:.1f} GB per GPU in this workbook's book memory model, which splits the state "
           "over TP·PP only and not over EP (the book's own seed-000 ZeRO-1 gives 265.5 GB, erratum 31: it does not "
           f"fit either). With ZeRO-3 {fits} ({z3['zero_total_per_gpu_GB']:.2f} GB) but the DP traffic of 236B "
           f"parameters over IB makes the communication share {z3['comm_share_frac']:.2f}. The planner instead takes "
           f"TP{s.tp} x PP{s.pp} x DP{rec.screened.layout.dp} with ZeRO-{s.zero_stage} and {ep} (share "
           f"{rec.q['comm_share_frac']:.3f}): EP buys no memory "
           "in the book model and costs all-to-alls.")
    res = _book_search("17.9.3-1.8t-moe.yaml")
    evs = {ev.screened.layout.shape.zero_stage: ev.q for ev in res.evaluated
           if (ev.screened.layout.shape.tp, ev.screened.layout.shape.pp, ev.screened.layout.dp,
               ev.screened.layout.shape.ep) == (8, 8, 256, 8)}
    z1_gb = next(r.value for r in res.rejections if r.check == "check_train_memory_fits"
                 and r.layout.startswith("TP8 PP8 DP256 EP8,") and "ZeRO-1" in r.layout)
    q = evs[2]
    tep = q["comm_tp_time_s"] + q["comm_ep_time_s"] + q["comm_pp_time_s"]
    closest = min((r for r in res.rejections if r.stage == "calc"), key=lambda r: r.value)
    passing = [z for z in (2, 3) if evs[z]["hard_failures_count"] == 0]
    gpt4 = ("- **17.9.3, TP8 x EP8 x PP8 x DP2 with ZeRO-1**: "
            f"ZeRO-1 is {z1_gb:.1f} GB here (no EP split, the 12P optimizer sharded; the book's 8P convention with EP "
            f"gives 53.7-57.7 GB). ZeRO-2 ({evs[2]['zero_total_per_gpu_GB']:.1f} GB) and ZeRO-3 "
            f"({evs[3]['zero_total_per_gpu_GB']:.1f} GB) "
            + ("pass every hard check" if passing == [2, 3] else "do not both pass the hard checks") +
            f", but the communication share is {q['comm_share_frac']:.2f} (DP {q['comm_dp_time_s']:.2g} s, "
            f"TP {q['comm_tp_time_s']:.2g} s, EP {q['comm_ep_time_s']:.2g} s, PP {q['comm_pp_time_s']:.2g} s against "
            f"{q['comm_compute_step_s']:.3g} s of compute per step); TP + EP + PP alone are "
            f"{100 * tep / (tep + q['comm_compute_step_s']):.0f} % at any batch, and no layout of the request comes "
            f"under 20 % (closest {closest.value:.3f}: {closest.layout.split(',')[0]}, no EP). The case cannot be "
            "reproduced as a passing plan: the book does not check its communication share, and this workbook's "
            "rule (no overlap) rejects it.")
    return moe + "\n" + gpt4


def compare_1796_table() -> str:
    """scripts/compare_1796.py's table: 17.9.6 by the book's roofline and by the engine model
    (docs/serving-overview.md)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare_1796", ROOT / "scripts" / "compare_1796.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.table()
def cash_flow_17_9_4() -> str:
    """The Cash Flow sheet of the 17.9.4 request's plan: the rent by month, then each fiscal year (docs/finance.md)."""

    cf = _outcome("17.9.4-70b-h800.yaml").data["cash_flow"]
    months = "; ".join(f"{m['first_day'][:7]} {usd(m['rent_usd'])}" for m in cf["by_month"] if m["rent_usd"] > 0)
    years = "; ".join(f"FY{y['fiscal_year']}: rent {usd(y['rent_usd'])}, buy capex {usd(y['capex_usd'])}, opex "
                      f"{usd(y['opex_usd'])}, residual {usd(y['residual_usd'])} in, net {usd(y['buy_usd'])}"
                      for y in cf["by_fiscal_year"])
    return f"rent by month {months}; by fiscal year {years}"


@lru_cache(maxsize=None)
def cross_validated():
    """`workbook validate --cv` of the shipped files (run once per process; scripts/accuracy_table.py's input)."""
    from workbook.catalog import load_catalog
    from workbook.validation import default_files
    from workbook.validation.cv import cross_validation

    return cross_validation(default_files(), load_catalog())


def _cv():
    from workbook.calibrate.report import by_kind

    return by_kind(cross_validated(), holdout=None)


def accuracy() -> str:
    """Leave-one-publication-out and in-sample accuracy of training and serving (`workbook validate --cv`)."""
    stats = _cv()

    def one(kind: str) -> str:
        s = stats[kind]
        cv, ins = s["cross_validated"], s["in_sample"]
        return (f"{kind} {100 * cv['mean_abs_error_frac']:.1f} % mean |error|, {cv['passed']} of {cv['count']} "
                f"within tolerance (in-sample {100 * ins['mean_abs_error_frac']:.1f} %, {ins['passed']} of {ins['count']})")

    def kinds(names: tuple[str, ...]) -> str:
        return ", ".join(f"{label} {100 * stats[k]['cross_validated']['mean_abs_error_frac']:.1f} % "
                         f"({stats[k]['cross_validated']['passed']} of {stats[k]['cross_validated']['count']})"
                         for k, label in names if k in stats)

    serving = kinds((("ttft", "TTFT"), ("tpot", "TPOT"), ("serving_throughput", "throughput"),
                     ("kv_capacity", "KV capacity")))
    return "; ".join([one("training"), one("serving")]) + f" (serving by kind: {serving})"


def serving_residuals_table() -> str:
    """Leave-one-publication-out error of the serving points per publication (`workbook validate --cv`):
    where the serving residual sits (docs/validation.md "Serving residuals by publication")."""
    from pathlib import Path as _P

    from workbook.calibrate.report import GROUPS, errors

    cal = cross_validated()
    err = errors(cal, cal.ours_cv)
    rows: dict[str, list[tuple[float, bool]]] = {}
    for i, pt in enumerate(cal.ev.points):
        if pt.kind not in GROUPS["serving"] or err[i] != err[i]:
            continue
        key = f"{pt.case.publication} ({_P(pt.case.file).stem})"
        rows.setdefault(key, []).append((float(err[i]), abs(err[i]) <= pt.case.point.tolerance))
    total = sum(abs(e) for r in rows.values() for e, _ in r)
    out = ["| publication (file) | points | mean error | mean abs error | within tolerance | share of the summed abs error |",
           "|---|---|---|---|---|---|"]
    for key, r in sorted(rows.items(), key=lambda kv: -sum(abs(e) for e, _ in kv[1])):
        a = sum(abs(e) for e, _ in r)
        out.append(f"| {key} | {len(r)} | {100 * sum(e for e, _ in r) / len(r):+.1f} % | {100 * a / len(r):.1f} % | "
                   f"{sum(ok for _, ok in r)} of {len(r)} | {100 * a / total:.0f} % |")
    return "\n".join(out)


def gpustack_short_runs() -> str:
    """How many times the model's time GPUStack's 128-token, 4-output runs take (their throughput error + 1; the
    serving factors are not fitted, so the catalogue's error is the cross-validated one) (docs/validation.md)."""
    rs = _results("gpustack-qwen3-32b-h100:vllm-bf16-random-128", "gpustack-qwen3-235b-a100:vllm-bf16-tp8-random-128")
    x = sorted(1 + r.error_frac for r in rs)
    return f"take {x[0]:.1f}-{x[-1]:.1f} times the model's time"


#: key -> (the doc that quotes it, the function that computes it)
FIGURES: dict[str, tuple[str, Callable[[], str]]] = {
    "plan-17.9.4": ("README.md", plan_17_9_4),
    "compare-17.9.4": ("docs/engineering.md", compare_17_9_4),
    "cover-17.9.4": ("docs/planner.md", cover_17_9_4),
    "compare-losers-17.9.4": ("docs/engineering.md", compare_losers_17_9_4),
    "plan-mixtral": ("docs/engineering.md", plan_mixtral),
    "tco-17.9.4": ("docs/finance.md", tco_17_9_4),
    "tco-17.9.4-verdict": ("docs/finance.md", tco_17_9_4_verdict),
    "cash-flow-17.9.4": ("docs/finance.md", cash_flow_17_9_4),
    "accuracy": ("README.md", accuracy),
    "publications": ("README.md", publications),
    "priced-17.9.4": ("README.md", priced_17_9_4),
    "validation-counts": ("docs/validation.md", validation_counts),
    "errors-memory": ("docs/validation.md", lambda: errors("korthikanti-gpt3-175b:act-no-recompute",
                                                           "korthikanti-gpt3-175b:act-selective-sp",
                                                           "korthikanti-gpt3-175b:weights-grads-adam")),
    "range-step": ("docs/validation.md", lambda: error_range("korthikanti-gpt3-175b", "megatron-ptdp-gpt3-175b",
                                                             "megatron-ptdp-530b-1t", "llama3-405b-h100")),
    "step-model-summary": ("docs/validation.md", step_model_summary),
    "error-llama-13b": ("docs/validation.md", lambda: errors("llama1-a100:llama-13b-gpu-hours")),
    "param-count-points": ("docs/validation.md", param_count_points),
    "llama3-8b-a100": ("docs/validation.md", llama3_8b_sentence),
    "errors-sglang-offline": ("docs/validation.md", lambda: errors("serving-llama3-70b-h100:offline-sglang",
                                                                   "serving-llama3-8b-a100:offline-sglang-8b")),
    "loose-ttft-17.9.6": ("docs/engineering.md", loose_ttft_1796),
    "deepseek-pools": ("docs/engineering.md", deepseek_pools),
    "book-cases-step": ("docs/engineering.md", book_cases_step),
    "gpus-needed-17.9.4": ("docs/engineering.md", gpus_needed_17_9_4),
    "bad-corpus": ("docs/engineering.md", bad_corpus),
    "step-time-means": ("docs/step_time.md", step_time_means),
    "serving-reference-summary": ("docs/serving.md", serving_reference_summary),
    "moe-fused-call": ("docs/serving.md", moe_fused_call),
    "serving-intro": ("docs/serving.md", serving_intro),
    "qwen-weights": ("docs/serving.md", qwen_weights),
    "prefill-call": ("docs/serving.md", prefill_call),
    "prefill-alltoall": ("docs/serving.md", prefill_alltoall),
    "moe-layout": ("docs/serving.md", moe_layout),
    "moe-layout-small-ops": ("docs/serving.md", moe_layout_small_ops),
    "decode-exchange": ("docs/serving.md", decode_exchange),
    "offline-quadrature": ("docs/serving.md", offline_quadrature),
    "offline-drain-share": ("docs/serving.md", offline_drain_share),
    "disagg-queue": ("docs/serving.md", disagg_queue),
    "prefill-call-limit": ("docs/serving.md", prefill_call_limit),
    "qwen-kv-ledger": ("docs/serving.md", qwen_kv_ledger),
    "deepseek-decode-parts": ("docs/serving.md", deepseek_decode_parts),
    "deepseek-profile": ("docs/serving.md", lambda: deepseek_profile("step")),
    "deepseek-profile-mtp": ("docs/serving.md", lambda: deepseek_profile("mtp")),
    "deepseek-profile-alltoall": ("docs/serving.md", lambda: deepseek_profile("alltoall")),
    "deepseek-prefill-layer": ("docs/serving.md", deepseek_prefill_layer),
    "serving-informational": ("docs/serving.md", serving_informational),
    "gpustack-short-runs": ("docs/validation.md", gpustack_short_runs),
    "deepseek-prefill-service": ("docs/serving.md", deepseek_prefill_service),
    "llama3-interleaving": ("docs/step_time.md", llama3_interleaving),
    "llama3-128k": ("docs/step_time.md", llama3_128k),
    "book-examples": ("docs/engineering.md", book_examples),
    "op-sac-llama3-8b": ("docs/activations.md", op_sac_llama3_8b),
    "tco-default-17.9.6": ("docs/finance.md", tco_default_1796),
    "serving-storage": ("docs/finance.md", serving_storage),
    "serving-storage-planner": ("docs/planner.md", serving_storage_planner),
    "serving-sensitivity-words": ("docs/planner.md", serving_sensitivity_words),
    "serving-sensitivity-plan": ("docs/planner.md", serving_sensitivity_plan),
    "assumption-counts": ("docs/planner.md", lambda: assumption_counts("planner")),
    "assumption-counts-finance": ("docs/finance.md", lambda: assumption_counts("finance")),
    "disagg-pools-validation": ("docs/planner.md", disagg_pools_validation),
    "chat-auto": ("docs/planner.md", chat_auto),
    "chat-auto-engineering": ("docs/engineering.md", chat_auto),
    "both-scenarios": ("docs/planner.md", lambda: both_scenarios("planner")),
    "both-scenarios-finance": ("docs/finance.md", lambda: both_scenarios("finance")),
    "early-estimate-17.9.4": ("docs/planner.md", lambda: early_estimate_17_9_4("planner")),
    "early-estimate-17.9.4-engineering": ("docs/engineering.md", lambda: early_estimate_17_9_4("engineering")),
    "tco-17.9.3-network": ("docs/finance.md", tco_17_9_3_network),
    "book-17.9.1": ("docs/planner.md", book_17_9_1),
    "deepseek-state-without-ep": ("docs/activations.md", deepseek_state_without_ep),
    "zero3-llama3-70b": ("docs/activations.md", lambda: zero3_llama3_70b("activations")),
    "activations-limits": ("docs/activations.md", lambda: activations_limits("figure7")),
    "activations-figure1": ("docs/activations.md", lambda: activations_limits("figure1")),
    "state-embedding-share": ("docs/activations.md", state_embedding_share),
    "zero3-llama3-70b-finance": ("docs/finance.md", lambda: zero3_llama3_70b("finance")),
    "memory-models-finance": ("docs/finance.md", memory_models_finance),
    "shipped-checks": ("docs/finance.md", shipped_checks),
    "deepseek-fp8": ("docs/frameworks.md", deepseek_fp8),
    "deepseek-mfu-engineering": ("docs/engineering.md", lambda: deepseek_mfu("engineering")),
    "deepseek-mfu": ("docs/step_time.md", lambda: deepseek_mfu("step_time")),
    "book-17.9.2": ("docs/planner.md", book_17_9_2),
    "book-17.9.3": ("docs/planner.md", book_17_9_3),
    "book-17.9.4": ("docs/planner.md", book_17_9_4),
    "book-targets": ("docs/planner.md", book_targets),
    "measured-gpt3-days": ("docs/step_time.md", measured_gpt3_days),
    "measured-gpt3-days-engineering": ("docs/engineering.md", measured_gpt3_days),
    "book-real-models": ("docs/planner.md", book_real_models),
}

#: key -> (the doc holding the block, the function that writes its text)
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "validate-summary": ("docs/validation.md", validate_summary),
    "table-serving-points": ("docs/validation.md", serving_points_table),
    "table-serving-residuals": ("docs/validation.md", serving_residuals_table),
    "serving-load-models": ("docs/serving.md", serving_load_models),
    "table-step-time": ("docs/step_time.md", step_time_table),
    "table-mfu": ("docs/validation.md", mfu_table),
    "table-activations": ("docs/activations.md", activations_table),
    "table-op-sac": ("docs/activations.md", op_sac_table),
    "table-activations-fig7": ("docs/activations.md", activations_fig7_table),
    "table-activations-state": ("docs/activations.md", activations_state_table),
    "table-activations-deepseek": ("docs/activations.md", activations_deepseek_table),
    "plan-17.9.4-output": ("docs/engineering.md", lambda: plan_output("17.9.4-70b-h800.yaml")),
    "plan-serve-70b-chat-output": ("docs/engineering.md", lambda: plan_output("serve-70b-chat.yaml")),
    "table-17.9.6": ("docs/engineering.md", table_1796),
    "table-deepseek-serving": ("docs/engineering.md", table_deepseek_serving),
    "table-tco-17.9.4": ("docs/finance.md", lambda: tco_table("17.9.4-70b-h800.yaml")),
    "table-tco-serve-70b-chat": ("docs/finance.md", lambda: tco_table("serve-70b-chat.yaml")),
    "table-tco-serve-deepseek": ("docs/finance.md", lambda: tco_table("serve-deepseek-v3-h800.yaml")),
    "table-serving-sensitivity": ("docs/finance.md", serving_sensitivity_table),
    "table-compare-17.9.6": ("docs/serving-overview.md", compare_1796_table),
    "book-layouts-fail": ("docs/planner.md", book_layouts_fail),
    "table-deviations": ("docs/engineering.md", deviations_table),
}


def markers(key: str) -> tuple[str, str]:
    """The begin and end markers of block ``key``."""
    return f"<!-- block {key}:begin (scripts/doc_figures.py) -->", f"<!-- block {key}:end -->"


def block_in(text: str, key: str) -> str | None:
    """The text a doc holds between block ``key``'s markers (None without them)."""
    begin, end = markers(key)
    head, sep, rest = text.partition(begin + "\n")
    inner, sep2, _ = rest.partition(end)
    return inner if sep and sep2 else None


def render_block(key: str) -> str:
    """Block ``key``'s text as the doc should hold it (fenced: a command's output is shown as text)."""
    body = BLOCKS[key][1]().rstrip("\n")
    return body + "\n" if body.startswith(("|", "**", "- ")) else f"```text\n{body}\n```\n"


def write_blocks() -> list[str]:
    """Rewrite every block in its doc; the docs changed."""
    changed = []
    for key, (doc, _) in BLOCKS.items():
        path = ROOT / doc
        text = path.read_text(encoding="utf-8")
        if block_in(text, key) is None:
            raise SystemExit(f"{doc}: no {markers(key)[0]} ... {markers(key)[1]} block")
        new = render_block(key)
        if block_in(text, key) != new:
            begin, end = markers(key)
            head, _, rest = text.partition(begin + "\n")
            _, _, tail = rest.partition(end)
            path.write_text(f"{head}{begin}\n{new}{end}{tail}", encoding="utf-8")
            changed.append(doc)
    return changed


#: a number as the figures print it: sign, dollar, digits with thousands commas, decimals, exponent
_NUMBER = r"[-+−]?\$?\d(?:[\d,]*\d)?(?:\.\d+)?(?:e[+-]?\d+)?"


def _figure_pattern(text: str) -> re.Pattern:
    """A pattern for ``text`` with any numbers in place of its numbers and any white space between its words (a
    figure the doc holds from before a change, wrapped over lines): one group per run of white space."""
    words = []
    for word in text.split():
        parts = re.split(f"({_NUMBER})", word)
        words.append("".join(_NUMBER if i % 2 else re.escape(part) for i, part in enumerate(parts)))
    return re.compile(r"(\s+)".join(words))


def write_figures() -> tuple[list[str], list[str]]:
    """Rewrite every FIGURES text behind its marker where only its numbers moved, keeping the doc's line breaks;
    (the docs changed, the figures whose words changed too: paste those by hand)."""
    changed, by_hand = [], []
    for key, (doc, fn) in FIGURES.items():
        path, new = ROOT / doc, fn()
        text = path.read_text(encoding="utf-8")
        marker = f"<!-- figure {key} (scripts/doc_figures.py) -->"
        at = text.find(marker)
        if at < 0:
            by_hand.append(f"{doc}: no {marker}")
            continue
        start = at + len(marker)
        start += len(re.match(r"\s?(\*\*)?", text[start:]).group(0))
        m = _figure_pattern(new).match(text, start)
        if m is None:
            by_hand.append(f"{doc} ({key}): {new}")
            continue
        spaces, words = m.groups(), new.split()
        held = words[0] + "".join(s + w for s, w in zip(spaces, words[1:]))
        if held != m.group(0):
            path.write_text(text[:start] + held + text[m.end():], encoding="utf-8")
            changed.append(doc)
    return changed, by_hand


def main(argv: list[str] | None = None) -> None:
    for key, (doc, fn) in FIGURES.items():
        print(f"{key} ({doc}): {fn()}")
    if "--write" in (sys.argv[1:] if argv is None else argv):
        for doc in write_blocks():
            print(f"rewrote a block of {doc}")
        changed, by_hand = write_figures()
        for doc in changed:
            print(f"rewrote a figure of {doc}")
        for line in by_hand:
            print(f"words changed, paste by hand: {line}")


if __name__ == "__main__":
    main()
