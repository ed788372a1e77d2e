"""Session-wide test hooks."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The modules holding a ``slow`` test run first (whole modules, in their order), the quick ones fill the end.

    ``make test`` runs ``-n 2 --dist loadscope --no-loadscope-reorder`` (pyproject addopts): each module runs on one
    worker, so a module-scoped fixture (a built, edited and recalculated set of workbooks) is made once, not once per
    worker, and the modules go out in this order. (``--dist loadgroup`` would group by ``xdist_group`` marks, but
    with pytest 9.2 and xdist 3.8 it silently stops grouping: pytest-dev/pytest-xdist#1386.)
    """
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


@pytest.fixture(scope="session", autouse=True)
def _shared_folder(tmp_path_factory):
    """The folder of tests/shared.py: work done once per session for every module and xdist worker."""
    from tests.shared import set_root

    set_root(tmp_path_factory)


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: D103
    from tests.examples.harness import SUMMARY

    if not SUMMARY:
        return
    terminalreporter.section("book examples")
    total = {"records": 0, "checked": 0, "deviations": 0, "unmapped": 0}
    for part, counts in sorted(SUMMARY.items()):
        terminalreporter.write_line(
            f"{part}: {counts['records']} records, {counts['checked']} checked, "
            f"{counts['deviations']} deviating keys, {counts['unmapped']} unmapped"
        )
        for k in total:
            total[k] += counts[k]
    terminalreporter.write_line(
        f"all: {total['records']} records, {total['checked']} checked, "
        f"{total['deviations']} deviating keys, {total['unmapped']} unmapped"
    )
