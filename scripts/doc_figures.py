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


def cash_flow_17_9_4() -> str:
    """The Cash Flow sheet of the 17.9.4 request's plan: the rent by month, then each fiscal year (docs/finance.md)."""
    from workbook.planner.cash_flow_report import usd

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

    return "; ".join([one("training"), one("serving")])


#: key -> (the doc that quotes it, the function that computes it)
FIGURES: dict[str, tuple[str, Callable[[], str]]] = {
    "plan-17.9.4": ("README.md", plan_17_9_4),
    "plan-17.9.4-line": ("docs/engineering.md", plan_17_9_4_line),
    "compare-17.9.4": ("docs/engineering.md", compare_17_9_4),
    "cover-17.9.4": ("docs/planner.md", cover_17_9_4),
    "compare-losers-17.9.4": ("docs/engineering.md", compare_losers_17_9_4),
    "plan-mixtral": ("docs/engineering.md", plan_mixtral),
    "tco-17.9.4": ("docs/finance.md", tco_17_9_4),
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
    "llama3-interleaving": ("docs/step_time.md", llama3_interleaving),
    "book-examples": ("docs/engineering.md", book_examples),
}

#: key -> (the doc holding the block, the function that writes its text)
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "validate-summary": ("docs/validation.md", validate_summary),
    "table-serving-points": ("docs/validation.md", serving_points_table),
    "table-step-time": ("docs/step_time.md", step_time_table),
    "table-mfu": ("docs/validation.md", mfu_table),
    "table-activations": ("docs/activations.md", activations_table),
    "plan-17.9.4-output": ("docs/engineering.md", lambda: plan_output("17.9.4-70b-h800.yaml")),
    "plan-serve-70b-chat-output": ("docs/engineering.md", lambda: plan_output("serve-70b-chat.yaml")),
    "table-17.9.6": ("docs/engineering.md", table_1796),
    "table-deepseek-serving": ("docs/engineering.md", table_deepseek_serving),
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
