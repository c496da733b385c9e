"""A run's model has at least 1,000 parameters (review: ``--params 7`` priced a run of 7
parameters at < $0.01 without a hint that 7B was meant). A teacher and the sizes given to a budget
split are models too. The small runs of a scaling fit, the split's default rows at a tiny budget,
a calibration's past runs and the lesson's functions keep the floor of 1 (tiny models are
lessons)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from compute_budget.skill.advice.alternatives import AlternativesSpec, suggest_alternatives
from compute_budget.skill.errors import ArgumentsError, describe_error
from compute_budget.skill.memory.estimate import MemorySpec
from compute_budget.skill.planning.budget_spec import BudgetTableSpec
from compute_budget.skill.planning.budget_table import budget_table
from compute_budget.skill.run_spec import RunSpec
from compute_budget.skill.scaling.points import parse_points
from compute_budget.skill.scaling.specs import OptimalSpec
from tests.conftest import Cli

RUN = {"tokens": "1T", "gpu": "h100", "gpu_count": 8}


@pytest.mark.parametrize(("model", "fields", "name", "value", "suffix"), [
    (RunSpec, {**RUN, "params": 7}, "params", "7", "7B = 7e9"),
    (RunSpec, {**RUN, "params": "999"}, "params", "'999'", "999B = 999e9"),
    (RunSpec, {**RUN, "params": "47B", "active_params": 13}, "active_params", "13",
     "13B = 13e9"),
    (MemorySpec, {"params": 0.5, "gpu_count": 8}, "params", "0.5", "0.5B = 0.5e9"),
    (OptimalSpec, {"params": 7, "tokens": "1T"}, "params", "7", "7B = 7e9"),
    # a teacher is a model too (review: --teacher-params 7 priced a '7-param teacher')
    (AlternativesSpec, {**RUN, "params": "7B", "teacher_params": 7}, "teacher_params", "7",
     "7B = 7e9"),
])
def test_a_count_below_a_thousand_is_refused_with_the_suffix_it_lacks(
        model: type[RunSpec], fields: dict[str, object], name: str, value: str,
        suffix: str) -> None:
    with pytest.raises(ValidationError) as info:
        model.model_validate(fields)
    assert describe_error(info.value) == (
        f"{name}: {value} is not allowed; must be a number from 1000 to 1e+18, a count of "
        f"parameters, not of billions: give a suffix, {suffix}")


def test_a_thousand_is_the_smallest_run() -> None:
    assert RunSpec(**RUN, params="1K").params == 1000
    with pytest.raises(ValidationError) as info:
        RunSpec(**RUN, params="-7B")
    assert describe_error(info.value) == ("params: '-7B' is not allowed; must be a number from "
                                          "1000 to 1e+18")


def test_the_library_call_refuses_a_teacher_below_a_thousand() -> None:
    with pytest.raises(ArgumentsError) as info:
        suggest_alternatives(RunSpec(**RUN, params="7B"), teacher_params=7)
    assert str(info.value).startswith("teacher_params: 7 is not allowed; must be a number from "
                                      "1000 to 1e+18"), info.value


def test_tiny_models_stay_valid_where_they_are_lessons() -> None:
    # a scaling fit's small runs, and the split's default rows at a tiny budget: four decades
    # around sqrt(1e7 / 6) ≈ 1,291 (budget_pricing.default_sizes), sizes 10 to 10K
    assert parse_points("params,tokens,loss\n100,1e6,4.1\n")[0].params == 100
    table = budget_table(BudgetTableSpec(budget_flops=1e7, gpu="l4"))
    assert [r.params for r in table.rows] == [10, 100, 1e3, 1e4]
    fits = {r.params: r.fits for r in table.rows}
    assert fits[10] is None and fits[100] is None  # below 1,000: no run spec, unknown
    assert fits[1e4] is True


def test_a_size_the_user_gives_the_split_is_a_model() -> None:
    # review: --sizes 7,100 printed a row of 7 – 100 parameters on 2.13e18 – 149,000T tokens
    with pytest.raises(ValidationError) as info:
        BudgetTableSpec(budget_usd=1000, gpu="h100", params=["1B", 7])
    assert describe_error(info.value) == (
        "params[1]: 7 is not allowed; must be a number from 1000 to 1e+18, a count of "
        "parameters, not of billions: give a suffix, 7B = 7e9")
    assert BudgetTableSpec(budget_usd=1000, gpu="h100", params=["1K"]).params == [1000]


def test_the_cli_names_the_flag(cli: Cli) -> None:
    status, out, err = cli("estimate", "--params", "7", "--tokens", "1T", "--gpu", "h100",
                           "--gpus", "8")
    assert (status, out) == (2, "")
    assert err.startswith("error: --params: '7' is not allowed; must be a number from 1000 to "
                          "1e+18, a count of parameters, not of billions: give a suffix, "
                          "7B = 7e9"), err
    status, out, err = cli("split", "--budget-usd", "1000", "--gpu", "h100", "--sizes", "7,100")
    assert (status, out) == (2, "")
    assert err.startswith("error: --sizes[0]: '7' is not allowed; must be a number from 1000 "), err
