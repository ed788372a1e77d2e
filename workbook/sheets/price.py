"""Line items of the GPU-hour price in use and the price check (Plan sheet, after the selected GPU; 17.5.9).

A blank override (cost.gpu_hour_usd) means the catalogue price of the chosen GPU for the chosen basis, live. A GPU
with no catalogue price for the basis and no override is an input error of its own (the price check), never a
division by a zero price. ``input_errors_count`` adds it to the Plan inputs' checks: the flag every calculated
cell after this block reads (workbook/writer/input_guard.py).
"""

from __future__ import annotations

ITEMS = {
    "price_basis_position": "=INDEX(t_ch_cost_price_basis_position,MATCH({cost.price_basis},t_ch_cost_price_basis_choice,0))",
    "gpu_hour_catalogue_usd": "=CHOOSE({price_basis_position},{gpu_price_on_demand_usd_per_gpu_hour},"
    "{gpu_price_reserved_usd_per_gpu_hour},{gpu_price_spot_usd_per_gpu_hour})",
    "gpu_hour_usd": "=IF(ISBLANK({cost.gpu_hour_usd}),{gpu_hour_catalogue_usd},{cost.gpu_hour_usd})",
    # 0 while another input is in error (the price then reads "input error": that input is named, not the price)
    "input_error_price": "=IFERROR(IF({gpu_hour_usd}>0,0,1),1)*(1-MIN(1,{plan_input_errors_count}))",
    "input_errors_count": "={plan_input_errors_count}+{input_error_price}",
}
