"""Line items of the ZeRO sheet: per-GPU memory of ZeRO stages 0-3 for the scenario's layout, book
model (spec 17.4.7, 17.4.8, 17.4.12: parameters split over TP·PP first, ZeRO shards over DP·CP), and
the training memory per GPU of the memory model in use (book, or the tensor model's rows above)."""

from __future__ import annotations

from workbook.reference import offload as off

CONSTANTS = [
    ("dp_allreduce_passes", 2.0, "x", "Plain DP all-reduce moves 2·P·b per GPU (reduce-scatter + all-gather)", "spec 17.4.8"),
    ("zero3_traffic_passes", 3.0, "x",
     "ZeRO-3 moves 3·P·b per GPU (forward all-gather + backward all-gather + gradient reduce-scatter)", "spec 17.4.8"),
    ("offload_bytes_per_param", off.OFFLOAD_BYTES_PER_PARAM, "B/param",
     "ZeRO-Offload PCIe bytes per parameter per step (BF16 gradients out + BF16 weights in)", "spec 17.4.12"),
]

#: parameters per GPU of one model-parallel group, in GB per byte/param
_PER_MP = "{params_total}/{model_parallel_degree}"
_N = "{dp_degree}"
_STAGE = "{training.zero_stage}+1"
_ACT_OVH = "+{zero_act_per_gpu_GB}+{train_overhead_GB}<={gpu_hbm_GB},1,0)"
_W, _G, _O = "{train_weight_bytes_per_param}", "{train_grad_bytes_per_param}", "{train_optimizer_bytes_per_param}"
_RING = "({dp_degree}-1)/{dp_degree}"
_BOOK = "{zero_book_model_flag}=1"

ITEMS = {
    "model_parallel_degree": "={training.tp}*{training.pp}",
    "dp_degree": "={training.num_gpus}/{model_parallel_degree}",
    "zero0_static_per_gpu_GB": f"={_PER_MP}*{{train_static_bytes_per_param}}/c_GB",
    "zero1_static_per_gpu_GB": f"={_PER_MP}*({_W}+{_G}+{_O}/{_N})/c_GB",
    "zero2_static_per_gpu_GB": f"={_PER_MP}*({_W}+({_G}+{_O})/{_N})/c_GB",
    "zero3_static_per_gpu_GB": f"={_PER_MP}*{{train_static_bytes_per_param}}/{_N}/c_GB",
    "zero_static_per_gpu_GB": f"=CHOOSE({_STAGE},{{zero0_static_per_gpu_GB}},{{zero1_static_per_gpu_GB}},"
    "{zero2_static_per_gpu_GB},{zero3_static_per_gpu_GB})",
    "zero_act_per_gpu_GB": "=IF(ISBLANK({training.act_GB}),{train_activations_GB}/{training.tp},{training.act_GB})",
    "zero_book_total_per_gpu_GB": "={zero_static_per_gpu_GB}+{zero_act_per_gpu_GB}+{train_overhead_GB}",
    "zero_book_model_flag": '=IF({training.memory_model}="book",1,0)',
    "zero_total_per_gpu_GB": "=IF({zero_book_model_flag}=1,{zero_book_total_per_gpu_GB},{state_total_per_gpu_GB})",
    # chart components (they stack to the total): book model: ZeRO-1 shards the optimizer states,
    # ZeRO-2 also gradients, ZeRO-3 also weights; tensor model: the most loaded rank's
    "zero_weights_GB": f"=IF({_BOOK},{_PER_MP}*{_W}/CHOOSE({_STAGE},1,1,1,{_N})/c_GB,{{state_weights_GB}})",
    "zero_grads_GB": f"=IF({_BOOK},{_PER_MP}*{_G}/CHOOSE({_STAGE},1,1,{_N},{_N})/c_GB,{{state_grads_GB}})",
    "zero_optimizer_GB": f"=IF({_BOOK},{_PER_MP}*{_O}/CHOOSE({_STAGE},1,{_N},{_N},{_N})/c_GB,{{state_optimizer_GB}})",
    "zero_activations_GB": f"=IF({_BOOK},{{zero_act_per_gpu_GB}},{{state_act_per_gpu_GB}})",
    "zero_gathered_layer_GB": f"=IF({_BOOK},0,{{state_zero3_working_set_GB}})",
    "zero_overhead_GB": "={train_overhead_GB}",
    # the book compares with the catalogue's "80 GB"; the tensor model with the bytes the device has
    "zero_hbm_device_GB": "={gpu_hbm_device_MiB}*c_MiB/c_GB",
    "zero_hbm_capacity_GB": f"=IF({_BOOK},{{gpu_hbm_GB}},{{zero_hbm_device_GB}}*{{training.hbm_allocatable_frac}})",
    "zero_hbm_headroom_GB": "={zero_hbm_capacity_GB}-{zero_total_per_gpu_GB}",
    "zero_fits_hbm_flag": "=IF({zero_total_per_gpu_GB}<={zero_hbm_capacity_GB},1,0)",
    "zero_device_need_GB": "={state_reserved_per_gpu_GB}+{train_overhead_GB}",
    "zero_device_fits_flag": "=IF({zero_device_need_GB}<={zero_hbm_device_GB},1,0)",
    "zero0_fits_flag": "=IF({zero0_static_per_gpu_GB}" + _ACT_OVH,
    "zero1_fits_flag": "=IF({zero1_static_per_gpu_GB}" + _ACT_OVH,
    "zero2_fits_flag": "=IF({zero2_static_per_gpu_GB}" + _ACT_OVH,
    "zero3_fits_flag": "=IF({zero3_static_per_gpu_GB}" + _ACT_OVH,
    "zero1_sharded_slice_GB": f"={_PER_MP}*{_O}/{_N}/c_GB",
    "dp_allreduce_traffic_GB": f"=c_dp_allreduce_passes*{_PER_MP}*{_G}*{_RING}/c_GB",
    "zero3_traffic_GB": f"=c_zero3_traffic_passes*{_PER_MP}*{_G}*{_RING}/c_GB",
    "zero3_vs_dp_traffic_x": "=IF({dp_allreduce_traffic_GB}>0,{zero3_traffic_GB}/{dp_allreduce_traffic_GB},"
    "c_zero3_traffic_passes/c_dp_allreduce_passes)",
    "offload_pcie_traffic_GB": f"={_PER_MP}/{_N}*c_offload_bytes_per_param/c_GB",
    "offload_pcie_time_s": "={offload_pcie_traffic_GB}/{pcie_effective_GBps}",
}
