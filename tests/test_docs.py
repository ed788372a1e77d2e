"""The README stays short, its links resolve, and every figure it and docs/ quote is what the code computes now."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _figures_module():
    spec = importlib.util.spec_from_file_location("doc_figures", ROOT / "scripts" / "doc_figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_is_under_250_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < 250


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_relative_links_and_images_exist(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (doc.parent / target).exists(), f"{doc.name}: link to missing {target}"


def test_every_quoted_figure_is_current() -> None:
    mod = _figures_module()
    stale = []
    for key, (doc, fn) in mod.FIGURES.items():
        text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())
        now = fn()
        if now not in text:
            stale.append(f"{doc} ({key}): should quote {now!r}")
    assert not stale, "stale figures (scripts/doc_figures.py):\n" + "\n".join(stale)


def test_readme_figures_are_marked_with_their_script() -> None:
    text = README.read_text(encoding="utf-8")
    mod = _figures_module()
    for key, (doc, _) in mod.FIGURES.items():
        if doc == "README.md":
            assert f"figure {key} (scripts/doc_figures.py)" in text, key


def test_quantity_reference_is_generated_from_the_registry() -> None:
    spec = importlib.util.spec_from_file_location("quantities_doc", ROOT / "scripts" / "quantities_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "quantities.md").read_text(encoding="utf-8") == mod.render(), (
        "docs/quantities.md is stale: PYTHONPATH=. python scripts/quantities_doc.py > docs/quantities.md")


def test_no_merge_conflict_markers_in_tracked_text() -> None:
    """A merge left `<<<<<<< HEAD` ... `>>>>>>> branch` in docs/validation.md once; no tracked text file keeps one."""
    import subprocess

    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    marker = re.compile(r"^(<{7} |>{7} |={7}$)", re.M)
    bad = [f for f in files if f.endswith((".md", ".py", ".yaml", ".toml", ".json", ".sh", ".txt"))
           and (ROOT / f).is_file() and marker.search((ROOT / f).read_text(encoding="utf-8", errors="replace"))]
    assert not bad, f"merge conflict markers in {bad}"
