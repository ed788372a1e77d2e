"""``workbook audit FILE.xlsx``: what people did to a workbook since it was built, and whether it is still sound."""

from __future__ import annotations

from pathlib import Path


from workbook.audit.edits import compare_with_record, read_record
from workbook.audit.findings import AuditReport, Finding
from workbook.audit.stored import compare_stored
from workbook.audit.structure import compare_structure
from workbook.errors import InputError
from workbook.safe_xlsx import check_xlsx, load_checked


def audit(path: str | Path) -> AuditReport:
    """The audit report of *path*; InputError when the file cannot be read as one of our workbooks."""
    path = Path(path)
    check_xlsx(path)
    wb = load_checked(path, data_only=False)
    values = load_checked(path, data_only=True)
    try:
        record = read_record(wb)
    except ValueError as exc:
        raise InputError(str(exc), file=str(path), expected="a workbook written by `workbook build`") from None
    report = AuditReport(path=str(path), findings=compare_with_record(wb, values, record))
    report.findings += compare_structure(wb, record, {s: s for s in record["sheets"] if s in wb.sheetnames})
    structural = {"sheet_removed", "sheet_renamed", "rows_moved"}
    if any(f.kind in structural for f in report.findings):
        return report  # the reference cannot read inputs from a file whose structure moved
    try:
        stored, n = compare_stored(path, values, record)
    except InputError as err:
        report.findings.append(Finding("input_invalid", "Plan", "", label=err.message, new=str(err.expected or "")))
        return report
    report.findings += stored
    report.recomputed, report.cells_compared = True, n
    return report
