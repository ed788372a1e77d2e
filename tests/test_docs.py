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


@functools.lru_cache(maxsize=None)
def _now(key: str) -> str:
    """FIGURES[key]'s text as the code computes it now (computed once per session)."""
    return _figures_module().FIGURES[key][1]()


def _figures_of(doc: str) -> list[str]:
    """The texts of the FIGURES that ``doc`` ("README.md", "docs/x.md") quotes."""
    return [_now(key) for key, (where, _) in _figures_module().FIGURES.items() if where == doc]


def test_readme_is_under_250_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < 250


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_relative_links_and_images_exist(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target:
            continue
        assert (doc.parent / target).exists(), f"{doc.name}: link to missing {target}"


@pytest.mark.slow
def test_every_quoted_figure_is_current() -> None:
    mod = _figures_module()
    stale = []
    for key, (doc, fn) in mod.FIGURES.items():
        text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())
        now = _now(key)
        if now not in text:
            stale.append(f"{doc} ({key}): should quote {now!r}")
    assert not stale, ("stale figures: PYTHONPATH=. python scripts/doc_figures.py --write (it names those to paste by "
                       "hand)\n" + "\n".join(stale))


def test_every_figure_is_marked_with_its_script() -> None:
    """Each FIGURES text stands behind its ``<!-- figure KEY (scripts/doc_figures.py) -->`` marker, so a reader (and
    test_no_result_figure_is_typed_by_hand) can tell a generated figure from a typed one."""
    unmarked = []
    for key, (doc, _) in _figures_module().FIGURES.items():
        text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())
        marker = re.escape(f"<!-- figure {key} (scripts/doc_figures.py) -->")
        if not re.search(marker + r"\s?(\*\*)?" + re.escape(_now(key)), text):  # the text may open a bold span
            unmarked.append(f"{doc}: {key}")
    assert not unmarked, "figures without their marker right before them: " + ", ".join(unmarked)


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_code_fences_close(doc: Path) -> None:
    """A fence left open turns the rest of the page into code (docs/serving.md's "Largest load" hid eleven sections
    that way) and hides its figures from the tests below."""
    fences = [line for line in doc.read_text(encoding="utf-8").splitlines() if line.lstrip().startswith("```")]
    assert len(fences) % 2 == 0, f"{doc.name}: a code fence is not closed"


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
    for figure in _figures_of("README.md"):
        text = text.replace(figure, " ")
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
    "step_time.md": {"5 layouts": "the five Korthikanti layouts (a fact of the paper)",
                     "5 factors": "the factors per GPU of the step model (a definition)"},
}


def _without_generated(text: str, doc: str, mod) -> str:
    """``text`` without the FIGURES texts of ``doc``, its generated blocks and the scripts' own blocks."""
    for figure in _figures_of(doc):
        text = text.replace(figure, " ")
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



#: a dollar amount: "$1,486,690", "$2.00/GPU-h", "$1.84M", "$300K" (a `$` followed by a digit)
DOLLARS = re.compile(r"\$\d[\d,.]*(?:\s?[KMBT]\b)?")

#: inputs a doc quotes beside their source (catalogue defaults and prices, a scenario's or a request's own input):
#: (doc, the text, where the value lives: "FILE under catalog/:record.field", the value the text states);
#: test_quoted_inputs_are_the_catalogue_s checks each against the file, so none goes stale unseen
QUOTED_INPUTS = (
    ("finance.md", "the book's $300K per 8-GPU server (17.9.3)", "defaults.yaml:server_capex_usd", 300_000),
    ("finance.md", "$25K per GPU alone (17.5.9)", "defaults.yaml:gpu_capex_usd", 25_000),
    ("finance.md", "$300K, spec 17.9.3", "defaults.yaml:server_capex_usd", 300_000),
    ("finance.md", "$50K, table 17-67", "defaults.yaml:ib_switch_usd", 50_000),
    ("finance.md", "$2,500, **estimated**", "defaults.yaml:optics_usd_per_link", 2_500),
    ("finance.md", "$30/TB-month, table 17-67 midpoint", "defaults.yaml:storage_usd_per_TB_month", 30),
    ("finance.md", "PUE 1.4 and $0.10/kWh, 17.5.9", "defaults.yaml:pue", 1.4),
    ("finance.md", "PUE 1.4 and $0.10/kWh, 17.5.9", "defaults.yaml:electricity_usd_per_kWh", 0.10),
    ("finance.md", "$184.06/kW-month, CBRE", "defaults.yaml:space_usd_per_kW_month", 184.06),
    ("finance.md", "$180K = BLS May 2023", "defaults.yaml:staff_usd_per_fte_year", 180_000),
    ("finance.md", "the reserved $2.00", "gpus.yaml:h800.price_reserved_usd_per_gpu_hour", 2.0),
    ("finance.md", "h100.price_reserved_usd_per_gpu_hour: 2 -> 1.95", "gpus.yaml:h100.price_reserved_usd_per_gpu_hour",
     2.0),
    ("planner.md", "H800 at reserved $2.00/GPU-h", "gpus.yaml:h800.price_reserved_usd_per_gpu_hour", 2.0),
    ("planner.md", "($4.00 H800 / $1.00 H20)", "gpus.yaml:h800.price_on_demand_usd_per_gpu_hour", 4.0),
    ("planner.md", "($4.00 H800 / $1.00 H20)", "gpus.yaml:h20.price_on_demand_usd_per_gpu_hour", 1.0),
    ("planner.md", "reserved prices ($2.00 / $0.80)", "gpus.yaml:h800.price_reserved_usd_per_gpu_hour", 2.0),
    ("planner.md", "reserved prices ($2.00 / $0.80)", "gpus.yaml:h20.price_reserved_usd_per_gpu_hour", 0.8),
    ("planner.md", "blank = $2,500, estimated", "defaults.yaml:optics_usd_per_link", 2_500),
    ("planner.md", "($300K per 8-GPU server, 17.9.3,", "defaults.yaml:server_capex_usd", 300_000),
    ("planner.md", "the 8 GPUs alone are $200K, 17.5.9", "defaults.yaml:gpu_capex_usd", 200_000 / 8),
    ("planner.md", "blank = $30, the midpoint of table 17-67's self-hosted $0.01-0.05 per GB-month",
     "defaults.yaml:storage_usd_per_TB_month", 30),
    ("planner.md", "blank = $184.06", "defaults.yaml:space_usd_per_kW_month", 184.06),
    ("planner.md", "`staff_usd_per_fte_year` ($180K)", "defaults.yaml:staff_usd_per_fte_year", 180_000),
    ("engineering.md", "H800 ($2.00/GPU-h reserved)", "gpus.yaml:h800.price_reserved_usd_per_gpu_hour", 2.0),
    ("serving-overview.md", "H800 at the scenario's $2.50/GPU-h",
     "scenarios/17.9.6-70b-inference-h800.yaml:cost.gpu_hour_usd", 2.5),
    ("README.md", "3T tokens, 60 days, $2M", "requests/17.9.4-70b-h800.yaml:budget_usd", 2_000_000),
)

#: doc -> the other texts holding a dollar amount a doc may type by hand, each with why (not a result of the code)
DOLLARS_BY_HAND: dict[str, dict[str, str]] = {
    "excel-compatibility.md": {"Sheet!$A:$A,Sheet!$1:$4": "an Excel print-titles reference, not money"},
    "finance.md": {"The book's $1.63-1.80 per GPU-hour (servers, switches, storage and $2-4M a month of power and "
                   "cooling)": "the book's 17.9.3 figures (tests/reference/test_tco.py reproduces the 1.63-1.80)"},
    "planner.md": {  # the "book (corrected)" column: tests/planner/test_book_cases.py asserts the search reproduces it
        "$122,880 / $245,760 (exact $119.5K / $238.9K)": "the book's 17.9.1 figures (spec §6)",
        "17.37M GPU-h, $34.7M / $69.5M; TP8 x EP8": "the book's 17.9.3 figures (spec §6)",
        "75 GB per GPU, 57.57 days, $1,843,200 for 60 days": "the book's 17.9.4 figures (spec §6)"},
}


def _catalogue_value(ref: str):
    """The value at ``ref`` ("FILE:record.field" under catalog/; a defaults.yaml record's ``value``)."""
    import yaml

    file, _, path = ref.partition(":")
    data = yaml.safe_load((ROOT / "catalog" / file).read_text(encoding="utf-8"))
    keys = path.split(".")
    if isinstance(data, list):
        first = keys.pop(0)
        data = next(r for r in data if r.get("key", r.get("id")) == first)
        if not keys:
            return float(data["value"])
    for k in keys:
        data = data[k]
    return float(data)  # PyYAML reads "2e6" as a string


def test_quoted_inputs_are_the_catalogue_s() -> None:
    """Each catalogue default, price or input a doc quotes by hand (QUOTED_INPUTS) is still in the doc and still the
    catalogue's value."""
    bad = []
    for doc, text, ref, value in QUOTED_INPUTS:
        held = " ".join((README if doc == "README.md" else ROOT / "docs" / doc).read_text(encoding="utf-8").split())
        if text not in held:
            bad.append(f"{doc}: no longer quotes {text!r} (update QUOTED_INPUTS)")
        elif _catalogue_value(ref) != pytest.approx(value, rel=1e-12):
            bad.append(f"{doc}: {text!r} quotes {value}, catalog/{ref} is now {_catalogue_value(ref)}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_no_dollar_amount_is_typed_by_hand(doc: Path) -> None:
    """Money goes stale as prices, defaults and models move (docs/finance.md kept a serving TCO from before the full
    bill): every dollar amount is a FIGURES text, in a generated block, on a benchmark page, a catalogue input
    checked by test_quoted_inputs_are_the_catalogue_s, or listed in DOLLARS_BY_HAND with why."""
    text = doc.read_text(encoding="utf-8")
    if BENCH_PAGE in text or doc.name == "quantities.md":
        return
    name = "README.md" if doc == README else f"docs/{doc.name}"
    rest = _without_generated(" ".join(text.split()), name, _figures_module())
    allowed = [*DOLLARS_BY_HAND.get(doc.name, {}), *(t for d, t, *_ in QUOTED_INPUTS if d == doc.name)]
    missing = [t for t in DOLLARS_BY_HAND.get(doc.name, {}) if t not in rest]
    for t in allowed:
        rest = rest.replace(t, " ")
    found = [m.group(0) for m in DOLLARS.finditer(rest)]
    assert not found and not missing, (
        f"{doc.name}: dollar amounts no test recomputes: {found}; quote them through scripts/doc_figures.py (FIGURES "
        f"or BLOCKS), or list a catalogue input in QUOTED_INPUTS, or another text in DOLLARS_BY_HAND with why"
        + (f"; listed in DOLLARS_BY_HAND but not in the doc: {missing}" if missing else ""))


#: a result the model computes, typed as a figure: a signed percentage (an error against a published value, a swing)
#: or a number of days, GPU-hours, tokens/s, GB, GiB, TB or milliseconds
RESULT = re.compile(r"(?<![\w.,])(?:[-+−]\d[\d,]*(?:\.\d+)?\s?%|[-+−]?\d[\d,]*(?:\.\d+)?[kKM]?\s(?:days?|GPU-h|GPU-hours|"
                    r"(?:output |input )?(?:tokens|tok)/s|GB|GiB|TB|ms)\b)")

PUBLISHED = "a published figure, its source beside it"
INPUT = "an input of a shipped request or scenario, or of a test"
CATALOGUE = "a catalogue value (catalog/*.yaml)"
RULE = "a rule, default or limit of the code, or a bound a test asserts"
BOOK = "the book's own figure (spec §6, corrected), beside the search's generated answer"
DERIVED = "arithmetic on published or catalogue figures, shown with its terms"

#: doc -> sections (their heading line) whose figures are not generated yet, with why; a section runs to the next
#: heading of its level or above (none is left: every section is checked)
SECTIONS_BY_HAND: dict[str, dict[str, str]] = {}

#: doc -> texts with a figure of RESULT's form that is not a result of the code, each with why (PUBLISHED, INPUT, ...)
RESULTS_BY_HAND: dict[str, dict[str, str]] = {
    "activations.md": {
        "recovers 9.2 GB of reserved memory on average over eight LLM trainings": PUBLISHED,
        "81,559 MiB = 85.5 GB on an \"80 GB\" H100": CATALOGUE,
        "recovers 9.2 GB of the PyTorch caching allocator's fragmentation": PUBLISHED,
        "DeepSeek-V3 on 2,048 H800 (80 GB)": CATALOGUE,
        "with 2 GB of overhead added": RULE},
    "engineering.md": {
        "Korthikanti's 175B weights + optimizer per GPU (45.6 GiB)": PUBLISHED,
        "2T tokens in 14 days": INPUT,
        "TTFT <= 2 s, TPOT <= 50 ms": INPUT,
        "the H800's 400 GB/s NVLink": CATALOGUE,
        "DeepSeek-V3's 2,664K GPU-hours": PUBLISHED,
        "target 60 days": INPUT,
        "(79.22 GiB on the H100, about 0.4 GiB below nvidia-smi's 79.65 GiB)": CATALOGUE},
    "evidence.md": {"**Llama 2 GPU-hours**": "a model's name"},
    "finance.md": {
        "81,559 MiB = 85.5 GB on an \"80 GB\" H100": CATALOGUE,
        "(\"80 GB\")": CATALOGUE},
    "planner.md": {
        "256 H800 at MFU 0.38, 9.72 days, 61,440 GPU-h billed (10 days)": BOOK,
        "1024 GPUs at 0.32 -> 36.0 days (256 at 0.35 -> 131.6 days)": BOOK,
        "16,384 GPUs at 0.32 -> 44.17 days, 17.37M GPU-h": BOOK,
        "no ZeRO, 75 GB per GPU, 57.57 days, $1,843,200 for 60 days": BOOK,
        "bills 10 days for 17.9.1": BOOK,
        "TTFT 2 s, TPOT 50 ms": INPUT,
        "DeepSeek publishes about 14.8k output tokens/s per decode node": PUBLISHED,
        "TTFT 500 ms": INPUT,
        "so -/+0.5 % around it passes": RULE,
        "-20 % / +20 %": RULE},
    "serving-overview.md": {"a 1 ms TTFT gives 0": INPUT},
    "serving.md": {
        "(+0.024%)": DERIVED,
        "(79.22 GiB on an \"80 GB\" H100)": CATALOGUE,
        "that is 5.6 GiB": DERIVED,
        "(0.060 ms: \"unit tests with DeepEP reveal a potential of 0.06ms occupying SMs\") and combine (0.077 ms": PUBLISHED,
        "measured a 33 ms step at one request": PUBLISHED,
        "at about 5.1 ms per layer (read from the chart)": PUBLISHED,
        "about 1 GB per re-run": DERIVED,
        "with a 50 ms TPOT target": INPUT,
        "(targets 20-100 ms, caps 40-256) and Llama-3-70B TP4 (18-30 ms)": INPUT,
        "(about 7 ms for a 4K": DERIVED,
        "would favour a fixed 43.9 ms": DERIVED,
        "a 60 ms TPOT target admits more load than 30 ms": INPUT,
        "a 1 ms TTFT gives 0": INPUT,
        "vLLM 3 ms, SGLang 2 ms, TensorRT-LLM 1.5 ms": CATALOGUE,
        "1,227 against 2,941 output tokens/s per GPU": PUBLISHED,
        "far above the published 1,654 tokens/s per GPU": PUBLISHED,
        "= 3.35e12 / (1,152 x 131,072) = 22,200 output tokens/s": DERIVED,
        "80.5 GB of BF16 KV beside 69 GB of weights": DERIVED,
        "H200 V1 log \"(139.21/139.81 GiB)\"": PUBLISHED,
        "2.30 TB/s (0.687; inclusionAI/humming PR 2, n = k = 8192) and 2.87-2.91 TB/s": PUBLISHED,
        "at 0.78 x 3.35 TB/s": CATALOGUE,
        "(>= 70 GiB, not A100)": PUBLISHED,
        "vLLM V1 logs: 1.40 GiB / (256 x 151,936) (Qwen3-8B-FP8), 5.58 GiB / (1024 x 151,936)": PUBLISHED,
        "vLLM logs (0.35-0.47 GiB V0, 0.68-2.37 GiB V1)": PUBLISHED,
        "It gives 2291.0 output tok/s with 1 scheduler step": PUBLISHED,
        "so X = 43.9 ms of CPU time per scheduler call": DERIVED,
        "21.67 / 24.45 ms (70B, 4 x H100, 4 / 8 req/s) and 11.93 / 14.41 ms": PUBLISHED,
        "concurrency 1, TTFT 406.77 ms, ITL 18.58 ms": PUBLISHED,
        "18,598 output tokens/s per node: 128 x 8 / 18,598 = 55.06 ms a step": DERIVED,
        "meets 20 tokens/s per user at about 92 requests per GPU, 1,850 tokens/s per GPU": PUBLISHED,
        "TPOT grows from 14.14 to 17.09 ms between 4 and 8 req/s": PUBLISHED,
        "(t_s = the LambdaLabs step, 11.7 / about 12 ms; TPOT 14.14 / 17.09 ms) t_b is 43 / 37 ms": DERIVED,
        "(3.7-3.9k and 4.1-4.3k tok/s)": PUBLISHED,
        "(PR 21429, on 139 GiB GPUs) shows weights 55.13 GiB, activation (torch peak) 5.62 GiB and non-torch 2.04 GiB":
            PUBLISHED,
        "This model's run used 2.04 GiB, against the 1.4 GiB median of other TP > 1 logs": PUBLISHED,
        "178,880 tokens is 8.02 GiB, against the 8.11 GiB one rank printed": DERIVED,
        "(14.8k / 8 GPUs / 21 tok/s = 88 requests per GPU": DERIVED,
        "about 1.42 ms per layer (about 86.6 ms a step over 61 layers; read from the chart, not printed)": PUBLISHED,
        "and 55.06 ms is a time per output token, not a step": PUBLISHED,
        "The point stays at 55.06 ms (the printed throughput)": PUBLISHED,
        "128 tokens (deepseek-ai/DeepEP docs/legacy.md), 0.56 ms": DERIVED,
        "62,713 tokens/s per node, a 2.09 s step": DERIVED,
        "(read from the chart, about 34.6 ms per layer)": PUBLISHED,
        "published multi-step windows are 275 ms at 8 req/s": PUBLISHED},
    "step_time.md": {
        "about 230-240 of 300 GB/s (A100) and 360 of 450 GB/s (H100": PUBLISHED,
        "Table 2's \"84 days\"": PUBLISHED,
        "84.7 days. Eq. 4's shortcut 8TP/(nX) gives 82.5 days.": DERIVED,
        "at 140 TFLOP/s: 34 days, and the 1T model on 3072 A100 at 163: 84 days; the 84 days": PUBLISHED},
    "validation.md": {
        "the 65B's 380 tokens/s/GPU": PUBLISHED,
        "the Llama 3.1 card's 30.84M GPU-hours": PUBLISHED,
        "the published 135,168 GPU-hours": PUBLISHED,
        "median ITL 43.3 ms with one 32K-token request decoding (P99 46.5 ms, so no prefill chunk rides with it) and "
        "43-50 ms": PUBLISHED,
        "median ITL 66.1 ms (vLLM)": PUBLISHED,
        "has an ITL of 7.0-7.4 ms": PUBLISHED,
        "30.29 output tokens/s at batch 1, a 33 ms step": DERIVED,
        "What the 33 ms batch-1 step of SGLang 0.4.1": DERIVED,
        "(mean TTFT 64 ms for about 230 prompt tokens": PUBLISHED},
}


def _without_sections(text: str, headings) -> str:
    """``text`` without the sections whose heading line is in ``headings`` (up to the next heading of their level or
    above; a ``#`` line inside a code fence is not a heading)."""
    out, skip, fenced = [], None, False
    for line in text.splitlines(keepends=True):
        fenced ^= line.lstrip().startswith("```")
        level = len(line) - len(line.lstrip("#")) if line.startswith("#") and not fenced else 0
        if level and line[level:level + 1] == " " and (skip is None or level <= skip):
            skip = level if line.strip() in headings else None
        if skip is None:
            out.append(line)
    return "".join(out)


def _prose(text: str, doc: str) -> str:
    """``doc``'s text as prose: no generated blocks, code fences, FIGURES texts, code spans or comments; white space
    folded (the figures and RESULTS_BY_HAND texts are matched across line breaks)."""
    text = re.sub(r"<!-- block (\S+):begin.*?<!-- block \1:end -->", " ", text, flags=re.S)
    text = re.sub(r"<!-- (accuracy|evidence)-table:begin.*?<!-- \1-table:end -->", " ", text, flags=re.S)
    text = " ".join(re.sub(r"^[ \t]*```.*?^[ \t]*```[^\n]*$", " ", text, flags=re.S | re.M).split())
    for figure in _figures_of(doc):
        text = text.replace(figure, " ")
    return re.sub(r"<!--.*?-->", " ", re.sub(r"`[^`]*`", " ", text))


@pytest.mark.parametrize("doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_no_result_figure_is_typed_by_hand(doc: Path) -> None:
    """Issue 25: every figure in the README and docs is produced by a command a test runs. A result of the model
    (days, GPU-hours, tokens/s, GB, ms, an error in %) is a FIGURES text or in a generated block
    (scripts/doc_figures.py, checked by test_every_quoted_figure_is_current and test_generated_blocks_are_current);
    any other is a published figure, an input, a rule or the book's own figure, listed in RESULTS_BY_HAND with why,
    or sits in a section of SECTIONS_BY_HAND. Dated history is not documentation: git log keeps it."""
    text = doc.read_text(encoding="utf-8")
    if BENCH_PAGE in text or doc.name == "quantities.md":  # benchmarks; the generated quantity reference
        return
    name = "README.md" if doc == README else f"docs/{doc.name}"
    sections = SECTIONS_BY_HAND.get(doc.name, {})
    missing = [h for h in sections if h not in text.splitlines()]
    rest = _prose(_without_sections(text, sections), name)
    allowed = [*RESULTS_BY_HAND.get(doc.name, {}), *(t for d, t, *_ in QUOTED_INPUTS if d == doc.name)]
    missing += [t for t in RESULTS_BY_HAND.get(doc.name, {}) if t not in rest]
    for t in allowed:
        rest = rest.replace(t, " ")
    found = [m.group(0) for m in RESULT.finditer(rest)]
    assert not found and not missing, (
        f"{doc.name}: result figures typed by hand: {found}; generate them with scripts/doc_figures.py (FIGURES or "
        "BLOCKS), delete them if they are history, or list a sourced quote, input or rule in RESULTS_BY_HAND with why"
        + (f"; listed but no longer in the doc: {missing}" if missing else ""))
