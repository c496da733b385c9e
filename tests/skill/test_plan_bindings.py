"""What binds together when no plan meets every constraint (user review of plan_run: for 13B ×
1T in 14 days within $200k on 32 H100 and 128 A100 the reply named only the deadline and "about
312 would meet it", when meeting the deadline costs about 3× the budget on either device)."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from compute_budget.skill import PlanSpec, RunSpec, estimate_run, plan_run
from compute_budget.skill.planning.plan import PlanReport

REVIEW: dict[str, Any] = {"params": "13B", "tokens": "1T", "deadline_days": 14,
                          "budget_usd": "$200k", "gpus": ["h100", "a100"],
                          "available": {"h100": 32, "a100": 128}}
"""The reviewers' call."""


@functools.cache
def _plan(**changes: Any) -> PlanReport:
    return plan_run(PlanSpec(**{**REVIEW, **changes}))


def _cost(gpu: str, count: int) -> float:
    """The cost with the failure budget of the run on ``count`` × ``gpu``, as estimate_run_cost
    gives it."""
    e = estimate_run(RunSpec(params="13B", tokens="1T", gpu=gpu, gpu_count=count),
                     in_time=False)
    assert e.dollar_cost_with_failures is not None
    return e.dollar_cost_with_failures


def test_meeting_the_deadline_on_more_devices_would_break_the_budget() -> None:
    report = _plan()
    assert not report.feasible
    assert [b.code for b in report.binding] == ["deadline", "budget", "budget_buys_nothing"]
    deadline, budget, alone = (b.numbers for b in report.binding)
    assert (deadline["gpu"], deadline["gpu_count"]) == ("a100-80gb", 128)
    # 128 A100 take 63.7 days: 584 (whole nodes) meet 14 days, at the same $525,235 with the
    # failure budget that estimate_run_cost gives on 584 × a100 (the reviewers' figure)
    assert (budget["gpu"], budget["gpu_count"], budget["available"]) == ("a100-80gb", 584, 128)
    assert budget["cheapest_cost_with_failures"] == pytest.approx(_cost("a100", 584), rel=1e-9)
    assert round(_cost("a100", 584)) == 525_235
    # no count of the devices allowed comes within $200k: the cheapest is what they cost
    assert (alone["gpu"], alone["gpu_count"]) == ("a100-80gb", 128)
    assert alone["cost_with_failures"] == pytest.approx(_cost("a100", 128), rel=1e-9)
    assert alone["budget_usd"] == 200_000


def test_the_count_that_meets_the_deadline_carries_its_cost() -> None:
    h100 = next(t for t in _plan().frontier if t.gpu == "h100-sxm")
    assert (h100.status, h100.gpu_count_for_deadline) == ("misses_deadline", 312)
    # the reviewers' $615,263: estimate_run_cost on 312 × h100 (the same MFU as on 32)
    assert h100.deadline_cost_with_failures == pytest.approx(_cost("h100", 312), rel=1e-9)
    assert round(_cost("h100", 312)) == 615_263


def test_a_budget_that_buys_a_slower_plan_names_the_fastest_within_it() -> None:
    # $550k covers 64 × A100 ($525,235) but not 64 × H100 ($615,263), the fastest that fits
    report = _plan(budget_usd=550_000, available="h100=64,a100=64")
    assert [b.code for b in report.binding] == ["deadline", "availability", "budget_buys"]
    assert report.binding[0].numbers["gpu"] == "h100-sxm"
    buys = report.binding[2].numbers
    assert (buys["gpu"], buys["gpu_count"]) == ("a100-80gb", 64)
    assert isinstance(buys["wall_days"], float) and buys["wall_days"] > 14
    assert isinstance(buys["cost_with_failures"], float)
    assert buys["cost_with_failures"] <= 550_000


def test_without_a_budget_nothing_is_said_of_one() -> None:
    report = _plan(budget_usd=None)  # more devices of either type meet the deadline
    assert [b.code for b in report.binding] == ["deadline", "availability"]


def test_the_plan_a_binding_names_carries_its_estimate() -> None:
    # item 2 of the review: 232 × MI300X, the cheapest in time, runs at an MFU borrowed from
    # Hopper; the binding's plan says so, as a feasible plan's estimate does
    report = _plan(gpus="mi300x,a100", available=None)
    budget = report.binding[0]
    assert budget.code == "budget" and budget.plan is not None
    assert (budget.plan.gpu, budget.plan.gpu_count) == ("mi300x", budget.numbers["gpu_count"])
    assert budget.plan.estimate.mfu_used.borrowed


def test_a_type_over_the_budget_names_its_cheapest_count_in_time() -> None:
    report = _plan(budget_usd=550_000, available="h100=512")
    h100 = next(t for t in report.frontier if t.gpu == "h100-sxm")
    assert (h100.status, h100.in_time_gpu_count) == ("over_budget", 312)
    assert 312 in {p.gpu_count for p in h100.points}
