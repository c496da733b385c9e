"""Any input either gives a result or a ValueError naming a field: never another exception."""

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute_budget import (
    MemorySpec,
    RunSpec,
    SplitSpec,
    budget_split,
    describe_error,
    estimate_memory,
    estimate_run,
    suggest_alternatives,
)

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-10, max_value=10**18),
    st.sampled_from(["7B", "1.5T", "-3", "nan", "", "abc", "$2.10", "1e400", "0"]),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)
small_ints = st.one_of(st.integers(min_value=-2, max_value=130), st.none(),
                       st.sampled_from(["8", "x", 2.5]))
names = st.one_of(st.sampled_from(["h100", "a100", "v100", "a10g", "tpu-v4", "mi300x", "nope",
                                   ""]), st.text(max_size=5), st.none(), st.integers())
presets = st.one_of(st.none(), st.sampled_from(["llama-3-8b", "gpt2", "mixtral-8x7b", "x"]))

run_fields = st.fixed_dictionaries({}, optional={
    "params": numbers, "tokens": numbers, "gpu": names, "gpu_count": small_ints,
    "active_params": numbers, "precision": st.sampled_from(["bf16", "fp8", "fp16", "int4"]),
    "mfu": numbers, "usd_per_gpu_hour": numbers, "peak_tflops": numbers,
    "achieved_tflops": numbers, "family": st.sampled_from(["dense", "moe", "cnn", "x"]),
    "failure_budget": numbers, "seq_len": small_ints, "recompute": st.sampled_from(
        ["none", "full", "selective", "some"]), "tp": small_ints, "pp": small_ints,
    "zero": small_ints, "preset": presets, "micro_batch": small_ints,
})


def _outcome(call: Any) -> None:
    try:
        call()
    except ValueError as exc:  # InputError, ConfigError, ValidationError
        message = describe_error(exc)
        assert message and "Traceback" not in message


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=run_fields)
def test_run_specs_fail_only_with_value_errors(fields: dict[str, Any]) -> None:
    def call() -> None:
        spec = RunSpec.model_validate(fields)
        estimate_run(spec)
        suggest_alternatives(spec)

    _outcome(call)


@settings(max_examples=300, deadline=None)
@given(fields=st.fixed_dictionaries({}, optional={
    "params": numbers, "gpu_count": small_ints, "gpu": names, "zero": small_ints,
    "tp": small_ints, "pp": small_ints, "optimizer": st.sampled_from(["adamw", "lion", "sgd"]),
    "trainable_params": numbers, "seq_len": small_ints, "micro_batch": small_ints,
    "preset": presets, "layers": small_ints, "hidden": small_ints, "heads": small_ints,
}))
def test_memory_specs_fail_only_with_value_errors(fields: dict[str, Any]) -> None:
    _outcome(lambda: estimate_memory(MemorySpec.model_validate(fields)))


@settings(max_examples=200, deadline=None)
@given(fields=st.fixed_dictionaries({}, optional={
    "budget_flops": numbers, "budget_usd": numbers, "ratio": numbers, "gpu": names,
    "gpu_count": small_ints, "flops_per_sec": numbers, "mfu": numbers,
    "params": st.lists(numbers, max_size=3),
}))
def test_split_specs_fail_only_with_value_errors(fields: dict[str, Any]) -> None:
    _outcome(lambda: budget_split(SplitSpec.model_validate(fields)))
