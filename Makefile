# The README's two commands: `make run` (set up, build the default workbook, verify it, plan a shipped training and a shipped serving request) and
# `make test` (set up, run the whole test suite). Both work on a fresh machine with Python + pip.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup libreoffice run calc test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

libreoffice:  # LibreOffice and Gnumeric
	bash scripts/install-libreoffice.sh

calc: setup
	$(BIN)/workbook calc catalog/scenarios/*.yaml

run: setup libreoffice
	$(BIN)/workbook build -o out/ai-infra-workbook.xlsx
	$(BIN)/workbook verify out/ai-infra-workbook.xlsx
	$(BIN)/workbook lint out/ai-infra-workbook.xlsx
	$(BIN)/workbook plan catalog/requests/17.9.4-70b-h800.yaml -o out/plans --force
	$(BIN)/workbook plan catalog/requests/serve-70b-chat.yaml -o out/plans --force
	$(BIN)/workbook lint out/plans/17.9.4-70b-h800.xlsx out/plans/serve-70b-chat.xlsx

test: setup libreoffice
	$(BIN)/python -m pytest -q -n 2

bench: setup libreoffice
	$(BIN)/python scripts/bench.py

clean:
	rm -rf $(VENV) out/*.xlsx out/*.pdf
