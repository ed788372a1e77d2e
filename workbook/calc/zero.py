"""ZeRO sheet: per-GPU memory of ZeRO stages 0-3 for the scenario's layout (spec 17.4.8, 17.4.12),
and the training memory per GPU of the memory model in use.

Book model (spec 17.4.5-17.4.8): parameters are first split over the model-parallel group (TP·PP);
ZeRO shards over DP·CP = num_gpus/(TP·PP). Activations per GPU are the micro-batch's activations /
TP (sequence-parallel TP; with 1F1B the first pipeline stage holds PP micro-batches of L/PP layers,
i.e. one model's worth). Tensor model (the default): ``workbook.calc.sharded_state`` above these
rows, ZeRO-3's gathered layer included. ``training.memory_model`` picks which total feeds the fit
check and the Summary, and what it is compared with: the book's hbm_GB ("80 GB"), or the device
memory nvidia-smi reports (hbm_device_MiB) x ``training.hbm_allocatable_frac``.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import offload as off
from workbook.reference import zero as zr
from workbook.units import GB

QUANTITIES = [
    Q("model_parallel_degree", "GPUs", "Model-parallel group size TP x PP", "17.4.8"),
    Q("dp_degree", "GPUs", "ZeRO sharding degree DP x CP = GPUs / (TP x PP)", "17.4.8"),
    Q("zero0_static_per_gpu_GB", "GB", "Static memory per GPU, ZeRO-0 (plain DP)", "17.4.8"),
    Q("zero1_static_per_gpu_GB", "GB", "Static memory per GPU, ZeRO-1 (optimizer sharded)", "17.4.8"),
    Q("zero2_static_per_gpu_GB", "GB", "Static memory per GPU, ZeRO-2 (optimizer + gradients sharded)", "17.4.8"),
    Q("zero3_static_per_gpu_GB", "GB", "Static memory per GPU, ZeRO-3 (everything sharded)", "17.4.8"),
    Q("zero_static_per_gpu_GB", "GB", "Static memory per GPU at the chosen ZeRO stage", "17.4.8"),
    Q("zero_act_per_gpu_GB", "GB", "Activations per GPU, book model (micro-batch activations / TP, or the override)",
      "17.4.7"),
    Q("zero_book_total_per_gpu_GB", "GB", "Training memory per GPU at the chosen stage, book model (static + act + overhead)",
      "17.4.7"),
    Q("zero_book_model_flag", "0/1", "Memory model in use is the book's (1 = book, 0 = tensors)", "17.4.7"),
    Q("zero_total_per_gpu_GB", "GB", "Training memory per GPU at the chosen stage, memory model in use", "17.4.7"),
    Q("zero_weights_GB", "GB", "Per-GPU weights, memory model in use (ZeRO-3 shards them; chart component)", "17.4.8"),
    Q("zero_grads_GB", "GB", "Per-GPU gradients, memory model in use (sharded from ZeRO-2; chart component)", "17.4.8"),
    Q("zero_optimizer_GB", "GB", "Per-GPU optimizer states, memory model in use (sharded from ZeRO-1; chart component)", "17.4.8"),
    Q("zero_activations_GB", "GB", "Per-GPU activations, memory model in use (chart component)", "17.4.7"),
    Q("zero_gathered_layer_GB", "GB", "Per-GPU ZeRO-3 gathered layer, tensor model (chart component; 0 in the book model)",
      "DeepSpeed stage3.py"),
    Q("zero_overhead_GB", "GB", "Per-GPU runtime overhead (chart component)", "17.4.7"),
    Q("zero_hbm_device_GB", "GB", "Device memory as nvidia-smi reports it (hbm_device_MiB x 2^20 B)", "nvidia-smi"),
    Q("zero_hbm_capacity_GB", "GB",
      "Memory the fit check compares with: book hbm_GB; tensor model device memory x allocatable fraction", "17.4.7"),
    Q("zero_hbm_headroom_GB", "GB", "Memory left per GPU at the chosen stage (capacity - total; negative = short)", "17.4.7"),
    Q("zero_fits_hbm_flag", "0/1", "Chosen ZeRO stage fits in the capacity of the memory model in use (1 = fits)", "17.4.8"),
    Q("zero_device_need_GB", "GB", "Device memory needed per GPU, tensor model: the allocator's reserved memory + "
      "runtime overhead (reserved, not allocated)", "GMLake (ASPLOS 2024)"),
    Q("zero_device_fits_flag", "0/1", "Tensor model's reserved memory + overhead fits in the device memory nvidia-smi "
      "reports (1 = fits; the allocator's reserve in place of the allocatable fraction)", "GMLake (ASPLOS 2024)"),
    Q("zero0_fits_flag", "0/1", "ZeRO-0 fits in HBM with activations and overhead (1 = fits)", "17.4.8"),
    Q("zero1_fits_flag", "0/1", "ZeRO-1 fits in HBM with activations and overhead (1 = fits)", "17.4.8"),
    Q("zero2_fits_flag", "0/1", "ZeRO-2 fits in HBM with activations and overhead (1 = fits)", "17.4.8"),
    Q("zero3_fits_flag", "0/1", "ZeRO-3 fits in HBM with activations and overhead (1 = fits)", "17.4.8"),
    Q("zero1_sharded_slice_GB", "GB", "ZeRO-1 sharded optimizer slice only (book's Table 17-46 figure)", "17.4.8"),
    Q("dp_allreduce_traffic_GB", "GB", "Plain DP gradient all-reduce bytes per GPU per step (2·P·b·(N-1)/N)", "17.4.8"),
    Q("zero3_traffic_GB", "GB", "ZeRO-3 bytes per GPU per step: 2 all-gathers + reduce-scatter (3·P·b·(N-1)/N)", "17.4.8"),
    Q("zero3_vs_dp_traffic_x", "x", "ZeRO-3 traffic over plain DP traffic", "17.4.8"),
    Q("offload_pcie_traffic_GB", "GB", "ZeRO-Offload PCIe bytes per GPU per step (grads out + weights in)", "17.4.12"),
    Q("offload_pcie_time_s", "s", "ZeRO-Offload PCIe time per step without overlap", "17.4.12"),
]


def compute(ctx: Context) -> dict[str, float]:
    t, q = ctx.s.training, ctx.q
    mp = t.tp * t.pp
    n = t.num_gpus // mp
    P = q["params_total"]
    kw = dict(params=P, n=n, weight_bytes=q["train_weight_bytes_per_param"],
              grad_bytes=q["train_grad_bytes_per_param"], optimizer_bytes=q["train_optimizer_bytes_per_param"],
              model_parallel=mp)
    static = {s: zr.zero_per_gpu_GB(stage=s, **kw) for s in zr.STAGES}
    # a per-GPU override is taken as given; computed activations are split over TP
    act = q["train_activations_GB"] / t.tp if t.act_GB is None else float(t.act_GB)
    ovh = q["train_overhead_GB"]
    hbm = float(ctx.gpu.hbm_GB)
    total = {s: static[s] + act + ovh for s in zr.STAGES}
    book = t.memory_model == "book"
    chosen = total[t.zero_stage] if book else q["state_total_per_gpu_GB"]
    b = q["train_grad_bytes_per_param"]
    dp = zr.dp_allreduce_traffic_GB(params=P / mp, bytes_per_elem=b, n=n)
    z3 = zr.zero3_traffic_GB(params=P / mp, bytes_per_elem=b, n=n)
    offload = off.offload_traffic_GB(params=P / mp / n)
    # per-GPU components at the chosen stage (they stack to zero_total_per_gpu_GB): ZeRO-1 shards the
    # optimizer states, ZeRO-2 also the gradients, ZeRO-3 also the weights
    stage = t.zero_stage
    per_mp = P / mp / GB
    book_parts = {
        "zero_weights_GB": per_mp * q["train_weight_bytes_per_param"] / (n if stage >= 3 else 1),
        "zero_grads_GB": per_mp * q["train_grad_bytes_per_param"] / (n if stage >= 2 else 1),
        "zero_optimizer_GB": per_mp * q["train_optimizer_bytes_per_param"] / (n if stage >= 1 else 1),
        "zero_activations_GB": act,
    }
    book_parts["zero_gathered_layer_GB"] = 0.0
    tensor_parts = {"zero_weights_GB": q["state_weights_GB"], "zero_grads_GB": q["state_grads_GB"],
                    "zero_optimizer_GB": q["state_optimizer_GB"], "zero_activations_GB": q["state_act_per_gpu_GB"],
                    "zero_gathered_layer_GB": q["state_zero3_working_set_GB"]}
    device = zr.device_capacity_GB(hbm_device_MiB=float(ctx.gpu.hbm_device_MiB), allocatable_frac=1.0)
    capacity = hbm if book else zr.device_capacity_GB(hbm_device_MiB=float(ctx.gpu.hbm_device_MiB),
                                                      allocatable_frac=t.hbm_allocatable_frac)
    out = {
        **(book_parts if book else tensor_parts),
        "zero_book_total_per_gpu_GB": total[t.zero_stage],
        "zero_book_model_flag": float(book),
        "zero_overhead_GB": ovh,
        "model_parallel_degree": mp,
        "dp_degree": n,
        "zero_static_per_gpu_GB": static[t.zero_stage],
        "zero_act_per_gpu_GB": act,
        "zero_total_per_gpu_GB": chosen,
        "zero_hbm_device_GB": device,
        "zero_hbm_capacity_GB": capacity,
        "zero_hbm_headroom_GB": capacity - chosen,
        "zero_fits_hbm_flag": zr.fits(need_GB=chosen, capacity_GB=capacity),
        "zero_device_need_GB": q["state_reserved_per_gpu_GB"] + ovh,
        "zero_device_fits_flag": zr.fits(need_GB=q["state_reserved_per_gpu_GB"] + ovh, capacity_GB=device),
        "zero1_sharded_slice_GB": zr.zero_sharded_slice_GB(
            params=P / mp, stage=1, n=n, optimizer_bytes=q["train_optimizer_bytes_per_param"]),
        "dp_allreduce_traffic_GB": dp,
        "zero3_traffic_GB": z3,
        "zero3_vs_dp_traffic_x": z3 / dp if dp > 0 else 1.5,
        "offload_pcie_traffic_GB": offload,
        "offload_pcie_time_s": off.offload_time_s(traffic_GB=offload, pcie_quoted_GBps=float(ctx.gpu.pcie_bw_GBps),
                                                  direction_factor=ctx.s.network.pcie_direction_factor),
    }
    for s in zr.STAGES:
        out[f"zero{s}_static_per_gpu_GB"] = static[s]
        out[f"zero{s}_fits_flag"] = total[s] <= hbm
    return out
