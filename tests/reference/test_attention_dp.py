"""workbook.reference.attention_dp and its use in serving_load: with EP > 1 Little's law holds per
attention-DP rank, the decode step sees a rank's batch, the group's requests and throughput are DP times."""

from __future__ import annotations

import pytest

from tests.reference import serving_validation as sv
from workbook.reference import attention_dp as adp
from workbook.reference import decode_time as dt
from workbook.reference import serving_load as sl

DS = sv.ENGINES.profile("deepseek-v3-infer")
KW = dict(tp=1, redundant_experts=32, weight_precision="fp8", ep_overlap_frac=1.0)
MIX = dict(prompt_tokens=2000.0, output_tokens=400.0)


def test_degree_and_group():
    assert adp.attention_dp_degree(ep=1) == 1 and adp.attention_dp_degree(ep=144) == 144
    assert adp.group_gpus(tp=2, ep=8) == 16
    assert adp.rank_batch(group_batch=288, ep=144) == 2
    assert adp.group_requests(rank_requests=2, ep=144) == 288
    with pytest.raises(ValueError):
        adp.attention_dp_degree(ep=0)


def test_steady_state_little_law_holds_for_the_group():
    lam = 16.0
    st = sl.steady_state(sv.DSV3, hw=sv.H800, engine=DS, arrival_rate_per_s=lam, ep=32, ep_nodes=4,
                         max_num_seqs=256, **KW, **MIX)
    assert st["saturated"] == 0
    assert st["batch_group"] == pytest.approx(32 * st["batch"])
    # group requests = group rate x time in system (the closed form's few refinements: within 1%)
    in_system = st["ttft_s"] + (MIX["output_tokens"] - 1) * st["tpot_s"]
    assert st["batch_group"] == pytest.approx(lam * in_system, rel=0.01)
    # the decode step is the one of a rank's batch, not the group's
    ctx = sl.running_context_tokens(**MIX)  # the running requests' mean context (exponential outputs)
    d = dt.decode_step(sv.DSV3, batch=st["batch"], context_tokens=ctx, hw=sv.H800, engine=DS, ep=32, ep_nodes=4, **KW)
    assert st["decode_step_s"] == pytest.approx(d["step_s"])
    assert st["throughput_tok_per_s"] == pytest.approx(lam * MIX["output_tokens"])
    assert st["per_gpu_tok_per_s"] == pytest.approx(lam * MIX["output_tokens"] / 32)


def test_offline_throughput_is_dp_times_a_rank():
    one = sl.offline_throughput(sv.LLAMA70, hw=sv.H100, engine=sv.ENGINES.profile("vllm-0.6.0"), tp=4, ep=1,
                                max_num_seqs=64, **MIX)
    assert one["per_gpu_tok_per_s"] == pytest.approx(one["throughput_tok_per_s"] / 4)
    ds = sl.offline_throughput(sv.DSV3, hw=sv.H800, engine=DS, ep=8, max_num_seqs=64, **KW, **MIX)
    assert ds["throughput_tok_per_s"] / 8 == pytest.approx(ds["per_gpu_tok_per_s"])
    t_req = MIX["prompt_tokens"] * ds["prefill_s_per_token"] + MIX["output_tokens"] * ds["decode_step_s"] / 64
    assert ds["throughput_tok_per_s"] == pytest.approx(8 * MIX["output_tokens"] / t_req)
