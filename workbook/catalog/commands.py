"""`workbook catalog add-model` and `workbook catalog add-gpu`: new catalogue records, guided."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from workbook.catalog.models import Gpu, GpuEfficiency, Model
from workbook.errors import InputError

ADD_MODEL_EXAMPLE = """example:
  workbook catalog add-model ~/models/Llama-3-8B/config.json --published-params 8030261248
  workbook catalog add-model config.json --id my-moe --published-params 46.7e9 --published-active 12.9e9 -o catalog/models.yaml"""
ADD_GPU_EXAMPLE = """example:
  workbook catalog add-gpu --id mi355x --name "AMD Instinct MI355X" --like mi300x > new-gpu.yaml"""


def _record_yaml(record: dict[str, Any], order: list[str]) -> str:
    """One record as a YAML list item, fields in the catalogue's order, nulls of absent options left out."""
    keep = {k: record[k] for k in order if k in record and (record[k] is not None or k == "q_lora_rank")}
    keep = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in keep.items()}
    if not keep.get("field_sources"):
        keep.pop("field_sources", None)
    text = yaml.safe_dump([keep], sort_keys=False, allow_unicode=True, width=110)
    return text


def _append(path: Path, text: str, rid: str) -> None:
    """Append a record to a catalogue file, validated with the file before it replaces it (never a file or folder
    that is a symbolic link: workbook/safe_write.py, checked by cmd_add_model and again right before the rename)."""
    from workbook.catalog.load import check_parameter_counts, load_records
    from workbook.safe_write import check_destination

    old = path.read_text(encoding="utf-8") if path.exists() else ""
    new = old.rstrip("\n") + ("\n\n" if old.strip() else "") + text
    fd, tmp = tempfile.mkstemp(prefix=".add-model-", suffix=".yaml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(new)
        if old.strip():
            have = load_records(path, Model)
            if rid in have:
                raise InputError(f"model id {rid!r} is already in the file; give --id", file=str(path), field="id")
        models = load_records(Path(tmp), Model)
        check_parameter_counts(Path(tmp), models)
        check_destination(path, what="catalogue file")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def cmd_add_model(args: argparse.Namespace) -> int:
    from workbook.catalog.hf_config import model_from_config
    from workbook.catalog.problems import PARAMS_TOLERANCE_FRAC
    from workbook.safe_write import check_destination

    if args.output:  # before anything is read or printed
        check_destination(args.output, what="catalogue file")
    draft = model_from_config(args.config, model_id=args.id, name=args.name, source=args.source,
                              published_total=args.published_params, published_active=args.published_active)
    rec = draft.record
    err = sys.stderr
    print(f"read {args.config}: {rec['attention']} attention, {'MoE' if rec.get('moe') else 'dense'}, "
          f"{rec['layers']} layers, d_model {rec['d_model']}", file=err)
    print(f"parameters from the architecture: {draft.derived_total:,.0f} total"
          + (f", {draft.derived_active:,.0f} active" if rec.get("moe") else ""), file=err)
    pairs = [("published_params_total", args.published_params, draft.derived_total)]
    if rec.get("moe"):
        pairs.append(("published_params_active", args.published_active, draft.derived_active))
    for field, published, derived in pairs:
        if not published:
            print(f"{field}: no published count given (--published-params / --published-active): the derived "
                  "count is written and marked so in field_sources", file=err)
            continue
        off = published / derived - 1
        print(f"{field}: published {published:,.0f} vs {derived:,.0f} from the architecture ({off * 100:+.2f} %)",
              file=err)
        if abs(off) > PARAMS_TOLERANCE_FRAC:
            raise InputError(f"published {published:,.0f} is {off * 100:+.1f} % off the {derived:,.0f} the "
                             "architecture gives", file=str(args.config), field=field,
                             expected=f"within {PARAMS_TOLERANCE_FRAC * 100:g} % (check the config or the count)")
    for note in draft.notes:
        print(f"note: {note}", file=err)
    text = _record_yaml(rec, list(Model.model_fields))
    if args.output:
        _append(args.output, text, rec["id"])
        print(f"added model {rec['id']!r} to {args.output}", file=err)
    else:
        sys.stdout.write(text)
    return 0


def _describe(cls: type, skip: set[str]) -> list[str]:
    out = []
    for name, info in cls.model_fields.items():
        if name in skip:
            continue
        need = "required" if info.is_required() else f"optional, default {info.default!r}"
        out.append(f"#   {name}: {info.description or ''} ({need})")
    return out


def cmd_add_gpu(args: argparse.Namespace) -> int:
    """Print a gpus.yaml and an efficiency.yaml record to fill in, every field explained."""
    from workbook.catalog.load import load_catalog

    catalog = load_catalog(args.catalog)
    like = catalog.efficiency_of(args.like) if args.like else None
    gid, today = args.id, dt.date.today()
    lines = ["# 1. catalog/gpus.yaml: the GPU. Units are in the names; TFLOPS are dense (no sparsity); null = not",
             "#    known (prices) or does not exist (fp8 on an A100). Every value not from `source` is named in",
             "#    field_sources with its datasheet; a price's field_sources says source, as-of and term, and starts",
             "#    with 'estimate:' when it is not a published price. Fields:"]
    lines += _describe(Gpu, {"id", "name", "source", "as_of", "field_sources", "notes"})
    gpu = {"id": gid, "name": args.name, "source": "datasheet URL", "as_of": today,
           "field_sources": {"price_on_demand_usd_per_gpu_hour": "provider price page URL, as of YYYY-MM-DD, on-demand"}}
    gpu.update({f: None for f in Gpu.model_fields if f not in gpu and f not in ("notes", "nvlink_convention")})
    gpu.update({"gpus_per_node": 8, "memory_kind": "HBM3e"})
    lines.append(yaml.safe_dump([gpu], sort_keys=False, width=110).rstrip())
    lines += ["", "# 2. catalog/efficiency.yaml: what share of those peaks the step-time model may count on (every GPU",
              "#    needs one; the planner refuses a GPU without it). Measured values cite their benchmark; with no",
              "#    measurement, copy the most similar GPU's record and start `source` with \"assumed\": plans then",
              "#    list the GPU's factors among their assumptions. Fields:"]
    lines += _describe(GpuEfficiency, {"gpu", "source", "as_of", "field_sources", "notes"})
    eff: dict[str, Any] = {"gpu": gid}
    if like is not None:
        eff["source"] = f"assumed: {like.gpu} values (no published measurement for {gid}); {like.source}"
        eff["as_of"] = today
        eff.update({f: getattr(like, f) for f in GpuEfficiency.model_fields
                    if f not in ("gpu", "source", "as_of", "field_sources", "notes", "compute_as")})
    else:
        eff.update({"source": "benchmark or paper, or 'assumed: <gpu> values ...'", "as_of": today})
        eff.update({f: None for f in GpuEfficiency.model_fields if f not in eff and f not in ("field_sources", "notes")})
    lines.append(yaml.safe_dump([eff], sort_keys=False, width=110).rstrip())
    lines += ["", "# 3. Check: workbook plan <request> --catalog <folder> names any field left null that is required."]
    print("\n".join(lines))
    return 0


def add_parser(sub: Any) -> None:
    """Register `workbook catalog add-model | add-gpu` on the CLI's subparsers."""
    fmt = argparse.RawDescriptionHelpFormatter
    cat = sub.add_parser("catalog", help="add a model (from a Hugging Face config.json) or a GPU to the catalogue",
                         description="Add records to the catalogue: a model from its Hugging Face config.json, or a "
                                     "GPU with its efficiency record.",
                         epilog="example:\n  workbook catalog add-model config.json --published-params 8.03e9\n"
                                "  workbook catalog add-gpu --id my-gpu --like h100", formatter_class=fmt)
    cs = cat.add_subparsers(dest="catalog_command", required=True)
    am = cs.add_parser("add-model", help="a models.yaml record from a Hugging Face config.json (no network)",
                       description="Read a Hugging Face config.json on disk (dense, GQA/MQA, MoE in the Mixtral, Qwen-MoE "
                                   "and DeepSeek styles, MLA) and write a models.yaml record; check it against the "
                                   "published parameter count when given (more than 2 % off: exit 2); say what it "
                                   "could not read.", epilog=ADD_MODEL_EXAMPLE, formatter_class=fmt)
    am.add_argument("config", type=Path, metavar="config.json")
    am.add_argument("--published-params", type=float, default=None, metavar="N", help="official total parameter count")
    am.add_argument("--published-active", type=float, default=None, metavar="N",
                    help="official active parameters per token (MoE)")
    am.add_argument("--id", default=None, help="record id (default: from _name_or_path or the folder name)")
    am.add_argument("--name", default=None, help="display name")
    am.add_argument("--source", default=None, help="where the config comes from (its URL)")
    am.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                    help="append the record to FILE (e.g. catalog/models.yaml), validated first; default: print it")
    am.set_defaults(func=cmd_add_model)
    ag = cs.add_parser("add-gpu", help="the gpus.yaml and efficiency.yaml records of a new GPU, every field explained",
                       description="Print the two records a new GPU needs (gpus.yaml: specs and prices; efficiency.yaml: "
                                   "the step-time factors), every field explained, to fill in and paste.",
                       epilog=ADD_GPU_EXAMPLE, formatter_class=fmt)
    ag.add_argument("--id", default="new-gpu", help="GPU id, lowercase [a-z0-9.-]")
    ag.add_argument("--name", default="Vendor Model Memory", help="display name")
    ag.add_argument("--like", default=None, metavar="GPU",
                    help="copy this GPU's efficiency factors, marked assumed")
    ag.add_argument("--catalog", type=Path, default=None, metavar="DIR", help="catalogue folder")
    ag.set_defaults(func=cmd_add_gpu)
