"""``verify`` runs its engines concurrently: same report as one engine at a time."""

from __future__ import annotations

import pytest

from workbook import engines
from workbook.engines import EngineError, available_engines

pytestmark = pytest.mark.slow

ENGINES = available_engines()


@pytest.fixture(scope="module")
def default_book(tmp_path_factory):
    from workbook.catalog import load_catalog
    from workbook.scenario import load_scenarios
    from workbook.writer import build

    from tests.writer.conftest import SHIPPED

    path = tmp_path_factory.mktemp("verify") / "default.xlsx"
    build(path, load_scenarios(SHIPPED), load_catalog(), [("x", "y")])
    return path


@pytest.fixture(scope="module")
def computed() -> dict:
    """{engine: the values it computed for the default book}, kept from this module's first verify for the tests
    that only need real values to skew (recalculating the same file again gives the same)."""
    return {}


@pytest.mark.skipif(len(ENGINES) < 2, reason="needs both engines")
def test_both_engines_concurrently(default_book, computed, monkeypatch):
    from workbook.verify import verify

    real = engines.recalculate

    def keep(path, engine):
        values = real(path, engine)
        computed.setdefault(engine, values)
        return values

    monkeypatch.setattr(engines, "recalculate", keep)
    both = verify(default_book, ENGINES)
    assert both.ok, "\n".join(str(m) for m in both.mismatches[:10])
    single = [verify(default_book, [e]) for e in ENGINES]
    assert both.cells_checked == sum(r.cells_checked for r in single) > 2000
    assert set(both.seconds) == set(both.versions) == set(ENGINES)
    assert both.versions == {e: r.versions[e] for e, r in zip(ENGINES, single)}


@pytest.mark.skipif(not ENGINES, reason="no engine installed")
def test_engine_failure_is_raised(default_book, monkeypatch):
    from workbook.verify import verify

    def boom(path, engine):
        raise EngineError(f"{engine} failed")

    monkeypatch.setattr(engines, "recalculate", boom)
    with pytest.raises(EngineError, match="failed"):
        verify(default_book, ENGINES)


@pytest.mark.skipif(not ENGINES, reason="no engine installed")
def test_mismatch_names_its_engine(default_book, computed, monkeypatch):
    from workbook.verify import verify

    real = engines.recalculate

    def skewed(path, engine):
        values = dict(computed[engine]) if engine in computed else real(path, engine)
        if engine == ENGINES[-1]:
            key = next(k for k, v in values.items() if isinstance(v, float) and v > 1)
            values[key] *= 2
        return values

    monkeypatch.setattr(engines, "recalculate", skewed)
    report = verify(default_book, ENGINES)
    assert not report.ok
    assert {m.engine for m in report.mismatches} == {ENGINES[-1]}
