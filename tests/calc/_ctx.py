"""A hand-built context for the Plan/Comm/Storage sheets: LLaMA-7B-like model on an H800-like GPU."""

from __future__ import annotations

from types import SimpleNamespace

from workbook.calc.base import Context
from workbook.scenario.model import TrainingInputs

P = 6.74e9
PEAK = 989.5


def make_ctx(**training) -> Context:
    t = dict(tokens=1e12, seq_len=4096, micro_batch=1, grad_accum=8, num_gpus=64, tp=1, pp=1, mfu=0.4,
             target_days=30, overhead_factor=1.0)
    t.update(training)
    s = SimpleNamespace(
        purpose="training",
        training=TrainingInputs(**t),
        network=SimpleNamespace(nic_Gbps=400, nics_per_node=8, network_efficiency=1.0, nvlink_efficiency=0.375,
                                nvlink_direction_factor=1.0, pcie_direction_factor=1.0),
        storage=SimpleNamespace(dataset_bytes_per_token=4, ckpt_bytes_per_param=16, ckpt_interval_steps=1000,
                                ckpt_keep=20, mtbf_gpu_hours=10000, fs_write_GBps=100, fs_read_GBps=100),
    )
    gpu = SimpleNamespace(bf16_dense_TFLOPS=PEAK, hbm_GB=80, hbm_device_MiB=81559, hbm_bw_GBps=3350, nvlink_bw_GBps=400, gpus_per_node=8)
    model = SimpleNamespace(layers=32, d_model=4096, n_heads=32, n_kv_heads=32, head_dim=128, vocab=32000,
                            moe=False, top_k=None, n_dense_layers=None)
    q = {"train_peak_TFLOPS": PEAK, "mfu_peak_TFLOPS": PEAK, "params_total": P, "params_active": P,
         "train_total_FLOPs": 6 * P * t["tokens"], "nvlink_effective_GBps": 400 * 0.375}
    defaults = {"ib_latency_us": 0.0, "comm_max_frac": 0.2, "ckpt_margin_factor": 5, "nvme_bw_GBps": 7,
                "fs_efficiency": 0.8, "storage_replication": 3, "dataset_overhead_factor": 1.5}
    return Context(s=s, gpu=gpu, model=model, defaults=defaults, q=q)


def run(*modules, **training) -> dict:
    ctx = make_ctx(**training)
    for mod in modules:
        ctx.q.update(mod.compute(ctx))
    return ctx.q


class mfu_in_use:
    """Stands in for workbook.calc.train_time under ``time_model: mfu`` (the hand context has no
    step model): the step time and training days in use are the Plan sheet's MFU-given rows."""

    @staticmethod
    def compute(ctx: Context) -> dict:
        return {"train_step_time_s": ctx.q["plan_step_time_s"], "train_days": ctx.q["plan_train_days_with_overhead"]}
