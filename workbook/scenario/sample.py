"""Seeded random valid scenarios: for engine-parity tests, property tests and benchmarks.

Covers dense and MoE models, every GPU of the catalogue, every ZeRO stage and recompute mode, both
memory models (each with every ZeRO stage), context parallelism, expert TP, sequence parallelism,
FlashAttention, dropout, all three pipeline schedules, and the three time models (step model for odd i,
MFU given for even i, a measured TFLOP/s for every fifth i) with the step model's own inputs (last-stage
layers, overlaps) from a second random stream and the MFU peak basis and measured rate from a third, so
the other fields stay those of earlier versions. The serving-engine inputs
(serving model, engine profile, serving EP, memory fraction, load, targets, measured throughput)
come from a fourth stream, the TCO inputs (horizon, storage price, staff, support) from a fifth, the FP8 recipe
(and the other training-physics inputs of issue 21) from a sixth.
"""

from __future__ import annotations

import random
from typing import get_args

from workbook.scenario.model import MemoryModel, Optimizer, Precision, Recompute, Scenario


def random_scenarios(catalog, n: int, seed: int = 0) -> list[Scenario]:
    """*n* valid scenarios; scenario i uses GPU i mod #GPUs, ZeRO stage i mod 4, recompute i mod 3 (op_selective
    on every fourth dense GQA/MHA model),
    memory model (i div 4) mod 2 (so both models meet every ZeRO stage)."""
    rng = random.Random(seed)
    rng_step = random.Random(f"{seed}-step")
    rng_mfu = random.Random(f"{seed}-mfu")
    rng_srv = random.Random(f"{seed}-serving")
    rng_tco = random.Random(f"{seed}-tco")
    rng_phys = random.Random(f"{seed}-physics")
    engines = sorted(p.id for p in catalog.engines.profiles) if catalog.engines is not None else ["vllm-0.10"]
    gpus = sorted(catalog.gpus)
    models = sorted(catalog.models)
    moe = [m for m in models if catalog.models[m].moe]
    dense = [m for m in models if not catalog.models[m].moe]
    # op_selective (dense GQA/MHA models only) replaces the mode of every fourth dense scenario
    recompute = [r for r in get_args(Recompute) if r != "op_selective"]
    memory_models = list(get_args(MemoryModel))
    out = []
    for i in range(n):
        gpu_id = gpus[i % len(gpus)]
        gpu = catalog.gpus[gpu_id]
        model_id = rng.choice(moe if i % 3 == 0 else dense)
        model = catalog.models[model_id]
        tp = rng.choice([t for t in (1, 2, 4, 8) if model.n_heads % t == 0 and t <= gpu.gpus_per_node])
        pp = rng.choice([p for p in (1, 2, 4) if model.layers % p == 0])
        dp = rng.choice([1, 2, 4, 8, 16, 32, 64])
        cp = rng.choice([1, 1, 2])
        # EP inside DP x CP (then any expert TP divides the rest)
        ep = rng.choice([e for e in (1, 2, 4, 8) if (dp * cp) % e == 0]) if model.moe else 1
        etp = rng.choice([None, 1]) if model.moe else None
        interleaved = pp > 1 and rng.random() < 0.5
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
                "precision": (precision := rng.choice(precisions)),
                "optimizer": rng.choice(list(get_args(Optimizer))),
                "zero_stage": i % 4,
                "recompute": "op_selective" if i % 4 == 3 and not model.moe and model.attention != "mla"
                else recompute[i % len(recompute)],
                "num_gpus": tp * cp * pp * dp,
                "tp": tp,
                "pp": pp,
                "ep": ep,
                "cp": cp,
                "etp": etp,
                "memory_model": memory_models[(i // 4) % len(memory_models)],
                "sequence_parallel": rng.choice(["on", "off"]),
                "flash_attention": rng.choice(["on", "off"]),
                "dropout": rng.choice(["on", "off"]),
                "pipeline_schedule": "interleaved" if interleaved else rng_step.choice(["1f1b", "zero_bubble"]),
                "virtual_stages": rng.choice([2, 3]) if interleaved else 1,
                "mfu": round(rng.uniform(0.2, 0.6), 3),
                "target_days": rng.choice([7, 30, 60, 90]),
                "spare_fraction": rng.choice([0.0, 0.05, 0.1]),
                **step,
                **_mfu_fields(rng_mfu, i, step["time_model"], gpu, fp8=precision == "fp8"),
                **_physics_fields(rng_phys, fp8=precision == "fp8", zero3=i % 4 == 3),
            },
            inference={
                "prompt_tokens": rng.choice([128, 1024, 4096]),
                "output_tokens": rng.choice([64, 256, 1024]),
                "batch": rng.choice([1, 8, 32, 128]),
                "weight_precision": rng.choice(["bf16", "fp8", "int8", "int4"]),
                "kv_precision": rng.choice(["bf16", "fp8", "int8"]),
                "tp": rng.choice([1, 2, 4, 8]),
                **_serving_fields(rng_srv, i, model, engines),
            },
            cost={
                "price_basis": rng.choice(bases),
                "budget_usd": rng.choice([None, 1e6, 5e7]),
                **_tco_fields(rng_tco),
            },
        ))
    return out


def _physics_fields(rng: random.Random, fp8: bool, zero3: bool) -> dict:
    """The issue-21 training inputs (a stream of their own): the FP8 recipe of an FP8 run (blank = delayed),
    resharding after the forward under ZeRO-3, the training framework profile."""
    recipe = rng.choice([None, "delayed", "current", "rowwise", "blockwise"])
    reshard = rng.choice(["on", "off"])
    framework = rng.choice(["megatron", "megatron", "deepspeed", "fsdp2_eager", "fsdp2_compile"])
    return {"fp8_recipe": recipe if fp8 else None, "reshard_after_forward": reshard if zero3 else "on",
            "framework": framework}


def _tco_fields(rng: random.Random) -> dict:
    """The owned-cluster inputs of the TCO sheet (a stream of their own): a part-year horizon, a storage price,
    staff and support, or the defaults."""
    return {
        "depreciation_years": rng.choice([None, 2.5, 5.0]),
        "storage_usd_per_TB_month": rng.choice([None, 10.0]),
        "staff_usd_per_year": rng.choice([0.0, 2e6]),
        "support_frac_of_capex_per_year": rng.choice([0.0, 0.08]),
    }


def _mfu_fields(rng: random.Random, i: int, time_model: str, gpu, fp8: bool) -> dict:
    """The MFU peak basis (an FP8 run: the FP8 peak for i divisible by 4, else BF16) and a measured hardware
    rate (typed for every fifth scenario, which uses it, and for some others, which do not)."""
    measured = i % 5 == 4
    rate = round(rng.uniform(0.2, 0.6) * float(gpu.bf16_dense_TFLOPS), 1)
    basis = ("bf16", "precision")[i % 4 == 0] if fp8 else rng.choice(["bf16", "precision"])
    return {
        "mfu_peak": basis,
        "time_model": "measured" if measured else time_model,
        "measured_TFLOPS_per_gpu": rate if measured or rng.random() < 0.3 else None,
    }


def _serving_fields(rng: random.Random, i: int, model, engines: list[str]) -> dict:
    """The serving-engine inputs: engine model for three scenarios in four, every profile in turn;
    disaggregated pools for one scenario in three."""
    experts = int(model.n_routed_experts or 0) if model.moe else 0
    return {
        "serving_model": "book" if i % 4 == 3 else "engine",
        "engine": engines[i % len(engines)],
        "ep": rng.choice([e for e in (1, 2, 4, 8) if experts % e == 0]) if experts else 1,
        "memory_fraction": rng.choice([None, None, 0.8, 0.95]),
        "arrival_rate_rps": rng.choice([None, 0.5, 2.0, 8.0]),
        "ttft_target_ms": rng.choice([None, 200.0, 5000.0]),
        "tpot_target_ms": rng.choice([None, 20.0, 200.0]),
        "measured_tokens_per_s_per_gpu": rng.choice([None, None, None, 500.0]),
        "redundant_experts": rng.choice([0, 8]) if experts else 0,
        # blank (the engine profile's) every fourth; the draw is made either way (same random stream)
        "ep_overlap_frac": [rng.choice([0.0, 0.5, 1.0]), None][i % 4 == 0],
        # disaggregated pools (drawn from i, so the random stream above is unchanged)
        "disaggregated": "on" if i % 3 == 1 else "off",
        "prefill_ep": [None, 1, 2, 8][i % 4] if not experts or experts % 8 == 0 else None,
        "cache_hit_frac": [0.0, 0.3, 0.6][i % 3],
        "offline_requests": [None, 1, 700, 5000, 10**7][i % 5],
        "output_lengths": ["exponential", "fixed"][i % 2],
    }


def _step_fields(rng: random.Random, i: int, dp: int, pp: int, layers_per_stage: int) -> dict:
    """The step model's own inputs (the layout fields are drawn above)."""
    return {
        "time_model": "step" if i % 2 else "mfu",
        "last_stage_layers": rng.choice([None, max(1, layers_per_stage - 1)]) if pp > 1 else None,
        "dp_overlap_frac": rng.choice([0.0, 0.5, 1.0]),
        "ep_overlap_frac": rng.choice([0.0, 0.5]),
        "cp_overlap_frac": rng.choice([0.5, 1.0]),
        "zero3_overlap_frac": rng.choice([0.0, 1.0]),
    }
