"""catalog/engines.yaml and its loader (workbook/catalog/engines.py)."""

from __future__ import annotations

import pytest

from workbook.catalog import load_catalog
from workbook.catalog.engines import load_engines
from workbook.errors import InputError

CATALOG = load_catalog()

GOOD = """\
devices:
  - gpu: h100
    source: test
    as_of: 2026-12-01
    cuda_total_GiB: 79.22
    decode_hbm_efficiency: 0.78
profiles:
  - id: eng-a
    name: Engine A
    engine: vllm
    version: "1"
    source: test
    as_of: 2026-12-01
    memory_rule: total_fraction
    memory_fraction: 0.9
    max_num_seqs: 256
    max_num_batched_tokens: 4096
    block_size_tokens: 16
    profile_sampler: true
    sampler_bytes_per_logit: 38.6
    non_torch_GiB_tp1: 0.35
    non_torch_GiB_tp_multi: 1.4
    cuda_context_GiB: 0.5
    cuda_graph_GiB: 0.5
    cuda_graph_in_budget: false
    cuda_graphs: true
    cuda_graph_max_batch: 256
    graph_launch_us: 0.5
    eager_launch_us: 10
    small_kernel_us: 3.4
    allreduce_alpha_us: 6.45
    allreduce_bus_efficiency: 0.44
    custom_allreduce_max_MB: 8
    nccl_alpha_us: 19.4
    cpu_overhead_frac: 0.1
    cpu_per_seq_us: 0
    scheduler_steps: 1
    decode_micro_batches: 1
    ep_overlap_frac: 0.0
    prefill_comm_sms: 20
    decode_comm_sm_frac: 0.244
    prefill_mode: separate
    prefill_chunk_tokens: 4096
    prefill_cuda_graphs: false
"""


def _write(tmp_path, text):
    p = tmp_path / "engines.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_shipped_catalogue_loads_and_every_record_is_sourced():
    cat = load_engines(gpu_ids=CATALOG.gpus)
    assert {p.id for p in cat.profiles} >= {"vllm-0.6.0", "vllm-0.10", "sglang-0.3.0", "sglang-0.4", "tensorrt-llm"}
    for rec in list(cat.profiles) + list(cat.devices):
        assert rec.source.strip() and rec.as_of.year >= 2025
    assert cat.device("h100").cuda_total_GiB == pytest.approx(79.22)
    assert cat.profile("vllm-0.10").non_torch_GiB(1) == 0.35 and cat.profile("vllm-0.10").non_torch_GiB(4) == 1.4
    with pytest.raises(InputError, match="unknown engine profile"):
        cat.profile("vllm-9")
    with pytest.raises(InputError, match="no device-memory record"):
        cat.device("v100")


def test_errors_name_file_line_record_and_field(tmp_path):
    assert [p.id for p in load_engines(_write(tmp_path, GOOD)).profiles] == ["eng-a"]
    with pytest.raises(InputError) as e:
        load_engines(_write(tmp_path, GOOD.replace("memory_fraction: 0.9", "memory_fraction: 1.5")))
    msg = str(e.value)
    assert "engines.yaml:15" in msg and "profiles[0] (eng-a).memory_fraction" in msg and "0 < x <= 1" in msg
    with pytest.raises(InputError) as e:
        load_engines(_write(tmp_path, GOOD.replace("    block_size_tokens: 16\n", "")))
    assert "profiles[0] (eng-a).block_size_tokens" in str(e.value) and "missing" in str(e.value)
    with pytest.raises(InputError) as e:
        load_engines(_write(tmp_path, GOOD.replace("decode_hbm_efficiency: 0.78", "decode_hbm_efficiency: 0.78\n    colour: red")))
    assert "devices[0] (h100).colour" in str(e.value) and "unknown field" in str(e.value)
    with pytest.raises(InputError) as e:
        load_engines(_write(tmp_path, GOOD.replace("prefill_mode: separate", "prefill_mode: sometimes")))
    assert "prefill_mode" in str(e.value)
    with pytest.raises(InputError) as e:
        load_engines(_write(tmp_path, GOOD.replace("cuda_total_GiB: 79.22", "cuda_total_GiB: .nan")))
    assert "finite" in str(e.value)


def test_duplicates_unknown_gpus_and_field_sources(tmp_path):
    dup = GOOD + GOOD.split("profiles:\n", 1)[1]
    with pytest.raises(InputError) as e:
        load_engines(_write(tmp_path, dup))
    assert "duplicate id 'eng-a'" in str(e.value) and "first on line 8" in str(e.value)
    with pytest.raises(InputError) as e:
        load_engines(_write(tmp_path, GOOD.replace("gpu: h100", "gpu: h999")), gpu_ids=CATALOG.gpus)
    assert "unknown GPU id 'h999'" in str(e.value) and "engines.yaml:2" in str(e.value)
    with pytest.raises(InputError) as e:
        load_engines(_write(tmp_path, GOOD.replace("    source: test\n    as_of: 2026-12-01\n    memory_rule",
                                                   "    source: test\n    as_of: 2026-12-01\n    field_sources: {speed: x}\n    memory_rule")))
    assert "field_sources names unknown fields: speed" in str(e.value)
    with pytest.raises(InputError, match="expected a mapping"):
        load_engines(_write(tmp_path, "- a\n- b\n"))
    with pytest.raises(InputError, match="malformed YAML"):
        load_engines(_write(tmp_path, "devices: [\n"))
