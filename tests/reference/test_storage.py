"""Unit and property tests of workbook.reference.storage (spec 17.7)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from workbook.reference import storage as st_


def test_dataset_and_media():
    assert st_.dataset_bytes(tokens=2e12, overhead_factor=1.5) == 12e12
    assert st_.video_GB_per_hour(8) == pytest.approx(3.6)
    assert st_.audio_MB_per_hour(sample_rate_Hz=16000, bytes_per_sample=2) == pytest.approx(115.2)


def test_checkpoint_bandwidth_and_devices():
    assert st_.ckpt_write_bw_GBps(ckpt_GB=1120, t_step_s=3) == pytest.approx(373.333, rel=1e-5)
    assert st_.devices_needed(need=1120, per_device=7) == 160
    assert st_.devices_needed(need=373.3333, per_device=7) == 54
    assert st_.ckpt_write_bw_GBps(ckpt_GB=1120, t_step_s=3, window_steps=10, dp=64) == pytest.approx(0.583333, rel=1e-5)
    assert st_.oss_nodes(bw_GBps=126, per_oss_GBps=40, f_eff=0.8, replication=3)["total"] == 12


def test_load_time_capped_by_filesystem():
    assert st_.ckpt_load_time_s(ckpt_GB=6480, dp=1024, read_per_gpu_GBps=5) == pytest.approx(1.265625)
    assert st_.ckpt_load_time_s(ckpt_GB=6480, dp=1024, read_per_gpu_GBps=5, fs_read_GBps=160) == pytest.approx(40.5)


def test_mtbf_interval_logs():
    assert st_.cluster_mtbf_h(mtbf_gpu_h=10000, num_gpus=16000) == 0.625
    assert st_.ckpt_interval_steps_max(mtbf_h=100, t_step_s=3) == 24000
    assert st_.metrics_GB(metrics_per_step=200, steps=1e6) == 20
    assert st_.traces_GB(traces=45, trace_MB=300) == pytest.approx(13.5)
    assert st_.augment_cores(num_gpus=8, samples_per_s=64, ms_per_sample=5) == pytest.approx(2.56)
    assert st_.gpus_per_device(device_GBps=7, per_gpu_GBps=1.75) == 4


@given(p=st.floats(min_value=0, max_value=1e13), b=st.floats(min_value=0.5, max_value=32),
       t=st.floats(min_value=0.01, max_value=1e4), n=st.integers(1, 10_000), dp=st.integers(1, 10_000))
def test_finite_nonneg(p, b, t, n, dp):
    gb = st_.ckpt_bytes(params_total=p, bytes_per_param=b) / 1e9
    vals = [gb, st_.ckpt_write_bw_GBps(ckpt_GB=gb, t_step_s=t, window_steps=n, dp=dp),
            st_.ckpt_load_time_s(ckpt_GB=gb, dp=dp, read_per_gpu_GBps=5),
            st_.read_bw_Bps(tokens_per_step=p, bytes_per_token=b, t_step_s=t)]
    assert all(math.isfinite(v) and v >= 0 for v in vals)
