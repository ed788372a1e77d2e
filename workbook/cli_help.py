"""Descriptions and examples of every `workbook` subcommand's --help (issue 25).

Kept apart from cli.py so a new subcommand only needs a line here; tests/test_cli_help.py checks that
every subcommand's --help has a description and an example.
"""

from __future__ import annotations

import argparse

#: subcommand -> what it does, in a sentence or two (its --help description)
DESCRIPTIONS: dict[str, str] = {
    "calc": "Compute every named quantity of one or more scenarios with the Python reference and print them "
            "side by side (or as JSON).",
    "build": "Write the live-formula Excel workbook of the catalogue and scenarios: one column per scenario, "
             "every number a formula, checked against the reference as it is written.",
    "verify": "Recalculate a workbook with the formulas package, LibreOffice and Gnumeric (the engine that follows "
              "Excel: 0^0 is #NUM! there), concurrently, and compare every cell with the reference computed from "
              "the file's own inputs; exit 1 on any mismatch or error value.",
    "lint": "Check a workbook against Excel's limits and grammar (docs/excel-compatibility.md): formula length, "
            "nesting, ^ and POWER, names that look like cells, number-format conditions, log charts over text; "
            "exit 1 on any finding. No engine needed.",
    "validate": "Compute the validation scenarios and compare named quantities with published measurements "
                "(catalog/validation/*.yaml); print each point, its error and the summary per group.",
    "calibrate": "Fit the efficiency factors to published measurements and write the fitted catalogue records.",
    "audit": "List what was edited in a built workbook (inputs, overwritten formulas, added rows) and whether "
             "its stored values still agree with the reference; exit 0 sound, 1 not.",
    "import": "Carry the inputs edited in a workbook back into the catalogue and scenario YAML files (a diff "
              "by default; --write writes them, validated first).",
    "export": "Write a PDF of chosen sheets of a workbook, recalculated by LibreOffice.",
    "plan": "Answer a budget request: the book's early estimate, a search of every layout on every candidate "
            "GPU, the recommended plan with the alternatives and why layouts were rejected, and the plan "
            "workbook, its PDF and Markdown.",
}

#: subcommand -> example command lines (its --help epilog)
EXAMPLES: dict[str, list[str]] = {
    "calc": ["workbook calc catalog/scenarios/17.9.1-llama-7b-h800.yaml",
             "workbook calc --json catalog/scenarios/*.yaml > quantities.json"],
    "build": ["workbook build -o out/ai-infra-workbook.xlsx",
              "workbook build --catalog my-catalog --scenarios my.yaml -o out/mine.xlsx",
              "workbook build --keep-edits finance-edit.xlsx -o out/plan-v2.xlsx"],
    "verify": ["workbook verify out/ai-infra-workbook.xlsx",
               "workbook verify edited.xlsx --engine gnumeric"],
    "lint": ["workbook lint out/ai-infra-workbook.xlsx out/plans/*.xlsx"],
    "validate": ["workbook validate", "workbook validate catalog/validation/llama1-a100.yaml --json"],
    "calibrate": ["workbook calibrate catalog/validation/*.yaml -o out/calibrated"],
    "audit": ["workbook audit finance-edit.xlsx", "workbook audit finance-edit.xlsx --json"],
    "import": ["workbook import finance-edit.xlsx", "workbook import finance-edit.xlsx --write"],
    "export": ["workbook export out/plans/17.9.4-70b-h800.xlsx --pdf plan.pdf --sheets Cover,Summary,Cost"],
    "plan": ["workbook plan catalog/requests/17.9.4-70b-h800.yaml -o out/plans",
             "workbook plan catalog/requests/serve-70b-chat.yaml --json > plan.json"],
}


def finish(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand a description and an example (kept if a subcommand sets its own)."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {a.dest: a.help for a in action._choices_actions}
        for name, sub in action.choices.items():
            if not sub.description:
                sub.description = DESCRIPTIONS.get(name) or helps.get(name)
            if not sub.epilog and name in EXAMPLES:
                sub.epilog = "example:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
                sub.formatter_class = argparse.RawDescriptionHelpFormatter
            finish(sub)
