"""The planner's changes in words (workbook.planner.advice.change_text): what the Markdown's "Not feasible" section
prints as the cheapest change that fixes a request."""

from __future__ import annotations

from workbook.planner.advice import change_text


def test_each_change_in_words():
    assert change_text({"field": "budget_usd", "to": 17280.0172, "change_frac": 171.8, "confirmed": True}) == \
        "raise the budget to $17,281 (+17180.0%)"  # rounded up: $17,280 would still fail
    assert change_text({"field": "target_days", "to": 61.23, "change_frac": 0.0205, "confirmed": False}) == \
        "extend the deadline to 61.3 days (+2.1%; not confirmed by searching again)"
    assert change_text({"field": "tokens", "to": 1.44449e12, "change_frac": -0.519, "confirmed": True}) == \
        "train on fewer tokens: 1.444e+12 (-51.9%)"  # rounded down
    assert change_text({"field": "candidate_gpus", "to": "gb200"}) == "plan on another GPU: gb200"
    assert change_text(None).startswith("none found")
