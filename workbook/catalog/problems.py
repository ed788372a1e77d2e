"""Every problem of a catalogue file in one line: file, record by its id, field, what is allowed (issue 25).

A catalogue record is validated on its own, so a message names it by its id (``h100.hbm_GB``, not
``[3].hbm_GB``), lists unknown fields first with the closest known name (a misspelt field also makes the
real one "missing"; the misspelling is the cause), then every other problem of every record.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Optional

from pydantic import BaseModel, ValidationError

from workbook.catalog.yamlio import Loc, _clean_loc, _dotted, _expected, line_of
from workbook.errors import InputError

#: a published parameter count further than this from the architecture's is refused (relative)
PARAMS_TOLERANCE_FRAC = 0.02


@dataclass(frozen=True)
class Problem:
    """One problem of one record: where (line, field as ``<id>.<field>``), what, and what is allowed."""

    line: Optional[int]
    field: str
    message: str
    expected: Optional[str] = None
    unknown: bool = False


def record_label(item: Any, id_field: str, index: int) -> str:
    """The record's id as its label, or ``[index]`` when it has none (yet)."""
    rid = item.get(id_field) if isinstance(item, dict) else None
    return rid if isinstance(rid, str) and rid else f"[{index}]"


def closest_field(name: str, cls: type[BaseModel]) -> Optional[str]:
    """The known field name nearest to ``name`` (difflib), or None."""
    near = difflib.get_close_matches(str(name), list(cls.model_fields), n=1, cutoff=0.4)
    return near[0] if near else None


def record_problems(exc: ValidationError, *, cls: type[BaseModel], label: str, index: int,
                    lines: dict[Loc, int]) -> list[Problem]:
    """Every error of one record's validation, unknown fields first."""
    out = []
    for err in exc.errors(include_url=False):
        loc = _clean_loc(tuple(err["loc"]))
        field = label + ("." + _dotted(loc) if loc else "")
        line = line_of(lines, (index, *loc))
        kind = err["type"]
        if kind == "extra_forbidden":
            near = closest_field(loc[-1], cls) if loc else None
            msg = "unknown field" + (f" (did you mean {near}?)" if near else "")
            out.append(Problem(line, field, msg, _expected(err, cls, loc), unknown=True))
            continue
        msg = {"missing": "required field is missing",
               "finite_number": "must be a finite number (NaN and infinity are not allowed)"}.get(kind, err["msg"])
        msg = msg.removeprefix("Value error, ")
        val = err.get("input")
        if kind not in ("missing", "value_error") and not isinstance(val, (dict, list)):
            msg += f", got {val!r}"
        out.append(Problem(line, field, msg, _expected(err, cls, loc)))
    missing = [p for p in out if p.message == "required field is missing"]
    if len(missing) > 1:  # one problem per record: the first missing field, naming the others
        also = ", ".join(p.field.removeprefix(label + ".") for p in missing[1:])
        out = [p for p in out if p not in missing]
        out.append(Problem(missing[0].line, missing[0].field, f"required field is missing (also missing: {also})"))
    return sorted(out, key=lambda p: not p.unknown)


def raise_problems(problems: list[Problem], file: str) -> None:
    """Raise one InputError naming the first problem and listing every other one (no-op when empty)."""
    if not problems:
        return
    first, rest = problems[0], problems[1:]
    msg = first.message
    if rest:
        others = "; ".join(
            f"line {p.line}: {p.field}: {p.message}" + (f" (allowed: {p.expected})" if p.expected and not p.unknown else "")
            for p in rest)
        msg += f" [and {len(rest)} more: {others}]"
    raise InputError(msg, file=file, line=first.line, field=first.field, expected=first.expected)


def parameter_problems(models: dict[str, Any], lines: dict[Loc, int], order: list[str]) -> list[Problem]:
    """Models whose published parameter counts are more than 2 % off their architecture's (both numbers)."""
    from workbook.reference.params import model_param_counts  # the reference does not import the catalogue

    out = []
    for mid, m in models.items():
        counts = model_param_counts(m)
        pairs = [("published_params_total", m.published_params_total, counts["params_total"])]
        if m.published_params_active is not None:
            pairs.append(("published_params_active", m.published_params_active, counts["params_active"]))
        for field, published, derived in pairs:
            off = published / derived - 1
            if abs(off) > PARAMS_TOLERANCE_FRAC:
                i = order.index(mid)
                out.append(Problem(
                    line_of(lines, (i, field)), f"{mid}.{field}",
                    f"published {published:,.0f} is {off * 100:+.1f} % off the {derived:,.0f} the architecture "
                    f"gives (layers, d_model, d_ff, heads, vocab, experts); fix the architecture or the count",
                    expected=f"within {PARAMS_TOLERANCE_FRAC * 100:g} % of {derived:,.0f}"))
    return out
