"""Line items of the ZeRO sheet, tensor memory model: weights, gradients and optimizer state per GPU
with dense parameters over TP x PP and routed experts over EP x ETP x PP; ZeRO (stage 1 optimizer,
2 also gradients, 3 also weights) shards dense state over DP x CP and expert state over
EDP = N/(ETP·EP·PP) (Megatron-LM theoretical_memory_usage.py, parallel folding; Rajbhandari et al.
2020). At ZeRO-3 a rank also holds its largest gathered layer (DeepSpeed stage3.py
estimate_zero3_model_states_mem_needs: weights + gradients of the layer, 4 B/param in BF16). The most
loaded of the Activations sheet's four candidate ranks sets the memory per GPU.
"""

from __future__ import annotations

from workbook.calc.act_stages import CANDIDATES

_STAGE = "{training.zero_stage}+1"
#: the divisor of each state group at ZeRO 0, 1, 2, 3 (1 optimizer, 2 also gradients, 3 also weights)
_SHARD = {"weights": "1,1,1,{g}", "grads": "1,1,{g},{g}", "optimizer": "1,{g},{g},{g}"}
#: the Training Memory sheet's bytes per parameter of each state group
_BYTES = {"weights": "{train_weight_bytes_per_param}", "grads": "{train_grad_bytes_per_param}",
          "optimizer": "{train_optimizer_bytes_per_param}"}
#: the shard group of each parameter class
_GROUP = {"dense": "{plan_dp_cp}", "expert": "{plan_edp}"}
_TOTALS = "{state_sta_total_GB}:{state_std_total_GB}"
_PICK = "{state_worst_pick}"

CONSTANTS = [
    ("zero3_gathered_copies", 2.0, "x",
     "ZeRO-3 working set: the gathered layer's weights and the gradients computed before the reduce-scatter",
     "DeepSpeed docs memory.rst: largest_layer_memory = 4 x largest_layer_params (2 B fp16 params + 2 B fp16 grads)"),
]


def _bytes_per_param(kind: str, group: str) -> str:
    return f"={_BYTES[group]}/CHOOSE({_STAGE}," + _SHARD[group].replace("{g}", _GROUP[kind]) + ")"


def _candidate(x: str) -> dict[str, str]:
    i, n, moe = (f"{{act_st{x}_{k}}}" for k in ("stage", "layers", "moe_layers"))
    last = f"{i}={{training.pp}}-1"
    return {
        f"state_st{x}_dense_params": f"=(({n}-{moe})*{{state_dense_layer_tp_params}}+{moe}*{{state_moe_layer_tp_params}}"
        f"+IF({i}=0,{{state_embedding_params}},0)+IF({last},{{state_head_params}},0))/{{training.tp}}"
        f"+{n}*{{state_layer_replicated_params}}+{moe}*{{moe_router_params_per_layer}}"
        f"+IF({last},{{state_final_norm_params}},0)",
        f"state_st{x}_expert_params": f"={moe}*{{state_moe_layer_expert_params}}/({{training.ep}}*{{plan_etp}})",
        # largest layer gathered at once: a block of each kind held, the embedding (first) / head (last) over TP
        f"state_st{x}_zero3_layer_params": f"=MAX(0,IF({n}-{moe}>0,{{state_dense_block_gpu_params}},0),"
        f"IF({moe}>0,{{state_moe_block_gpu_params}},0),IF({i}=0,{{state_embedding_params}}/{{training.tp}},0),"
        f"IF({last},{{state_head_params}}/{{training.tp}},0))",
    }


def _kept(dense: str, expert: str, layer: str) -> str:
    """Weights kept gathered besides the largest layer when ZeRO-3 does not reshard after the forward (bytes)."""
    return f"{{state_zero3_kept_flag}}*MAX(0,{dense}+{expert}-{layer})*{{train_weight_bytes_per_param}}"


def _total(x: str) -> str:
    d, e, layer = f"{{state_st{x}_dense_params}}", f"{{state_st{x}_expert_params}}", f"{{state_st{x}_zero3_layer_params}}"
    return (f"=({d}*{{state_dense_bytes_per_param}}+{e}*{{state_expert_bytes_per_param}}+{layer}"
            f"*{{state_zero3_gather_bytes_per_param}}+{_kept(d, e, layer)})"
            f"/c_GB+IF(ISBLANK({{training.act_GB}}),{{act_st{x}_GB}},{{training.act_GB}})")


def _pick(fmt: str) -> str:
    return f"=CHOOSE({_PICK}," + ",".join(fmt.format(x=x) for x, _ in CANDIDATES) + ")"


def _component(group: str) -> str:
    return (f"=({{state_dense_params_per_gpu}}*{{state_dense_{group}_bytes_per_param}}"
            f"+{{state_expert_params_per_gpu}}*{{state_expert_{group}_bytes_per_param}})/c_GB")


ITEMS = {
    "state_dense_layer_tp_params": "={attn_params_per_layer}+{ffn_dense_layer_params}",
    "state_moe_layer_tp_params": "={attn_params_per_layer}+{model_n_shared_experts}*{moe_expert_params}",
    "state_layer_replicated_params": "={model_norm_params_per_layer}+{attn_latent_norm_per_layer}",
    "state_moe_layer_expert_params": "={model_n_routed_experts}*{moe_expert_params}",
    "state_embedding_params": "={model_vocab}*{model_d_model}",
    "state_head_params": "=IF({model_tied_embeddings}=1,MIN(1,{training.pp}-1),1)*{model_vocab}*{model_d_model}",
    "state_final_norm_params": '=IF(INDEX(cat_model_norm,MATCH({model},cat_model_id,0))="layernorm",c_two,1)'
    "*{model_d_model}",
    "state_dense_block_gpu_params": "={state_dense_layer_tp_params}/{training.tp}+{state_layer_replicated_params}",
    "state_moe_block_gpu_params": "={state_moe_layer_tp_params}/{training.tp}+{state_layer_replicated_params}"
    "+{moe_router_params_per_layer}+{state_moe_layer_expert_params}/({training.ep}*{plan_etp})",
    "state_zero3_gather_bytes_per_param": f"=CHOOSE({_STAGE},0,0,0,c_zero3_gathered_copies)*{{train_weight_bytes_per_param}}",
    "state_zero3_kept_flag": f"=CHOOSE({_STAGE},0,0,0,1)*IF({{training.reshard_after_forward}}=\"off\",1,0)",
    **{f"state_{kind}_{g}_bytes_per_param": _bytes_per_param(kind, g) for kind in _GROUP for g in _SHARD},
    **{f"state_{kind}_bytes_per_param": f"={{state_{kind}_weights_bytes_per_param}}"
       f"+{{state_{kind}_grads_bytes_per_param}}+{{state_{kind}_optimizer_bytes_per_param}}" for kind in _GROUP},
    **{k: v for x, _ in CANDIDATES for k, v in _candidate(x).items()},
    **{f"state_st{x}_total_GB": _total(x) for x, _ in CANDIDATES},
    "state_worst_pick": f"=MATCH(MAX({_TOTALS}),{_TOTALS},0)",
    "state_worst_stage": _pick("{{act_st{x}_stage}}"),
    "state_dense_params_per_gpu": _pick("{{state_st{x}_dense_params}}"),
    "state_expert_params_per_gpu": _pick("{{state_st{x}_expert_params}}"),
    "state_weights_GB": _component("weights"),
    "state_grads_GB": _component("grads"),
    "state_optimizer_GB": _component("optimizer"),
    "state_per_gpu_GB": "={state_weights_GB}+{state_grads_GB}+{state_optimizer_GB}",
    "state_zero3_layer_params": _pick("{{state_st{x}_zero3_layer_params}}"),
    "state_zero3_working_set_GB": "=({state_zero3_layer_params}*{state_zero3_gather_bytes_per_param}+"
    + _kept("{state_dense_params_per_gpu}", "{state_expert_params_per_gpu}", "{state_zero3_layer_params}") + ")/c_GB",
    "state_model_states_per_gpu_GB": "={state_per_gpu_GB}+{state_zero3_working_set_GB}",
    "state_act_per_gpu_GB": "=IF(ISBLANK({training.act_GB}),"
    + _pick("{{act_st{x}_GB}}")[1:] + ",{training.act_GB})",
    "state_total_per_gpu_GB": f"=MAX({_TOTALS})+{{train_overhead_GB}}",
    # PyTorch's caching allocator: tensors allocated, and the device memory it reserves for them
    "state_allocator_reserve_frac": "=INDEX(t_st_framework_reserve_frac,MATCH({training.framework},t_st_framework_id,0))",
    "state_allocated_per_gpu_GB": "={state_total_per_gpu_GB}-{train_overhead_GB}",
    "state_reserved_per_gpu_GB": "={state_allocated_per_gpu_GB}*(1+{state_allocator_reserve_frac})",
}
