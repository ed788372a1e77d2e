"""Line items of the Inference sheet's in-use block: engine or book serving model, measured
throughput (workbook/calc/serving_use.py)."""

from __future__ import annotations

from workbook.calc.serving_load_models import LOADS

_ENG = "{srv_engine_model_flag}=1"
_DIS = "{srv_dis_flag}"
_MEAS = "{srv_measured_flag}=1"
_M = "{inference.measured_tokens_per_s_per_gpu}"
_POS = "{srv_load_model_position}"

CONSTANTS = [("srv_load_static", float(LOADS.index("static") + 1), "code", "Load model position of the static batch",
              "workbook/calc/serving_load_models.py LOADS")]

ITEMS = {
    "srv_engine_model_flag": '=IF({inference.serving_model}="engine",1,0)',
    "srv_num_gpus": f"=IF({_DIS}=1,{{srv_dis_gpus}},{{inference.tp}}*{{inference.ep}}*{{inference.replicas}})",
    "srv_gpus_in_use": f"=IF({_ENG},{{srv_num_gpus}},{{infer_num_gpus}})",
    "srv_engine_ttft_ms": f"={_DIS}*{{srv_dis_ttft_ms}}+(1-{_DIS})*CHOOSE({_POS},IF(ISBLANK({{inference.arrival_rate_rps}}),"
    "{srv_ttft_idle_ms},{srv_load_ttft_ms}),{srv_conc_ttft_ms},{srv_static_ttft_ms})",
    "srv_ttft_ms_in_use": f"=IF({_ENG},{{srv_engine_ttft_ms}},{{ttft_ms}})",
    "srv_tpot_ms_in_use": f"=IF({_ENG},{_DIS}*{{srv_dis_tpot_ms}}+(1-{_DIS})*CHOOSE({_POS},{{srv_load_tpot_ms}},"
    "{srv_conc_tpot_ms},{srv_static_tpot_ms}),{tpot_ms})",
    "srv_tokens_per_s_per_gpu_model": f"=IF({_ENG},{_DIS}*{{srv_dis_tokens_per_s_per_gpu}}+(1-{_DIS})"
    f"*CHOOSE({_POS},{{srv_load_tokens_per_s_per_gpu}},{{srv_conc_tokens_per_s_per_gpu}},"
    "{srv_static_tokens_per_s_per_gpu}),{decode_tokens_per_s_total}/{infer_num_gpus})",
    "srv_measured_flag": f"=IF(ISBLANK({_M}),0,1)",
    "srv_tokens_per_s_per_gpu_in_use": f"=IF({_MEAS},{_M},{{srv_tokens_per_s_per_gpu_model}})",
    "srv_model_vs_measured_frac": f"=IF({_MEAS},{{srv_tokens_per_s_per_gpu_model}}/{_M}-1,0)",
    "srv_tokens_per_s_total_model": f"=IF({_ENG},{_DIS}*{{srv_dis_tokens_per_s}}+(1-{_DIS})*CHOOSE({_POS},"
    "{srv_load_tokens_per_s},{srv_conc_tokens_per_s},{srv_static_tokens_per_s})*{inference.replicas},"
    "{decode_tokens_per_s_total})",
    "srv_tokens_per_s_total_in_use": f"=IF({_MEAS},{_M}*{{srv_gpus_in_use}},{{srv_tokens_per_s_total_model}})",
    "srv_fits_in_use_flag": f"=IF({_ENG},{{srv_kv_fits_flag}}*(1-({_POS}=c_srv_load_static)*(1-{{srv_static_fits_flag}})),"
    "{infer_fits_flag})",
    "srv_arrival_given_flag": "=IF(ISBLANK({inference.arrival_rate_rps}),0,1)",
    "srv_load_unstable_flag": f"={{srv_engine_model_flag}}*(1-{_DIS})*({_POS}=1)*{{srv_arrival_given_flag}}"
    "*{srv_load_saturated_flag}",
    "srv_ttft_defined_flag": "={purpose_serving_flag}*(1-{srv_load_unstable_flag})",
    "srv_ttft_target_given_flag": "=IF(ISBLANK({inference.ttft_target_ms}),0,1)",
    "srv_tpot_target_given_flag": "=IF(ISBLANK({inference.tpot_target_ms}),0,1)",
    "srv_ttft_target_miss_flag": "={srv_ttft_target_given_flag}*IF(OR({srv_ttft_ms_in_use}>{inference.ttft_target_ms},"
    "{srv_load_unstable_flag}=1),1,0)",
    "srv_tpot_target_miss_flag": "={srv_tpot_target_given_flag}*IF(OR({srv_tpot_ms_in_use}>{inference.tpot_target_ms},"
    "{srv_load_unstable_flag}=1),1,0)",
}
