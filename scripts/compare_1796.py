"""Spec 17.9.6 (H800 vs H20 serving LLaMA-3-70B BF16, TP 4, 4K prompt, 512 output) with the book's
roofline and with the measured-engine model, side by side: the README's comparison table.

    PYTHONPATH=. .venv/bin/python scripts/compare_1796.py

The shipped cases (catalog/scenarios/17.9.6-70b-inference-{h800,h20}.yaml) select the book model; the
engine columns are the same scenarios with ``inference.serving_model: engine`` (profile vllm-0.10,
offline load: the group at its offline request rate, prefill included).
"""

from __future__ import annotations

from pathlib import Path

from workbook.calc import compute
from workbook.catalog import load_catalog
from workbook.scenario import load_scenarios

ROOT = Path(__file__).resolve().parents[1]
FILES = {"H800": "17.9.6-70b-inference-h800.yaml", "H20": "17.9.6-70b-inference-h20.yaml"}

#: (label, book key, engine key, format)
ROWS = (
    ("decode step at batch 32 (ms)", "tpot_ms", "srv_decode_step_ms", "{:,.1f}"),
    ("TTFT, one 4K prompt (ms)", "ttft_ms", "srv_ttft_idle_ms", "{:,.0f}"),
    ("KV capacity (full-context requests)", "max_batch_per_replica", "srv_kv_requests", "{:,.0f}"),
    ("output tok/s per GPU (book: batch 32; engine: offline, prefill included)", "srv_tokens_per_s_per_gpu_in_use",
     "srv_tokens_per_s_per_gpu_in_use", "{:,.0f}"),
    ("$ per 1M output tokens", "infer_usd_per_1M_tokens", "infer_usd_per_1M_tokens", "{:,.2f}"),
)


def columns() -> dict[str, dict[str, float]]:
    """{'H800 book': results, 'H800 engine': results, ...}."""
    catalog = load_catalog()
    out: dict[str, dict[str, float]] = {}
    for gpu, name in FILES.items():
        (sc,) = load_scenarios([ROOT / "catalog" / "scenarios" / name])
        out[f"{gpu} book"] = compute(sc, catalog)
        eng = sc.model_copy(update={"inference": sc.inference.model_copy(update={"serving_model": "engine"})})
        out[f"{gpu} engine"] = compute(eng, catalog)
    return out


def table() -> str:
    cols = columns()
    names = ["H800 book", "H800 engine", "H20 book", "H20 engine"]
    lines = ["| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, book_key, engine_key, fmt in ROWS:
        cells = [fmt.format(cols[n][book_key if n.endswith("book") else engine_key]) for n in names]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
