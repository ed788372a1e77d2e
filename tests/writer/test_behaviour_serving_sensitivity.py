"""Behaviour tests of the Sensitivity sheet's serving block and the TCO's serving storage: edit the default workbook
as a person would (the GPU-hour price, the serving model, the arrival rate, the power price, the weight precision,
the purpose), recalculate with LibreOffice, and check that the serving cost per month and per 1M output tokens and
their -/+ step rows move as stated (workbook.reference.serving_sensitivity) and that a serving column's storage is
the weights it serves. Expectations are ratios and reference functions of recalculated cells, never cached values.
Scenario 5: the 17.9.6 70B serving on H800 (purpose serving, book model, TP 4 x 1 replica, no arrival rate).
"""

from __future__ import annotations

import pytest

from tests.writer.edits import Layout, Recalc, close, recalc_edited
from workbook.calc.serving_sensitivity import QUANTITIES
from workbook.catalog import load_catalog
from workbook.engines.libreoffice import find_soffice
from workbook.reference import serving_sensitivity as ss

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

D = load_catalog().defaults.as_dict()
SERVE, TRAIN = 5, 0
SHEET = "Sensitivity"
RATE, REPLICAS = 10.0, 7  # a co-located engine fleet carrying 10 requests/s on 7 groups (about 1.55 each at most)
KEYS = [q.name for q in QUANTITIES]


def _sized(b, rate: float = RATE) -> None:
    """Scenario 5 on the engine model, sized by a load with TTFT and TPOT targets."""
    for key, value in (("inference.serving_model", "engine"), ("inference.arrival_rate_rps", rate),
                       ("inference.replicas", REPLICAS), ("inference.ttft_target_ms", 2000.0),
                       ("inference.tpot_target_ms", 50.0)):
        b.plan(key, SERVE, value)


def _times(key: str, factor: float):
    """The input in use (a blank one: its catalogue default) times *factor*."""
    def edit(b) -> None:
        value = b.plan(key, SERVE)
        b.plan(key, SERVE, (D[key.split(".")[-1]] if value is None else value) * factor)
    return edit


EDITS = {
    "roundtrip": [lambda b: None],
    "power_x2": [_times("cost.electricity_usd_per_kWh", 2)],
    "sized": [_sized],
    "sized_price_x2": [_sized, _times("cost.gpu_hour_usd", 2)],
    "sized_rate_x1_2": [lambda b: _sized(b, 1.2 * RATE)],
    "sized_rate_x1_5": [lambda b: _sized(b, 1.5 * RATE)],
    "fp8_weights": [lambda b: b.plan("inference.weight_precision", SERVE, "fp8")],
    "purpose_training": [lambda b: b.plan("purpose", SERVE, "training")],
}


@pytest.fixture(scope="module")
def rc(built, tmp_path_factory) -> dict[str, Recalc]:
    return recalc_edited(built[0], tmp_path_factory.mktemp("behaviour_serving_sens"), EDITS, Layout(built[0]))


def _g(r: Recalc, key: str, i: int = SERVE):
    return r.get(SHEET, key, i)


def test_roundtrip_the_serving_block_reads_the_cost_sheet_and_holds_an_unsized_fleet(rc):
    base = rc["roundtrip"]
    assert base.errors(SHEET) == {}
    month = ss.monthly_cost_usd(hourly_cost_usd=base.get("Cost", "infer_hourly_cost_usd", SERVE))
    assert close(_g(base, "srv_sens_month_usd"), month)
    assert _g(base, "srv_sens_1M_usd") == base.get("Cost", "infer_usd_per_1M_tokens", SERVE)
    s = base.get(SHEET, "sens_step_frac", SERVE)
    assert close(_g(base, "srv_sens_price_dmonth_high_usd"), s * month)
    # the book model is not sized by a load: the replicas are held, the load and output rows are 0
    assert _g(base, "srv_sens_sized_flag") == 0 and _g(base, "srv_sens_replicas_high") == 1
    for k in ("load_dmonth_low", "load_dmonth_high", "load_d1M_high", "output_d1M_low"):
        assert _g(base, f"srv_sens_{k}_usd") == 0, k


def test_power_price_x2_doubles_the_owned_fleets_power_change_and_leaves_the_rent(rc):
    base, r = rc["roundtrip"], rc["power_x2"]
    for tag in ("low", "high"):
        assert close(_g(r, f"srv_sens_power_dmonth_{tag}_usd"), 2 * _g(base, f"srv_sens_power_dmonth_{tag}_usd"))
    assert close(_g(r, "srv_sens_power_dmonth_high_usd") * 12,
                 base.get(SHEET, "sens_step_frac", SERVE) * r.get("TCO", "tco_power_per_year_usd", SERVE))
    assert _g(r, "srv_sens_month_usd") == _g(base, "srv_sens_month_usd")


def test_a_fleet_sized_by_the_load_re_sizes_its_replicas_at_each_step(rc):
    r = rc["sized"]
    assert r.errors(SHEET) == {} and _g(r, "srv_sens_sized_flag") == 1
    most, s, month = r.get("Inference", "srv_max_load_rps", SERVE), r.get(SHEET, "sens_step_frac", SERVE), \
        _g(r, "srv_sens_month_usd")
    for tag, f in (("low", -s), ("high", s)):
        reps = ss.replicas_for_load(arrival_rate_rps=RATE, frac=f, max_load_rps_per_replica=most)
        assert _g(r, f"srv_sens_replicas_{tag}") == reps
        assert close(_g(r, f"srv_sens_load_dmonth_{tag}_usd"), month * (reps / REPLICAS - 1))
        assert close(_g(r, f"srv_sens_load_d1M_{tag}_usd"),
                     ss.load_scaled_per_1M(_g(r, "srv_sens_1M_usd"), REPLICAS, reps, f) - _g(r, "srv_sens_1M_usd"))
    assert _g(r, "srv_sens_replicas_high") > REPLICAS > _g(r, "srv_sens_replicas_low")


def test_gpu_price_x2_doubles_the_serving_cost_and_every_cost_change(rc):
    one, two = rc["sized"], rc["sized_price_x2"]
    for key in ("srv_sens_month_usd", "srv_sens_1M_usd", "srv_sens_price_dmonth_high_usd",
                "srv_sens_load_dmonth_high_usd", "srv_sens_load_dmonth_low_usd", "srv_sens_output_d1M_high_usd",
                "srv_sens_price_swing_month_usd", "srv_sens_load_swing_month_usd"):
        assert _g(one, key) != 0 and close(_g(two, key), 2 * _g(one, key)), key
    assert _g(two, "srv_sens_replicas_high") == _g(one, "srv_sens_replicas_high")  # the price sizes nothing
    assert close(_g(two, "srv_sens_power_dmonth_high_usd"), _g(one, "srv_sens_power_dmonth_high_usd"))


def test_a_larger_arrival_rate_needs_more_replicas_at_the_step(rc):
    one, more = rc["sized"], rc["sized_rate_x1_2"]
    most = more.get("Inference", "srv_max_load_rps", SERVE)
    reps = ss.replicas_for_load(arrival_rate_rps=1.2 * RATE, frac=more.get(SHEET, "sens_step_frac", SERVE),
                                max_load_rps_per_replica=most)
    assert _g(more, "srv_sens_replicas_high") == reps > _g(one, "srv_sens_replicas_high")
    assert _g(more, "srv_sens_load_dmonth_high_usd") > _g(one, "srv_sens_load_dmonth_high_usd")
    assert _g(more, "srv_sens_month_usd") == _g(one, "srv_sens_month_usd")  # the same 7 groups rented


def test_a_saturated_fleet_is_not_sized_by_the_load(rc):
    """1.5 x the rate on the same 7 groups saturates them: the tokens served no longer follow the rate, so the
    sheet holds the replicas (0 change) rather than scale a cost per 1M it cannot state."""
    r = rc["sized_rate_x1_5"]
    assert r.get("Inference", "srv_load_saturated_flag", SERVE) == 1 and _g(r, "srv_sens_sized_flag") == 0
    assert _g(r, "srv_sens_replicas_high") == REPLICAS and _g(r, "srv_sens_load_dmonth_high_usd") == 0


def test_a_serving_columns_storage_is_the_weights_it_serves_live(rc):
    base, fp8, trained = rc["roundtrip"], rc["fp8_weights"], rc["purpose_training"]
    weights = base.get("KV Cache", "infer_weights_GB", SERVE)
    assert close(base.get("TCO", "tco_storage_TB", SERVE), weights / 1000)
    assert base.get("TCO", "tco_storage_TB", SERVE) < 1 < base.get("Storage", "storage_total_TB", SERVE)
    assert close(fp8.get("TCO", "tco_storage_TB", SERVE), base.get("TCO", "tco_storage_TB", SERVE) / 2)  # FP8: half
    assert close(fp8.get("TCO", "tco_storage_per_year_usd", SERVE),
                 base.get("TCO", "tco_storage_per_year_usd", SERVE) / 2)
    # the purpose picks it: a training column keeps the Storage sheet's dataset, checkpoints and logs
    assert trained.get("TCO", "tco_storage_TB", SERVE) == trained.get("Storage", "storage_total_TB", SERVE)
    assert base.get("TCO", "tco_storage_TB", TRAIN) == base.get("Storage", "storage_total_TB", TRAIN)
