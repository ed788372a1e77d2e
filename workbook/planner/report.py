"""The plan as text for a terminal (``workbook plan``); ``--json`` prints ``Outcome.data`` instead."""

from __future__ import annotations

from typing import Any, TextIO


def usd(v: float | None) -> str:
    """Whole dollars, the sign before the dollar sign (-$4,937,053); "-" for no value."""
    return "-" if v is None else f"{'-' if v < 0 else ''}${abs(v):,.0f}"


def _num(v: float, unit: str) -> str:
    if unit == "USD":
        return usd(v)
    if unit == "fraction":
        return f"{v * 100:.1f} %"
    return f"{v:,.6g} {unit}"


def _plan_line(p: dict[str, Any]) -> str:
    return (f"{p['gpu']} x {p['num_gpus']} ({p['nodes']:.0f} nodes): {p['layout']}; {p['train_days']:.2f} days, "
            f"{usd(p['train_cost_usd'])}, {p['memory_per_gpu_GB']:.1f} GB/GPU "
            f"(headroom {p['memory_headroom_GB']:.1f} GB), MFU {p['mfu']:.3f}")


def _estimate(est: dict[str, dict], out: TextIO) -> None:
    print("Early estimate (spec 17.9.4 quick path: steps 1, 2, 4, 5, 10, by the book's rules, not the request's "
          "constraints):", file=out)
    for g, e in est.items():
        print(f"  {g}: P = {e['P_total']:.4g}, D = {e['D_tokens']:.4g} tokens, C = {e['C_total_FLOPs']:.4g} FLOPs, "
              f"MFU {e['MFU']:.2f}", file=out)
        print(f"      N_mem {e['N_mem']:.0f}, N_time {e['N_time']:.0f} -> {e['N_chosen']:.0f} GPUs "
              f"({e['nodes']:.0f} nodes), TP {e['TP']:.0f} x PP {e['PP']:.0f} x DP {e['DP']:.0f}; "
              f"{e['T_actual_days']:.2f} days; {usd(e['cost_target_USD'])} for the target days "
              f"({usd(e['cost_actual_USD'])} for the actual days) at ${e['gpu_hour_usd']:.2f}/GPU-h", file=out)


def print_report(data: dict[str, Any], out: TextIO) -> None:
    r = data["request"]
    print(f"Plan {r['request_id']}: {r['title']} (requester {r['requester']}, cost centre {r['cost_centre']})",
          file=out)
    budget = usd(r["budget_usd"]) if r["budget_usd"] else "no budget"
    if r["tokens"]:
        print(f"  train {r['tokens']:.4g} tokens in {r['target_days']:g} days, {budget}, "
              f"GPUs {', '.join(r['candidate_gpus'])}, {r['price_basis']} prices", file=out)
    if data.get("early_estimate"):
        _estimate(data["early_estimate"], out)
        if (data.get("estimate_column") or {}).get("reason"):
            print(f"      no workbook column for the estimate: {data['estimate_column']['reason']}", file=out)
    t = data["training"]
    models = " (book fidelity: memory_model book, time_model mfu)" if r.get("fidelity") == "book" else ""
    print(f"Training search{models}: {t['status']}", file=out)
    if "search" in t:
        s = t["search"]
        print(f"  {s['layouts']:,} layouts ({s['shapes']:,} shapes x DP) on {', '.join(s['layout_rules'])}; "
              f"{s['screen_step_calls']:,} screened for time, {s['evaluated']} through the full calculation, "
              f"{s['passed']} passed; {s['seconds']:.1f} s", file=out)
    if t.get("recommended"):
        p = t["recommended"]
        print(f"Recommended: {_plan_line(p)}", file=out)
        if p.get("budget_headroom_usd") is not None:
            print(f"  budget headroom {usd(p['budget_headroom_usd'])} (target-days cost "
                  f"{usd(p['train_cost_target_usd'])}); warnings: {', '.join(p['warnings']) or 'none'}", file=out)
        if t.get("runner_up"):
            print(f"  runner-up on {t['runner_up']['gpu']}: {_plan_line(t['runner_up'])}", file=out)
        for g, alt in t.get("alternatives", {}).items():
            print(f"  alternative on {g}: " + (_plan_line(alt) if alt else "no layout passes"), file=out)
    if t.get("infeasible"):
        inf = t["infeasible"]
        print(f"No layout passes every check: {inf['why_text']}.", file=out)
        print("Smallest changes that would give a plan (each alone):", file=out)
        for c in inf["changes"]:
            mark = "confirmed" if c["confirmed"] else "NOT confirmed by the full calculation"
            print(f"  {c['field']}: {c['from']:,.6g} -> {c['to']:,.6g} ({c['change_frac'] * 100:+.1f} %), {mark}",
                  file=out)
        for g in inf["other_gpus"]:
            print(f"  another GPU: {g['gpu']} x {g['num_gpus']}, {g['train_days']:.2f} days, "
                  f"{usd(g['train_cost_usd'])}", file=out)
        if not inf["changes"] and not inf["other_gpus"]:
            print("  none found: no single change of days, budget or tokens, nor another catalogue GPU, gives a "
                  "plan (the rejections below say which checks fail)", file=out)
    if t.get("compared"):
        from workbook.planner.compare import report_lines

        for line in report_lines(t["compared"], r["price_basis"]):
            print(line, file=out)
    if t.get("rejected"):
        print("Rejected (check: count, closest miss):", file=out)
        for row in t["rejected"]:
            c = row["closest"]
            print(f"  {row['check']}: {row['count']:,}; closest {c['gpu']} {c['layout']}: "
                  f"{_num(c['value'], c['unit'])} vs {_num(c['limit'], c['unit'])} "
                  f"({c['excess_frac'] * 100:+.3g} %)", file=out)
        for g, rules in t["search"]["layout_rules"].items():
            for k, v in rules.items():
                print(f"  layout rule {k} on {g}: {v['count']:,} (e.g. {v['example']})", file=out)
    sv = data["serving"]
    if "load" in sv:
        ld = sv["load"]
        rate = (f"{ld['requests_per_s']:g} requests/s" if ld.get("requests_per_s") else
                f"{ld['concurrency']} concurrent" if ld.get("concurrency") else
                f"a static batch of {ld['static_batch']} requests run together")
        print(f"Serving load: {rate}, {ld['prompt_tokens']} prompt / {ld['output_tokens']} output tokens, "
              f"TTFT <= {ld['ttft_ms']:g} ms, TPOT <= {ld['tpot_ms']:g} ms", file=out)
    print(f"Serving: {sv['status']}", file=out)
    if "search" in sv:
        _serving(sv, out)


def _serving_line(p: dict[str, Any]) -> str:
    if p.get("kind") == "disaggregated":
        return (f"{p['gpu']} x {p['num_gpus']}, disaggregated: {p['prefill_instances']:.0f} prefill instance"
                f"{'s' if p['prefill_instances'] != 1 else ''} of {p['prefill_gpus_per_instance']:.0f} GPUs + "
                f"{p['decode_instances']:.0f} decode instance{'s' if p['decode_instances'] != 1 else ''} of "
                f"{p['decode_gpus_per_instance']:.0f} ({p['layout']}), {p['decode_batch_per_rank']:.0f} requests per "
                f"decode rank; TTFT {p['ttft_ms']:,.0f} ms, TPOT {p['tpot_ms']:.1f} ms; {usd(p['usd_per_month'])}/month, "
                f"${p['usd_per_1M_tokens']:.3f} per 1M output tokens at ${p['gpu_hour_usd']:.2f}/GPU-h")
    carries = (f"each running {p['group_batch']:,.0f} of the batch together (at most {p['max_group_batch']:,.0f}), "
               f"{p['static_wall_s']:,.3g} s to the last token" if p.get("static_wall_s") is not None else
               f"each carrying {p['group_rate_rps']:.3g} of its {p['max_group_rate_rps']:.3g} requests/s")
    return (f"{p['gpu']} x {p['num_gpus']}: {p['replicas']} replica{'s' if p['replicas'] != 1 else ''} of {p['layout']}, "
            f"{carries}; TTFT {p['ttft_ms']:,.0f} ms, "
            f"TPOT {p['tpot_ms']:.1f} ms; {usd(p['usd_per_month'])}/month, ${p['usd_per_1M_tokens']:.3f} per 1M output "
            f"tokens at ${p['gpu_hour_usd']:.2f}/GPU-h")


def _serving(sv: dict[str, Any], out: TextIO) -> None:
    """The serving search's plan, alternatives, rejections and, for an infeasible load, the advice."""
    s = sv["search"]
    print(f"  {s['layouts']} co-located layouts and {s['disaggregated']} disaggregated candidates (engine "
          f"{sv['engine']}, disaggregation {sv['disaggregation']}), {s['plans']} carry the load, {s['rejected']} "
          "rejected", file=out)
    if sv.get("recommended"):
        rec = sv["recommended"]
        print(f"Recommended serving plan ({rec['kind']}): {_serving_line(rec)}", file=out)
        other = sv.get("other_kind")
        if other:
            print(f"  best {other['kind']} plan: {_serving_line(other)}", file=out)
        elif sv["disaggregation"] == "auto":
            kind = "co-located" if rec["kind"] == "disaggregated" else "disaggregated"
            print(f"  best {kind} plan: none carries the load", file=out)
        for g, alt in sv["alternatives"].items():
            print(f"  alternative on {g}: " + (_serving_line(alt) if alt else "no layout carries the load"), file=out)
    if sv.get("infeasible"):
        inf = sv["infeasible"]
        print("No serving layout carries the load. Smallest changes that would give a plan (each alone, confirmed "
              "by searching again):", file=out)
        for c in inf["changes"]:
            print(f"  {c['field']}: {c['from']:,.6g} -> {c['to']:,.6g}: {c['gpu']} x {c['num_gpus']} ({c['layout']}), "
                  f"{usd(c['usd_per_month'])}/month", file=out)
        for g in inf["other_gpus"]:
            print(f"  another GPU: {g['gpu']} x {g['num_gpus']} ({g['layout']}), {usd(g['usd_per_month'])}/month",
                  file=out)
        if not inf["changes"] and not inf["other_gpus"]:
            print("  none found: no target change alone or catalogue GPU gives a plan", file=out)
    if sv["rejected"]:
        print("Serving layouts rejected (check: count, closest miss):", file=out)
        for row in sv["rejected"]:
            c = row["closest"]
            print(f"  {row['check']}: {row['count']}; closest {c['layout']}: {_num(c['value'], c['unit'])} vs "
                  f"{_num(c['limit'], c['unit'])} ({c['excess_frac'] * 100:+.3g} %; {c['detail']})", file=out)
    for k, v in s["layout_rules"].items():
        print(f"  layout rule {k}: {v['count']} (e.g. {v['example']})", file=out)
