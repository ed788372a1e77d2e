"""No dead inputs (issue 21 item 9): every scenario input, changed in turn, moves some calculated
number, or is refused with one clear error, or is listed below as a label only.

Each input is changed on a base scenario that uses every model (the step time model, the tensor
memory model, the engine serving model); an input that only counts under another choice is changed
under the sibling settings that make it count (``CONTEXT``: the list says which, so an input that
silently does nothing everywhere cannot hide there).
"""

from __future__ import annotations

import typing
from typing import Literal, get_args

import pytest
from pydantic import ValidationError

from workbook import calc
from workbook.errors import InputError
from workbook.scenario.load import load_scenario
from workbook.scenario.model import Scenario

#: inputs that only name or describe the scenario (no number depends on them, by design)
LABEL_ONLY = {"name", "description"}
#: inputs that count only under another setting: the settings that make them count
CONTEXT: dict[str, dict[str, typing.Any]] = {
    "training.virtual_stages": {"training.pipeline_schedule": "interleaved", "training.pp": 2},
    "training.last_stage_layers": {"training.pp": 2},
    "training.etp": {"model": "deepseek-v3", "training.ep": 8, "training.pp": 1, "training.num_gpus": 128},
    "training.ep_overlap_frac": {"model": "deepseek-v3", "training.ep": 8, "training.pp": 1,
                                 "training.num_gpus": 128},
    "training.mfu_peak": {"training.precision": "fp8"},
    "training.cp_overlap_frac": {"training.cp": 2, "training.seq_len": 65536, "training.num_gpus": 64},
    "training.zero3_overlap_frac": {"training.zero_stage": 3, "training.grad_accum": 1,
                                    "training.micro_batch": 1, "training.seq_len": 256},
    "training.reshard_after_forward": {"training.zero_stage": 3},
    "training.fp8_recipe": {"training.precision": "fp8"},
    "training.act_GB": {"training.memory_model": "book"},
    "inference.spec_accept_rate": {"inference.spec_draft_tokens": 4, "inference.serving_model": "book"},
    "inference.spec_draft_params": {"inference.spec_draft_tokens": 4, "inference.serving_model": "book"},
    "inference.chunk_tokens": {"inference.serving_model": "book"},
    "inference.compute_efficiency": {"inference.serving_model": "book"},
    "inference.memory_efficiency": {"inference.serving_model": "book"},
    "inference.decode_compute_efficiency": {"inference.serving_model": "book"},
    "inference.kv_usable_frac": {"inference.serving_model": "book"},
    "inference.redundant_experts": {"model": "deepseek-v3", "inference.ep": 8, "inference.tp": 1},
    "inference.ep_overlap_frac": {"model": "deepseek-v3", "inference.ep": 8, "inference.tp": 1},
    "inference.prefill_ep": {"model": "deepseek-v3", "inference.ep": 8, "inference.tp": 1,
                             "inference.disaggregated": "on", "inference.arrival_rate_rps": 4},
    "inference.cache_hit_frac": {"inference.disaggregated": "on", "inference.arrival_rate_rps": 4},
    "inference.ttft_target_ms": {"inference.arrival_rate_rps": 4},
    "inference.tpot_target_ms": {"inference.arrival_rate_rps": 4},
}
BASE = "catalog/scenarios/17.9.4-70b-plan-h800.yaml"


def _base() -> dict:
    d = load_scenario(BASE).model_dump()
    d["training"].update(time_model="step", memory_model="tensors", num_gpus=64, grad_accum=4)
    d["inference"]["serving_model"] = "engine"
    return d


def _set(d: dict, dotted: str, value) -> None:
    head, _, tail = dotted.partition(".")
    if tail:
        d[head][tail] = value
    else:
        d[head] = value


def _fields() -> list[tuple[str, typing.Any]]:
    out = []
    for name, info in Scenario.model_fields.items():
        if name in ("model_arch",):
            continue
        sub = info.annotation
        if isinstance(sub, type) and hasattr(sub, "model_fields"):
            out += [(f"{name}.{k}", v) for k, v in sub.model_fields.items()]
        else:
            out.append((name, info))
    return out


def _alternatives(info, current, catalog, dotted: str) -> list:
    """Values to try instead of *current*: the other choices, or a number moved inside its bounds."""
    ann = info.annotation
    args = [a for a in get_args(ann) if a is not type(None)]
    lit = ann if typing.get_origin(ann) is Literal else next((a for a in args if typing.get_origin(a) is Literal),
                                                              None)
    if lit is not None:
        return [v for v in get_args(lit) if v != current]
    if dotted == "gpu":
        return [g for g in sorted(catalog.gpus) if g != current][:3]
    if dotted == "model":
        return [m for m in ("llama-3-8b", "llama-2-13b") if m != current]
    if dotted == "inference.engine":
        return [p.id for p in catalog.engines.profiles if p.id != current]
    example = (info.examples or [None])[0]
    lo = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
    hi = next((m.le for m in info.metadata if hasattr(m, "le")), None)
    cands = []
    if current is None:  # blank: the catalogue default applies; try the example and the default moved
        key = dotted.partition(".")[2]
        dflt = catalog.defaults.value(key) if key in catalog.defaults else example
        cands += [example, dflt * 1.25, dflt * 0.8] if dflt is not None else [example]
        if int in args or ann is int:
            cands = [int(round(c)) for c in cands if c is not None]
    else:
        cands += [current * 1.25, current * 0.8, current + 1, current - 1, example]
        if int in args or ann is int:
            cands = [int(round(c)) for c in cands if c is not None]
    return [c for c in cands if c is not None and c != current
            and (lo is None or c >= lo) and (hi is None or c <= hi)]


def _compute(d: dict, catalog):
    try:
        return calc.compute(Scenario.model_validate(d), catalog)
    except (ValidationError, InputError):
        return None  # refused with a message


@pytest.fixture(scope="module")
def catalog():
    from workbook.catalog import load_catalog

    return load_catalog()


def _moves(dotted: str, info, catalog) -> bool:
    d0 = _base()
    for key, value in CONTEXT.get(dotted, {}).items():
        _set(d0, key, value)
    ref = _compute(d0, catalog)
    assert ref is not None, f"the context of {dotted} is refused"
    head, _, tail = dotted.partition(".")
    current = d0[head][tail] if tail else d0[head]
    tried = _alternatives(info, current, catalog, dotted)
    assert tried, f"no alternative value to try for {dotted}"
    for value in tried:
        d = _base()
        for key, v in CONTEXT.get(dotted, {}).items():
            _set(d, key, v)
        _set(d, dotted, value)
        got = _compute(d, catalog)
        if got is None or any(got[k] != ref[k] for k in ref):
            return True
    return False


@pytest.mark.parametrize("dotted", [f for f, _ in _fields() if f not in LABEL_ONLY])
def test_every_input_moves_a_number_or_is_refused(dotted, catalog):
    info = dict(_fields())[dotted]
    assert _moves(dotted, info, catalog), f"{dotted}: no calculated number moves when it changes"


def test_label_only_inputs_are_scenario_fields():
    assert LABEL_ONLY <= {f for f, _ in _fields()}
    assert set(CONTEXT) <= {f for f, _ in _fields()} | {"training.reshard_after_forward", "training.fp8_recipe"}


def test_the_nic_inputs_reach_the_step_model(catalog):
    d = _base()
    ref = _compute(d, catalog)
    d["network"]["nic_Gbps"] = 100
    got = _compute(d, catalog)
    assert got["st_nic_GBps"] == pytest.approx(ref["st_nic_GBps"] / 4)
    assert got["st_step_s"] > ref["st_step_s"]
