"""YAML loading: 3e12-style numbers, line map, duplicate keys, pydantic error mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.catalog.yamlio import field_range, line_of, load_yaml
from workbook.errors import InputError
from workbook.scenario import load_scenario
from workbook.scenario.model import Scenario


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


def test_exponent_numbers_are_floats(tmp_path: Path) -> None:
    data, _ = load_yaml(_write(tmp_path, "a: 3e12\nb: 1.5e-3\nc: -2E6\nd: 3.0e+12\ne: 7\nf: '3e12'\ng: 1.0\n"))
    assert data == {"a": 3e12, "b": 1.5e-3, "c": -2e6, "d": 3e12, "e": 7, "f": "3e12", "g": 1.0}
    assert isinstance(data["a"], float) and isinstance(data["e"], int)


def test_scenario_accepts_3e12_and_quoted_numbers(tmp_path: Path) -> None:
    p = _write(tmp_path, "name: x\nmodel: llama-7b\ngpu: h800\ntraining:\n  tokens: 3e12\n  num_gpus: 1e3\n"
                         "  tp: 8\ncost:\n  budget_usd: '2e6'\n")
    s = load_scenario(p)
    assert s.training.tokens == 3e12 and s.training.num_gpus == 1000 and s.cost.budget_usd == 2e6


def test_line_map(tmp_path: Path) -> None:
    _, lines = load_yaml(_write(tmp_path, "# c\na: 1\nb:\n  c:\n    - 1\n    - x: 2\n"))
    assert lines[("a",)] == 2 and lines[("b", "c")] == 4 and lines[("b", "c", 1)] == 6
    assert lines[("b", "c", 1, "x")] == 6
    assert line_of(lines, ("b", "c", 1, "missing")) == 6
    assert line_of(lines, ("zzz",)) == lines[()]


def test_empty_file_and_unreadable(tmp_path: Path) -> None:
    data, _ = load_yaml(_write(tmp_path, ""))
    assert data is None
    with pytest.raises(InputError, match="cannot read"):
        load_yaml(tmp_path / "nope.yaml")
    with pytest.raises(InputError, match="must be a mapping"):
        load_scenario(_write(tmp_path, "- 1\n- 2\n"))


def test_field_range_text() -> None:
    assert field_range(Scenario, ("training", "mfu")) == "0.05 <= x <= 0.9"
    assert field_range(Scenario, ("training", "zero_stage")) == "0 <= x <= 3"
    assert field_range(Scenario, ("network", "nic_Gbps")) == "1 <= x <= 100000"
    assert field_range(Scenario, ("training", "nope")) is None


def test_libyaml_and_python_parsers_give_the_same_data_and_lines():
    """parse_yaml reads with libyaml's parser when PyYAML has it; every shipped YAML file (catalogue,
    scenarios, requests, validation) gives the same values and the same line map as the pure-Python
    parser, and a file the fast parser rejects is reported with the pure-Python parser's message."""
    from workbook.catalog import DEFAULT_DIR, yamlio

    files = sorted(DEFAULT_DIR.rglob("*.yaml"))
    assert len(files) > 20
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert yamlio._parse(text, str(f), yamlio._FastLoader) == yamlio._parse(text, str(f), yamlio._Loader), f
    with pytest.raises(InputError, match="'\\\\t'"):
        yamlio.parse_yaml("a:\n\tb: 1\n", "tab.yaml")


@pytest.mark.parametrize("text, field", [('name: "bad\\x0bname"\n', "name"), ("a:\n  - 'ok'\n  - \"\\0\"\n", "a[1]"),
                                          ('"k\\x1bey": 1\n', None)])
def test_a_control_character_written_as_an_escape_is_refused(tmp_path: Path, text: str, field) -> None:
    """The raw text holds no control character, the decoded scalar does: refused with its line and field, as a
    raw one is (a scenario name with U+000B wrote malformed sheet XML)."""
    p = tmp_path / "x.yaml"
    p.write_text(text)
    with pytest.raises(InputError, match="control character") as e:
        load_yaml(p)
    assert e.value.line is not None and (field is None or e.value.field == field)
