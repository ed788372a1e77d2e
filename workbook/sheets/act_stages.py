"""Line items of the Activations sheet, second part: the activations of four candidate pipeline
ranks (A first, B holding the first MoE layer, C after B, D last) and the most loaded one
(Korthikanti et al. 2022 §4.2.3; Megatron-LM schedules.py warm-up micro-batches).

Stage i holds floor(L/PP) layers, one more when i < L mod PP, starting at i·floor(L/PP) + min(i, L mod PP);
its in-flight micro-batches are PP − i (1F1B) or (2(PP − i − 1) + (v − 1)·PP + 1)/v (interleaved),
at most GA.
"""

from __future__ import annotations

from workbook.calc.act_stages import CANDIDATES

_BASE, _EXTRA, _FIRST = "{act_layers_base}", "{act_layers_extra}", "{act_first_moe_layer}"
_PP = "{training.pp}"
#: the rank of each candidate (A is the first rank)
_STAGE = {
    "a": "=0",
    "b": f"=MIN({_PP}-1,{{act_first_moe_stage}})",
    "c": f"=MIN({_PP}-1,{{act_stb_stage}}+1)",
    "d": f"={_PP}-1",
}


def _candidate(x: str) -> dict[str, str]:
    i, n, moe, fly = (f"{{act_st{x}_{k}}}" for k in ("stage", "layers", "moe_layers", "in_flight"))
    interleaved = f"(c_two*({_PP}-{i}-1)+({{training.virtual_stages}}-1)*{_PP}+1)/{{training.virtual_stages}}"
    return {
        f"act_st{x}_stage": _STAGE[x],
        f"act_st{x}_layers": f"={_BASE}+IF({i}<{_EXTRA},1,0)",
        # layers of this rank at or after the first MoE layer
        f"act_st{x}_moe_layers": f"=MAX(0,MIN({n},{i}*{_BASE}+MIN({i},{_EXTRA})+{n}-{_FIRST}))",
        f"act_st{x}_in_flight": f'=MIN({{training.grad_accum}},IF({{training.pipeline_schedule}}="interleaved",'
        f"{interleaved},{_PP}-{i}))",
        # kept: in-flight x layers (+ embedding on the first rank, output layer on the last) + working set
        f"act_st{x}_GB": f"={fly}*(({n}-{moe})*{{act_dense_layer_GB}}+{moe}*{{act_moe_layer_GB}})"
        f"+IF({i}=0,{fly}*{{act_embedding_GB}},0)+IF({i}={_PP}-1,{{act_output_layer_GB}},0)"
        f"+MAX(IF({n}>{moe},{{act_dense_work_GB}},0),IF({moe}>0,{{act_moe_work_GB}},0))",
    }


ITEMS = {
    "act_layers_base": "=INT({model_layers}/{training.pp})",
    "act_layers_extra": "=MOD({model_layers},{training.pp})",
    "act_first_moe_layer": "=IF({model_moe}=1,{model_n_dense_layers},{model_layers})",
    "act_first_moe_stage": f"=IF({_FIRST}<{_EXTRA}*({_BASE}+1),INT({_FIRST}/({_BASE}+1)),"
    f"{_EXTRA}+INT(({_FIRST}-{_EXTRA}*({_BASE}+1))/{_BASE}))",
    **{k: v for x, _ in CANDIDATES for k, v in _candidate(x).items()},
    "act_per_gpu_GB": "=MAX({act_sta_GB},{act_stb_GB},{act_stc_GB},{act_std_GB})",
}
