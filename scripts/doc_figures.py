"""The figures the README and docs quote, computed now (tests/test_docs.py checks the docs still quote them).

    PYTHONPATH=. python scripts/doc_figures.py           # prints "key: text" lines; each text appears in its doc
    PYTHONPATH=. python scripts/doc_figures.py --write   # also rewrites every generated block (BLOCKS)

FIGURES: each figure is one short text a doc contains verbatim; when a change moves a number, the test fails
and names the doc and the new text to paste. BLOCKS: a longer text (a command's output, a table) that a doc
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


def book_examples() -> str:
    """How many of the book's worked-example records the examples tests run, and how many deviate
    (docs/engineering.md)."""
    import importlib
    import json

    records = sum(len(json.loads(f.read_text(encoding="utf-8")))
                  for f in sorted((ROOT / "tests" / "data" / "examples").glob("*.json")))
    import contextlib

    devs = {}
    for f in sorted((ROOT / "tests" / "examples").glob("test_examples_*.py")):
        with contextlib.redirect_stdout(io.StringIO()):  # the modules print their coverage when imported
            devs.update(getattr(importlib.import_module(f"tests.examples.{f.stem}"), "DEVIATIONS", {}))
    return (f"all {records} records of `../shared/spec/examples`; deviations: "
            f"{sum(len(v) for v in devs.values())} keys in {len(devs)} records")


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


def activations_deepseek_table() -> str:
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
    lines = [f"| activation setting | state GB | activations GB (peak) | total GB | fits {hbm:g} GB? |",
             "|---|---|---|---|---|"]
    for label, extra in settings:
        per = act.activations_per_gpu(m, **kw, **extra)["per_stage"]
        total, st, peak = max((s["total_bytes"] + a["peak_bytes"] + DEFAULT_OVERHEAD_GB * GB, s["total_bytes"],
                               a["peak_bytes"]) for s, a in zip(state, per))
        lines.append(f"| {label} | {st / GB:.1f} | {peak / GB:.1f} | {total / GB:.1f} | "
                     f"{'yes' if total < hbm * GB else 'no'} |")
    return "\n".join(lines)


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


def plan_17_9_4_line() -> str:
    """The 17.9.4 plan's "Recommended:" line as `workbook plan` prints it (docs/engineering.md)."""
    from workbook.planner.report import _plan_line

    return "Recommended: " + _plan_line(_plan("17.9.4-70b-h800.yaml")["recommended"])


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


def book_17_9_1(style: str) -> str:
    """What the search answers for 17.9.1: GPUs, days, billed and actual cost, reserved and on-demand, layout and
    memory (docs/planner.md: ``planner``; docs/engineering.md: ``engineering``)."""
    res, od = _book_search("17.9.1-llama-7b-h800.yaml"), _book_search("17.9.1-llama-7b-h800.yaml", price_basis="on_demand")
    ev = res.plans[0]
    q, qo, n = ev.q, od.plans[0].q, ev.screened.layout.num_gpus
    billed, actual = q["train_cost_target_usd"], q["train_cost_usd"]
    if style == "planner":
        return (f"{n} GPUs ({q['plan_nodes']:.0f} nodes), {q['train_days']:.4f} days, {usd(billed)} billed, "
                f"{usd(actual)} actual ({usd(qo['train_cost_target_usd'])} / {usd(qo['train_cost_usd'])} "
                f"on-demand), {_book_layout(ev)}, {q['zero_total_per_gpu_GB']:.2f} GB per GPU")
    price = q["gpu_hour_usd"]
    return (f"{n} H800 ({q['plan_nodes']:.0f} nodes), {q['train_days']:.4f} days; C = "
            f"{q['train_total_FLOPs']:.4g}; ".replace("e+", "e") +
            f"{billed / price:,.0f} GPU-h billed, {usd(billed)} / {usd(qo['train_cost_target_usd'])}, actual "
            f"{actual / price:,.0f} GPU-h = {usd(actual)} / {usd(qo['train_cost_usd'])}; "
            f"{_book_layout(ev)}; {q['zero_total_per_gpu_GB']:.2f} GB per GPU")


@lru_cache(maxsize=None)
def _book_17_9_2_at(mfu: float, target_days: float):
    """17.9.2 searched at the book's other MFU and a deadline it just meets (tests/planner/test_book_cases.py)."""
    from workbook.catalog import load_catalog
    from workbook.planner.request import load_request
    from workbook.planner.search import search

    catalog = load_catalog()
    req = load_request(ROOT / "catalog" / "requests" / "17.9.2-moe-h800.yaml", catalog)
    book = req.book.model_copy(update={"mfu": mfu})
    return search(req.model_copy(update={"book": book, "target_days": target_days}), catalog)


def book_17_9_2(style: str) -> str:
    """What the search answers for 17.9.2, and at the book's 256 GPUs with MFU 0.35 (docs/planner.md, docs/engineering.md)."""
    ev = _book_search("17.9.2-moe-h800.yaml").plans[0]
    q, lay = ev.q, ev.screened.layout
    other = _book_17_9_2_at(0.35, 131.7).plans[0]
    s = lay.shape
    head = f"{lay.num_gpus} GPUs" + (f" ({q['plan_nodes']:.0f} nodes)" if style == "engineering" else "")
    head += (f", {q['train_days']:.2f} days ({other.screened.layout.num_gpus} GPUs, {other.q['train_days']:.2f} days "
             f"at {other.q['train_mfu']:.2f}); ")
    layout = f"TP{s.tp} PP{s.pp} DP{lay.dp} ZeRO-{s.zero_stage}, " + ("no EP" if s.ep == 1 else f"EP {s.ep}")
    if style == "planner":
        return head + layout
    return (head + f"C = {q['train_total_FLOPs']:.4g}; ".replace("e+", "e") + layout +
            f", {q['zero_total_per_gpu_GB']:.2f} GB, comm share {q['comm_share_frac']:.3f}")


def book_17_9_3(style: str) -> str:
    """What the screen gives every layout of 17.9.3 that fits and meets the deadline, reserved and on-demand."""
    r = _book_search("17.9.3-1.8t-moe.yaml").feasible_screened[0]
    ro = _book_search("17.9.3-1.8t-moe.yaml", price_basis="on_demand").feasible_screened[0]
    gpu_h = r.cost_usd / _calc_gpu_price("h800", "reserved")
    if style == "planner":
        return (f"every screened layout: {r.layout.num_gpus:,} GPUs, {r.days:.2f} days, {gpu_h / 1e6:.2f}M GPU-h, "
                f"${r.cost_usd / 1e6:.1f}M / ${ro.cost_usd / 1e6:.1f}M")
    return (f"every layout that fits and meets the deadline: {r.layout.num_gpus:,} GPUs, {r.days:.3f} days, "
            f"{gpu_h / 1e6:.2f}M GPU-h, ${r.cost_usd / 1e6:.2f}M / ${ro.cost_usd / 1e6:.2f}M")


def _calc_gpu_price(gpu: str, basis: str) -> float:
    from workbook.catalog import load_catalog

    return getattr(load_catalog().gpus[gpu], f"price_{basis}_usd_per_gpu_hour")


def book_17_9_4() -> str:
    """17.9.4 searched with the book's models (`fidelity: book`): days, cost of the target days, layout."""
    ev = _book_search("17.9.4-70b-h800.yaml", fidelity="book").plans[0]
    q, lay = ev.q, ev.screened.layout
    s = lay.shape
    return (f"{q['train_days']:.2f} days, {usd(q['train_cost_target_usd'])} for "
            f"{_outcome('17.9.4-70b-h800.yaml').data['request']['target_days']:g} days; "
            f"TP{s.tp} PP{s.pp} DP{lay.dp} ZeRO-{s.zero_stage}")


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


#: key -> (the doc that quotes it, the function that computes it)
FIGURES: dict[str, tuple[str, Callable[[], str]]] = {
    "plan-17.9.4": ("README.md", plan_17_9_4),
    "plan-17.9.4-line": ("docs/engineering.md", plan_17_9_4_line),
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
    "llama3-interleaving": ("docs/step_time.md", llama3_interleaving),
    "book-examples": ("docs/engineering.md", book_examples),
    "op-sac-llama3-8b": ("docs/activations.md", op_sac_llama3_8b),
    "tco-default-17.9.6": ("docs/finance.md", tco_default_1796),
    "serving-storage": ("docs/finance.md", serving_storage),
    "serving-storage-planner": ("docs/planner.md", serving_storage_planner),
    "serving-sensitivity-words": ("docs/planner.md", serving_sensitivity_words),
    "early-estimate-17.9.4": ("docs/planner.md", lambda: early_estimate_17_9_4("planner")),
    "early-estimate-17.9.4-engineering": ("docs/engineering.md", lambda: early_estimate_17_9_4("engineering")),
    "tco-17.9.3-network": ("docs/finance.md", tco_17_9_3_network),
    "book-17.9.1": ("docs/planner.md", lambda: book_17_9_1("planner")),
    "book-17.9.1-engineering": ("docs/engineering.md", lambda: book_17_9_1("engineering")),
    "deepseek-state-without-ep": ("docs/activations.md", deepseek_state_without_ep),
    "book-17.9.2": ("docs/planner.md", lambda: book_17_9_2("planner")),
    "book-17.9.2-engineering": ("docs/engineering.md", lambda: book_17_9_2("engineering")),
    "book-17.9.3": ("docs/planner.md", lambda: book_17_9_3("planner")),
    "book-17.9.3-engineering": ("docs/engineering.md", lambda: book_17_9_3("engineering")),
    "book-17.9.4": ("docs/planner.md", book_17_9_4),
    "book-17.9.4-engineering": ("docs/engineering.md", book_17_9_4),
}

#: key -> (the doc holding the block, the function that writes its text)
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "validate-summary": ("docs/validation.md", validate_summary),
    "table-serving-points": ("docs/validation.md", serving_points_table),
    "table-serving-residuals": ("docs/validation.md", serving_residuals_table),
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
    return body + "\n" if body.startswith(("|", "**")) else f"```text\n{body}\n```\n"


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


def main(argv: list[str] | None = None) -> None:
    for key, (doc, fn) in FIGURES.items():
        print(f"{key} ({doc}): {fn()}")
    if "--write" in (sys.argv[1:] if argv is None else argv):
        for doc in write_blocks():
            print(f"rewrote a block of {doc}")


if __name__ == "__main__":
    main()
