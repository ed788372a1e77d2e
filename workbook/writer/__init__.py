"""``workbook build``: the live-formula workbook from a catalogue and a scenario set."""

from __future__ import annotations

import gc
import hashlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbook.writer.catalog_sheets import (CONSTANTS_SHEET, DEFAULTS_SHEET, EFFICIENCY_SHEET, EFFICIENCY_TITLE,
                                            ENGINE_DEVICES_TITLE, ENGINE_PROFILES_TITLE, ENGINES_SHEET, GPU_SHEET,
                                            MODEL_SHEET, write_constants, write_defaults, write_table)
from workbook.writer.charts import add_charts
from workbook.writer.tornado import add_tornado
from workbook.writer.cover import write_cover
from workbook.writer.layout import CALC_SHEETS, MANIFEST_SHEET, value_col
from workbook.writer.manifest import HEADERS, write_manifest
from workbook.writer import changelog
from workbook.writer.status import status_texts, write_status
from workbook.writer.summary import write_summary
from workbook.writer.line_items import write_module
from workbook.writer.inputs import input_values
from workbook.writer.plan_inputs import write_inputs
from workbook import __version__
from workbook import safe_write
from workbook.writer import xlsx
from workbook.writer.xlsx import Book, Writer

DEFAULT_OUTPUT = Path("out/ai-infra-workbook.xlsx")


@dataclass
class Planned:
    """One scenario column: the scenario as written, resolved, its catalogue records and results."""

    raw: Any
    scenario: Any
    gpu: Any
    model: Any
    results: dict[str, float]


def files_hash(paths: list[Path]) -> str:
    """sha256 over the files' names and bytes (sorted), short form."""
    h = hashlib.sha256()
    for p in sorted(paths, key=lambda p: p.name):
        h.update(p.name.encode())
        h.update(b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def plan_scenarios(scenarios: list, catalog) -> list[Planned]:
    from workbook.calc import compute_resolved
    from workbook.scenario.resolve import resolve

    out = []
    for sc in scenarios:
        s, gpu, model = resolve(sc, catalog)
        out.append(Planned(sc, s, gpu, model, compute_resolved(s, gpu, model, catalog.defaults.as_dict(),
                                                               catalog.efficiency_of(gpu.id), engines=catalog.engines)))
    return out


def _collect_constants():
    from workbook.calc import SHEETS
    import importlib
    import importlib.util

    from workbook.sheets import constants as base

    consts = list(base.CONSTANTS)
    tables = dict(base.TABLES)
    for module in SHEETS:
        if importlib.util.find_spec(f"workbook.sheets.{module}") is None:
            continue  # write_module reports the missing line items
        mod = importlib.import_module(f"workbook.sheets.{module}")
        for c in getattr(mod, "CONSTANTS", []):
            if any(c[0] == k[0] for k in consts):
                raise ValueError(f"constant c_{c[0]} declared twice")
            consts.append(c)
        for name, t in getattr(mod, "TABLES", {}).items():
            if name in tables:
                raise ValueError(f"table t_{name} declared twice")
            tables[name] = t
    return consts, tables


@contextmanager
def gc_paused():
    """The cyclic garbage collector off for the block (then as it was). A build makes a few million objects
    that live until it ends; the collector would walk them again and again (a sixth of a build's time).

    On the way out they join the oldest generation (gc.freeze then gc.unfreeze, when nothing else is frozen):
    switched back on, the collector would otherwise walk them all at once, as young objects, right away."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def input_hashes(inputs) -> dict[str, str]:
    """{"folder/file.yaml": sha256} of the YAML files among *inputs* (what the build read)."""
    return {input_key(p): hashlib.sha256(Path(p).read_bytes()).hexdigest()
            for p in inputs if str(p).endswith(".yaml") and Path(p).is_file()}


def input_key(path) -> str:
    """The record's name of an input file: its folder's name and its own (``catalog/gpus.yaml``)."""
    return f"{Path(path).parent.name}/{Path(path).name}"


def build(output: Path, scenarios: list, catalog, provenance: list[tuple[str, str]],
          previous: tuple[str, dict] | None = None, kept: list | None = None, plan=None,
          inputs: tuple = ()) -> Book:
    """Write the workbook for *scenarios* (Scenario objects) to *output*; return what was written.

    *previous*: (what it is, Manifest record) of the previous build: a Changelog sheet lists the catalogue changes
    since; *kept*: changelog rows of the edits carried over from a person's workbook (``--keep-edits``);
    *inputs*: the files the build read (the output must not be one of them).
    """
    with gc_paused():
        return _build(output, scenarios, catalog, provenance, previous, kept, plan, inputs)


def _build(output: Path, scenarios: list, catalog, provenance: list[tuple[str, str]],
           previous: tuple[str, dict] | None, kept: list | None, plan, inputs: tuple = ()) -> Book:
    from workbook.calc import modules

    planned = plan_scenarios(scenarios, catalog)
    names = [p.scenario.name for p in planned]
    if len(set(names)) != len(names):
        from workbook.errors import InputError

        raise InputError("scenario names must be unique", field="name", expected=", ".join(names))
    output = Path(output)
    models = list(catalog.models.values())
    models += [p.model for p in planned if p.model.id not in catalog.models]
    log = list(kept or [])
    if previous is not None:
        log = changelog.diff(changelog.record_view(previous[1]), changelog.catalogue_view(catalog, models)) + log
    book = Book(path=output, scenario_names=names, input_hashes=input_hashes(inputs))
    # every temporary (the output's, xlsxwriter's part files in /dev/shm) is removed on failure, and nothing
    # is written through a link or over an input: workbook/safe_write.py
    with safe_write.scratch_folder(xlsx.scratch_dir()) as scratch, \
            safe_write.atomic_file(output, inputs=inputs) as out_file:
        from workbook.writer.planbook import plan_sheet_names, write_plan_sheets

        optional = ((changelog.CHANGELOG_SHEET,) if log else ()) + (plan_sheet_names(plan) if plan is not None else ())
        w = Writer(out_file, book, optional=optional, tmpdir=scratch)
        _write_data_sheets(w, catalog, models)
        w.title("Plan", "Plan", "Scenario inputs (blue; the header row holds the scenario names), then the selected "
                "hardware, model and training plan. The answers: Summary sheet.")
        for sheet in CALC_SHEETS:
            w.calc_header(sheet, names)
        w.ws["Plan"].write_url(2, 0, "internal:Summary!A1", w.fmt("link"), string="The answers: Summary sheet")
        w.book.cells.add("Plan", 2, 0, "label")
        inputs = [input_values(p.raw, p.model.id) for p in planned]
        write_inputs(w, inputs)
        results = [p.results for p in planned]
        order, titles = module_order(modules(), plan)
        for module, mod in order:
            write_module(w, module, mod.QUANTITIES, results, titles.get(module))
        for sheet in CALC_SHEETS[1:]:
            w.title(sheet, sheet, "One row per quantity, one column per scenario (spec section in the Source column).")
        write_status(w, results)
        _check_formats(w, len(names))
        add_charts(w, names)
        add_tornado(w, names, tornado_columns(names, planned[0].scenario.purpose, plan))
        w.wb.set_custom_property("tool_version", __version__)
        for key, value in provenance:
            w.wb.set_custom_property(key, value)
        for sheet in CALC_SHEETS:  # the print area ends at the last row written (an empty row past it can print as
            # a blank page of its own in LibreOffice when the rows fill the page before it)
            w.finish_sheet(sheet, value_col(len(names) - 1), w.book.layout.next_row.get(sheet, 6) - 1)
        statuses = status_texts(results, [value_col(i) for i in range(len(names))])["scenario_status"]
        write_summary(w, names, results, [p.scenario for p in planned], [p.model.id for p in planned], statuses)
        if plan is not None:
            from workbook.catalog.provenance import provenance_flags

            plan.inputs = inputs
            p0 = planned[0]
            plan.flags = provenance_flags(catalog, p0.gpu.id, p0.model.id if p0.model.id in catalog.models else None,
                                          str(inputs[0].get("cost.price_basis") or "on_demand"))
        write_cover(w, provenance, names, statuses, results, plan)
        if plan is not None:
            write_plan_sheets(w, names, results, plan, catalog, planned)
        if log:
            last = changelog.write_changelog(w, log, previous[0] if previous else "none")
            w.finish_sheet(changelog.CHANGELOG_SHEET, len(changelog.HEADERS) - 1, last)
        w.finish_sheet(MANIFEST_SHEET, len(HEADERS) - 1, write_manifest(w))
        w.close()
    return book


#: a serving-only plan's Sensitivity sheet: its training block comes second, titled for what it is
UNASKED_TRAINING_TITLE = ("Training sensitivity: not asked for by this request (the column's training defaults; "
                          "not part of the plan)")


def tornado_columns(names: list[str], purpose: str, plan) -> tuple[int | None, int | None]:
    """The (training, serving) columns the Sensitivity's tornados chart (workbook.writer.tornado.columns)."""
    from workbook.writer.planbook_serving import serving_columns, trains
    from workbook.writer.tornado import columns

    if plan is None:
        return columns(purpose)
    serving = serving_columns(names, plan)
    return columns(purpose, serving[0] if serving else None, trains(plan))


def module_order(mods: list, plan) -> tuple[list, dict[str, str]]:
    """The calculation modules in the order their blocks are written, and block titles that differ: a serving-only
    plan puts the serving sensitivity first on the Sensitivity sheet and titles the training one as unasked."""
    from workbook.writer.planbook_serving import trains

    if plan is None or trains(plan):
        return mods, {}
    names = [n for n, _ in mods]
    i, j = names.index("sensitivity"), names.index("serving_sensitivity")
    order = mods[:i] + [mods[j]] + mods[i:j] + mods[j + 1:]
    return order, {"sensitivity": UNASKED_TRAINING_TITLE}


def _write_data_sheets(w: Writer, catalog, models: list) -> None:
    """Hardware (GPU catalogue), Efficiency, Models, Defaults and Constants: input and constant cells only."""
    w.title(GPU_SHEET, "Hardware", "The GPU catalogue, one row per GPU (inputs: blue). Type a new GPU into the next "
            "empty row: it joins the GPU dropdown on Plan and every lookup.")
    last, fields = write_table(w, GPU_SHEET, "gpu", "GPU catalogue", list(catalog.gpus.values()), 3)
    w.finish_sheet(GPU_SHEET, len(fields) - 1, last)
    w.title(EFFICIENCY_SHEET, "Efficiency", "Step-time model factors, one row per GPU (inputs: blue; "
            "catalog/efficiency.yaml, docs/step_time.md): achieved fractions of the Hardware figures, NIC, latencies.")
    last, fields = write_table(w, EFFICIENCY_SHEET, "eff", EFFICIENCY_TITLE, list(catalog.efficiency.values()), 3)
    w.finish_sheet(EFFICIENCY_SHEET, len(fields) - 1, last)
    _write_engines(w, catalog)
    w.title(MODEL_SHEET, "Models", "Model architectures, one row per model (inputs: blue). Type a new model into the "
            "next empty row. Parameter counts are computed on Plan.")
    last, fields = write_table(w, MODEL_SHEET, "model", "Model catalogue", models, 3)
    w.finish_sheet(MODEL_SHEET, len(fields) - 1, last)
    w.title(DEFAULTS_SHEET, "Defaults", "Catalogue defaults (inputs: blue): a scenario input left blank on Plan takes "
            "the value of the same key here.")
    last = write_defaults(w, catalog.defaults, 3)
    w.finish_sheet(DEFAULTS_SHEET, 5, last)
    w.title(CONSTANTS_SHEET, "Constants", "Unit factors, spec factors, lookup tables, input ranges and choice lists "
            "(locked): the formulas refer to these by name.")
    consts, tables = _collect_constants()
    last = write_constants(w, consts, tables, 3)
    w.finish_sheet(CONSTANTS_SHEET, 7, last)


def _write_engines(w: Writer, catalog) -> None:
    """Engines: the serving-engine profiles and the device memory of catalog/engines.yaml (inputs)."""
    from workbook.catalog.engines import load_engines

    engines = catalog.engines or load_engines(gpu_ids=catalog.gpus)
    w.title(ENGINES_SHEET, "Engines", "Serving-engine profiles and device memory (inputs: blue; catalog/engines.yaml, "
            "docs/serving.md): how each engine sizes its KV cache and what its decode and prefill steps cost.")
    last, fields = write_table(w, ENGINES_SHEET, "engine", ENGINE_PROFILES_TITLE, list(engines.profiles), 3)
    last, dev_fields = write_table(w, ENGINES_SHEET, "device", ENGINE_DEVICES_TITLE, list(engines.devices), last + 1)
    w.finish_sheet(ENGINES_SHEET, max(len(fields), len(dev_fields)) - 1, last)


def _check_formats(w: Writer, n: int) -> None:
    """Check cells green at 0, red otherwise (hard checks, input checks; warnings amber; the counts stay plain): the
    Checks sheet's checks and the input checks on Plan."""
    from workbook.writer import styles

    ok = w.wb.add_format({"bg_color": styles.PASS_FILL, "font_color": styles.PASS_FONT})
    bad = w.wb.add_format({"bg_color": styles.FAIL_FILL, "font_color": styles.FAIL_FONT})
    amber = w.wb.add_format({"bg_color": styles.WARN_FILL, "font_color": styles.WARN_FONT})
    c1 = value_col(n - 1)
    for sheet, prefixes in (("Checks", ("check_", "warn_")), ("Plan", ("input_error_",))):
        ws = w.ws[sheet]
        rows = sorted(r for k, (s, r) in w.book.layout.rows.items() if s == sheet and k.startswith(prefixes))
        warn = {r for k, (s, r) in w.book.layout.rows.items() if s == sheet and k.startswith("warn_")}
        runs, start = [], rows[0]  # contiguous blocks of one kind (hard, warning, input)
        for prev, cur in zip(rows, rows[1:] + [None]):
            if cur != prev + 1 or (cur in warn) != (prev in warn):
                runs.append((start, prev))
                start = cur
        for r0, r1 in runs:
            fail = amber if r0 in warn else bad  # a warning is amber, a failure red
            ws.conditional_format(r0, value_col(0), r1, c1, {"type": "cell", "criteria": "==", "value": 0, "format": ok})
            ws.conditional_format(r0, value_col(0), r1, c1, {"type": "cell", "criteria": "!=", "value": 0,
                                                              "format": fail})
