#!/bin/sh
# Regenerate every derived file after the models move (in this order: the shipped calibration, the verdicts that
# open the validation notes, the evidence and accuracy tables, the quantity reference), then print the figures
# the README and docs quote and rewrite the generated blocks and figures (tests/test_docs.py names any doc whose text
# is stale; a figure whose words changed, not only its numbers, is pasted by hand).
#   sh scripts/refresh_derived.sh
set -eu
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
export PYTHONPATH=.
$PY scripts/calibrate_shipped.py
$PY scripts/refresh_verdicts.py --write catalog/validation/*.yaml
$PY scripts/evidence_table.py --write docs/evidence.md
$PY scripts/accuracy_table.py --write
$PY scripts/quantities_doc.py > docs/quantities.md
$PY scripts/doc_figures.py --write
