"""A SimpleNamespace context for the part-A calc modules: LLaMA-7B on an H800-like GPU."""

from __future__ import annotations

from types import SimpleNamespace

from workbook.calc.base import Context
from workbook.scenario.model import NetworkInputs, Scenario

LLAMA7B = SimpleNamespace(
    layers=32, d_model=4096, d_ff=11008, n_heads=32, n_kv_heads=32, head_dim=128, vocab=32000,
    tied_embeddings=False, ffn="swiglu", attention="mha", qkv_bias=False, norm="rmsnorm",
    norm_params_per_layer=8192, q_lora_rank=None, kv_lora_rank=None, qk_rope_head_dim=None,
    qk_nope_head_dim=None, v_head_dim=None, moe=False, n_routed_experts=None, top_k=None,
    n_shared_experts=0, expert_d_ff=None, n_dense_layers=0, dense_d_ff=None,
    published_params_total=6_738_415_616, published_params_active=None, hypothetical=False,
)
H800 = SimpleNamespace(
    hbm_GB=80, hbm_device_MiB=81559, hbm_bw_GBps=3350, bf16_dense_TFLOPS=989.5, fp16_dense_TFLOPS=989.5, fp8_dense_TFLOPS=1979,
    int8_dense_TOPS=1979, fp4_dense_TFLOPS=None, fp32_TFLOPS=67, nvlink_bw_GBps=400, nvlink_links=8,
    pcie_gen=5, pcie_bw_GBps=64, tdp_W=700, sm_count=132, gpus_per_node=8, memory_kind="HBM3",
)
DEFAULTS = {"hbm_efficiency": 0.9, "encoding_efficiency": 0.97, "cpu_dram_bw_GBps": 50, "nvme_bw_GBps": 7}
NETWORK = dict(nic_Gbps=400, nics_per_node=8, network_efficiency=0.8, nvlink_efficiency=0.8,
               nvlink_direction_factor=1, pcie_direction_factor=1)


def make_context(model=LLAMA7B, gpu=H800, **sections) -> Context:
    """Context with a resolved scenario (network filled in); sections override training/inference."""
    s = Scenario(name="t", model="m", gpu="g", network=NetworkInputs(**NETWORK), **sections)
    return Context(s=s, gpu=gpu, model=model, defaults=dict(DEFAULTS))


def run(ctx: Context, upto: str) -> dict[str, float]:
    """Run the part-A modules (and the Plan block the layout rows come from) in data-flow order up to
    and including ``upto``."""
    import importlib
    import math

    for name in ("hardware", "models", "plan", "train_memory", "activations", "act_stages", "sharded_state", "zero",
                 "kv_cache"):
        mod = importlib.import_module(f"workbook.calc.{name}")
        values = mod.compute(ctx)
        assert set(values) == {q.name for q in mod.QUANTITIES}, name
        for k, v in values.items():
            v = float(v)
            assert math.isfinite(v), (name, k)
            ctx.q[k] = v
        if name == upto:
            break
    return ctx.q
