"""catalog/frameworks.yaml (workbook/catalog/frameworks.py; docs/frameworks.md)."""

from __future__ import annotations

from typing import get_args

import pytest

from workbook.catalog.frameworks import DEFAULT_FRAMEWORK, load_frameworks
from workbook.errors import InputError
from workbook.scenario.model import Framework


def test_the_shipped_profiles_are_the_scenario_choices_and_megatron_is_the_identity():
    fws = load_frameworks()
    assert list(fws) == list(get_args(Framework))
    m = fws[DEFAULT_FRAMEWORK]
    assert (m.gemm_efficiency_factor, m.attention_efficiency_factor, m.elementwise_bytes_factor) == (1, 1, 1)
    for f in fws.values():
        assert f.source and f.as_of
        for field, text in f.field_sources.items():
            assert text.startswith("estimate:") or "arXiv" in text or "github" in text, (f.id, field)


def test_a_bad_record_names_file_record_and_field(tmp_path):
    bad = tmp_path / "frameworks.yaml"
    bad.write_text("- id: megatron\n  name: x\n  source: y\n  as_of: 2026-12-04\n  gemm_efficiency_factor: 0\n"
                   "  attention_efficiency_factor: 1\n  elementwise_bytes_factor: 1\n")
    with pytest.raises(InputError, match="gemm_efficiency_factor"):
        load_frameworks(bad)
