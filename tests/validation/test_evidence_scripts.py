"""scripts/refresh_verdicts.py (the verdict that opens a point's notes) and scripts/evidence_table.py (the table of
docs/evidence.md): the rewriting rules, and docs/evidence.md's table is today's (regenerate it with
`PYTHONPATH=. python scripts/evidence_table.py --write docs/evidence.md`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"_scripts_{name}", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(f"_scripts_{name}", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


refresh_verdicts = _script("refresh_verdicts")
evidence_table = _script("evidence_table")

TEXT = '''points:
  - point: a
    key: params_total
    notes: "Matched (+1.0%). old text"
  - point: b
    key: params_total
    notes: "plain text"
  - point: c
    key: params_total
    notes: "plain text"
'''


def test_refresh_rewrites_a_verdict_adds_one_to_a_failure_and_leaves_a_plain_pass(tmp_path):
    f = tmp_path / "v.yaml"
    f.write_text(TEXT, encoding="utf-8")
    text, changed = refresh_verdicts.refresh(f, {"a": (False, -0.123), "b": (True, 0.05), "c": (False, 0.5)})
    assert changed == ["a", "c"]
    assert 'notes: "Not matched (-12.3%). old text"' in text
    assert 'notes: "plain text"' in text.split("point: c")[0]
    assert 'notes: "Not matched (+50.0%). plain text"' in text


def test_refresh_keeps_the_rest_of_a_verdicts_bracket(tmp_path):
    f = tmp_path / "v.yaml"
    f.write_text('points:\n  - point: a\n    notes: "Matched (+25.7%; +42.7% before the change). text"\n',
                 encoding="utf-8")
    text, changed = refresh_verdicts.refresh(f, {"a": (True, 0.201)})
    assert changed == ["a"] and 'notes: "Matched (+20.1%; +42.7% before the change). text"' in text


def test_verdict_is_what_the_notes_test_reads():
    assert refresh_verdicts.verdict(True, 0.0449) == "Matched (+4.5%). "
    assert refresh_verdicts.verdict(False, -0.4) == "Not matched (-40.0%). "


def test_replace_block_keeps_the_text_around_the_markers():
    doc = f"intro\n{evidence_table.BEGIN}\nold\n{evidence_table.END}\noutro\n"
    assert evidence_table.replace_block(doc, "new\n") == f"intro\n{evidence_table.BEGIN}\nnew\n{evidence_table.END}\noutro\n"


@pytest.mark.parametrize("key, kind", [("srv_ttft_idle_ms", "serving"), ("params_total", "parameters"),
                                       ("train_tokens_per_s_per_gpu", "training"), ("st_step_s", "training")])
def test_kind_of_a_key(key, kind):
    assert evidence_table.kind_of(key) == kind


def test_docs_evidence_table_is_todays():
    """docs/evidence.md quotes today's in-sample results: regenerate it when the model or the files change."""
    assert evidence_table.main(["--check", str(ROOT / "docs" / "evidence.md")]) == 0
