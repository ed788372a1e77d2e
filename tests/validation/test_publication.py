"""The file-level `publication:` id of validation files: the cross-validation group (default the file stem)."""

from __future__ import annotations

import pytest

from workbook.errors import InputError
from workbook.validation import default_files, load_validation_file, validate

FILE = """\
{pub}description: test file
scenario:
  name: t
  model: llama-7b
  gpu: h100
  purpose: training
  training: {{tokens: 1.0e12, num_gpus: 8}}
points:
  - point: params
    key: params_total
    value: 6.7e9
    unit: count
    source: "LLaMA paper, Table 2"
    as_of: 2026-12-01
    tolerance: 0.02
"""


def _write(tmp_path, name: str, pub: str = "") -> str:
    p = tmp_path / name
    p.write_text(FILE.format(pub=pub), encoding="utf-8")
    return str(p)


def test_publication_defaults_to_the_file_stem(tmp_path):
    f = load_validation_file(_write(tmp_path, "my-runs.yaml"))
    assert f.publication == "my-runs"
    assert {c.publication for c in f.cases} == {"my-runs"}


def test_publication_is_read_and_reaches_the_results(tmp_path):
    path = _write(tmp_path, "a.yaml", "publication: narayanan2021-ptdp\n")
    assert load_validation_file(path).publication == "narayanan2021-ptdp"
    assert [r.publication for r in validate([path])] == ["narayanan2021-ptdp"]


def test_bad_publication_id_is_refused_naming_the_field(tmp_path):
    path = _write(tmp_path, "a.yaml", "publication: Not An Id\n")
    with pytest.raises(InputError) as exc:
        load_validation_file(path)
    assert "publication" in str(exc.value)


def test_every_shipped_file_names_its_publication_and_the_ptdp_files_share_one():
    pubs = {}
    for path in default_files():
        text = path.read_text(encoding="utf-8")
        assert "\npublication: " in "\n" + text, path.name
        pubs[path.stem] = load_validation_file(path).publication
    assert pubs["megatron-ptdp-gpt3-175b"] == pubs["megatron-ptdp-530b-1t"] == "narayanan2021-ptdp"
    assert len(set(pubs.values())) < len(pubs)
