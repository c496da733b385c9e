
"""Any input either gives a result or a ValueError naming a field: never another exception, and
never a result with an infinity or a NaN in it (tiny, huge and boolean values included)."""

import math
import sys
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st
from pydantic import BaseModel

from compute_budget import (
    BudgetTableSpec,
    MemorySpec,
    RunSpec,
    budget_table,
    describe_error,
    estimate_memory,
    estimate_run,
    suggest_alternatives,
)
from compute_budget.skill import AlternativesOptions, DecisionInputs, decision_summary
from compute_budget.skill.estimate import RunEstimate
from tests.test_numbers import non_finite

EXTREMES: tuple[Any, ...] = (
    5e-324, 1e-308, 1e-300, -1e-300, 1e-12, 1e-4, 1.0, 1e12, 1e17, 1e18, 1e35, 1e300, 1e308,
    -1e308, sys.float_info.max, True, False, "1e-308", "1e308", "5e-324",
)
"""Tiny, huge and boolean values, and the edges of the bounds."""

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-10, max_value=10**18),
    st.sampled_from(["7B", "1.5T", "-3", "nan", "", "abc", "$2.10", "1e400", "0"]),
    st.sampled_from(EXTREMES),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)
small_ints = st.one_of(st.integers(min_value=-2, max_value=130), st.none(),
                       st.sampled_from(["8", "x", 2.5, True, False, 10**7, 10**18, 1e308]))
names = st.one_of(st.sampled_from(["h100", "a100", "v100", "a10g", "tpu-v4", "mi300x", "nope",
                                   ""]), st.text(max_size=5), st.none(), st.integers())
presets = st.one_of(st.none(), st.sampled_from(["llama-3-8b", "gpt2", "mixtral-8x7b", "x"]))
gains = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(EXTREMES),
                  st.sampled_from([0.0, -1.0, 0.5, 3.0, -1e12, "2.5"]))

run_fields = st.fixed_dictionaries({}, optional={
    "params": numbers, "tokens": numbers, "gpu": names, "gpu_count": small_ints,
    "active_params": numbers, "precision": st.sampled_from(["bf16", "fp8", "fp16", "int4"]),
    "mfu": numbers, "usd_per_gpu_hour": numbers, "peak_tflops": numbers,
    "achieved_tflops": numbers, "family": st.sampled_from(["dense", "moe", "cnn", "x"]),
    "failure_budget": numbers, "seq_len": small_ints, "recompute": st.sampled_from(
        ["none", "full", "selective", "some"]), "tp": small_ints, "pp": small_ints,
    "zero": small_ints, "preset": presets, "micro_batch": small_ints,
})


def _within(low: float, high: float) -> st.SearchStrategy[float]:
    """Inside [low, high]: the edges, and log-uniform between."""
    return st.one_of(st.sampled_from([low, high]),
                     st.floats(math.log10(low), math.log10(high)).map(lambda e: 10**e))


def _whole(low: int, high: int) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from([low, high]), st.integers(low, high))


def _or_extreme(inside: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a value inside the bounds, sometimes a tiny, huge or boolean one."""
    return st.one_of(*[inside] * 7, st.sampled_from(EXTREMES))


sigmas = st.one_of(st.just(0.0), _within(1e-12, 1e12))
"""Uncertainties inside the bounds: 0, or 10⁻¹² to 10¹²."""
signed = st.one_of(sigmas, sigmas.map(lambda x: -x))
"""Gains, baselines and metrics inside the bounds."""


@st.composite
def _verdict_inputs(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {"gain_uncertainty": draw(_or_extreme(sigmas))}
    if draw(st.booleans()):
        fields["predicted_gain"] = draw(_or_extreme(signed))
    else:
        fields["metric_now"] = draw(_or_extreme(signed))
        fields["metric_expected"] = draw(_or_extreme(signed))
        fields["higher_is_better"] = draw(st.booleans())
    for name, inside in (("baseline_to_beat", signed), ("usd_per_unit_gain", _within(0.01, 1e12)),
                         ("budget_usd", _within(0.01, 1e12))):
        if draw(st.booleans()):
            fields[name] = draw(_or_extreme(inside))
    return fields


@st.composite
def _splits(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    machine = draw(st.sampled_from(["gpu", "rate", "none"]))
    if machine == "gpu":
        fields["gpu"] = draw(st.sampled_from(["h100", "v100", "l4", "b200", "gb200", "tpu-v5e"]))
        for name, inside in (("gpu_count", _whole(1, 10**7)), ("mfu", _within(1e-4, 1)),
                             ("usd_per_gpu_hour", _within(1e-4, 1000)),
                             ("failure_budget", st.floats(1, 10))):
            if draw(st.booleans()):
                fields[name] = draw(_or_extreme(inside))
    elif machine == "rate":
        fields["flops_per_sec"] = draw(_or_extreme(_within(1e6, 1e25)))
        if draw(st.booleans()):
            fields["mfu"] = draw(_or_extreme(_within(1e-4, 1)))
    if machine == "gpu" and draw(st.booleans()):
        fields["budget_usd"] = draw(_or_extreme(_within(0.01, 1e12)))
    else:
        fields["budget_flops"] = draw(_or_extreme(_within(1e7, 1e35)))
    if draw(st.booleans()):
        fields["ratio"] = draw(_or_extreme(_within(0.1, 1e6)))
    if draw(st.booleans()):
        fields["params"] = draw(st.lists(_or_extreme(_within(1, 1e18)), min_size=1, max_size=3))
    return fields


bounded_runs = st.fixed_dictionaries({  # anywhere inside the bounds, the edges included
    "params": _within(1, 1e18), "tokens": _within(1, 1e17),
    "gpu": st.sampled_from(["h100", "v100", "b200", "tpu-v5e", "mi300x", "l4"]),
    "gpu_count": _whole(1, 10**7),
}, optional={
    "mfu": _within(1e-4, 1), "usd_per_gpu_hour": _within(1e-4, 1000),
    "peak_tflops": _within(1e-3, 1e6),
    "failure_budget": st.floats(1, 10), "seq_len": _whole(1, 10**7),
    "micro_batch": _whole(1, 10**6), "active_params": _within(1, 1e18),
    "kind": st.sampled_from(["pretrain", "continued-pretrain", "fine-tune", "ablation"]),
    "family": st.sampled_from(["dense", "moe", "cnn", "snn"]),
    "precision": st.sampled_from(["bf16", "fp8"]),
})


def _outcome(call: Any) -> None:
    try:
        results = call()
    except ValueError as exc:  # InputError, ConfigError, ValidationError
        message = describe_error(exc)
        assert message and "Traceback" not in message
        assert "inf" not in message.split(":")[0]  # the field named is a field, not "C: inf"
        event("refused")
        return
    event("answered")
    for result in results:
        assert not non_finite(result), non_finite(result)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=run_fields)
def test_run_specs_fail_only_with_value_errors(fields: dict[str, Any]) -> None:
    def call() -> list[BaseModel]:
        spec = RunSpec.model_validate(fields)
        return [estimate_run(spec), suggest_alternatives(spec)]

    _outcome(call)


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=bounded_runs)
def test_runs_at_the_bounds_give_finite_results(fields: dict[str, Any]) -> None:
    def call() -> list[BaseModel]:
        spec = RunSpec.model_validate(fields)
        return [estimate_run(spec), suggest_alternatives(spec)]

    _outcome(call)


@settings(max_examples=200, deadline=None)
@given(fields=st.fixed_dictionaries({}, optional={
    "params": numbers, "gpu_count": small_ints, "gpu": names, "zero": small_ints,
    "tp": small_ints, "pp": small_ints, "optimizer": st.sampled_from(["adamw", "lion", "sgd"]),
    "trainable_params": numbers, "seq_len": small_ints, "micro_batch": small_ints,
    "preset": presets, "layers": small_ints, "hidden": small_ints, "heads": small_ints,
}))
def test_memory_specs_fail_only_with_value_errors(fields: dict[str, Any]) -> None:
    _outcome(lambda: [estimate_memory(MemorySpec.model_validate(fields))])


@settings(max_examples=50, deadline=None)  # a split prices many rows: 1.2 s at 100
@given(fields=st.one_of(_splits(), st.fixed_dictionaries({}, optional={
    "budget_flops": numbers, "budget_usd": numbers, "ratio": numbers, "gpu": names,
    "gpu_count": small_ints, "flops_per_sec": numbers, "mfu": numbers,
    "usd_per_gpu_hour": numbers, "failure_budget": numbers,
    "params": st.lists(numbers, max_size=3),
})))
def test_split_specs_fail_only_with_value_errors(fields: dict[str, Any]) -> None:
    _outcome(lambda: [budget_table(BudgetTableSpec.model_validate(fields))])


@cache
def _estimates() -> tuple[RunEstimate, ...]:
    """A cheap run and the dearest one the bounds allow (both with a price)."""
    return (
        estimate_run(RunSpec(params=1e3, tokens=1, gpu="h100", gpu_count=10**7, peak_tflops=1e6,
                             mfu=1, usd_per_gpu_hour=1e-4)),
        estimate_run(RunSpec(params=1e18, tokens=1e17, gpu="h100", gpu_count=1,
                             peak_tflops=1e-3, mfu=1e-4, usd_per_gpu_hour=1000,
                             failure_budget=10)),
    )


@settings(max_examples=200, deadline=None)
@given(which=st.sampled_from([0, 1]), fields=st.one_of(_verdict_inputs(), st.fixed_dictionaries(
    {}, optional={
        "predicted_gain": gains, "gain_uncertainty": gains, "baseline_to_beat": gains,
        "metric_now": gains, "metric_expected": gains, "higher_is_better": st.booleans(),
        "usd_per_unit_gain": numbers, "budget_usd": numbers,
    })))
def test_verdicts_fail_only_with_value_errors(which: int, fields: dict[str, Any]) -> None:
    def call() -> list[BaseModel]:
        inputs = DecisionInputs.model_validate(fields)
        estimate = _estimates()[which]
        return [decision_summary(estimate, **inputs.model_dump(), kind=estimate.kind)]

    _outcome(call)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["pretrain", "fine-tune", "ablation"]),
       fields=st.fixed_dictionaries({}, optional={
           "teacher_params": _or_extreme(_within(1e3, 1e18)),
           "distill_token_fraction": _or_extreme(_within(1e-4, 1)),
           "shorter_run_fraction": _or_extreme(_within(1e-4, 1)),
           "predicted_gain": _or_extreme(signed), "gain_uncertainty": _or_extreme(sigmas),
       }))
def test_alternatives_options_fail_only_with_value_errors(
    kind: str, fields: dict[str, Any]
) -> None:
    def call() -> list[BaseModel]:
        options = AlternativesOptions.model_validate(fields)
        spec = RunSpec(params=1e9, tokens=1e9, gpu="h100", gpu_count=8, kind=kind)  # type: ignore[arg-type]
        return [suggest_alternatives(spec, **options.model_dump())]

    _outcome(call)


def test_the_extreme_estimates_are_finite() -> None:
    cheap, dear = _estimates()
    assert not non_finite(cheap) and not non_finite(dear)
    assert 0 < cheap.dollar_cost < dear.dollar_cost < math.inf  # type: ignore[operator]
