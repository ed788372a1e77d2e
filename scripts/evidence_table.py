"""The evidence table of docs/evidence.md: every validation file (catalog/validation/*.yaml and pending/*.yaml)
with its publication, kind, point count, holdouts, GPUs, models, framework or engine, precision, and today's
in-sample result (`workbook validate` on the file; pending files cannot run yet).

    PYTHONPATH=. python scripts/evidence_table.py                          # print the table
    PYTHONPATH=. python scripts/evidence_table.py --write docs/evidence.md # replace the generated block
    PYTHONPATH=. python scripts/evidence_table.py --check docs/evidence.md # exit 1 when the block is stale
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from workbook.catalog.yamlio import load_yaml
from workbook.validation import DEFAULT_DIR, default_files, validate
from workbook.validation.load import _merge

BEGIN, END = "<!-- evidence-table:begin (scripts/evidence_table.py) -->", "<!-- evidence-table:end -->"


@dataclass
class FileRow:
    """One validation file summarised."""

    name: str
    publication: str
    status: str  # "runs" or "pending"
    kind: str
    points: int
    holdouts: int
    measures: set[str] = field(default_factory=set)
    gpus: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)
    stacks: set[str] = field(default_factory=set)
    precisions: set[str] = field(default_factory=set)
    passed: int | None = None
    mean_abs_error_pct: float | None = None


#: what a key measures, by prefix (the first match wins)
MEASURES = (("train_tokens_per_s", "tokens/s/GPU"), ("train_job_gpu_hours", "GPU-hours"), ("st_", "step"),
            ("state_", "memory"), ("act_", "memory"), ("plan_", "FLOP accounting"), ("train_", "FLOP accounting"),
            ("params_", "parameters"), ("srv_offline", "offline throughput"), ("srv_load_tokens", "load throughput"),
            ("srv_dis_", "disaggregated throughput"), ("srv_ttft", "TTFT"), ("srv_load_ttft", "TTFT"),
            ("srv_decode_step", "decode step"), ("srv_load_tpot", "TPOT"), ("srv_kv", "KV capacity"))


def measure_of(key: str) -> str:
    """A short name for what a point's quantity measures."""
    return next((label for prefix, label in MEASURES if key.startswith(prefix)), key)


def kind_of(key: str) -> str:
    """serving, parameters or training, from the quantity a point compares."""
    if key.startswith("srv_"):
        return "serving"
    if key.startswith("params_"):
        return "parameters"
    return "training"


def summarise(path: Path, status: str) -> FileRow:
    """A file's row from its YAML (each point's scenario merged over the file's) and, if it runs, today's run."""
    data, _ = load_yaml(path)
    points = data["points"]
    kinds = sorted({kind_of(p["key"]) for p in points})
    row = FileRow(name=(f"pending/{path.name}" if status == "pending" else path.name),
                  publication=data.get("publication") or path.stem, status=status, kind="+".join(kinds),
                  points=len(points), holdouts=sum(bool(p.get("holdout")) for p in points))
    for p in points:
        sc = _merge(data["scenario"], p.get("scenario") or {})
        row.measures.add(measure_of(p["key"]))
        row.gpus.add(sc.get("gpu", "?"))
        row.models.add(sc.get("model", "?"))
        if kind_of(p["key"]) == "serving":
            inf = sc.get("inference") or {}
            row.stacks.add(str(inf.get("engine", "vllm-0.10")))
            row.precisions.add(f"W {inf.get('weight_precision', 'bf16')} / KV {inf.get('kv_precision', 'bf16')}")
        elif kind_of(p["key"]) == "training":
            tr = sc.get("training") or {}
            row.stacks.add(str(tr.get("framework", "megatron")))
            prec = str(tr.get("precision", "bf16"))
            row.precisions.add(prec + (f" ({tr['fp8_recipe']})" if "fp8_recipe" in tr else ""))
    if status == "runs":
        results = validate([path])
        row.passed = sum(r.passed for r in results)
        row.mean_abs_error_pct = 100 * sum(abs(r.error_frac) for r in results) / len(results)
    return row


def rows() -> list[FileRow]:
    out = [summarise(p, "runs") for p in default_files()]
    out += [summarise(p, "pending") for p in sorted((DEFAULT_DIR / "pending").glob("*.yaml"))]
    return out


def _cell(values: set[str]) -> str:
    return ", ".join(sorted(values))


def table(all_rows: list[FileRow]) -> str:
    """The markdown block: the per-file table and the totals by kind and status."""
    lines = ["| file | publication | kind | points (holdout) | measures | GPUs | models | framework / engine | precision "
             "| today |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in all_rows:
        today = ("pending" if r.status == "pending"
                 else f"{r.passed}/{r.points} pass, mean abs error {r.mean_abs_error_pct:.1f} %")
        lines.append(f"| {r.name} | {r.publication} | {r.kind} | {r.points} ({r.holdouts}) | {_cell(r.measures)} | "
                     f"{_cell(r.gpus)} | "
                     f"{_cell(r.models)} | {_cell(r.stacks)} | {_cell(r.precisions)} | {today} |")
    lines += ["", "| kind | status | files | publications | points | holdouts |", "|---|---|---|---|---|---|"]
    for kind in ("training", "serving", "parameters"):
        for status in ("runs", "pending"):
            sel = [r for r in all_rows if r.kind == kind and r.status == status]
            if sel:
                lines.append(f"| {kind} | {status} | {len(sel)} | {len({r.publication for r in sel})} | "
                             f"{sum(r.points for r in sel)} | {sum(r.holdouts for r in sel)} |")
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str, begin: str = BEGIN, end: str = END) -> str:
    """``text`` with the part between the markers replaced by ``block`` (scripts/accuracy_table.py uses it
    with its own markers); ValueError when the markers are not there."""
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not (sep and sep2):
        raise ValueError(f"no {begin} ... {end} block")
    return f"{head}{begin}\n{block}{end}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--write", type=Path, help="replace the generated block of this markdown file")
    group.add_argument("--check", type=Path, help="exit 1 when this markdown file's block is not today's table")
    args = ap.parse_args(argv)
    block = table(rows())
    target = args.write or args.check
    if target is None:
        print(block, end="")
        return 0
    text = target.read_text(encoding="utf-8")
    new = replace_block(text, block)
    if args.check:
        if new != text:
            print(f"{target}: the evidence table is stale; run scripts/evidence_table.py --write {target}")
            return 1
        return 0
    target.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
