"""What a plan reply says when the deadline and the budget bind together, where a borrowed MFU
comes from whatever binds, and that the headline, the relay and the markdown agree (user review
of plan_run; the skill's side is tests/skill/test_plan_bindings.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from tests.conftest import run_cli

pytestmark = pytest.mark.anyio

RUN: dict[str, Any] = {"params": "13B", "tokens": "1T", "deadline_days": 14}
REVIEW: dict[str, Any] = {**RUN, "budget_usd": "$200k", "gpus": ["h100", "a100"],
                          "available": [{"gpu": "h100", "count": 32},
                                        {"gpu": "a100", "count": 128}]}
"""The reviewers' call."""
STRUCTURED_MAX = 6_000
"""tests/tools/test_context_budget.py's cap on a reply's structured content."""

# $525,235 and $615,263: estimate_run_cost on 584 × a100 and 312 × h100 (the same MFU as on
# 128 and 32: tests/skill/test_plan_bindings.py)
BUDGET_LINE = ("- Budget: meeting the deadline takes 584 × A100 80GB SXM (`a100-80gb`), more than "
               "the 128 available, and costs $525,235 with the failure budget, above the $200,000 "
               "budget: more devices alone would not do.")
WITHIN_LINE = ("- Within the budget: on the devices allowed, no plan costs $200,000 or less at any "
               "deadline; the cheapest is 128 × A100 80GB SXM (`a100-80gb`), 63.7 days and "
               "$525,235 with the failure budget.")
YOURS_COST = ("about 312 would meet it at the same MFU, for about $615,263 with the failure "
              "budget, over the $200,000 budget.")


async def _call(client: Client, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool("plan_run", arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    size = len(json.dumps(result.structured_content, separators=(",", ":"),
                          ensure_ascii=False).encode())
    assert size <= STRUCTURED_MAX
    return result.content[0].text, result.structured_content["relay"]


async def test_the_tool_says_meeting_the_deadline_would_break_the_budget(client: Client) -> None:
    text, relay = await _call(client, REVIEW)
    assert BUDGET_LINE in text and WITHIN_LINE in text
    assert f"- **Your 32 × H100 SXM**: 134 days at best, past the deadline; {YOURS_COST}" in text
    assert relay["headline"] == (
        "No plan meets every constraint: the fastest plan that fits, 128 × A100 80GB SXM, takes "
        "63.7 days, past the 14-day deadline; meeting the deadline takes 584 × A100 80GB SXM "
        "(128 available), which cost $525,235 with the failure budget, over the $200,000 budget.")
    assert relay["budget"] == (
        "on the devices allowed, no plan costs $200,000 or less at any deadline; the cheapest is "
        "128 × A100 80GB SXM, 63.7 days, $525,235 with the failure budget.")
    assert relay["yours"].endswith(YOURS_COST)


def test_the_cli_says_the_same() -> None:
    code, out, _ = run_cli("plan", "--params", "13B", "--tokens", "1T", "--deadline-days", "14",
                           "--budget", "$200k", "--gpu-types", "h100,a100",
                           "--available", "h100=32,a100=128")
    assert code == 0
    assert BUDGET_LINE in out and WITHIN_LINE in out
    assert f"- **Your 32 × H100 SXM**: 134 days at best, past the deadline; {YOURS_COST}" in out


async def test_a_budget_that_buys_a_slower_plan_names_it(client: Client) -> None:
    text, relay = await _call(client, {**REVIEW, "budget_usd": "$550k", "available": [
        {"gpu": "h100", "count": 64}, {"gpu": "a100", "count": 64}]})
    assert ("- Within the budget, the deadline aside: the fastest plan, 64 × A100 80GB SXM "
            "(`a100-80gb`), takes 127 days and costs $525,235 with the failure budget.") in text
    assert relay["budget"] == ("the fastest plan within the $550,000 budget, the deadline aside, "
                               "is 64 × A100 80GB SXM, 127 days, $525,235 with the failure "
                               "budget.")


BORROWED = "Its MFU is borrowed from Hopper (uncalibrated: no published runs on CDNA 3 (MI300))."


@pytest.mark.slow  # the whole catalog, about 0.5 s
async def test_the_borrowed_mfu_is_said_of_the_plan_a_binding_names(client: Client) -> None:
    # the reviewers' run without gpus: 232 × MI300X is the cheapest in time, on Hopper's MFU
    text, relay = await _call(client, {**REVIEW, "gpus": None})
    assert ("- Budget: the cheapest plan in time, 232 × MI300X (`mi300x`), costs $302,270 with "
            f"the failure budget, above the $200,000 budget. {BORROWED}") in text
    assert ("(an uncalibrated device has too few published training runs (or none) for a prior "
            "of its own: a borrowed prior comes from the calibrated generation nearest in peak")\
        in " ".join(text.split())
    assert relay["mfu_source"].startswith("MI300X: 0.21, a prior borrowed from Hopper")


async def test_the_borrowed_mfu_is_said_of_a_binding_on_few_types(client: Client) -> None:
    text, relay = await _call(client, {**REVIEW, "gpus": ["mi300x", "a100"], "available": None})
    assert ("- Budget: the cheapest plan in time, 232 × MI300X (`mi300x`), costs $302,270 with "
            f"the failure budget, above the $200,000 budget. {BORROWED}") in text
    assert relay["mfu_source"].startswith("MI300X: 0.21, a prior borrowed from Hopper")


async def test_the_borrowed_mfu_is_said_of_the_cheapest_without_an_alternative(
        client: Client) -> None:
    # no calibrated type to name beside it (cheapest_modelled), which alone used to bring the note
    text, _ = await _call(client, {**RUN, "gpus": ["mi300x"]})
    cheapest = next(line for line in text.splitlines() if line.startswith("**Cheapest: "))
    assert cheapest.startswith("**Cheapest: 232 × MI300X**") and BORROWED in cheapest


async def test_the_relay_names_the_plan_over_the_budget(client: Client) -> None:
    _, tight = await _call(client, {**REVIEW, "deadline_days": 60, "available": None})
    assert tight["headline"].startswith(
        "No plan meets every constraint: the cheapest plan in time, 136 × A100 80GB SXM, costs "
        "$525,235 with the failure budget")


async def test_the_relay_says_the_fastest_has_no_price(client: Client) -> None:
    _, unpriced = await _call(client, {**RUN, "gpus": ["mi355x", "a100"]})
    assert unpriced["headline"].endswith(
        "fastest: 2,192 × MI355X, 18.4 h (no price in the catalog).")


async def test_the_relay_names_the_fewest_devices_that_fit(client: Client) -> None:
    _, memory = await _call(client, {"params": "400B", "tokens": "1T", "deadline_days": 100,
                                     "gpus": ["h100"], "max_gpu_count": 8})
    assert memory["headline"] == ("No plan meets every constraint: the run fits on no allowed "
                                  "count (the fewest that fit: 26 × H100 SXM).")


async def test_your_devices_over_the_budget_say_by_how_much(client: Client) -> None:
    text, over = await _call(client, {**REVIEW, "budget_usd": "$550k",
                                      "available": [{"gpu": "h100", "count": 512}]})
    said = ("the cheapest plan in time on them, 312 devices, 13.7 days, costs $615,263 with the "
            "failure budget, over the $550,000 budget.")
    assert f"- **Your 512 × H100 SXM**: {said}" in text
    assert over["yours"] == f"your 512 × H100 SXM: {said}"


async def test_a_budget_no_priced_plan_meets_leaves_the_unpriced_open(client: Client) -> None:
    # MI355X has no price: "no plan costs $200,000 or less" would overrule the unknown cost
    text, relay = await _call(client, {**REVIEW, "gpus": ["mi355x", "a100"], "available": None})
    assert "- Unknown cost: plans in time also exist on devices without a price" in text
    assert ("- Within the budget: on the devices allowed, no plan with a price costs $200,000 or "
            "less at any deadline; ") in text
    assert relay["budget"].startswith(
        "on the devices allowed, no plan with a price costs $200,000 or less at any deadline")
