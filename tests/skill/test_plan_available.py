"""The devices the user can get (``available``): every form the spec takes, every way a named
device can be unusable refused by name, and the reply's line for each one searched (review
findings 4, 5 and 10, /tmp/rev2/FINDINGS.md)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from pydantic import ValidationError

from compute_budget.prompts import render_plan
from compute_budget.skill import PlanSpec, plan_run
from compute_budget.skill.errors import describe_error

LORA: dict[str, Any] = {"preset": "llama-3-8b", "tokens": "20M", "lora_rank": 16,
                        "deadline_days": 3}
"""The reviewers' LoRA of Llama-3-8B on 20M tokens in 3 days."""


def test_the_list_form_is_the_object_form() -> None:
    # finding 5: PlanSpec(available=[{'gpu': 'h100', 'count': 64}]) was refused by a message
    # that named this very form as allowed
    base: dict[str, Any] = {"params": "7B", "tokens": "100B", "deadline_days": 60}
    listed = PlanSpec(**base, available=[{"gpu": "h100", "count": 64},
                                         {"gpu": "a100", "count": "128"}])
    assert listed.available == {"h100-sxm": 64, "a100-80gb": 128}
    assert listed == PlanSpec(**base, available={"h100": 64, "a100": 128})
    assert listed == PlanSpec(**base, available="h100=64,a100=128")  # so plan_run's the same


@pytest.mark.parametrize(
    ("available", "name", "allowed"),
    [
        ([{"gpu": "h100", "count": 0}], "available.h100", "≥ 1"),
        ([{"gpu": "h100", "count": True}], "available.h100", "not true or false"),
        ([{"gpu": "nope", "count": 8}], "available[0].gpu", "unknown accelerator"),
        ([{"gpu": "h100", "count": 8}, {"gpu": "H100-SXM", "count": 64}], "available[1].gpu",
         "each type once (h100-sxm is available[0] too)"),
        ([{"gpu": "h100", "cnt": 8}], "available[0]", "as [{'gpu': 'h100', 'count': 64}]"),
        ([{"gpu": "h100", "count": 8, "price": 2}], "available[0]", "as {'h100': 64}"),
        (["h100=8"], "available[0]", "or as 'h100=64'"),
        ([{"gpu": 100, "count": 8}], "available[0].gpu", "a device type's name"),
    ],
)
def test_each_entry_of_the_list_is_checked(available: list[Any], name: str,
                                           allowed: str) -> None:
    with pytest.raises(ValidationError) as info:
        PlanSpec(**LORA, available=available)
    text = describe_error(info.value)
    assert text.startswith(f"{name}: ") and allowed in text, text


@pytest.mark.parametrize(
    ("fields", "name", "allowed"),
    [
        # finding 4: A10G has no dense peak in the catalog; the plan dropped it without a word
        ({"available": {"a10g": 4}}, "available.a10g",
         "no published dense tensor peak is known for A10G (AWS G5); give peak_tflops (its "
         "dense TFLOP/s) with gpus a10g, or leave it out"),
        ({"available": [{"gpu": "a10g", "count": 4}]}, "available.a10g", "with gpus a10g"),
        # A100 has no FP8 peak: at fp8 it was left out the same way
        ({"available": {"a100": 4}, "precision": "fp8"}, "available.a100-80gb",
         "the fp8 peak of A100 80GB SXM is unknown or unsupported; known: bf16, fp16"),
        # 4 H100 with tp 8 pinned: no count searched on them, and nothing said
        ({"available": {"h100": 4}, "tp": 8}, "available.h100-sxm",
         "at least 8 devices: the pinned tp·pp·ep = 8 must divide the count"),
        ({"available": {"a10g": 4}}, "available.a10g", "a type the plan can estimate"),
    ],
)
def test_a_device_the_plan_cannot_use_is_refused_by_name(fields: dict[str, Any], name: str,
                                                         allowed: str) -> None:
    with pytest.raises(ValidationError) as info:
        PlanSpec(**{**LORA, **fields})
    text = describe_error(info.value)
    assert text.startswith(f"{name}: ") and allowed in text, text


def test_a_device_without_a_peak_is_planned_with_the_peak_given() -> None:
    # the way out the error names: the peak, with the device as the only type
    report = plan_run(PlanSpec(**LORA, available={"a10g": 4}, gpus=["a10g"], peak_tflops=70))
    assert report.feasible and {p.gpu for p in report.plans} == {"a10g"}
    assert max(p.gpu_count for p in report.fastest) <= 4


@functools.cache
def _on_two_3090s() -> Any:
    """The LoRA plan with 2 RTX 3090s available (two tests read it; a plan takes a second)."""
    return plan_run(PlanSpec(**LORA, available={"rtx-3090": 2}))


def test_the_cheapest_count_of_each_type_is_the_plans() -> None:
    report = _on_two_3090s()
    assert report.plans
    for plan in report.plans:
        t = next(t for t in report.frontier if t.gpu == plan.gpu)
        assert t.cheapest_gpu_count == plan.gpu_count, plan.gpu
    assert all(t.cheapest_gpu_count is None for t in report.frontier if t.status != "feasible")


def test_an_unpriced_device_says_it_has_no_price_and_how_to_give_one() -> None:
    # finding 10: "Your 2 × RTX 3090: the cheapest plan on them is 1 devices, 11.1 h, unknown."
    report = _on_two_3090s()
    (t,) = report.your_types
    assert (t.gpu, t.available, t.cheapest_gpu_count) == ("rtx-3090", 2, 1)
    best = next(p for p in t.points if p.gpu_count == 1)
    assert best.dollar_cost_with_failures is None and best.feasible
    line = next(x for x in render_plan(report).splitlines() if x.startswith("- **Your"))
    assert line.startswith("- **Your 2 × RTX 3090**: the plan of fewest device-hours on them "
                           "is 1 device, ")
    assert line.endswith("; they have no price in the catalog: give `--price` with "
                         "`--gpu-types rtx-3090` to cost it.")
    assert "devices" not in line and "unknown" not in line
    mcp = render_plan(report, assistant=True)
    # plan_run's schema does not list the price (its byte budget): estimate_run_cost's does
    assert ("no price in the catalog: give a price (`usd_per_gpu_hour` with `gpus: "
            "['rtx-3090']`, or estimate_run_cost on `gpu: 'rtx-3090'` with it) to cost it.") in mcp
    assert "--price" not in mcp
    # with a budget it cannot be checked: said so, not as the code unpriced_with_budget
    budget = plan_run(PlanSpec(**LORA, available={"rtx-3090": 8}, budget_usd=100))
    (t,) = budget.your_types
    assert t.status == "unpriced_with_budget"
    text = render_plan(budget)
    assert ("- **Your 8 × RTX 3090**: in time, but they have no price in the catalog to check "
            "against the budget: give `--price` with `--gpu-types rtx-3090`.") in text
    assert "unpriced_with_budget" not in text


def test_every_named_device_is_answered_for() -> None:
    # 8 H100 with --max-gpus 8, or 5,000 with the default 4,096: not held below the search's
    # cap, so no line said what the user's own devices would do
    for available, max_gpu_count, head in (
            (8, 8, "**Your 8 × H100 SXM**: "),
            (5000, 4096, "**Your 5,000 × H100 SXM (the search stops at 4,096)**: ")):
        report = plan_run(PlanSpec(**LORA, available={"h100": available},
                                   max_gpu_count=max_gpu_count))
        assert "h100-sxm" not in {p.gpu for p in report.plans}
        (t,) = report.your_types
        plan = next(p for p in t.points if p.gpu_count == t.cheapest_gpu_count)
        assert plan.dollar_cost_with_failures is not None
        assert f"{head}the cheapest plan on them is " in render_plan(report)


def test_no_plan_still_answers_for_the_devices_no_binding_names() -> None:
    # 13B on 260B tokens in 10 days: 64 A100 take 33 days (the deadline binding names them),
    # 32 L40S 91 days (no binding does)
    report = plan_run(PlanSpec(params="13B", tokens="260B", deadline_days=10,
                               available={"a100": 64, "l40s": 32}, gpus=["a100", "l40s"]))
    assert not report.feasible
    named = {b.numbers.get("gpu") for b in report.binding}
    assert "a100-80gb" in named and "l40s" not in named
    text = render_plan(report)
    assert "- **Your 32 × L40S**: " in text and "**Your 64 × A100" not in text


def test_a_listed_type_without_a_peak_is_said_not_searched() -> None:
    # --gpu-types h100,a10g planned on H100 alone and never named the A10G (no published dense
    # peak); the frontier had it as no_peak, the reply said nothing
    from compute_budget.prompts import render_plan

    spec = PlanSpec(preset="llama-3-8b", tokens="20M", lora_rank=16, deadline_days=3,
                    gpus=["h100", "a10g"])
    report = plan_run(spec)
    assert report.unsearched == [("a10g", ())]
    assert "- **Not searched: A10G (AWS G5) (`a10g`)**: no published dense peak at the " \
           "precision planned; give `--peak-tflops` with `--gpu-types a10g` to plan on it." \
        in render_plan(report)
    assert "`peak_tflops` with `gpus: ['a10g']`" in render_plan(report, assistant=True)
    # the whole catalog (no gpus) lists no type as unsearched: the user named none
    assert plan_run(spec.model_copy(update={"gpus": None})).unsearched == []


def test_a_type_with_a_peak_at_another_precision_is_told_to_plan_at_it() -> None:
    # a T4 has an fp16 peak and no bf16 one: --peak-tflops would plan it in bf16, which it
    # cannot run (a reviewer)
    from compute_budget.prompts import render_plan

    report = plan_run(PlanSpec(params="1B", tokens="20B", deadline_days=30, gpus=["h100", "t4"],
                               precision="bf16"))
    assert report.unsearched == [("t4", ("fp16",))]
    assert "- **Not searched: T4 (`t4`)**: no published dense peak at the precision planned; " \
           "it has one at fp16: plan at that precision." in render_plan(report)


def test_a_cheapest_plan_under_a_day_gives_its_slow_end_in_hours() -> None:
    # "13.8 h … At the slow end of the MFU band it takes 1.15 days": one time in two units
    from compute_budget.prompts import render_plan

    text = render_plan(plan_run(PlanSpec(params="1B", tokens="20B", deadline_days=1,
                                         gpus=["h100"])))
    assert "13.8 h and $1,318" in text
    assert "At the slow end of the MFU band it takes 27.7 h, past the deadline" in text
