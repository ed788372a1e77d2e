"""Line items of the input checks (Plan sheet, right below the inputs): each input cell tested for blank, type
and range. They read the inputs and the catalogue only, so they come before every calculation; their count
``plan_input_errors_count`` is the flag the calculated cells before the price read (the price check and the
count of all input errors follow the price: workbook/sheets/price.py).

Bounds are constants (``c_in_min_*``, ``c_in_max_*``, the scenario model's ranges) and choice lists
are tables (``t_ch_*_choice``) on the Constants sheet; the Plan validation lists use the same tables.
"""

from __future__ import annotations

from workbook.writer.inputs import InputRow, input_rows
from workbook.writer.plan_inputs import bound_name, choice_table


def _template(r: InputRow) -> str:
    x = "{" + r.key + "}"
    if r.kind == "name":
        return f"=IF(AND(ISTEXT({x}),LEN({x})>=1),0,1)"
    if r.kind in ("gpu", "model", "engine"):
        return f"=IF(AND(ISTEXT({x}),ISNUMBER(MATCH({x},cat_{r.kind}_id,0))),0,1)"
    if r.kind == "enum" and r.only_if:  # blank, or a choice while the sibling has the value it needs
        when = "{" + r.only_if[0] + "}"
        return (f"=IF(OR(ISBLANK({x}),AND(ISNUMBER(MATCH({x},{choice_table(r)},0)),{when}=\"{r.only_if[1]}\")),"
                "0,1)")
    if r.kind == "enum" and r.optional:
        return f"=IF(OR(ISBLANK({x}),ISNUMBER(MATCH({x},{choice_table(r)},0))),0,1)"
    if r.kind == "enum":
        return f"=IF(ISNUMBER(MATCH({x},{choice_table(r)},0)),0,1)"
    ok = f"ISNUMBER({x}),{x}>={bound_name(r, 'min')},{x}<={bound_name(r, 'max')}"
    if r.kind == "int":
        ok += f",INT({x})={x}"
    if r.optional and r.required_if:  # blank allowed unless the sibling choice needs the value
        when = "{" + r.required_if[0] + "}"
        return f"=IFERROR(IF(OR(AND(ISBLANK({x}),{when}<>\"{r.required_if[1]}\"),AND({ok})),0,1),1)"
    if r.optional:
        return f"=IFERROR(IF(OR(ISBLANK({x}),AND({ok})),0,1),1)"
    return f"=IFERROR(IF(AND({ok}),0,1),1)"


def _constants() -> list[tuple]:
    out = []
    for r in input_rows():
        if r.kind in ("int", "float"):
            out.append((bound_name(r, "min")[2:], r.lo, r.unit, f"{r.title}: lowest allowed", "scenario model"))
            out.append((bound_name(r, "max")[2:], r.hi, r.unit, f"{r.title}: highest allowed", "scenario model"))
    return out


def _tables() -> dict:
    return {choice_table(r)[2:-len("_choice")]: ("choice", [(c, {"position": i + 1}) for i, c in enumerate(r.choices)],
                                                 f"allowed values of {r.key}")
            for r in input_rows() if r.kind == "enum"}


CONSTANTS = _constants()
TABLES = _tables()
ITEMS = {f"input_error_{r.name}": _template(r) for r in input_rows()}
# op_selective (torchtitan's op-level selective AC) is modelled for dense GQA/MHA models only
# (workbook.scenario.resolve refuses it for an MoE or MLA model; a bad model id is its own input's error)
_RC = "{training.recompute}"
# 1 for an MoE or MLA model, 0 otherwise (and for an unknown id); no FALSE literal: LibreOffice saves it as FALSE()
_MOE_OR_MLA = ("IFERROR(OR(INDEX(cat_model_moe,MATCH({model},cat_model_id,0))=1,"
               'INDEX(cat_model_attention,MATCH({model},cat_model_id,0))="mla")*1,0)')
# one IF (the workbook rules refuse a nested IF): a known choice is in error only as op_selective on MoE/MLA
ITEMS["input_error_training_recompute"] = (f"=IF(ISNUMBER(MATCH({_RC},t_ch_training_recompute_choice,0)),"
                                           f'({_RC}="op_selective")*{_MOE_OR_MLA},1)')
ITEMS["input_error_efficiency"] = "=IF(ISNUMBER(MATCH({gpu},cat_eff_gpu,0)),0,1)"
ITEMS["plan_input_errors_count"] = "=SUM({input_error_name}:{input_error_efficiency})"
