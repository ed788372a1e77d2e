"""Book examples of spec 17.1-17.4 through the reference functions (part A)."""

from __future__ import annotations

from types import SimpleNamespace

from tests.examples.harness import make_tests
from workbook.reference import flops as fl
from workbook.reference import hardware as hw
from workbook.reference import infer_memory as im
from workbook.reference import kv
from workbook.reference import offload as off
from workbook.reference import params as pa
from workbook.reference import train_memory as tm
from workbook.reference import zero as zr
from workbook.units import BILLION, GB, MB, MILLION, MS_PER_S, TB, TERA, US_PER_S, GIGA

# LLaMA-7B shape at the chapter's standard point (B = 1, S = 4096, d = 4096): supplied where a record
# quotes a rounded derived input (33.55 MB, 1.66 TFLOPs) of that same shape.
LLAMA7B_B, LLAMA7B_S, LLAMA7B_D, LLAMA7B_DFF = 1, 4096, 4096, 11008


def _pct(x: float) -> float:
    return 100.0 * x


# --------------------------------------------------------------------------- 17.1
def _ex1_attn_proj(i):
    lay = fl.layer_linear_FLOPs(batch=i["B"], seq_len=i["S"], d_model=i["d_model"], d_ff=0)
    q = fl.linear_FLOPs(tokens=i["B"] * i["S"], d_in=i["d_model"], d_out=i["d_model"])
    return {"q_proj_GFLOPs": q / GIGA, "qkv_GFLOPs": lay["qkv"] / GIGA, "qkvo_GFLOPs": (lay["qkv"] + lay["o"]) / GIGA}


def _ffn_tokens(i):
    lay = fl.layer_linear_FLOPs(batch=1, seq_len=i["tokens"], d_model=i["d_model"], d_ff=i["d_ff"])
    return lay


def _ex2_ffn_per_token(i):
    lay = _ffn_tokens(i)
    return {"d_x_dff": i["d_model"] * i["d_ff"], "gate_FLOPs": lay["ffn_matrix"], "up_FLOPs": lay["ffn_matrix"],
            "down_FLOPs": lay["ffn_matrix"], "ffn_FLOPs_per_token": lay["ffn"]}


def _ex2_ffn_4096(i):
    f = _ffn_tokens(i)["ffn"]
    return {"ffn_layer_GFLOPs": f / GIGA, "ffn_layer_TFLOPs": f / TERA, "ffn_80_layers_TFLOPs": i["L"] * f / TERA}


def _allreduce_8gpu(i):
    return {"t_h800_ms": hw.ring_allreduce_time_s(size_GB=i["size_GB"], n=i["N"], bw_GBps=i["h800_eff_GBps"]) * MS_PER_S,
            "t_h20_ms": hw.ring_allreduce_time_s(size_GB=i["size_GB"], n=i["N"], bw_GBps=i["h20_eff_GBps"]) * MS_PER_S}


def _nic(i):
    return {"aggregate_Tbps": hw.nic_aggregate_Tbps(nics=i["nics"], gbit_per_port=i["gbit_per_port"]),
            "aggregate_GBps": hw.nic_aggregate_GBps(nics=i["nics"], gbit_per_port=i["gbit_per_port"]),
            "encoding_efficiency": hw.ENCODING_EFFICIENCY_64B66B}


def _float_fmt(name):
    def case(i):
        s, e, m, fn = hw.FLOAT_FORMATS[name]
        assert (s, e, m) == (i["sign_bits"], i["exp_bits"], i["mantissa_bits"])
        out = {"bytes": hw.float_format_bytes(sign_bits=s, exp_bits=e, mantissa_bits=m)}
        out.update(hw.float_format_limits(exp_bits=e, mantissa_bits=m, finite_only=fn))
        return out
    return case


def _int_fmt(i):
    return hw.int_format_range(i["bits"])


def _fp32_adam(i):
    return {"multiplier": 1 + i["n_optimizer_states"],
            "memory_GB": tm.generic_optimizer_GB(params=i["params"], bytes_per_elem=i["bytes_per_elem"],
                                                 n_states=i["n_optimizer_states"])}


def _weights_prec(i):
    w = tm.weights_GB(params=i["params"], bytes_per_param=i["bytes_per_param"])
    bf16 = tm.weights_GB(params=i["params"], bytes_per_param=2)
    return {"weights_GB": w, "saving_GB": bf16 - w, "saving_pct": -tm.pct_change(value=w, reference=bf16)}


def _fp32_adam_7b(i):
    w = tm.weights_GB(params=i["params"], bytes_per_param=i["fp32_weight_bytes"])
    o = tm.bytes_GB(params=i["params"], bytes_per_param=i["m_bytes"] + i["v_bytes"])
    return {"total_bytes_per_param": i["fp32_weight_bytes"] + i["m_bytes"] + i["v_bytes"], "total_GB": w + o,
            "optimizer_GB": o, "weights_GB": w, "exceeds_h800": not im.fits(need_GB=w + o, hbm_GB=i["h800_hbm_GB"])}


def _70b_precision(i):
    bf = tm.weights_GB(params=i["params"], bytes_per_param=i["bf16_bytes"])
    ma = tm.weights_GB(params=i["params"], bytes_per_param=i["fp32_master_bytes"])
    f8 = tm.weights_GB(params=i["params"], bytes_per_param=i["fp8_bytes"])
    return {"bf16_plus_master_GB": bf + ma, "bf16_copy_GB": bf, "fp32_master_GB": ma, "fp8_GB": f8,
            "saving_GB": bf + ma - f8, "saving_pct": -tm.pct_change(value=f8, reference=bf + ma)}


def _fp8_mixed(i):
    b = i["fp8_weight_bytes"] + i["bf16_grad_bytes"] + i["fp32_master_bytes"] + i["adam_mv_bytes"]
    return {"bytes_per_param": b, "total_GB": tm.bytes_GB(params=i["params"], bytes_per_param=b)}


def _bw_ratio(i):
    return {"ratio_x1e3": 1e3 * hw.bw_per_flop_B_per_FLOP(hbm_bw_GBps=i["mem_bw_GBps"], peak_TFLOPS=i["bf16_dense_TFLOPS"])}


def _zero3_8gpu(i):
    per = hw.per_card_GB(params=i["params"], bytes_per_param=i["bytes_per_param"], cards=i["N_gpus"])
    return {"total_bytes": i["params"] * i["bytes_per_param"], "per_gpu_GB": per,
            "gpus_fitting": hw.gpus_fitting(need_GB=per, hbm_GB=i["hbm_GB"])}


def _table17_7(i):
    per = hw.per_card_GB(params=i["params"], bytes_per_param=i["bytes_per_param"], cards=i["cards"])
    out = {"min_hbm_per_card_GB": per, "gpus": hw.gpus_fitting(need_GB=per, hbm_GB=i["hbm_GB"])}
    if "native_fp8" in i:
        out["gpus_native_fp8"] = hw.gpus_fitting(need_GB=per, hbm_GB=i["hbm_GB"], native_fp8=i["native_fp8"])
    return out


def _bisection(i):
    tot = hw.switch_aggregate_GBps(gpus=i["gpus"], per_gpu_bw_GBps=i["per_gpu_nvlink_bidir_GBps"])
    bis = hw.bisection_bw_GBps(gpus=i["gpus"], per_gpu_bw_GBps=i["per_gpu_nvlink_bidir_GBps"])
    return {"bisection_TBps": hw.GBps_to_TBps(bis), "total_TBps": hw.GBps_to_TBps(tot), "bisection_over_total": bis / tot}


def _8node(i):
    t = hw.ring_allreduce_time_s(size_GB=i["grad_GB"], n=i["N_nodes"], bw_GBps=i["node_bw_GBps"])
    return {"ring_data_per_node_GB": hw.ring_allreduce_data_GB(size_GB=i["grad_GB"], n=i["N_nodes"]),
            "ring_t_s": t, "ring_t_ms": t * MS_PER_S,
            "tree_t_ms": hw.tree_allreduce_time_s(size_GB=i["grad_GB"], bw_GBps=i["node_bw_GBps"]) * MS_PER_S}


# --------------------------------------------------------------------------- 17.2
def _12ld2(i, exact):
    s = pa.params_12Ld2(layers=i["L"], d_model=i["d_model"])
    out = {"simplified_B": s / BILLION, "deviation_pct": pa.deviation_pct(estimate=s, exact=exact)}
    if "d_ff" in i:
        out["dff_over_d"] = i["d_ff"] / i["d_model"]
    return out


def _llama3_8b_mha(i):
    r = pa.dense_params(layers=i["L"], d_model=i["d_model"], d_ff=i["d_ff"], vocab=i["V"], tied=i["tied"])
    return {"attn_per_layer": r["attn_per_layer"], "ffn_per_layer": r["ffn_per_layer"],
            "norm_per_layer": r["norm_per_layer"], "per_layer": r["per_layer"], "layers_total": r["layers_total"],
            "emb": r["embedding"], "params_total_B": r["params_total"] / BILLION}


def _405b_exact(i):
    a = pa.attention_params(d_model=i["d_model"], n_heads=i["h"], n_kv_heads=i["g"], head_dim=i["d_head"])
    return {"P_Q": a["q"], "P_K": a["k"], "P_V": a["v"], "P_O": a["o"], "d_x_dff": i["d_model"] * i["d_ff"],
            "norm_per_layer": 2 * i["d_model"]}


def _405b_rounded(i):
    r = pa.dense_params(layers=i["L"], d_model=i["d_model"], d_ff=i["d_ff"], vocab=i["V"], n_heads=i["h"],
                        n_kv_heads=i["g"], head_dim=i["d_head"], tied=i["tied"])
    s = pa.params_12Ld2(layers=i["L"], d_model=i["d_model"])
    return {"attn_per_layer_M": r["attn_per_layer"] / MILLION, "ffn_per_layer_M": r["ffn_per_layer"] / MILLION,
            "per_layer_M": r["per_layer"] / MILLION, "layers_total_B": r["layers_total"] / BILLION,
            "emb_plus_head_B": r["embedding"] / BILLION, "params_total_B": r["params_total"] / BILLION,
            "simplified_12Ld2_B": s / BILLION, "dff_over_d": i["d_ff"] / i["d_model"],
            "layer_over_llama3_8b_pct": _pct(r["per_layer"] / i["llama3_8b_total"]),
            "total_over_llama3_8b": r["params_total"] / i["llama3_8b_total"]}


def _book_moe(i, dff_e=None):
    """Book approximation: MHA 4d² attention, norms ignored, embeddings as the record says."""
    d, L = i["d_model"], i["L"]
    attn = pa.attention_params_mha_4d2(d)
    emb = pa.embedding_params(vocab=i["V"], d_model=d, tied=i.get("embeddings_counted", 2) == 1)
    dense = L * attn + emb
    return pa.moe_params(moe_layers=L, d_model=d, expert_d_ff=dff_e or i["d_ff_expert"], n_experts=i["N_experts"],
                         top_k=i["top_k"], n_shared=i.get("n_shared", 0), dense_non_moe=dense,
                         include_router=False), attn, emb, dense


def _mixtral_book(i):
    r, attn, emb, dense = _book_moe(i)
    return {"moe_per_layer_M": r["moe_per_layer"] / MILLION, "moe_total_M": r["moe_total"] / MILLION,
            "dense_M": dense / MILLION, "params_total_B": r["params_total"] / BILLION,
            "active_B": r["params_active"] / BILLION, "active_pct": _pct(r["params_active"] / r["params_total"])}


def _expert_exact(i):
    r = pa.moe_params(moe_layers=1, d_model=i["d_model"], expert_d_ff=i["d_ff_expert"], n_experts=i["N_experts"],
                      top_k=1)
    return {"per_expert": r["per_expert"], "moe_per_layer": r["moe_per_layer"]}


def _dsv2_book(i):
    r, attn, emb, dense = _book_moe(i)
    router = pa.router_params(d_model=i["d_model"], n_experts=i["N_experts"], bias=True)  # book: N·d + N
    return {"router_M": router / MILLION, "routed_active_per_layer_M": r["routed_active_per_layer"] / MILLION,
            "shared_active_per_layer_M": r["shared_per_layer"] / MILLION,
            "moe_active_per_layer_M": r["active_per_layer"] / MILLION, "attn_per_layer_M": attn / MILLION,
            "attn_total_B": i["L"] * attn / BILLION, "emb_M": emb / MILLION, "dense_B": dense / BILLION,
            "params_total_B": r["params_total"] / BILLION, "active_B": r["params_active"] / BILLION,
            "active_pct": _pct(r["params_active"] / r["params_total"])}


def _mixtral22_book(i):
    r, attn, emb, dense = _book_moe(i)
    return {"active_per_layer_M": r["active_per_layer"] / MILLION, "attn_per_layer_M": attn / MILLION,
            "attn_total_B": i["L"] * attn / BILLION, "emb_M": emb / MILLION, "moe_total_B": r["moe_total"] / BILLION,
            "dense_B": dense / BILLION, "params_total_B": r["params_total"] / BILLION,
            "active_B": r["params_active"] / BILLION, "active_pct": _pct(r["params_active"] / r["params_total"])}


def _kv_params_70b(i):
    mha = pa.kv_projection_params(d_model=i["d_model"], n_kv_heads=i["g_mha"], head_dim=i["d_head"])
    gqa = pa.kv_projection_params(d_model=i["d_model"], n_kv_heads=i["g_gqa"], head_dim=i["d_head"])
    return {"mha_kv_total_B": i["L"] * mha / BILLION, "gqa_kv_total_B": i["L"] * gqa / BILLION,
            "saving_B": i["L"] * (mha - gqa) / BILLION, "gqa_kv_per_layer": gqa,
            "gqa_kv_total_B_precise": i["L"] * gqa / BILLION,
            "saving_pct_of_70B": _pct(i["L"] * (mha - gqa) / i["params_nominal"])}


def _llama3_70b_gqa(i):
    d, g, dh, L = i["d_model"], i["g"], i["d_head"], i["L"]
    gqa = pa.kv_projection_params(d_model=d, n_kv_heads=g, head_dim=dh)
    saving = pa.gqa_saving_params(d_model=d, n_kv_heads=g, head_dim=dh)
    elems = kv.kv_elements_per_token(layers=L, n_kv_heads=g, head_dim=dh)
    return {"dh_x_d": dh * d, "g_x_dh_x_d": g * dh * d, "P_KV_per_layer": gqa, "P_KV_total": L * gqa,
            "saving_per_layer_M": saving / MILLION, "saving_total_B": L * saving / BILLION,
            "kv_reduction": 1 / kv.gqa_factor(n_kv_heads=g, n_heads=d / dh),
            "saving_pct_of_70B": _pct(L * saving / i["params_nominal"]), "kv_elems_per_token_K": elems / 1e3,
            "kv_MB_per_token": kv.kv_bytes_per_token(layers=L, n_kv_heads=g, head_dim=dh,
                                                     kv_bytes=i["bytes_per_elem"]) / MB}


def _palm_exact(i):
    return {"dh_x_d": i["d_head"] * i["d_model"],
            "P_KV_MQA": pa.kv_projection_params(d_model=i["d_model"], n_kv_heads=i["g"], head_dim=i["d_head"]),
            "P_KV_MHA": pa.kv_projection_params(d_model=i["d_model"], n_kv_heads=i["h"], head_dim=i["d_head"])}


def _palm_rounded(i):
    mqa = pa.kv_projection_params(d_model=i["d_model"], n_kv_heads=1, head_dim=i["d_head"])
    mha = pa.kv_projection_params(d_model=i["d_model"], n_kv_heads=i["h"], head_dim=i["d_head"])
    return {"mqa_over_mha_pct": _pct(kv.gqa_factor(n_kv_heads=1, n_heads=i["h"])),
            "saving_per_layer_M": (mha - mqa) / MILLION, "mha_total_B": i["L"] * mha / BILLION,
            "mqa_total_B": i["L"] * mqa / BILLION, "saving_total_B": i["L"] * (mha - mqa) / BILLION}


def _vocab(i):
    return {"emb_M": pa.embedding_params(vocab=i["V"], d_model=i["d_model"], tied=True) / MILLION,
            "vocab_share_pct": _pct(pa.vocab_share_frac(vocab=i["V"], d_model=i["d_model"],
                                                        params_total=i["params_total"], tied=True))}


def _multilingual(i):
    e = pa.embedding_params(vocab=i["V"], d_model=i["d_model"], tied=True)
    u = pa.embedding_params(vocab=i["V"], d_model=i["d_model"], tied=False)
    kw = dict(vocab=i["V"], d_model=i["d_model"], params_total=i["params_total"])
    return {"emb_exact": e, "emb_B": e / BILLION, "tied_share_pct": _pct(pa.vocab_share_frac(tied=True, **kw)),
            "untied_B": u / BILLION, "untied_share_pct": _pct(pa.vocab_share_frac(tied=False, **kw))}


def _arch(i, **over):
    """A catalogue-like Model from a record's architecture inputs."""
    d = i["d_model"]
    base = dict(layers=i["L"], d_model=d, d_ff=i.get("d_ff", i.get("d_ff_dense", i.get("d_ff_expert"))),
                n_heads=i["h"], n_kv_heads=i.get("g"), head_dim=i.get("d_head"), vocab=i["V"],
                tied_embeddings=i["tied"], ffn="swiglu", attention="gqa", qkv_bias=i.get("qkv_bias", False),
                norm="rmsnorm", norm_params_per_layer=2 * d, moe=False)
    base.update(over)
    return SimpleNamespace(**base)


def _table17_21(i):
    return {"params_total_B": pa.model_param_counts(_arch(i))["params_total"] / BILLION}


def _gemma(i):
    m = _arch(i, head_dim=i["d_head_real"], n_kv_heads=i["g_real"], ffn="geglu",
              norm_params_per_layer=i["norms_per_layer_real"] * i["d_model"])
    return {"params_total_B": pa.model_param_counts(m)["params_total"] / BILLION}


def _mixtral_exact(i):
    m = _arch(i, moe=True, n_routed_experts=i["N_experts"], top_k=i["top_k"], n_shared_experts=0,
              expert_d_ff=i["d_ff_expert"], n_dense_layers=0, dense_d_ff=None)
    return {"params_total_B": pa.model_param_counts(m)["params_total"] / BILLION}


def _dsv3(i):
    m = _arch(i, attention="mla", q_lora_rank=i["q_lora_rank"], kv_lora_rank=i["kv_lora_rank"],
              qk_rope_head_dim=i["qk_rope_dim"], qk_nope_head_dim=i["qk_nope_dim"], v_head_dim=i["v_head_dim"],
              moe=True, n_routed_experts=i["N_routed"], top_k=i["top_k"], n_shared_experts=i["N_shared"],
              expert_d_ff=i["d_ff_expert"], n_dense_layers=i["dense_layers"], dense_d_ff=i["d_ff_dense"])
    c = pa.model_param_counts(m)
    return {"params_total_B": c["params_total"] / BILLION, "active_B": c["params_active"] / BILLION}


def _qwen_mha(i):
    # this example sums attention + FFN + embedding only (no norm weights)
    r = pa.dense_params(layers=i["L"], d_model=i["d_model"], d_ff=i["d_ff"], vocab=i["V"], tied=i["tied"],
                        norm_params_per_layer=0)
    return {"attn_per_layer_M": r["attn_per_layer"] / MILLION, "attn_B": i["L"] * r["attn_per_layer"] / BILLION,
            "ffn_per_layer_M": r["ffn_per_layer"] / MILLION, "ffn_B": i["L"] * r["ffn_per_layer"] / BILLION,
            "emb_M": r["embedding"] / MILLION, "params_total_B": r["params_total"] / BILLION}


def _table17_22(i):
    kw = dict(layers=i["L"], d_model=i["d_model"], d_ff=i["d_ff"], vocab=i["V"])
    mha = pa.dense_params(tied=True, **kw)["params_total"]
    gqa_kw = dict(n_heads=i["h"], n_kv_heads=i["g"], head_dim=i["d_head"], **kw)
    return {"mha_B": mha / BILLION, "gqa_B": pa.dense_params(tied=True, **gqa_kw)["params_total"] / BILLION,
            "gqa_untied_B": pa.dense_params(tied=False, **gqa_kw)["params_total"] / BILLION}


def _quick_estimate(i):
    d = i["d_model"]
    # back-of-envelope: 4d² attention + SwiGLU 3·d·d_ff + tied V·d, norms ignored
    r = pa.dense_params(layers=i["L"], d_model=d, d_ff=i["d_ff_assumed"], vocab=i["V_assumed"], tied=True,
                        norm_params_per_layer=0)
    s = pa.params_12Ld2(layers=i["L"], d_model=d)
    return {"dff_8_3": pa.swiglu_dff_for_12Ld2(d), "dff_3_5": 3.5 * d, "simplified": s, "simplified_B": s / BILLION,
            "emb_M": r["embedding"] / MILLION, "attn_per_layer_M": r["attn_per_layer"] / MILLION,
            "ffn_per_layer_M": r["ffn_per_layer"] / MILLION, "per_layer_M": r["per_layer"] / MILLION,
            "layers_M": r["layers_total"] / MILLION, "full_B": r["params_total"] / BILLION}


def _quick_moe(i):
    out = {}
    for tag, dff in zip(("lo", "hi"), i["d_ff_range"]):
        d, L = i["d_model"], i["L"]
        dense = L * pa.attention_params_mha_4d2(d) + pa.embedding_params(vocab=i["V_assumed"], d_model=d, tied=True)
        r = pa.moe_params(moe_layers=L, d_model=d, expert_d_ff=dff, n_experts=i["N_experts"], top_k=i["top_k"],
                          dense_non_moe=dense, include_router=False)
        out[f"moe_total_{tag}_B"] = r["params_total"] / BILLION
        out[f"active_{tag}_B"] = r["params_active"] / BILLION
    return out


# --------------------------------------------------------------------------- 17.3
def _matmul_numeric(i):
    f = fl.matmul_FLOPs(m=i["m"], n=i["n"], k=i["k"])
    return {"GFLOPs": f / GIGA, "t_us": fl.compute_time_s(FLOPs=f, peak_TFLOPS=i["peak_TFLOPS"]) * US_PER_S}


def _qkv(i):
    f = fl.linear_FLOPs(tokens=i["B"] * i["S"], d_in=i["d_model"], d_out=i["d_out"])
    return {"FLOPs": f, "GFLOPs": f / GIGA}


def _up(i):
    f = fl.linear_FLOPs(tokens=i["B"] * i["S"], d_in=i["d_model"], d_out=i["d_ff"])
    qkv = fl.layer_linear_FLOPs(batch=i["B"], seq_len=i["S"], d_model=i["d_model"], d_ff=i["d_ff"])["qkv"]
    return {"FLOPs": f, "GFLOPs": f / GIGA, "ratio_to_qkv_pct": _pct(f / qkv)}


def _layer(i):
    lay = fl.layer_linear_FLOPs(batch=i["B"], seq_len=i["S"], d_model=i["D"], d_ff=i["F"])
    f = lay["ffn_matrix"] / GIGA
    return {"qkv_GFLOPs": lay["qkv"] / GIGA, "o_GFLOPs": lay["o"] / GIGA, "ffn3_GFLOPs": lay["ffn"] / GIGA,
            "up_GFLOPs": f, "gate_GFLOPs": f, "down_GFLOPs": f,
            "layer_GFLOPs": lay["total"] / GIGA, "total_GFLOPs": lay["total"] / GIGA,
            "layer_TFLOPs": lay["total"] / TERA, "model_32_layers_TFLOPs": 32 * lay["total"] / TERA}


def _per_token_linear(i):
    g = i["layer_GFLOPs"] / i["S"]
    return {"per_token_layer_GFLOPs": g, "per_token_layer_MFLOPs": g * GIGA / MILLION}


def _attn(i):
    f = fl.attention_core_FLOPs(batch=i["B"], seq_len=i["S"], d_model=i["d_model"])
    out = {"FLOPs": f, "GFLOPs": f / GIGA, "TFLOPs": f / TERA}
    if "L" in i:
        out["model_TFLOPs"] = i["L"] * f / TERA
    if "linear_layer_GFLOPs" in i:
        out["attn_over_linear_pct"] = _pct(f / GIGA / i["linear_layer_GFLOPs"])
    if "d_ff" in i:
        lin = fl.layer_linear_FLOPs(batch=i["B"], seq_len=i["S"], d_model=i["d_model"], d_ff=i["d_ff"])["total"]
        out["attn_over_linear"] = f / lin
        out["growth_vs_4k"] = f / fl.attention_core_FLOPs(batch=i["B"], seq_len=4096, d_model=i["d_model"])
    return out


def _rmsnorm(i):
    n = fl.norm_FLOPs(batch=i["B"], seq_len=i["S"], d_model=i["d_model"], norms=i["norms_per_layer"],
                      flops_per_element=i["flops_per_element"])
    lin = fl.layer_linear_FLOPs(batch=i["B"], seq_len=i["S"], d_model=i["d_model"], d_ff=LLAMA7B_DFF)["total"]
    return {"rmsnorm_2x_GFLOPs": n / GIGA, "matmul_TFLOPs": lin / TERA}


def _silu_layer(i):
    a = fl.activation_FLOPs(batch=i["B"], seq_len=i["S"], d_ff=i["d_ff"], flops_per_element=i["flops_per_element"])
    return {"MFLOPs": a / MILLION, "pct_of_layer": _pct(a / i["layer_FLOPs"])}


def _silu_total(i):
    a = fl.activation_FLOPs(batch=i["B"], seq_len=i["S"], d_ff=i["d_ff"], flops_per_element=i["flops_per_element"],
                            layers=i["L"])
    lin = fl.layer_linear_FLOPs(batch=i["B"], seq_len=i["S"], d_model=LLAMA7B_D, d_ff=i["d_ff"])["total"]
    return {"FLOPs": a, "GFLOPs": a / GIGA, "pct_of_linear": _pct(a / (i["L"] * lin))}


def _lm_head(i):
    f = fl.lm_head_FLOPs(batch=i["B"], seq_len=i["S"], d_model=i["d_model"], vocab=i["V"])
    per_tok = f / (i["B"] * i["S"])
    return {"FLOPs": f, "TFLOPs": f / TERA, "per_token_MFLOPs": per_tok / MILLION,
            "fwd_per_token_TFLOPs": i["fwd_per_token_FLOPs"] / TERA,
            "lm_head_share_pct": _pct(per_tok / i["fwd_per_token_FLOPs"])}


def _per_token_7b(i):
    kw = dict(layers=i["L"], seq_len=i["S"], d_model=i["d_model"])
    fwd = fl.forward_FLOPs_per_token(params=i["P_non_embed_as_stated"], **kw)
    att = fl.attention_FLOPs_per_token(**kw)
    return {"linear_GFLOPs": (fwd - att) / GIGA, "attn_GFLOPs": att / GIGA, "fwd_GFLOPs": fwd / GIGA,
            "attn_share_pct": _pct(att / fwd)}


def _per_token_big(i):
    fwd = fl.forward_FLOPs_per_token(params=i["P_non_embed"])
    tot = fl.train_FLOPs_per_token(params=i["P_non_embed"])
    out = {"fwd_GFLOPs": fwd / GIGA, "bwd_GFLOPs": (tot - fwd) / GIGA, "total_GFLOPs": tot / GIGA,
           "total_TFLOPs": tot / TERA}
    if "P_llama7b" in i:
        out["ratio_to_7b"] = fwd / fl.forward_FLOPs_per_token(params=i["P_llama7b"])
    return out


def _long_seq(i):
    return {"attn_GFLOPs": fl.attention_FLOPs_per_token(layers=i["L"], seq_len=i["S"], d_model=i["d_model"]) / GIGA,
            "two_P_GFLOPs": fl.forward_FLOPs_per_token(params=i["P"]) / GIGA}


def _train_total(i):
    out = {}
    c = i.get("total_FLOPs")
    if "P_non_embed" in i:
        c = fl.train_FLOPs(params=i["P_non_embed"], tokens=i["tokens"])
        out["total_FLOPs"] = c
    days = fl.gpu_days(FLOPs=c, peak_TFLOPS=i["peak_TFLOPS"], mfu=i["MFU"])
    out["gpu_days"] = out["v100_days"] = days
    if "gpus" in i:
        out[f"days_on_{i['gpus']}"] = fl.wall_days(gpu_days=days, gpus=i["gpus"])
    return out


def _ptotal_over(i):
    c = fl.train_FLOPs(params=i["P_total"], tokens=i["tokens"])
    ref = fl.train_FLOPs(params=i["P_non_embed_as_stated"], tokens=i["tokens"])
    return {"total_FLOPs": c, "overestimate_pct": _pct(c / ref - 1)}


def _moe_flops(i):
    moe = fl.moe_FLOPs_per_token(params_active=i["P_active"]) / GIGA
    dense = fl.moe_FLOPs_per_token(params_active=i["P_total"]) / GIGA
    return {"per_token_GFLOPs": moe, "moe_GFLOPs": moe, "dense_GFLOPs": dense, "dense_over_moe": dense / moe,
            "saving_x": dense / moe, "cost_fraction_pct": _pct(moe / dense),
            "active_pct": _pct(i["P_active"] / i["P_total"])}


# --------------------------------------------------------------------------- 17.4.1-17.4.4
def _ledger(i):
    b = i["bytes_per_param"]
    return {"nominal_7B_GB": tm.static_GB(params=7e9, bytes_per_param=b),
            "llama7b_6.74B_GB": tm.static_GB(params=6.74e9, bytes_per_param=b),
            "nominal_70B_TB": tm.static_GB(params=70e9, bytes_per_param=b) * GB / TB}


def _components(i):
    p = i["params"]
    w = tm.weights_GB(params=p, bytes_per_param=i["weight_bytes"])
    o = tm.bytes_GB(params=p, bytes_per_param=i["optimizer_bytes"])
    g = tm.grads_GB(params=p, grad_bytes=i["grad_bytes"])
    tot = w + o + g
    return {"weights_GB": w, "weights_pct": _pct(w / tot), "optimizer_GB": o, "optimizer_pct": _pct(o / tot),
            "grads_GB": g, "grads_pct": _pct(g / tot)}


def _weights_6p(i):
    bf = tm.weights_GB(params=i["params"], bytes_per_param=2)
    ma = tm.weights_GB(params=i["params"], bytes_per_param=4)
    return {"bf16_GB": bf, "fp32_master_GB": ma, "total_6P_GB": bf + ma}


def _int4(i):
    bf = tm.weights_GB(params=i["params"], bytes_per_param=i["bf16_bytes"])
    q = tm.weights_GB(params=i["params"], bytes_per_param=i["int4_bytes"])
    out = {"bf16_GB": bf, "int4_GB": q, "saving_pct": -tm.pct_change(value=q, reference=bf)}
    if "h20_hbm_GB" in i:
        out["h20_headroom_GB"] = im.headroom_GB(hbm_GB=i["h20_hbm_GB"], used_GB=q)
    return out


def _405b_weights(i):
    w = tm.weights_GB(params=i["params"], bytes_per_param=i["bytes"])
    return {"weights_GB": w, "h800_cards": tm.min_cards(size_GB=w, hbm_GB=i["h800_GB"]),
            "h20_cards": tm.min_cards(size_GB=w, hbm_GB=i["h20_GB"])}


OPT_BY_ID = {"adam": "adam", "adam-mv-only": "adam_mv", "sgd-momentum": "sgd_momentum", "adam-mini": "adam_mini"}


def _opt_table(name):
    def case(i):
        o = tm.optimizer_GB(params=i["params"], optimizer=name)
        a = tm.optimizer_GB(params=i["params"], optimizer="adam")
        return {"optimizer_GB": o, "vs_adam_pct": tm.pct_change(value=o, reference=a)}
    return case


def _adam_12p(i):
    c = tm.optimizer_components_GB(params=i["params"], optimizer="adam")
    return {"m_GB": c["m"], "v_GB": c["v"], "master_GB": c["master"], "total_12P_GB": c["total"]}


def _405b_cards(i):
    return {"optimizer_TB": i["optimizer_GB"] * GB / TB,
            "h800_cards": tm.min_cards(size_GB=i["optimizer_GB"], hbm_GB=i["h800_GB"]),
            "h20_cards": tm.min_cards(size_GB=i["optimizer_GB"], hbm_GB=i["h20_GB"])}


def _sgd(i):
    s = tm.optimizer_GB(params=i["params"], optimizer="sgd_momentum")
    assert tm.optimizer_bytes_per_param("sgd_momentum") == i["velocity_bytes"] + i["fp32_master_bytes"]
    return {"sgd_GB": s, "saving_GB": i["adam_GB"] - s, "saving_pct": -tm.pct_change(value=s, reference=i["adam_GB"])}


def _adam8(i):
    c = tm.optimizer_components_GB(params=i["params"], optimizer="adam_8bit")
    return {"total_GB": c["total"], "saving_GB": i["adam_GB"] - c["total"],
            "saving_pct": -tm.pct_change(value=c["total"], reference=i["adam_GB"]),
            "m_GB": c["m"], "v_GB": c["v"], "master_GB": c["master"]}


def _grads(i):
    g = tm.grads_GB(params=i["params"], grad_bytes=2)
    return {"bf16_GB": g, "grad_GB": g, "fp32_GB": tm.grads_GB(params=i["params"], grad_bytes=4)}


# --------------------------------------------------------------------------- 17.4.5-17.4.7
def _tensor(name):
    def case(i):
        b = tm.activation_tensors_bytes(batch=i["B"], seq_len=i["S"], d_model=i["d_model"], d_ff=i["d_ff"],
                                        n_heads=i["h"], act_bytes=i["bytes"])[name]
        return {"elements": b / i["bytes"], "size_MB": b / MB}
    return case


def _tensor_sum(i):
    s = tm.activation_tensor_sums_GB({k: v * MB for k, v in i["tensors_MB"].items()})
    return {"layer_MB": s["layer"] * GB / MB, "layer_GB": s["layer"], "softmax_reused_layer_GB": s["softmax_reused"],
            "softmax_reused_32L_GB": i["L"] * s["softmax_reused"], "qkv_dropped_layer_GB": s["qkv_dropped"],
            "qkv_dropped_32L_GB": i["L"] * s["qkv_dropped"]}


def _table17_39(i):
    b = tm.activation_layer_bytes_table17_39(batch=i["B"], seq_len=i["S"], d_model=i["d_model"], d_ff=i["d_ff"],
                                             n_heads=i["h"], act_bytes=i["bytes"])
    return {"layer_GB": b / GB}


def _qkt(i):
    b = tm.qkt_bytes(n_heads=i["h"], batch=i.get("B", 1), seq_len=i["S"], act_bytes=i.get("bytes", 2))
    out = {"qkt_GB_per_layer": b / GB, "qkt_bytes": b, "qkt_GB": b / GB, "softmax_GB": b / GB, "sum_GB": 2 * b / GB,
           "per_layer_GB": b / GB, "elements_per_head_M": b / i.get("bytes", 2) / i["h"] / MILLION,
           "elements_B": b / i.get("bytes", 2) / BILLION}
    if "h800_GB" in i:
        out["exceeds_h800"] = not im.fits(need_GB=2 * b / GB, hbm_GB=i["h800_GB"])
    if "L" in i:
        out["total_GB"] = out[f"qkt_{i['L']}L_GB"] = i["L"] * b / GB
        out["growth"] = tm.qkt_bytes(n_heads=i["h"], batch=1, seq_len=8 * i["S"]) / b
    return out


def _recompute_table(i):
    no = tm.activations_no_recompute_GB(layers=i["L"], batch=i["B"], seq_len=i["S"], d_model=i["d_model"],
                                        d_ff=i["d_ff"], n_heads=i["h"], act_bytes=i["bytes"])
    full = tm.activations_full_recompute_GB(layers=i["L"], batch=i["B"], seq_len=i["S"], d_model=i["d_model"],
                                            act_bytes=i["bytes"])
    return {"no_recompute_GB": no, "full_recompute_GB": full, "ratio_pct": _pct(full / no)}


def _recompute_factor(i):
    f = (i["recompute_fwd_units"] - i["base_fwd_units"])
    return {"flops_coefficient": fl.train_FLOPs(params=1, tokens=1, recompute_fwd_frac=f),
            "overhead_pct": _pct(fl.recompute_compute_factor(f) - 1)}


def _full_recompute(i):
    kept = tm.activations_full_recompute_GB(layers=i["L"], batch=LLAMA7B_B, seq_len=LLAMA7B_S, d_model=LLAMA7B_D)
    no = i["no_recompute_GB_as_stated"]
    return {"kept_MB": kept * GB / MB, "kept_GB": kept, "saving_GB": no - kept, "saving_pct": _pct(1 - kept / no),
            "extra_compute_pct": _pct(fl.recompute_compute_factor(1.0) - 1)}


def _selective(i):
    t = tm.activation_tensors_bytes(batch=LLAMA7B_B, seq_len=i["S"], d_model=i["d_model"], d_ff=i["d_ff"],
                                    n_heads=i["h"])
    kept_layer = t["attention_input"] + t["attention_output"]
    ffn = t["ffn_up"] + t["ffn_gate"] + t["ffn_down_input"]
    kept = tm.activations_selective_GB(layers=i["L"], batch=LLAMA7B_B, seq_len=i["S"], d_model=i["d_model"])
    no = i["no_recompute_GB_as_stated"]
    return {"kept_per_layer_MB": kept_layer / MB, "ffn_recomputed_MB": ffn / MB,
            "saved_per_layer_GB": (ffn + t["qk_t_all_heads"]) / GB, "kept_32L_GB": kept,
            "saving_pct": _pct(1 - kept / no),
            "compute_factor": fl.recompute_compute_factor(i["recompute_fraction_of_fwd"])}


def _table17_43(i):
    static = tm.static_GB(params=i["params"])
    act = tm.activations_full_recompute_GB(layers=i["L"], batch=i["B"], seq_len=i["S"], d_model=i["d_model"],
                                           act_bytes=i["act_bytes"])
    total = tm.training_total_GB(static_GB=static, activations_GB=act, overhead_GB=i["overhead_GB_per_gpu"])
    return {"static_16P_GB": static, "activations_GB": act, "total_GB": total,
            "over_h800_pct": tm.pct_change(value=total, reference=i["h800_GB"]),
            "h800_cards": tm.min_gpus_zero3(static_GB=static, hbm_GB=i["h800_GB"], activations_GB=act,
                                            overhead_GB=i["overhead_GB_per_gpu"])}


def _table17_44(i):
    p = i["params"]
    c = tm.optimizer_components_GB(params=p, optimizer="adam")
    static = tm.static_GB(params=p)
    act, ovh = i["activations_GB_as_stated"], i["overhead_GB"]
    total = tm.training_total_GB(static_GB=static, activations_GB=act, overhead_GB=ovh)
    z3 = zr.zero_per_gpu_GB(params=p, stage=3, n=2)
    return {"weights_GB": tm.weights_GB(params=p), "m_GB": c["m"], "v_GB": c["v"], "master_GB": c["master"],
            "grads_GB": tm.grads_GB(params=p), "total_GB": total,
            "h20_shortfall_GB": -im.headroom_GB(hbm_GB=i["h20_GB"], used_GB=total),
            "zero3_n2_per_gpu_GB": z3 + act + ovh,
            "tp2_per_gpu_GB": total / 2}  # the book's rough TP=2 bound halves everything


def _table17_45(i):
    p, act = i["params"], i["activations_GB"]
    c = tm.optimizer_components_GB(params=p, optimizer="adam")
    base = tm.static_GB(params=p)
    z16 = zr.zero_per_gpu_GB(params=p, stage=3, n=16) + act
    return {"weights_GB": tm.weights_GB(params=p), "adam_mv_GB": c["m"] + c["v"], "master_GB": c["master"],
            "grads_GB": tm.grads_GB(params=p), "base_16P_GB": base,
            "total_GB": tm.training_total_GB(static_GB=base, activations_GB=act, overhead_GB=0),
            "zero3_n16_GB": z16, "h20_headroom_n16_GB": im.headroom_GB(hbm_GB=i["h20_GB"], used_GB=z16),
            "zero3_n32_GB": zr.zero_per_gpu_GB(params=p, stage=3, n=32) + act,
            "tp8_base_GB": zr.zero_per_gpu_GB(params=p, stage=0, n=1, model_parallel=8),
            "tp8_pp4_base_GB": zr.zero_per_gpu_GB(params=p, stage=0, n=1, model_parallel=32)}


# --------------------------------------------------------------------------- 17.4.8
def _zero(stage):
    return lambda i: {"per_gpu_GB": zr.zero_per_gpu_GB(params=i["params"], stage=stage, n=i["N"])}


def _zero3_table(ns):
    return lambda i: {f"N{n}_GB": zr.zero_per_gpu_GB(params=i["params"], stage=3, n=n) for n in ns}


# --------------------------------------------------------------------------- 17.4.9-17.4.12
def _kv_table(i):
    return {f"S{s}_GB": kv.kv_cache_GB(layers=i["L"], batch=i["B"], seq_len=s, d_kv=i["d_kv"], kv_bytes=i["bytes"])
            for s in (8192, 32768, 131072)}


def _kv_llama3_8b(i):
    kw = dict(layers=i["L"], batch=i["B"], d_kv=i["h_kv"] * i["d_head"], kv_bytes=i["bytes"])
    s8 = kv.kv_cache_bytes(seq_len=8192, **kw)
    s128 = kv.kv_cache_bytes(seq_len=131072, **kw)
    return {"S8192_bytes": s8, "S131072_bytes": s128, "S131072_GB": s128 / GB,
            "h20_extra_context_pct": _pct((i["h20_GB"] - i["h800_GB"]) / (s128 / GB))}


def _kv_single(i):
    b = kv.kv_cache_bytes(layers=i["L"], batch=i["B"], seq_len=i["S"], d_kv=i["h_kv"] * i["d_head"], kv_bytes=i["bytes"])
    out = {"kv_bytes": b, "kv_GB": b / GB}
    if "h_mha" in i:
        out["mha_kv_GB"] = b / GB / kv.gqa_factor(n_kv_heads=i["h_kv"], n_heads=i["h_mha"])
    return out


def _compress(i):
    f = kv.scheme_factor(i["scheme"])
    return {"kv_GB": kv.compressed_kv_GB(baseline_GB=i["baseline_GB"], precision_factor=f), "vs_original": f}


def _kv_int8(i):
    kw = dict(layers=i["L"], seq_len=i["S"], n_kv_heads=i["h_kv"], head_dim=i["d_head"])
    return {f"b{b}_{p}_GB": kv.kv_cache_GB(batch=b, kv_bytes=i[f"{p}_bytes"], **kw)
            for b in (1, 64) for p in ("bf16", "int8")}


def _mla(i):
    f = kv.mla_factor(latent_width=i["d_c"], original_width=i["d_kv_original"])
    return {"compression_x": 1 / f, "kv_GB": kv.compressed_kv_GB(baseline_GB=i["baseline_GB"], mla=f)}


def _table17_53(i):
    k = kv.kv_cache_GB(layers=i["L"], batch=i["B"], seq_len=i["S"], d_kv=i["d_kv"], kv_bytes=i["bytes"])
    return {"kv_GB": k, "dominant": im.dominant_term(weights_GB=i["weights_GB"], kv_GB=k)}


def _tp8(i):
    w = im.inference_weights_GB(params=i["params"], bytes_per_param=i["bytes"])
    return {"weights_per_gpu_GB": im.inference_per_gpu(weights_GB=w, kv_GB=0, tp=i["TP"])["weights_GB"]}


def _table17_54(i):
    w = im.inference_weights_GB(params=i["params"], bytes_per_param=i["bytes"])
    k = kv.kv_cache_GB(layers=i["L"], batch=i["B"], seq_len=i["S"], d_kv=i["d_kv"], kv_bytes=i["bytes"])
    per = im.inference_per_gpu(weights_GB=w, kv_GB=k, tp=i["TP"], act_GB=i["peak_act_GB"], overhead_GB=i["overhead_GB"])
    return {"weights_GB": w, "kv_GB": k,
            "total_GB": im.inference_total_GB(weights_GB=w, kv_GB=k, act_GB=i["peak_act_GB"], overhead_GB=i["overhead_GB"]),
            "tp4_weights_GB": per["weights_GB"], "tp4_kv_GB": per["kv_GB"], "tp4_per_gpu_GB": per["total_GB"]}


def _int4_infer(i):
    w = im.inference_weights_GB(params=i["params"], bytes_per_param=i["bytes_per_param"])
    ao = i["act_plus_overhead_GB"]
    per = im.inference_per_gpu(weights_GB=w, kv_GB=i["kv_GB"], tp=i["TP"], overhead_GB=ao)
    return {"weights_GB": w, "kv_act_ovh_GB": i["kv_GB"] + ao,
            "total_GB": im.inference_total_GB(weights_GB=w, kv_GB=i["kv_GB"], overhead_GB=ao),
            "tp2_weights_GB": per["weights_GB"], "tp2_kv_GB": per["kv_GB"], "tp2_per_gpu_GB": per["total_GB"]}


def _tier(i):
    return {"relative_to_hbm": off.tier_ratio(bw_GBps=i["bw_GBps"], hbm_bw_GBps=i["hbm_GBps"]),
            "times_slower": off.times_slower(bw_GBps=i["bw_GBps"], hbm_bw_GBps=i["hbm_GBps"])}


def _kv_offload(i):
    per_seq = kv.kv_cache_GB(layers=i["L"], batch=1, seq_len=i["S"], d_kv=i["d_kv"], kv_bytes=i["kv_bytes"])
    return {f"read_time_B{b}_s": off.kv_read_time_s(kv_GB_per_seq=per_seq, batch=b, pcie_quoted_GBps=i["pcie_GBps_quoted"],
                                                    direction_factor=i["pcie_direction_factor"]) for b in i["B"]}


CASES = {
    "17.1.1-ex0-matmul-2x3x4": lambda i: {"FLOPs": fl.matmul_FLOPs(m=i["m"], n=i["n"], k=i["k"])},
    "17.1.1-ex1-llama7b-attn-proj-rounded": _ex1_attn_proj,
    "17.1.1-ex2-llama70b-ffn-per-token-exact": _ex2_ffn_per_token,
    "17.1.1-ex2-llama70b-ffn-4096-tokens": _ex2_ffn_4096,
    "17.1.2-ex3-allreduce-8gpu": _allreduce_8gpu,
    "17.1.2-nic-aggregate": _nic,
    "17.1.3-ridge-point-h100": lambda i: {"ridge_FLOP_per_byte": hw.ridge_FLOP_per_byte(
        peak_TFLOPS=i["bf16_dense_TFLOPS"], hbm_bw_GBps=i["hbm_TBps"] * TB / GB)},
    "17.1.4-table17-1-fp32": _float_fmt("fp32"),
    "17.1.4-table17-1-bf16": _float_fmt("bf16"),
    "17.1.4-table17-1-fp8-e4m3": _float_fmt("fp8_e4m3"),
    "17.1.4-table17-1-fp8-e5m2": _float_fmt("fp8_e5m2"),
    "17.1.4-table17-1-int8": _int_fmt,
    "17.1.4-table17-1-int4": _int_fmt,
    "17.1.4-table17-1-nf4": lambda i: hw.numeric_format("nf4"),
    "17.1.4-table17-2-fp32-adam": _fp32_adam,
    "17.1.4-table17-3-bf16": _weights_prec,
    "17.1.4-table17-3-int4": _weights_prec,
    "17.1.4-table17-4-fp32-adam-7b": _fp32_adam_7b,
    "17.1.4-ex3-70b-param-precision": _70b_precision,
    "17.1.4-ex3-70b-fp8-mixed-total": _fp8_mixed,
    "17.1.5-bw-tflops-ratio-h20": _bw_ratio,
    "17.1.5-bw-tflops-ratio-h100-h800": _bw_ratio,
    "17.1.5-bw-tflops-ratio-rtx4090": _bw_ratio,
    "17.1.5-ex1-70b-zero3-8gpu": _zero3_8gpu,
    "17.1.5-table17-7-1card-bf16": _table17_7,
    "17.1.5-table17-7-2card-bf16": _table17_7,
    "17.1.5-table17-7-1card-fp8": _table17_7,
    "17.1.5-table17-7-1card-int4": _table17_7,
    "17.1.6-ex1-dgx-h800-bisection": _bisection,
    "17.1.6-ex2-8node-allreduce-70b": _8node,
    "17.2.1-ex1-llama7b-12Ld2": lambda i: _12ld2(i, i["params_exact"]),
    "17.2.1-ex2-llama3-8b-mha-params": _llama3_8b_mha,
    "17.2.1-ex3-llama31-405b-exact": _405b_exact,
    "17.2.1-ex3-llama31-405b-rounded": _405b_rounded,
    "17.2.2-ex1-mixtral-8x7b": _mixtral_book,
    "17.2.2-ex2-deepseek-v2-exact": _expert_exact,
    "17.2.2-ex2-deepseek-v2-rounded": _dsv2_book,
    "17.2.2-ex3-mixtral-8x22b-exact": _expert_exact,
    "17.2.2-ex3-mixtral-8x22b-rounded": _mixtral22_book,
    "17.2.3-table17-14-70b-kv-params": _kv_params_70b,
    "17.2.3-ex2-llama3-70b-gqa": _llama3_70b_gqa,
    "17.2.3-ex3-palm-mqa-exact": _palm_exact,
    "17.2.3-ex3-palm-mqa-rounded": _palm_rounded,
    "17.2.4-text-qwen25-7b-of-7B": _vocab,
    "17.2.4-text-llama3-8b": _vocab,
    "17.2.4-text-small-model": _vocab,
    "17.2.4-table17-17-gpt2-small": _vocab,
    "17.2.4-table17-17-llama2-7b": _vocab,
    "17.2.4-table17-17-llama3-8b": _vocab,
    "17.2.4-table17-17-qwen25-7b": _vocab,
    "17.2.4-table17-17-bloom-7b": _vocab,
    "17.2.4-ex1-llama3-8b": _vocab,
    "17.2.4-ex1-qwen25-7b": _vocab,
    "17.2.4-ex1-small-model": _vocab,
    "17.2.4-ex1-qwen-vs-llama-gap": lambda i: {"gap_pct_points": i["qwen_share_pct"] - i["llama_share_pct"]},
    "17.2.4-ex2-multilingual-70b": _multilingual,
    "17.2.5-table17-21-llama3-8b": _table17_21,
    "17.2.5-table17-21-llama3-70b": _table17_21,
    "17.2.5-table17-21-llama31-405b": _table17_21,
    "17.2.5-table17-21-qwen25-7b": _table17_21,
    "17.2.5-table17-21-qwen25-72b": _table17_21,
    "17.2.5-table17-21-mistral-7b": _table17_21,
    "17.2.5-table17-21-gemma2-27b": _gemma,
    "17.2.5-table17-21-mixtral-8x7b": _mixtral_exact,
    "17.2.5-table17-21-deepseek-v3": _dsv3,
    "17.2.5-table17-21-gpt4-estimate": lambda i: {"h_x_dhead": i["h"] * i["d_head"]},
    "17.2.5-ex1-qwen25-7b": _qwen_mha,
    "17.2.5-table17-22-mistral-7b": _table17_22,
    "17.2.5-table17-22-qwen25-7b": _table17_22,
    "17.2.5-table17-22-llama3-8b": _table17_22,
    "17.2.5-llama3-8b-12Ld2-deviation": lambda i: _12ld2(i, i["params_exact_B"] * BILLION),
    "17.2.5-ex2-quick-estimate": _quick_estimate,
    "17.2.5-ex2-quick-estimate-moe": _quick_moe,
    "17.3.1-numeric-1024x4096x2048": _matmul_numeric,
    "17.3.1-ex1-llama7b-qkv": _qkv,
    "17.3.1-ex2-llama7b-up": _up,
    "17.3.2-table17-23-llama7b-layer-rounded": _layer,
    "17.3.2-table17-24-llama7b-layer": _layer,
    "17.3.2-ex2-per-token-linear": _per_token_linear,
    "17.3.3-ex1-llama7b-attn-4k": _attn,
    "17.3.3-ex2-llama7b-attn-32k": _attn,
    "17.3.3-ex3-llama70b-attn": _attn,
    "17.3.4-table17-25-rmsnorm-per-layer": _rmsnorm,
    "17.3.5-silu-per-layer": _silu_layer,
    "17.3.5-ex-silu-total": _silu_total,
    "17.3.6-ex-llama7b-lm-head": _lm_head,
    "17.3.7-table17-26-llama7b-per-token": _per_token_7b,
    "17.3.7-ex2-llama70b": _per_token_big,
    "17.3.7-ex3-llama405b": _per_token_big,
    "17.3.7-long-seq-128k": _long_seq,
    "17.3.8-table17-27-llama7b": _train_total,
    "17.3.8-table17-27-gpt3-175b": _train_total,
    "17.3.8-table17-27-llama31-405b": _train_total,
    "17.3.8-table17-28-mfu50": _train_total,
    "17.3.8-table17-28-mfu40": _train_total,
    "17.3.8-ptotal-overestimate": _ptotal_over,
    "17.3.8-ex1-llama7b": _train_total,
    "17.3.8-ex2-llama31-405b": _train_total,
    "17.3.8-ex3-gpt3": _train_total,
    "17.3.9-table17-29-mixtral-8x7b": _moe_flops,
    "17.3.9-table17-29-deepseek-v3": _moe_flops,
    "17.3.9-ex1-mixtral": _moe_flops,
    "17.3.9-ex2-deepseek-v3": _moe_flops,
    "17.4.1-16P-ledger": _ledger,
    "17.4.1-table17-31-components": _components,
    "17.4.2-table17-33-llama7b": _weights_6p,
    "17.4.2-table17-33-llama13b": _weights_6p,
    "17.4.2-table17-33-llama405b": _weights_6p,
    "17.4.2-table17-34-llama7b": _int4,
    "17.4.2-table17-34-llama70b": _int4,
    "17.4.2-ex2-llama405b-weights": _405b_weights,
    "17.4.3-table17-36-7b": _adam_12p,
    "17.4.3-table17-36-13b": _adam_12p,
    "17.4.3-table17-36-405b": _adam_12p,
    "17.4.3-ex1-405b-cards": _405b_cards,
    "17.4.3-ex2-sgd-momentum": _sgd,
    "17.4.3-ex3-adam-8bit": _adam8,
    "17.4.4-grad-bf16-vs-fp32": _grads,
    "17.4.4-table17-38-7b": _grads,
    "17.4.4-table17-38-13b": _grads,
    "17.4.4-table17-38-70b": _grads,
    "17.4.5-ex1-llama7b-layer-activation-sum": _tensor_sum,
    "17.4.5-table17-39-layer-total": _table17_39,
    "17.4.5-fig17-15-qkt-S4096": _qkt,
    "17.4.5-fig17-15-qkt-S8192": _qkt,
    "17.4.5-qkt-32-layers-and-growth": _qkt,
    "17.4.5-ex2-qkt-32k": _qkt,
    "17.4.5-ex3-llama70b-qkt": _qkt,
    "17.4.6-table17-42-recompute": _recompute_table,
    "17.4.6-recompute-flops-factor": _recompute_factor,
    "17.4.6-ex1-full-recompute": _full_recompute,
    "17.4.6-ex2-selective-recompute": _selective,
    "17.4.7-table17-43-llama7b": _table17_43,
    "17.4.7-table17-43-llama13b": _table17_43,
    "17.4.7-table17-43-llama70b": _table17_43,
    "17.4.7-table17-43-llama405b": _table17_43,
    "17.4.7-table17-44-llama7b": _table17_44,
    "17.4.7-table17-45-llama70b": _table17_45,
    "17.4.8-table17-46-zero1": _zero(1),
    "17.4.8-table17-46-zero2": _zero(2),
    "17.4.8-table17-46-zero3": _zero(3),
    "17.4.8-zero3-comm-volume": lambda i: {"comm_GB": zr.zero3_traffic_GB(params=i["params"], bytes_per_elem=i["bytes"])},
    "17.4.8-table17-47-llama7b": _zero3_table((8, 16, 32)),
    "17.4.8-table17-47-llama70b": _zero3_table((8, 16, 32, 64)),
    "17.4.9-table17-49-llama3-70b": _kv_table,
    "17.4.9-table17-49-llama2-7b": _kv_table,
    "17.4.9-ex1-llama3-8b": _kv_llama3_8b,
    "17.4.9-ex2-llama3-70b-128k": _kv_single,
    "17.4.9-ex3-llama3-70b-b64": _kv_single,
    "17.4.10-table17-51-none": _compress,
    "17.4.10-table17-51-gqa-int8": _compress,
    "17.4.10-table17-51-mla-8x": _compress,
    "17.4.10-table17-51-evict-50pct": _compress,
    "17.4.10-ex1-int8": _kv_int8,
    "17.4.10-ex2-mla": _mla,
    "17.4.11-table17-53-7b-b1-4k": _table17_53,
    "17.4.11-table17-53-70b-b1-128k": _table17_53,
    "17.4.11-table17-53-70b-b64-128k": _table17_53,
    "17.4.11-tp8-weights": _tp8,
    "17.4.11-table17-54-llama70b": _table17_54,
    "17.4.11-ex2-int4": _int4_infer,
    "17.4.12-table17-55-ddr5": _tier,
    "17.4.12-table17-55-nvme4": _tier,
    "17.4.12-kv-offload-read-time": _kv_offload,
}
CASES.update({f"17.4.3-table17-35-{k}": _opt_table(v) for k, v in OPT_BY_ID.items()})
CASES.update({f"17.4.5-table17-40-{n}": _tensor(n) for n in (
    "attention_input", "qkv_projection", "qk_t_all_heads", "softmax", "attention_output",
    "ffn_up", "ffn_gate", "ffn_down_input")})

UNMAPPED: dict[str, str] = {}
PARTIAL: dict[str, dict[str, str]] = {}
DEVIATIONS: dict[str, dict[str, tuple]] = {
    "17.3.5-ex-silu-total": {"pct_of_linear": (
        0.0135809542169, 0.013598506314766839,
        "record divides by the book's rounded 1.66 TFLOPs per layer; the exact LLaMA-7B linear FLOPs per layer "
        "2·B·S·d·(4d + 3d_ff) = 1,657.86 GFLOPs (d = 4096, d_ff = 11008, S = 4096) give 7.2142e9/(32·1.65786e12)")},
}

test_example, test_coverage = make_tests("17.1-17.4", CASES, UNMAPPED, PARTIAL, DEVIATIONS)
