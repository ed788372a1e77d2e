"""The shipped calibration (catalog/calibration/shipped.yaml): which efficiency.yaml factors are fitted, on
which points, from which priors; re-running it and writing the values back (scripts/calibrate_shipped.py)."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workbook.calibrate.factors import Factor, catalog_with, parse_factor
from workbook.calibrate.run import Calibration, calibrate
from workbook.catalog.load import DEFAULT_DIR, load_catalog
from workbook.catalog.yamlio import load_yaml, to_input_error

SPEC = DEFAULT_DIR / "calibration" / "shipped.yaml"
#: the values are written with 4 significant digits; the fit converges far tighter
AGREEMENT_RTOL = 2e-3


class ShippedFactor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    factor: str = Field(..., description="table[record].field, e.g. efficiency[h100].gemm_efficiency")
    prior: float = Field(..., gt=0)
    prior_source: str = Field(..., min_length=1)


class DerivedValue(BaseModel):
    """A catalogue value worked out by hand from one publication's measurements (not by the fit): when
    ``validate --cv`` leaves that publication out, the value it would have without them is used."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    factor: str = Field(..., description="table[record].field, e.g. engine[sglang-0.3.0].cpu_per_seq_us")
    publication: str = Field(..., min_length=1, description="the validation publication it was derived from")
    without: float = Field(..., ge=0, description="its value without that publication")
    why: str = Field(..., min_length=1)


class ShippedSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    description: str = ""
    files: list[str] = Field(..., min_length=1)
    factors: list[ShippedFactor] = Field(..., min_length=1)
    derived: list[DerivedValue] = Field(default_factory=list)


def load_spec(path: Path = SPEC) -> ShippedSpec:
    data, lines = load_yaml(path)
    try:
        return ShippedSpec.model_validate(data)
    except ValidationError as exc:
        raise to_input_error(exc, file=str(path), lines=lines, model=ShippedSpec) from None


def factor_of(sf: ShippedFactor | DerivedValue) -> Factor:
    spec, record = parse_factor(sf.factor)
    if record is None:
        raise ValueError(f"{sf.factor}: name the record, table[record].field")
    return Factor(spec, record)


def run_shipped(catalog_dir: Path = DEFAULT_DIR, spec_path: Path = SPEC) -> tuple[ShippedSpec, Calibration]:
    """Calibrate the spec's factors on its files' fit points, from the spec's priors (the other factors at
    their catalogue values). No cross-validation (``workbook validate --cv`` does that)."""
    spec = load_spec(spec_path)
    cat = load_catalog(catalog_dir)
    priors = {factor_of(sf): sf.prior for sf in spec.factors}
    cal = calibrate([catalog_dir / "validation" / f for f in spec.files], catalog_with(cat, priors),
                    factors=[sf.factor for sf in spec.factors], cv=None)
    return spec, cal


def _block(text: str, gpu: str) -> tuple[int, int]:
    m = re.search(rf"^- gpu: {re.escape(gpu)}\n", text, flags=re.M)
    if not m:
        raise ValueError(f"no record for gpu {gpu} in efficiency.yaml")
    nxt = re.search(r"^- gpu: ", text[m.end():], flags=re.M)
    return m.start(), (m.end() + nxt.start()) if nxt else len(text)


def _set_value(text: str, gpu: str, fld: str, v: float, label: str) -> str:
    a, b = _block(text, gpu)
    block, n = re.subn(rf"^  {fld}: .*$", f"  {fld}: {float(f'{v:.4g}'):g}", text[a:b], flags=re.M)
    if n != 1:
        raise ValueError(f"{label}: expected one '{fld}:' line in the record of {gpu}")
    return text[:a] + block + text[b:]


def rewrite_efficiency(path: Path, values: dict[Factor, float], field_source: dict[Factor, str],
                       tied: dict[Factor, list[str]] | None = None) -> str:
    """efficiency.yaml's text with each factor's value (4 significant digits) and field_sources line replaced,
    comments and everything else kept. ``tied``: factor -> the other GPUs that share its value (compute_as),
    whose value line is rewritten too (their field_sources line names the record they follow)."""
    text = path.read_text(encoding="utf-8")
    for f, v in sorted(values.items()):
        for gpu in (tied or {}).get(f, []):
            text = _set_value(text, gpu, f.spec.field, v, f.label)
        text = _set_value(text, f.record, f.spec.field, v, f.label)
        a, b = _block(text, f.record)
        block = text[a:b]
        fld = f.spec.field
        src = field_source[f].replace('"', "'")
        line = f'    {fld}: "{src}"'
        if re.search(rf"^    {fld}: .*$", block, flags=re.M):
            block = re.sub(rf"^    {fld}: .*$", lambda _m: line, block, count=1, flags=re.M)
        elif re.search(r"^  field_sources:\n", block, flags=re.M):
            block = re.sub(r"^  field_sources:\n", lambda m: m.group(0) + line + "\n", block, count=1, flags=re.M)
        else:
            block = re.sub(r"^  as_of: .*\n", lambda m: m.group(0) + "  field_sources:\n" + line + "\n",
                           block, count=1, flags=re.M)
        text = text[:a] + block + text[b:]
    return text
