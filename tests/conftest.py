"""Session-wide test hooks."""

from __future__ import annotations


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
