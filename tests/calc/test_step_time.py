"""The Step Time sheet's modules (calc.step_inputs, step_time, step_total, step_gpus, train_time) on catalogue
scenarios: every quantity declared and finite, the terms equal to workbook.reference.step_time's,
the scenario fields mapped to the reference keywords, and the time model choosing the days in use."""

from __future__ import annotations

import math

import pytest

from workbook.calc import compute, registry
from workbook.calc.step_inputs import step_kwargs
from workbook.catalog import load_catalog
from workbook.reference import step_time as stm
from workbook.scenario.model import Scenario

CATALOG = load_catalog()
MODULES = ("step_inputs", "step_time", "step_total", "step_gpus", "step_measured", "train_time")


def _scenario(**training) -> Scenario:
    t = dict(tokens=1e12, seq_len=8192, micro_batch=1, grad_accum=32, num_gpus=256, tp=8, pp=4, recompute="none",
             zero_stage=1, pipeline_schedule="interleaved", virtual_stages=2)
    t.update(training)
    return Scenario(name="s", model="llama-3-70b", gpu="h100", purpose="training", training=t)


def _ctx_of(sc: Scenario):
    from workbook.calc import modules
    from workbook.calc.base import Context
    from workbook.scenario.resolve import resolve

    s, gpu, model = resolve(sc, CATALOG)
    ctx = Context(s=s, gpu=gpu, model=model, defaults=CATALOG.defaults.as_dict(), eff=CATALOG.efficiency_of(gpu.id))
    for name, mod in modules():
        if name == "step_inputs":
            break
        ctx.q.update({k: float(v) for k, v in mod.compute(ctx).items()})
    return ctx


def test_every_quantity_declared_finite_and_labelled_once():
    reg = registry()
    names = [n for n, e in reg.items() if e.module in MODULES]
    assert len(names) > 100 and all(reg[n].sheet == "Step Time" for n in names)
    labels = [reg[n].q.label for n in names]
    assert len(set(labels)) == len(labels)
    q = compute(_scenario(), CATALOG)
    assert all(math.isfinite(q[n]) for n in names)


@pytest.mark.parametrize("over", [{}, {"cp": 2, "num_gpus": 512, "seq_len": 32768}, {"zero_stage": 3, "pp": 1},
                                  {"recompute": "full", "flash_attention": "off", "dropout": "on"},
                                  {"pipeline_schedule": "zero_bubble", "virtual_stages": 1, "sequence_parallel": "off"}])
def test_terms_are_the_reference_outputs(over):
    sc = _scenario(**over)
    q = compute(sc, CATALOG)
    r = stm.step_time(**step_kwargs(_ctx_of(sc)))
    for key in ("step_s", "microbatch_s", "gemm_mb_s", "attention_mb_s", "elementwise_mb_s", "tp_exposed_mb_s",
                "cp_exposed_mb_s", "pp_comm_mb_s", "zero3_exposed_mb_s", "bubble_frac", "dp_comm_step_s",
                "dp_exposed_step_s", "optimizer_step_s", "tokens_per_s", "mfu", "hfu", "model_TFLOPS_per_gpu",
                "hardware_TFLOPS_per_gpu", "params_per_gpu"):
        assert q[f"st_{key}"] == r[key], key
    # the pieces add up as the sheet adds them
    assert q["st_step_s"] == pytest.approx(q["st_pipeline_step_s"] + q["st_dp_exposed_step_s"]
                                           + q["st_optimizer_step_s"], rel=1e-12)
    assert q["st_stage_mid_mb_s"] == pytest.approx(q["st_stage_compute_mb_s"] + q["st_tp_exposed_mb_s"]
                                                   + q["st_cp_exposed_mb_s"] + q["st_ep_exposed_mb_s"], rel=1e-12)
    assert q["st_params_per_gpu"] == pytest.approx(q["st_dense_params_gpu"] + q["st_expert_params_gpu"], rel=1e-12)
    assert q["st_zero3_comm_mb_s"] >= q["st_zero3_exposed_mb_s"] >= 0
    assert q["st_tokens_per_step"] == sc.training.micro_batch * sc.training.grad_accum * q["st_dp"] * sc.training.seq_len


def test_scenario_fields_map_to_the_reference_keywords():
    """Korthikanti et al. 2022 Table 5, GPT-3 175B with selective recompute + SP: the scenario's
    fields give the keywords tests/reference/test_step_time.py uses (catalogue vocabulary aside)."""
    sc = Scenario(name="k", model="gpt-3-175b", gpu="a100-80gb", training=dict(
        seq_len=2048, micro_batch=1, grad_accum=64, num_gpus=64, tp=8, pp=8, precision="bf16",
        grad_precision="fp32", zero_stage=0, recompute="selective", pipeline_schedule="interleaved",
        virtual_stages=3, sequence_parallel="on", flash_attention="off", dropout="on", dp_overlap_frac=0))
    kw = step_kwargs(_ctx_of(sc))
    want = dict(tp=8, cp=1, pp=8, dp=1, ep=1, micro_batch=1, micro_batches=64, seq_len=2048, schedule="interleaved",
                virtual_stages=3, recompute="selective", sequence_parallel=True, zero_stage=0, grad_bytes=4,
                weight_bytes=2, act_bytes=2.0, optimizer_bytes_per_param=30.0, attention_kernel="unfused",
                dropout=True, dp_overlap_frac=0.0, last_stage_layers=None, ffn="gelu", attention="mha")
    assert {k: kw[k] for k in want} == want
    assert kw["peak_TFLOPS"] == 312 and kw["nvlink_GBps"] == 300 and kw["nic_GBps"] == 25
    step = stm.step_time(**kw)["step_s"]
    assert step == pytest.approx(13.75, rel=0.15)  # Table 5: 13.75 s


def test_virtual_stages_only_count_under_the_interleaved_schedule():
    q = compute(_scenario(pipeline_schedule="1f1b", virtual_stages=4), CATALOG)
    assert q["st_virtual_stages"] == 1 and q["st_bubble_frac"] == pytest.approx(3 / 32)
    q = compute(_scenario(virtual_stages=4), CATALOG)
    assert q["st_virtual_stages"] == 4 and q["st_bubble_frac"] == pytest.approx(3 / 128)
    assert compute(_scenario(pipeline_schedule="zero_bubble"), CATALOG)["st_bubble_frac"] == 0


def test_time_model_selects_the_days_cost_and_deadline_use():
    step = compute(_scenario(time_model="step", target_days=1000), CATALOG)
    mfu = compute(_scenario(time_model="mfu", target_days=1000), CATALOG)
    for q in (step, mfu):  # both are always computed and shown
        assert q["st_train_days_with_overhead"] == step["st_train_days_with_overhead"]
        assert q["plan_train_days_with_overhead"] == mfu["plan_train_days_with_overhead"]
        assert q["train_days_actual"] == q["train_days"]
        assert q["train_step_vs_mfu_days_x"] == pytest.approx(
            step["st_train_days_with_overhead"] / mfu["plan_train_days_with_overhead"])
    assert step["train_days"] == step["st_train_days_with_overhead"] and step["train_mfu"] == step["st_mfu"]
    assert mfu["train_days"] == mfu["plan_train_days_with_overhead"] and mfu["train_mfu"] == 0.40
    assert step["train_step_time_s"] == step["st_step_s"] and mfu["train_step_time_s"] == mfu["plan_step_time_s"]
    assert step["train_tokens_per_s_per_gpu"] == pytest.approx(step["st_tokens_per_s"] / 256)
    assert mfu["train_tokens_per_s_per_gpu"] == pytest.approx(mfu["plan_tokens_per_s_per_gpu"])
    assert step["train_cost_usd"] / mfu["train_cost_usd"] == pytest.approx(step["train_days"] / mfu["train_days"])
    days = step["train_days"]
    tight = compute(_scenario(time_model="step", target_days=days * 0.99), CATALOG)
    assert tight["check_meets_target_days"] == 1.0 and tight["train_meets_target_flag"] == 0.0
    assert compute(_scenario(time_model="step", target_days=days * 1.01), CATALOG)["check_meets_target_days"] == 0


def test_step_days_are_tokens_over_throughput():
    q = compute(_scenario(overhead_factor=1.1), CATALOG)
    assert q["st_train_days"] == pytest.approx(1e12 / q["st_tokens_per_s"] / 86400)
    assert q["st_train_days_with_overhead"] == pytest.approx(1.1 * q["st_train_days"])
    assert q["st_mfu"] == pytest.approx(q["st_model_TFLOPS_per_gpu"] / 989.5)


def test_moe_mla_layout_takes_expert_and_cp_paths():
    sc = Scenario(name="ds", model="deepseek-v3", gpu="h800", training=dict(
        seq_len=4096, micro_batch=1, grad_accum=16, num_gpus=2048, tp=1, pp=16, ep=64, cp=2, zero_stage=1))
    q = compute(sc, CATALOG)
    assert q["st_ep_comm_mb_s"] > 0 and q["st_cp_comm_mb_s"] > 0 and q["st_expert_params_gpu"] > 0
    assert q["st_expert_dp"] == 2 and q["st_dp_group"] == 128
    assert q["st_qk_head_dim"] == 192 and q["st_v_head_dim"] == 128


def test_gpus_needed_in_use_follow_the_time_model():
    step = compute(_scenario(time_model="step", target_days=20), CATALOG)
    mfu = compute(_scenario(time_model="mfu", target_days=20), CATALOG)
    for q in (step, mfu):  # both counts are always computed
        assert q["st_gpu_step"] == 32  # TP8 x PP4 on 8-GPU nodes
        assert q["st_gpus_time_raw"] == pytest.approx(256 * q["st_train_days_with_overhead"] / 20)
        assert q["st_gpus_needed"] % 32 == 0 and q["st_gpus_needed"] >= q["st_gpus_time_raw"]
        assert q["st_gpus_needed"] - 32 < q["st_gpus_time_raw"]
        assert q["st_days_at_needed_gpus"] <= 20
        assert q["st_gpus_needed_dp"] == q["st_gpus_needed"] / 32
    assert step["train_gpus_needed"] == step["st_gpus_needed"]
    assert step["train_days_at_needed_gpus"] == step["st_days_at_needed_gpus"]
    assert mfu["train_gpus_needed"] == mfu["plan_gpus_needed"]
    assert mfu["train_days_at_needed_gpus"] == mfu["plan_days_at_needed_gpus"]


def test_comm_and_storage_read_the_step_time_in_use():
    step = compute(_scenario(time_model="step"), CATALOG)
    mfu = compute(_scenario(time_model="mfu"), CATALOG)
    for q, t_step, days in ((step, step["st_step_s"], step["st_train_days_with_overhead"]),
                            (mfu, mfu["plan_step_time_s"], mfu["plan_train_days_with_overhead"])):
        assert q["comm_compute_step_s"] == t_step
        assert q["comm_share_frac"] == pytest.approx(q["comm_total_time_s"] / (q["comm_total_time_s"] + t_step))
        assert q["ckpt_interval_min"] == pytest.approx(q["sto_ckpt_interval_steps"] * t_step / 60)
        assert q["ckpt_sync_write_GBps"] == pytest.approx(q["ckpt_size_GB"] / t_step)
        assert q["storage_read_MBps"] == pytest.approx(
            q["plan_tokens_per_step"] * q["sto_dataset_bytes_per_token"] / t_step / 1e6)
        assert q["ckpt_failures_expected"] == pytest.approx(days * 24 / q["ckpt_cluster_mtbf_h"])
        assert q["logs_stdout_GB"] == pytest.approx(256 * 5 * days / 1e3)
    assert step["st_step_s"] != pytest.approx(mfu["plan_step_time_s"], rel=1e-3)  # so the two cases differ
