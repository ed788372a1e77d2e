"""The README stays short, its links resolve, and every figure it and docs/ quote is what the code computes now."""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


@functools.lru_cache(maxsize=None)
def _figures_module():
    """scripts/doc_figures.py, loaded once per session (its plans and validation runs are cached in it)."""
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


def test_generated_blocks_are_current() -> None:
    """Every block of scripts/doc_figures.py BLOCKS (a command's output, a table) is what the code prints now."""
    mod = _figures_module()
    stale = []
    for key, (doc, _) in mod.BLOCKS.items():
        held = mod.block_in((ROOT / doc).read_text(encoding="utf-8"), key)
        if held is None:
            stale.append(f"{doc}: no block {key}")
        elif held != mod.render_block(key):
            stale.append(f"{doc}: block {key} is stale")
    assert not stale, "PYTHONPATH=. python scripts/doc_figures.py --write\n" + "\n".join(stale)


#: The README's numbers that are not results: definitions, inputs, limits and names (each with why it cannot go
#: stale). Every other number of the README must sit in a FIGURES text or a block, so a test recomputes it.
README_CONSTANTS = (
    "under 250 lines",                          # the README's own rule (test_readme_is_under_250_lines)
    "Python 3.11+",                             # pyproject's requires-python
    "17.9.4", "17.9.1", "17.9.6",               # the book's case numbers (names)
    "3T tokens, 60 days, $2M",                  # the 17.9.4 request's inputs (catalog/requests/17.9.4-70b-h800.yaml)
    "exit 0 / 1", "exit 1", "status 2",         # exit statuses (workbook/cli.py)
    "0^0",                                      # a formula Excel refuses (docs/excel-compatibility.md)
    "PDF page 1",                               # the screenshot's page
    "1M",                                       # "$/1M output tokens" (a unit)
)


def _strip_computed(text: str, mod) -> str:
    """The README without its FIGURES texts, blocks, links, file names, code spans and listed constants."""
    for key, (doc, fn) in mod.FIGURES.items():
        if doc == "README.md":
            text = text.replace(fn(), " ")
    for key, (doc, _) in mod.BLOCKS.items():
        if doc == "README.md":
            text = text.replace(mod.render_block(key), " ")
    text = re.sub(r"<!-- (figure|block) [^>]*-->", " ", text)
    text = re.sub(r"\*\*\d\. ", " ", text)                      # the tour's step numbers
    text = re.sub(r"<!-- bench [^>]*-->.*?<!-- bench:end -->", " ", text, flags=re.S)  # timings, dated
    text = re.sub(r"\]\([^)]*\)", "]", text)                  # link targets
    text = re.sub(r"`[^`\n]*`", " ", text)                    # code spans: commands, file names, field names
    text = re.sub(r"```.*?```", " ", text, flags=re.S)        # code blocks: commands
    for c in README_CONSTANTS:
        text = text.replace(c, " ")
    return text


def test_every_readme_number_is_computed_or_a_constant() -> None:
    """A number in the README is a FIGURES text, a block, a dated benchmark or a listed constant; any other is a
    figure typed by hand, which goes stale (issue 25: the README quoted a Mixtral plan two changes old)."""
    mod = _figures_module()
    text = " ".join(README.read_text(encoding="utf-8").split())
    rest = _strip_computed(text, mod)
    loose = [m.group(0) for m in re.finditer(r"(?<![\w-])\$?\d[\d,.]*\s?(%|x|[KMBT]\b)?", rest)]
    assert not loose, (f"README numbers no test recomputes: {loose}; quote them through scripts/doc_figures.py "
                       "(FIGURES or BLOCKS) or, for a definition, list them in README_CONSTANTS")


#: a count the code, the catalogue or a run produces ("158 points", "56 files", "27,486 cells"): stale-prone
COUNT = re.compile(r"(?<![\w.,-])\d[\d,]*\s+(?:validation\s+)?(points|files|publications|tests|records|layouts|"
                   r"scenarios|cells|formulas|factors|passed|failed)\b")

#: pages whose every figure is a dated benchmark (they say so at the top: ``<!-- bench page -->``)
BENCH_PAGE = "<!-- bench page -->"

#: doc -> counts a doc may quote by hand, each with why: limits and definitions, dated history, and (marked
#: "not yet generated") hand-made result tables of the model docs that still have to move to a script
COUNTS_BY_HAND: dict[str, dict[str, str]] = {
    "safety.md": {"1,000,000 cells": "a limit of workbook/safe_xlsx.py",
                  "20,000,000 cells": "a limit of workbook/safe_xlsx.py"},
    "serving.md": {"4,000 points": "the quadrature's check grid (a definition)"},
    "serving-overview.md": {"16 points": "history: the reference table when the prefill call was added",
                            "77 points": "history: `workbook validate` when the three steps were added"},
    "validation.md": {"158 points": "history, dated: the joint fit `--cv` ran until 2026-12-04"},
    "step_time.md": {"5 layouts": "the five Korthikanti layouts (a fact of the paper)",
                     "5 factors": "the factors per GPU of the step model (a definition)"},
}


def _without_generated(text: str, doc: str, mod) -> str:
    """``text`` without the FIGURES texts of ``doc``, its generated blocks and the scripts' own blocks."""
    for key, (where, fn) in mod.FIGURES.items():
        if where == doc:
            text = text.replace(fn(), " ")
    text = re.sub(r"<!-- block (\S+):begin.*?<!-- block \1:end -->", " ", text, flags=re.S)
    text = re.sub(r"<!-- (accuracy|evidence)-table:begin.*?<!-- \1-table:end -->", " ", text, flags=re.S)
    return text


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_no_count_is_typed_by_hand(doc: Path) -> None:
    """Counts of points, files, tests, cells ... go stale (docs/validation.md said "77 points" when there were 158):
    each is a FIGURES text, in a generated block, on a benchmark page, or listed in COUNTS_BY_HAND with why."""
    text = doc.read_text(encoding="utf-8")
    if BENCH_PAGE in text or doc.name == "quantities.md":  # benchmarks; the generated quantity reference
        return
    name = "README.md" if doc == README else f"docs/{doc.name}"
    rest = _without_generated(text, name, _figures_module())
    rest = re.sub(r"\s+", " ", rest)
    found = [m.group(0) for m in COUNT.finditer(rest)
             if re.sub(r"\s+", " ", m.group(0)) not in COUNTS_BY_HAND.get(doc.name, {})]
    assert not found, (f"{doc.name}: counts no test recomputes: {found}; quote them through scripts/doc_figures.py "
                       "(FIGURES or BLOCKS) or list them in COUNTS_BY_HAND with why")


def test_accuracy_table_is_current() -> None:
    """docs/validation.md's accuracy block (scripts/accuracy_table.py --write) is today's `validate --cv`, but for
    the run's date and seconds."""
    spec = importlib.util.spec_from_file_location("accuracy_table", ROOT / "scripts" / "accuracy_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    doc = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    held = doc.split(mod.BEGIN)[1].split(mod.END)[0].strip("\n")

    def norm(t: str) -> str:
        return re.sub(r"; \d+ s\)", "; N s)", re.sub(r"^Run \d{4}-\d\d-\d\d", "Run DATE", t.strip("\n")))

    assert norm(held) == norm(mod.table(_figures_module().cross_validated())), (
        "docs/validation.md's accuracy table is stale: PYTHONPATH=. python scripts/accuracy_table.py --write")
