"""Inference sheet, last block: the serving figures in use. The scenario's serving model picks the
engine model (the load block) or the book's roofline (spec 17.8); a measured tokens/s per GPU, when
typed, replaces the modelled throughput in every cost (the model's figure stays beside it). Cost,
Checks and Summary read these rows (issue 8 items 6-7)."""

from __future__ import annotations

from workbook.calc.base import Context, Q

_S = "docs/serving.md"

QUANTITIES = [
    Q("srv_engine_model_flag", "0/1", "Serving model in use is the engine model (1) or the book's (0)", _S),
    Q("srv_num_gpus", "GPUs", "Serving GPUs, engine model (TP x EP per group x replicas; disaggregated: both pools)", _S),
    Q("srv_gpus_in_use", "GPUs", "Serving GPUs in use (engine: TP x EP x replicas; book: TP x replicas)", _S),
    Q("srv_engine_ttft_ms", "ms", "Engine TTFT of the load model in use (rate: under the load, or of one prompt on "
      "an idle engine when offline; concurrency; static batch)", _S),
    Q("srv_ttft_ms_in_use", "ms", "Time to first token in use (engine or book model)", _S),
    Q("srv_tpot_ms_in_use", "ms", "Time per output token in use (engine under the load, or book)", _S),
    Q("srv_tokens_per_s_per_gpu_model", "tokens/s", "Output tokens/s per GPU of the serving model in use", _S),
    Q("srv_measured_flag", "0/1", "A measured tokens/s per GPU is given (1 = costs use it)", _S),
    Q("srv_tokens_per_s_per_gpu_in_use", "tokens/s", "Output tokens/s per GPU in use (measured, else the model)", _S),
    Q("srv_model_vs_measured_frac", "fraction", "Model figure against the measured one, relative (0 = none measured)", _S),
    Q("srv_tokens_per_s_total_model", "tokens/s", "Output tokens/s of all serving GPUs, model in use", _S),
    Q("srv_tokens_per_s_total_in_use", "tokens/s", "Output tokens/s of all serving GPUs in use (costs read this)", _S),
    Q("srv_fits_in_use_flag", "0/1", "Serving memory fits under the model in use (engine: the KV pool holds a request)", _S),
    Q("srv_arrival_given_flag", "0/1", "An arrival rate is given (0 = offline)", _S),
    Q("srv_load_unstable_flag", "0/1", "Engine model with an arrival rate the group cannot sustain (1 = saturated)", _S),
    Q("srv_ttft_defined_flag", "0/1", "Serving applies and its TTFT in use is defined (0 = not serving, or a "
      "saturated arrival rate: the queue grows without bound and the TTFT rows read 0; Summary says n/a)", _S),
    Q("srv_ttft_target_given_flag", "0/1", "A TTFT target is given", _S),
    Q("srv_tpot_target_given_flag", "0/1", "A TPOT target is given", _S),
    Q("srv_ttft_target_miss_flag", "0/1", "TTFT target missed (0 = met or no target; a saturated load misses)", _S),
    Q("srv_tpot_target_miss_flag", "0/1", "TPOT target missed (0 = met or no target; a saturated load misses)", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    inf, q = ctx.s.inference, ctx.q
    engine = inf.serving_model == "engine"
    dis = q["srv_dis_flag"]  # disaggregated pools (serving_disagg) replace the colocated group
    n_eng = q["srv_dis_gpus"] if dis == 1 else float(inf.tp * inf.ep * inf.replicas)
    n_use = n_eng if engine else float(q["infer_num_gpus"])
    load = inf.load
    rate_ttft = q["srv_ttft_idle_ms"] if inf.arrival_rate_rps is None else q["srv_load_ttft_ms"]
    by_load = {  # (TTFT, TPOT, tokens/s per GPU, tokens/s of a group) of each load model
        "rate": (rate_ttft, q["srv_load_tpot_ms"], q["srv_load_tokens_per_s_per_gpu"], q["srv_load_tokens_per_s"]),
        "concurrency": (q["srv_conc_ttft_ms"], q["srv_conc_tpot_ms"], q["srv_conc_tokens_per_s_per_gpu"],
                        q["srv_conc_tokens_per_s"]),
        "static": (q["srv_static_ttft_ms"], q["srv_static_tpot_ms"], q["srv_static_tokens_per_s_per_gpu"],
                   q["srv_static_tokens_per_s"]),
    }[load]
    ttft_eng = q["srv_dis_ttft_ms"] if dis == 1 else by_load[0]
    ttft = ttft_eng if engine else q["ttft_ms"]
    tpot_eng = q["srv_dis_tpot_ms"] if dis == 1 else by_load[1]
    tpot = tpot_eng if engine else q["tpot_ms"]
    per_gpu_eng = q["srv_dis_tokens_per_s_per_gpu"] if dis == 1 else by_load[2]
    per_gpu = per_gpu_eng if engine else q["decode_tokens_per_s_total"] / q["infer_num_gpus"]
    measured = inf.measured_tokens_per_s_per_gpu
    total_eng = q["srv_dis_tokens_per_s"] if dis == 1 else by_load[3] * inf.replicas
    total_model = total_eng if engine else q["decode_tokens_per_s_total"]
    unstable = float(engine and dis == 0 and load == "rate" and inf.arrival_rate_rps is not None
                     and q["srv_load_saturated_flag"] == 1)
    return {
        "srv_engine_model_flag": float(engine),
        "srv_num_gpus": n_eng,
        "srv_gpus_in_use": n_use,
        "srv_engine_ttft_ms": ttft_eng,
        "srv_ttft_ms_in_use": ttft,
        "srv_tpot_ms_in_use": tpot,
        "srv_tokens_per_s_per_gpu_model": per_gpu,
        "srv_measured_flag": float(measured is not None),
        "srv_tokens_per_s_per_gpu_in_use": per_gpu if measured is None else float(measured),
        "srv_model_vs_measured_frac": 0.0 if measured is None else per_gpu / measured - 1.0,
        "srv_tokens_per_s_total_model": total_model,
        "srv_tokens_per_s_total_in_use": total_model if measured is None else float(measured) * n_use,
        "srv_fits_in_use_flag": (q["srv_kv_fits_flag"] * (q["srv_static_fits_flag"] if load == "static" else 1.0))
        if engine else q["infer_fits_flag"],
        "srv_arrival_given_flag": float(inf.arrival_rate_rps is not None),
        "srv_load_unstable_flag": unstable,
        "srv_ttft_defined_flag": q["purpose_serving_flag"] * (1.0 - unstable),
        "srv_ttft_target_given_flag": float(inf.ttft_target_ms is not None),
        "srv_tpot_target_given_flag": float(inf.tpot_target_ms is not None),
        "srv_ttft_target_miss_flag": float(inf.ttft_target_ms is not None and (ttft > inf.ttft_target_ms or unstable == 1)),
        "srv_tpot_target_miss_flag": float(inf.tpot_target_ms is not None and (tpot > inf.tpot_target_ms or unstable == 1)),
    }
