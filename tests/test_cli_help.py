"""Every subcommand's --help has a description and an example (workbook/cli_help.py)."""

from __future__ import annotations

import argparse

import pytest

from workbook.cli import build_parser


def _subcommands(parser: argparse.ArgumentParser, prefix: tuple = ()) -> list[tuple[tuple, argparse.ArgumentParser]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = _subcommands(sub, prefix + (name,))
                out += inner or [(prefix + (name,), sub)]
    return out


SUBS = _subcommands(build_parser())


def test_the_commands_are_there() -> None:
    names = {" ".join(n) for n, _ in SUBS}
    assert {"calc", "build", "verify", "lint", "validate", "calibrate", "plan", "export", "audit", "import",
            "catalog add-model", "catalog add-gpu"} <= names


@pytest.mark.parametrize("name,sub", SUBS, ids=[" ".join(n) for n, _ in SUBS])
def test_help_has_a_description_and_an_example(name, sub) -> None:
    text = sub.format_help()
    assert sub.description and len(sub.description) > 20, name
    assert "example:" in text and "workbook " + name[0] in text.split("example:")[1], name
