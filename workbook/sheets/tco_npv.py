"""Line items of the TCO sheet, third block: rent vs buy like for like (workbook.calc.tco_npv). Year-end
discounting: year k's factor is year k-1's / (1 + rate), so no power is needed; the residual at N years (N may
end inside a year) takes the one power, written Excel-safe. Inputs left blank take the Defaults sheet's value."""

from __future__ import annotations

from workbook.calc.tco_npv import key
from workbook.calc.tco_years import YEARS
from workbook.calc.tco_years import key as year_key
from workbook.sheets.excel_math import power_nonneg
from workbook.sheets.tco import _blank_default


def _items() -> dict[str, str]:
    items = {
        "tco_discount_rate_frac": _blank_default("cost.discount_rate_frac"),
        "tco_residual_life_years": _blank_default("cost.residual_life_years"),
        "tco_residual_floor_frac": _blank_default("cost.residual_floor_frac"),
        # straight line over the useful life to a floor
        "tco_residual_frac": "=MAX({tco_residual_floor_frac},1-{tco_years}/{tco_residual_life_years})",
        "tco_residual_usd": "={tco_capex_usd}*{tco_residual_frac}",
    }
    for k in YEARS:
        prev = f"{{{key(k - 1, 'discount')}}}" if k > 1 else "1"
        items[key(k, "discount")] = f"={prev}/(1+{{tco_discount_rate_frac}})"
    for k in YEARS:
        items[key(k, "pv_opex_usd")] = f"={{{year_key(k, 'opex')}}}*{{{key(k, 'discount')}}}"
    for k in YEARS:
        items[key(k, "pv_rent_usd")] = f"={{{year_key(k, 'rent')}}}*{{{key(k, 'discount')}}}"
    last = YEARS[-1]
    items.update({
        "tco_residual_discount": "=1/" + power_nonneg("1+{tco_discount_rate_frac}", "{tco_years}"),
        "tco_residual_pv_usd": "={tco_residual_usd}*{tco_residual_discount}",
        "tco_npv_owned_usd": f"={{tco_capex_usd}}+SUM({{{key(1, 'pv_opex_usd')}}}:{{{key(last, 'pv_opex_usd')}}})"
        "-{tco_residual_pv_usd}",
        "tco_npv_rent_usd": f"=SUM({{{key(1, 'pv_rent_usd')}}}:{{{key(last, 'pv_rent_usd')}}})",
        "tco_npv_buy_saving_usd": "={tco_npv_rent_usd}-{tco_npv_owned_usd}",
        "tco_buy_cheaper_flag": "=IF({tco_npv_owned_usd}<{tco_npv_rent_usd},1,0)",
    })
    return items


ITEMS = _items()
