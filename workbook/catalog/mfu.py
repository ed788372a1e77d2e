"""The measured planning-MFU table (catalog/mfu.yaml): MFU ranges by setting and GPU count, each
resting on published runs whose implied MFU, 6·P_active·D / (GPU-hours·3600·BF16 dense peak), is
recorded with its source and the validation point it comes from (catalog/validation/*.yaml).

A row's range is its runs' lowest and highest implied MFU widened by the row's stated ``margin`` and by
no more; the loader rejects a range that leaves out a run or goes past that margin, a run outside its
row's GPU counts, and overlapping GPU ranges within one setting. Errors name file, line, record, field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from workbook.catalog.load import DEFAULT_DIR, load_records
from workbook.catalog.models import MfuRow, MfuRun
from workbook.catalog.yamlio import line_of, load_yaml
from workbook.errors import InputError

#: the file name inside the catalogue folder
MFU_FILE = "mfu.yaml"
#: rounding allowed between a range end and runs +- margin (the file gives 3 decimals)
RANGE_ROUNDING = 0.001

__all__ = ["MFU_FILE", "MfuRow", "MfuRun", "load_mfu"]


def _check_row(row: MfuRow, i: int, *, file: str, lines: dict) -> None:
    def fail(msg: str, field: str, expected: str | None = None) -> None:
        raise InputError(f"mfu row {row.id!r}: {msg}", file=file, line=line_of(lines, (i, field)),
                         field=f"{row.id}.{field}", expected=expected)

    if row.gpus_min > row.gpus_max:
        fail(f"gpus_min {row.gpus_min} above gpus_max {row.gpus_max}", "gpus_min")
    if row.mfu_low >= row.mfu_high:
        fail(f"mfu_low {row.mfu_low} not below mfu_high {row.mfu_high}", "mfu_low")
    mfus = [r.implied_mfu for r in row.runs]
    lo, hi = min(mfus) - row.margin, max(mfus) + row.margin
    if row.mfu_low > min(mfus):
        fail(f"mfu_low {row.mfu_low} leaves out a run at {min(mfus)}", "mfu_low", f"<= {min(mfus)}")
    if row.mfu_high < max(mfus):
        fail(f"mfu_high {row.mfu_high} leaves out a run at {max(mfus)}", "mfu_high", f">= {max(mfus)}")
    if row.mfu_low < lo - RANGE_ROUNDING:
        fail(f"mfu_low {row.mfu_low} is wider than the runs minus the margin ({lo:.4f})", "mfu_low")
    if row.mfu_high > hi + RANGE_ROUNDING:
        fail(f"mfu_high {row.mfu_high} is wider than the runs plus the margin ({hi:.4f})", "mfu_high")
    for j, run in enumerate(row.runs):
        if not row.gpus_min <= run.gpus <= row.gpus_max:
            raise InputError(f"mfu row {row.id!r}: run {run.point} on {run.gpus} GPUs is outside "
                             f"{row.gpus_min}-{row.gpus_max}", file=file, line=line_of(lines, (i, "runs", j, "gpus")),
                             field=f"{row.id}.runs[{j}].gpus")


def load_mfu(path: str | Path | None = None, *, gpu_ids: Optional[Iterable[str]] = None,
             model_ids: Optional[Iterable[str]] = None) -> list[MfuRow]:
    """Validate catalog/mfu.yaml (or ``path``): the rows in file order. InputError on any problem;
    with ``gpu_ids`` / ``model_ids`` every run must name a catalogue GPU and model."""
    path = Path(path) if path is not None else DEFAULT_DIR / MFU_FILE
    records = load_records(path, MfuRow)
    _, lines = load_yaml(path)
    rows = list(records.values())
    known = {"gpu": None if gpu_ids is None else list(gpu_ids),
             "model": None if model_ids is None else list(model_ids)}
    for i, row in enumerate(rows):
        _check_row(row, i, file=str(path), lines=lines)
        for j, run in enumerate(row.runs):
            for kind, ids in known.items():
                if ids is not None and getattr(run, kind) not in ids:
                    raise InputError(f"mfu row {row.id!r}: unknown {kind} id {getattr(run, kind)!r}",
                                     file=str(path), line=line_of(lines, (i, "runs", j, kind)),
                                     field=f"{row.id}.runs[{j}].{kind}", expected=f"an id of catalog/{kind}s.yaml")
        for j, other in enumerate(rows[:i]):
            if other.setting == row.setting and row.gpus_min <= other.gpus_max and other.gpus_min <= row.gpus_max:
                raise InputError(f"mfu row {row.id!r}: GPUs {row.gpus_min}-{row.gpus_max} overlap row "
                                 f"{other.id!r} ({other.gpus_min}-{other.gpus_max}) of the same setting",
                                 file=str(path), line=line_of(lines, (i, "gpus_min")), field=f"{row.id}.gpus_min")
    return rows
