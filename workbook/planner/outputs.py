"""The plan's PDF (the sheets of workbook.writer.planbook.PDF_SHEETS the workbook has, in that order, through
LibreOffice headless: workbook.export.pdf) and its Markdown summary (templates/plan.md.j2, Jinja2), beside the workbook."""

from __future__ import annotations

from pathlib import Path

from workbook import __version__

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def write_pdf(xlsx: Path) -> Path:
    from workbook.export.pdf import export_pdf
    from workbook.export.pdf import sheet_names
    from workbook.writer.planbook import pdf_sheets

    return export_pdf(xlsx, xlsx.with_suffix(".pdf"), pdf_sheets(sheet_names(xlsx)))


def markdown(data: dict, status: str, date: str | None) -> str:
    import jinja2

    from workbook.planner.tco_report import YEAR_COLUMNS, markdown_rows, markdown_years
    from workbook.writer.planbook import PDF_SHEETS

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=False,
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    t = data.get("training", {})
    rec = t.get("recommended")
    compared = [p for p in [rec, *(t.get("alternatives") or {}).values(), t.get("runner_up")] if p]
    infeasible = t.get("infeasible") or t.get("status", "")
    from workbook.planner.advice import change_text

    fix = ({"cheapest": change_text(infeasible.get("smallest_change")),
            "each": [change_text(c) for c in infeasible.get("changes") or []]}
           if isinstance(infeasible, dict) else None)
    return env.get_template("plan.md.j2").render(
        r={**data["request"], "date": date}, rec=rec, plan_version=int(data.get("version") or 1),
        changes=data.get("changes") or [], compared=compared, rejected=t.get("rejected", []),
        gpus=t.get("compared") or [],
        infeasible=infeasible, fix=fix, pdf_sheets=", ".join(PDF_SHEETS), status=status, version=__version__, trains=t.get("status") != "not requested",
        sv=data.get("serving") or {}, year_heads=[h for h, _ in YEAR_COLUMNS],
        tcos=[{"tco": t, "rows": markdown_rows(t), "years": markdown_years(t)}
              for t in (data.get("tco"), data.get("serving_tco")) if t], **_cash_flow(data.get("cash_flow")))


def _cash_flow(cf: dict | None) -> dict:
    """The Markdown's cash-flow section: ``cf`` (None: no section), its first month, headings and fiscal years."""
    from workbook.planner.cash_flow_report import COLUMNS, markdown_years, start_text, usd

    if not cf:
        return {"cf": None, "cf_start": "", "cf_ask": "", "cf_heads": [], "cf_years": []}
    return {"cf": cf, "cf_start": start_text(cf), "cf_ask": usd(cf["cf_rent_ask_usd"]),
            "cf_heads": [h for h, _ in COLUMNS], "cf_years": markdown_years(cf)}


def write_markdown(xlsx: Path, data: dict, status: str, date: str | None) -> Path:
    out = xlsx.with_suffix(".md")
    from workbook.safe_write import write_text

    return write_text(out, markdown(data, status, date))
