"""Line items of the Inference sheet's offline run block: a run of N requests queued at once, its drain
at a shrinking batch by three-point Gauss quadrature (docs/serving.md "A finite offline run";
workbook/calc/serving_offline_run.py)."""

from __future__ import annotations

from workbook.reference import serving_offline_run as so
from workbook.sheets.serving_step import decode_items

_SRC = "workbook/reference/serving_offline_run.py"
CONSTANTS = [
    ("srv_euler_gamma", so.EULER_GAMMA, "x", "Euler–Mascheroni constant (harmonic number H(n) ≈ ln n + γ + 1/(2n) "
     "− 1/(12n²))", _SRC),
    ("srv_harmonic_c2", 1.0 / 12.0, "x", "Coefficient of 1/n² in the harmonic number's expansion", _SRC),
    *[(f"srv_gauss_x{i}", x, "x", f"Gauss–Legendre node {i} of 3 on [−1, 1]", _SRC)
      for i, x in enumerate(so.GAUSS_NODES, start=1)],
    *[(f"srv_gauss_w{i}", w, "x", f"Gauss–Legendre weight {i} of 3", _SRC)
      for i, w in enumerate(so.GAUSS_WEIGHTS, start=1)],
]

_N = "{inference.offline_requests}"
_O = "{inference.output_tokens}"
_N0 = "{srv_run_drain_requests}"
_H = "{srv_run_drain_harmonic}"


def _node(i: int) -> dict[str, str]:
    return {
        f"srv_run_b{i}": f"=IF({{srv_run_fixed_flag}}=1,MAX(1,{_N0}),MAX(1,{_N0}*EXP(-{_H}/c_two*(1+c_srv_gauss_x{i}))))",
        **decode_items(f"srv_rund{i}", f"srv_run_b{i}", "srv_running_context_tokens"),
    }


ITEMS = {
    "srv_run_given_flag": f"=IF(ISBLANK({_N}),0,1)",
    "srv_run_requests_per_rank": f"=IF({{srv_run_given_flag}}=1,{_N}/{{srv_attention_dp}},{{srv_load_batch_cap_used}})",
    "srv_run_fixed_flag": '=IF({inference.output_lengths}="fixed",1,0)',
    "srv_run_waves": "=ROUNDUP({srv_run_requests_per_rank}/{srv_load_batch_cap_used},0)",
    "srv_run_drain_requests": "=IF({srv_run_fixed_flag}=1,MAX(1,{srv_run_requests_per_rank}-{srv_load_batch_cap_used}"
    "*({srv_run_waves}-1)),MAX(1,MIN({srv_load_batch_cap_used},{srv_run_requests_per_rank})))",
    "srv_run_drain_harmonic": f"=LN({_N0})+c_srv_euler_gamma+1/(c_two*{_N0})-c_srv_harmonic_c2/({_N0}*{_N0})",
    "srv_run_drain_length": f"=IF({{srv_run_fixed_flag}}=1,1,{_H})",
    **{k: v for i in range(1, len(so.GAUSS_NODES) + 1) for k, v in _node(i).items()},
    "srv_run_drain_s": f"={_O}*{{srv_run_drain_length}}/c_two*(" + "+".join(
        f"c_srv_gauss_w{i}*{{srv_rund{i}_step_s}}" for i in range(1, len(so.GAUSS_NODES) + 1)) + ")",
    "srv_run_s": f"={{srv_run_requests_per_rank}}*{{srv_off_s_per_request}}-{_N0}*{_O}*{{srv_off_step_s}}"
    "/{srv_load_batch_cap_used}+{srv_run_drain_s}",
    "srv_run_drain_frac": "=IF({srv_run_given_flag}=1,{srv_run_drain_s}/{srv_run_s},0)",
    "srv_offline_run_tokens_per_s": f"=IF({{srv_run_given_flag}}=1,{_N}*{_O}/{{srv_run_s}},{{srv_offline_tokens_per_s}})",
}
