"""Fuzz the input contract (hypothesis, bounded examples, derandomized so CI sees the same cases): YAML files
mutated with hostile tokens through ``calc`` and ``build``, and edited workbooks through ``import``. Every run
ends in exit 0 with a correct result, or exit 2 with one line and nothing written; never a traceback, never a
changed file outside the output folder. (The harness bounds the time: each example has a deadline.)"""

from __future__ import annotations

import io
import json
import math
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import openpyxl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.private_catalog import built_private_catalog
from workbook.cli import main
from workbook.readback import key_rows

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "catalog" / "scenarios" / "17.9.1-llama-7b-h800.yaml").read_text(encoding="utf-8")
SCENARIO = "17.9.4-70b-plan-h800.yaml"

#: what a hostile or careless user types in place of a value
TOKENS = ["yes", "no", "on", "0400", "0x1F", "1:30", "1_000", "2026-02-30", "2026-13-01", ".nan", "-.inf", "1e400",
          "-0", "0", "''", "~", "[]", "{}", "[[[[[[", "{a: [", "&a [1, *a]", "*undefined", "!!python/object:os.system",
          "=WEBSERVICE(\"http://x\")", "plan!B2 rev", "'\u000b'", "\"\\x00\"", "\"\\uFFFE\"", "|\n  text",
          "100GB/s", "9" * 400, "- a\n- b", "a" * 70]
SETTINGS = dict(deadline=None, derandomize=True, database=None, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _contract(rc: int, out: str, err: str, ok: tuple[int, ...] = (0,)) -> None:
    assert "Traceback" not in out + err
    assert rc in ok + (2,), (rc, err)
    if rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("workbook: error: "), err


@st.composite
def mutated_yaml(draw) -> str:
    lines = BASE.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["value", "insert", "chars"]))
        if how == "value" and ":" in lines[i]:
            key = lines[i].split(":", 1)[0]
            lines[i] = f"{key}: {draw(st.sampled_from(TOKENS))}"
        elif how == "insert":
            lines.insert(i, draw(st.sampled_from(TOKENS)))
        else:
            pos = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:pos] + draw(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=4)) + lines[i][pos:]
    return "\n".join(lines) + "\n"


def _scenario_file(factory, what: str, text: str) -> tuple[Path, Path]:
    folder = factory.mktemp(what)
    path = folder / "s.yaml"
    path.write_bytes(text.encode("utf-8"))  # bytes as generated: a "\r" stays a "\r"
    return folder, path


@settings(max_examples=50, **SETTINGS)
@given(text=mutated_yaml())
def test_calc_fuzz(tmp_path_factory, text: str) -> None:
    folder, path = _scenario_file(tmp_path_factory, "calc", text)
    rc, out, err = _run(["calc", "--json", str(path)])
    _contract(rc, out, err)
    if rc == 0:  # a correct result: JSON of finite numbers (no NaN / Infinity)
        data = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in --json"))
        assert data and all(not isinstance(v, float) or math.isfinite(v) for v in data.values())
    assert [p.name for p in folder.iterdir()] == ["s.yaml"]


@settings(max_examples=5, **SETTINGS)
@given(text=mutated_yaml())
def test_build_fuzz(tmp_path_factory, text: str) -> None:
    folder, path = _scenario_file(tmp_path_factory, "build", text)
    out = folder / "out" / "wb.xlsx"
    rc, stdout, err = _run(["build", "--scenarios", str(path), "-o", str(out)])
    _contract(rc, stdout, err)
    written = sorted(p.name for p in out.parent.iterdir()) if out.parent.exists() else []
    assert written == ([".workbook-builds.json", "wb.xlsx"] if rc == 0 else [])
    assert path.read_bytes() == text.encode("utf-8")  # the input left as it was, byte for byte (read_text would
    # turn a generated "\r" into "\n" and report a change that did not happen)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return built_private_catalog(tmp_path_factory.mktemp("fuzzbook"), SCENARIO)


CELL_VALUES = st.one_of(
    st.sampled_from(["=WEBSERVICE(\"http://x\")", "=1+1", "+1", "-", "@SUM(A1)", "plan!B2 rev", "", " ", "yes",
                     "bf17", "1e400", "R&D <x>"]),
    st.integers(-10**12, 10**12), st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=30))


@pytest.mark.slow
@settings(max_examples=4, **SETTINGS)
@given(edits=st.lists(st.tuples(st.sampled_from(["name", "training.tokens", "training.num_gpus", "training.mfu",
                                                   "training.precision", "gpu", "model"]), CELL_VALUES),
                      min_size=1, max_size=3))
def test_import_fuzz(built: Path, tmp_path_factory, edits) -> None:
    folder = tmp_path_factory.mktemp("import")
    cat = folder / "catalog"
    shutil.copytree(built / "catalog", cat)
    wb = openpyxl.load_workbook(built / "wb.xlsx")
    rows = key_rows(wb["Plan"])
    for key, value in edits:
        row = rows.get(key, 3) + 1
        wb["Plan"][f"F{row}"] = value
    path = folder / "edited.xlsx"
    wb.save(path)
    before = _files(cat)
    rc, out, err = _run(["import", str(path), "--catalog", str(cat)])
    _contract(rc, out, err)
    assert _files(cat) == before  # without --write nothing changes


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
