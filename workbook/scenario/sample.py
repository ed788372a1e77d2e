"""Seeded random valid scenarios: for engine-parity tests, property tests and benchmarks.

Covers dense and MoE models, every GPU of the catalogue, every ZeRO stage and recompute mode, both
time models (step model for odd i, MFU given for even i) and the step model's layout choices (CP,
pipeline schedule, virtual stages, sequence parallelism, FlashAttention, dropout, overlaps). The
step-model fields come from a second random stream, so the other fields stay those of earlier versions.
"""

from __future__ import annotations

import random
from typing import get_args

from workbook.scenario.model import OnOff, Optimizer, PipelineSchedule, Precision, Recompute, Scenario


def random_scenarios(catalog, n: int, seed: int = 0) -> list[Scenario]:
    """*n* valid scenarios; scenario i uses GPU i mod #GPUs, ZeRO stage i mod 4, recompute i mod 3."""
    rng = random.Random(seed)
    rng_step = random.Random(f"{seed}-step")
    gpus = sorted(catalog.gpus)
    models = sorted(catalog.models)
    moe = [m for m in models if catalog.models[m].moe]
    dense = [m for m in models if not catalog.models[m].moe]
    recompute = list(get_args(Recompute))
    out = []
    for i in range(n):
        gpu_id = gpus[i % len(gpus)]
        gpu = catalog.gpus[gpu_id]
        model_id = rng.choice(moe if i % 3 == 0 else dense)
        model = catalog.models[model_id]
        tp = rng.choice([t for t in (1, 2, 4, 8) if model.n_heads % t == 0 and t <= gpu.gpus_per_node])
        pp = rng.choice([p for p in (1, 2, 4) if model.layers % p == 0])
        dp = rng.choice([1, 2, 4, 8, 16, 32, 64])
        ep = rng.choice([e for e in (1, 2, 4, 8) if dp % e == 0]) if model.moe else 1
        bases = [b for b in ("on_demand", "reserved", "spot") if gpu.price_usd_per_gpu_hour(b) is not None]
        step = _step_fields(rng_step, i, dp, pp, model.layers // pp)
        precisions = [p for p in get_args(Precision) if p != "fp8" or gpu.fp8_dense_TFLOPS]
        out.append(Scenario(
            name=f"random-{i:03d}",
            model=model_id,
            gpu=gpu_id,
            training={
                "tokens": rng.choice([1e11, 5e11, 1e12, 2e12, 1.5e13]),
                "seq_len": rng.choice([1024, 2048, 4096, 8192]),
                "micro_batch": rng.choice([1, 2, 4]),
                "grad_accum": rng.choice([1, 4, 8, 16, 32]),
                "precision": rng.choice(precisions),
                "optimizer": rng.choice(list(get_args(Optimizer))),
                "zero_stage": i % 4,
                "recompute": recompute[i % len(recompute)],
                "num_gpus": tp * pp * dp,
                "tp": tp,
                "pp": pp,
                "ep": ep,
                "mfu": round(rng.uniform(0.2, 0.6), 3),
                "target_days": rng.choice([7, 30, 60, 90]),
                "spare_fraction": rng.choice([0.0, 0.05, 0.1]),
                **step,
            },
            inference={
                "prompt_tokens": rng.choice([128, 1024, 4096]),
                "output_tokens": rng.choice([64, 256, 1024]),
                "batch": rng.choice([1, 8, 32, 128]),
                "weight_precision": rng.choice(["bf16", "fp8", "int8", "int4"]),
                "kv_precision": rng.choice(["bf16", "fp8", "int8"]),
                "tp": rng.choice([1, 2, 4, 8]),
            },
            cost={
                "price_basis": rng.choice(bases),
                "budget_usd": rng.choice([None, 1e6, 5e7]),
            },
        ))
    return out


def _step_fields(rng: random.Random, i: int, dp: int, pp: int, layers_per_stage: int) -> dict:
    """The step model's inputs: CP divides DP (N and EP stay valid), v > 1 only when interleaved."""
    schedule = rng.choice(list(get_args(PipelineSchedule)))
    return {
        "time_model": "step" if i % 2 else "mfu",
        "cp": rng.choice([c for c in (1, 1, 2, 4) if dp % c == 0]),
        "pipeline_schedule": schedule,
        "virtual_stages": rng.choice([1, 2, 3]) if schedule == "interleaved" else 1,
        "sequence_parallel": rng.choice(list(get_args(OnOff))),
        "flash_attention": rng.choice(list(get_args(OnOff))),
        "dropout": rng.choice(list(get_args(OnOff))),
        "last_stage_layers": rng.choice([None, max(1, layers_per_stage - 1)]) if pp > 1 else None,
        "dp_overlap_frac": rng.choice([0.0, 0.5, 1.0]),
        "ep_overlap_frac": rng.choice([0.0, 0.5]),
        "cp_overlap_frac": rng.choice([0.5, 1.0]),
        "zero3_overlap_frac": rng.choice([0.0, 1.0]),
    }
