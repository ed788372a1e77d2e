"""The plan workbook: the recommended plan, the best alternative per candidate GPU, the runner-up
and the early estimate as scenario columns of the full live workbook (``workbook.writer.build``).

The estimate column joins when it passes its hard checks (so the Cover's master check speaks for the plans);
for an infeasible request the columns are the closest failures per GPU and the estimate.

Hook for the later steps (Recommendation, Assumptions, Cost breakdown, Sensitivity sheets, PDF,
Markdown): they read ``Outcome.data`` (the same dict ``--json`` prints) and the written path.
"""

from __future__ import annotations

from pathlib import Path

from workbook.errors import InputError
from workbook.planner.plan import Outcome
from workbook.planner.request import PlanRequest


def plan_path(out_dir: Path, req: PlanRequest) -> Path:
    return Path(out_dir) / f"{req.request_id}.xlsx"


def refuse_overwrite(path: Path, force: bool) -> None:
    """InputError if ``path`` exists and ``force`` is not given (never overwrite silently)."""
    if path.exists() and not force:
        raise InputError("the plan workbook already exists; give --force to replace it", file=str(path))


def provenance(req: PlanRequest, outcome: Outcome, catalog_dir: Path, portable,
               catalog_files: list[Path]) -> list[tuple[str, str]]:
    """Cover rows: the request's fields, the catalogue hash (of *catalog_files*) and what the search did."""
    from workbook.writer import files_hash

    t = outcome.data["training"]
    s = t.get("search", {})
    rows = [("Plan request", Path(req._source_file or "").name), ("Request id", req.request_id),
            ("Request title", req.title), ("Requester", req.requester), ("Cost centre", req.cost_centre),
            ("Prepared by", req.prepared_by or "-"), ("Reviewed by", req.reviewed_by or "-"),
            ("Approved by", req.approved_by or "-"), ("Request date", str(req.date) if req.date else "-"),
            ("Status", req.status),
            ("Catalogue folder", portable(catalog_dir)),
            ("Catalogue hash (sha256, 16 hex)", files_hash(catalog_files)),
            ("Request hash (sha256, 16 hex)", files_hash([Path(req._source_file)]) if req._source_file else "-"),
            ("Training search", t["status"] if not s else
             f"{t['status']}: {s['layouts']} layouts, {s['screen_step_calls']} screened for time, "
             f"{s['evaluated']} calculated, {s['passed']} passed"),
            ("Serving search", _serving_line(outcome.data["serving"]))]
    return rows


def _serving_line(sv: dict) -> str:
    s, rec = sv.get("search"), sv.get("recommended")
    if not s:
        return sv["status"]
    head = f"{sv['status']}: {s['layouts']} layouts ({sv['engine']}), {s['plans']} carry the load"
    return head + (f"; {rec['num_gpus']} x {rec['gpu']} ({rec['replicas']} x {rec['layout']})" if rec else "")


def write_plan_book(outcome: Outcome, req: PlanRequest, catalog, catalog_dir: Path, path: Path, portable,
                    catalog_files: list[Path] | None = None) -> int:
    """Write the plan workbook; returns the number of scenario columns. *catalog_files*: those the Cover's
    catalogue hash covers (default: *catalog_dir*'s; for an overlay the CLI gives the whole catalogue's too)."""
    from workbook.writer import build

    if not outcome.scenarios:
        raise InputError("nothing to put in a plan workbook: the request gives no architecture "
                         "(only a parameter count); name a catalogue model or an inline architecture",
                         file=req._source_file, field="model")
    if catalog_files is None:
        catalog_files = sorted(Path(catalog_dir).glob("*.yaml"))
    build(path, outcome.scenarios, catalog, provenance(req, outcome, catalog_dir, portable, catalog_files),
          plan=plan_sheets(req, outcome))  # build's safe write makes the folder
    return len(outcome.scenarios)


def set_inputs(sc) -> set[str]:
    """Dotted Plan input keys the scenario sets itself (the request, through the planner)."""
    from workbook.writer.inputs import SECTIONS

    keys = {"purpose"} if "purpose" in sc.model_fields_set else set()
    for section, _ in SECTIONS:
        sub = getattr(sc, section)
        keys |= {f"{section}.{f}" for f in sub.model_fields_set if getattr(sub, f) is not None}
    return keys


def plan_sheets(req: PlanRequest, outcome: Outcome):
    """The plan sheets' inputs (workbook.writer.planbook.PlanBook)."""
    from workbook.writer.planbook import PlanBook

    data = dict(outcome.data)
    data["request"] = {**data.get("request", {}), "date": str(req.date) if req.date else None,
                       "start_date": str(req.start_date) if req.start_date else None}
    return PlanBook(req.request_id, data, [set_inputs(sc) for sc in outcome.scenarios])
