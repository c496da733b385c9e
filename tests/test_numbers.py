"""Numbers that cannot crash or corrupt (issue 9, item 5).

Every numeric argument has bounds that keep every derived number finite; ``true`` is not a
number; an error names the argument (the flag on the command line); the number filters never
overflow; a reply never carries ``inf`` or ``nan``; a flag given twice is an error. The helpers
here are shared with the fuzz tests (tests/skill/test_fuzz.py, tests/tools/test_fuzz_tools.py).
"""

import json
import math
import re
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from pydantic import BaseModel, ValidationError

from compute_budget.cli import build_parser
from compute_budget.cli.parser import flag_names
from compute_budget.prompts.render import (
    fmt_bytes,
    fmt_count,
    fmt_flops,
    fmt_num,
    fmt_pct,
    fmt_plain,
    fmt_prob,
    fmt_usd,
)
from compute_budget.skill import (
    AlternativesOptions,
    BudgetTableSpec,
    CompareSpec,
    DecisionInputs,
    MemorySpec,
    RunSpec,
    describe_error,
)
from tests.conftest import run_cli

# --- shared helpers ---------------------------------------------------------------------------

NOT_FINITE_TEXT = re.compile(r"(?<![\w.])[−-]?(inf|infinity|nan)(?!\w)", re.IGNORECASE)
"""``inf``, ``-Infinity``, ``NaN`` … as a word: what must never appear in a reply."""
INVALID_EVERYWHERE: tuple[Any, ...] = (5e-324, 1e-308, 1e308, -1e308, True, False)
"""Tiny, huge and boolean values: out of bounds for every numeric argument."""
INPUT_MODELS: tuple[type[BaseModel], ...] = (
    RunSpec, MemorySpec, DecisionInputs, AlternativesOptions, BudgetTableSpec, CompareSpec)


def numeric_bounds(model: type[BaseModel]) -> dict[str, tuple[float, float]]:
    """Each numeric argument of ``model`` with its [minimum, maximum] from the JSON schema."""
    schema = model.model_json_schema()
    out: dict[str, tuple[float, float]] = {}
    for name, prop in schema["properties"].items():
        branches = prop.get("anyOf", [prop])
        if prop.get("type") == "array":
            branches = prop["items"].get("anyOf", [prop["items"]])
        elif any(b.get("type") == "array" for b in branches):
            items = next(b["items"] for b in branches if b.get("type") == "array")
            branches = items.get("anyOf", [items])
        numbers = [b for b in branches if b.get("type") in ("number", "integer")]
        if numbers:
            low = min(min(b["enum"]) if "enum" in b else
                      b.get("minimum", b.get("exclusiveMinimum", -math.inf)) for b in numbers)
            high = max(max(b["enum"]) if "enum" in b else
                       b.get("maximum", b.get("exclusiveMaximum", math.inf)) for b in numbers)
            out[name] = (low, high)
    return out


def non_finite(value: Any, path: str = "") -> list[str]:
    """Paths to every infinity or NaN inside a result (a model, or its JSON dump)."""
    if isinstance(value, BaseModel):
        return [p for name in type(value).model_fields
                for p in non_finite(getattr(value, name), f"{path}.{name}")]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in non_finite(item, f"{path}.{key}")]
    if isinstance(value, list | tuple):
        return [p for i, item in enumerate(value) for p in non_finite(item, f"{path}[{i}]")]
    if isinstance(value, float) and not math.isfinite(value):
        return [path]
    return []


def assert_clean_reply(code: int, out: str, err: str, flags: set[str]) -> None:
    """0 with a reply free of inf/nan, or 2 with one error naming a flag; never a traceback."""
    assert "Traceback" not in out + err
    if code == 0:
        assert not NOT_FINITE_TEXT.search(out), out
        if out.lstrip().startswith(("{", "[")):
            json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    else:
        assert code == 2 and out == "", (code, out)
        assert err.startswith("error: "), err
        named = set(re.findall(r"--[a-z][a-z0-9-]*", err))
        assert named & flags, err


# --- bounds, declared once, on every numeric argument ----------------------------------------

@pytest.mark.parametrize("model", INPUT_MODELS, ids=lambda m: m.__name__)
def test_every_numeric_argument_has_finite_bounds(model: type[BaseModel]) -> None:
    bounds = numeric_bounds(model)
    assert bounds
    for name, (low, high) in bounds.items():
        assert math.isfinite(low) and math.isfinite(high), (name, low, high)
        assert low < high


def _valid(model: type[BaseModel]) -> dict[str, Any]:
    run = {"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8}
    return {RunSpec: run, MemorySpec: {"params": "7B", "gpu_count": 8},
            DecisionInputs: {}, AlternativesOptions: {},
            BudgetTableSpec: {"budget_flops": 1e21},
            CompareSpec: {"candidates": [
                {**run, "name": n, "predicted_gain": 1, "gain_uncertainty": 0.5}
                for n in ("a", "b")]}}[model]


@pytest.mark.parametrize(("model", "field"), [
    (model, field) for model in INPUT_MODELS for field in numeric_bounds(model)],
    ids=lambda x: x if isinstance(x, str) else x.__name__)
@pytest.mark.parametrize("value", INVALID_EVERYWHERE)
def test_tiny_huge_and_boolean_values_are_refused_naming_the_field(
    model: type[BaseModel], field: str, value: Any
) -> None:
    given = [value] if model is BudgetTableSpec and field == "params" else value  # a list of sizes
    with pytest.raises(ValidationError) as info:
        model.model_validate({**_valid(model), field: given})
    message = describe_error(info.value)
    assert message.startswith(f"{field}"), message
    if isinstance(value, bool):
        assert "not true or false" in message or "must be 4, 8 or 16" in message, message


def test_numbers_as_text_are_still_accepted() -> None:
    spec = RunSpec(params="7B", tokens="1.5T", gpu="h100", gpu_count="8",  # type: ignore[arg-type]
                   usd_per_gpu_hour="$2.10", mfu="0.4")  # type: ignore[arg-type]
    assert (spec.params, spec.tokens, spec.gpu_count, spec.usd_per_gpu_hour, spec.mfu) == (
        7e9, 1.5e12, 8, 2.1, 0.4)
    assert DecisionInputs(budget_usd="$400k", predicted_gain="1.5").budget_usd == 4e5  # type: ignore[arg-type]
    assert BudgetTableSpec(budget_usd="$50,000", gpu="h100", ratio="20").budget_usd == 5e4  # type: ignore[arg-type]


# --- the findings of the issue, one regression each ---------------------------------------------

RUN = ["--params", "7B", "--tokens", "100B", "--gpu", "h100", "--gpus", "8"]


@pytest.mark.parametrize(("argv", "flag"), [
    (["estimate", "--params", "1e-308", "--tokens", "1e9", "--gpu", "h100", "--gpus", "8"],
     "--params"),
    (["estimate", *RUN, "--mfu", "1e-308"], "--mfu"),
    (["estimate", *RUN, "--peak-tflops", "1e-308"], "--peak-tflops"),
    (["split", "--budget", "1e20", "--flops-per-sec", "1e-308"], "--flops-per-sec"),
    (["decide", *RUN, "--gain", "1e308", "--uncertainty", "1"], "--gain"),
    (["decide", *RUN, "--gain", "1", "--uncertainty", "1", "--value-per-unit", "1e308"],
     "--value-per-unit"),
    (["decide", *RUN, "--gain", "1e-300", "--uncertainty", "1"], "--gain"),
    (["split", "--ratio", "1e308", "--budget", "1e20"], "--ratio"),
    (["split", "--budget-usd", "1000", "--gpu", "h100", "--price", "1e-308"], "--price"),
    (["estimate", *RUN, "--price", "1e-308"], "--price"),
    (["estimate", "--params", "7B", "--tokens", "1e9", "--gpu", "h100", "--gpus", "true"],
     "--gpus"),
])
def test_out_of_range_numbers_exit_2_naming_their_flag(argv: list[str], flag: str) -> None:
    code, out, err = run_cli(*argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {flag}: "), err
    assert not NOT_FINITE_TEXT.search(err.split(";", 1)[1]), err


@pytest.mark.parametrize("argv", [
    ["split", "--budget", "1e35", "--gpu", "h100"],  # sizes to 10¹⁸ were blamed on --sizes
    ["split", "--budget-usd", "1e12", "--gpu", "b200", "--price", "0.0001"],
    ["split", "--budget", "1e7", "--gpu", "l4", "--ratio", "1e6"],
    ["decide", *RUN, "--gain", "1e12", "--uncertainty", "1e-12", "--value-per-unit", "1e12",
     "--budget-usd", "0.01"],
    ["decide", *RUN, "--gain", "1e-12", "--uncertainty", "1e12", "--baseline", "-1e12"],
    ["estimate", "--params", "1000", "--tokens", "1", "--gpu", "h100", "--gpus", "10000000",
     "--peak-tflops", "1e6", "--mfu", "1", "--price", "0.0001"],
    ["estimate", "--params", "1e18", "--tokens", "1e17", "--gpu", "h100", "--gpus", "1",
     "--peak-tflops", "0.001", "--mfu", "0.0001", "--price", "1000", "--failure-budget", "10"],
])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_the_extremes_of_the_bounds_give_finite_replies(
    argv: list[str], json_flag: list[str]
) -> None:
    code, out, err = run_cli(*argv, *json_flag)
    assert (code, err) == (0, "")
    assert not NOT_FINITE_TEXT.search(out)
    if json_flag:
        data = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
        assert not non_finite(data)


def test_a_huge_gain_stays_a_number_in_the_json() -> None:
    code, out, _ = run_cli("decide", *RUN, "--gain", "1e12", "--uncertainty", "1",
                           "--value-per-unit", "1e12", "--json")
    data = json.loads(out)
    assert code == 0
    for key in ("net_gain", "value_usd", "gain_per_dollar", "signal_to_noise",
                "expected_net_value_usd"):
        assert isinstance(data[key], float) and math.isfinite(data[key]), key


# --- a flag given twice --------------------------------------------------------------------------

def test_an_abbreviation_is_no_flag() -> None:
    # issue 18: --param is not taken for --params (a later flag could change its meaning)
    code, _, err = run_cli("estimate", *RUN, "--param", "8B")
    assert code == 2 and "unrecognized arguments: --param 8B" in err


@pytest.mark.parametrize(("argv", "flag"), [
    (["estimate", *RUN, "--params", "8B"], "--params"),
    (["estimate", *RUN, "--sp", "--sp"], "--sp"),
    (["decide", *RUN, "--gain", "1", "--gain", "2", "--uncertainty", "1"], "--gain"),
    (["split", "--budget", "1e20", "--budget=1e21"], "--budget"),
    (["memory", "--params", "7B", "--gpus", "8", "--json", "--json"], "--json"),
])
def test_a_flag_given_twice_exits_2_naming_it(argv: list[str], flag: str) -> None:
    code, out, err = run_cli(*argv)
    assert (code, out) == (2, "")
    assert f"argument {flag}: given more than once" in err, err


def test_each_flag_once_still_works() -> None:
    assert run_cli("estimate", *RUN, "--sp", "--tp", "2")[0] == 0
    assert run_cli("estimate", *RUN)[0] == 0  # the per-parse record starts empty again


# --- the number filters never overflow -------------------------------------------------------

FILTERS = (fmt_flops, fmt_count, fmt_num, fmt_usd, fmt_bytes, fmt_pct, fmt_prob, fmt_plain)
EDGES = (0.0, -0.0, 5e-324, 1e-308, -1e-308, 1e-5, 0.004, 1.0, -2.5, 999.99, 7e9, 1e15, 1e18,
         1e300, 1e308, -1e308, sys.float_info.max, -sys.float_info.max)


@pytest.mark.parametrize("fmt", FILTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", EDGES)
def test_filters_never_overflow_nor_write_long_numbers(fmt: Any, value: float) -> None:
    text = fmt(value)
    assert len(text) <= 32, text
    assert not NOT_FINITE_TEXT.search(text), text
    assert not text.startswith("-") and "−0 " not in text and text != "−0"


@pytest.mark.parametrize("fmt", FILTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_filters_write_non_finite_numbers_plainly(fmt: Any, value: float) -> None:
    assert NOT_FINITE_TEXT.fullmatch(fmt(value))  # for the reply checks to find, never a crash


@pytest.mark.parametrize(("fmt", "value", "text"), [
    (fmt_flops, 1e-308, "1.00 × 10⁻³⁰⁸"),
    (fmt_flops, 9.999e20, "1.00 × 10²¹"),
    (fmt_flops, 4.2e21, "4.20 × 10²¹"),
    (fmt_count, 999.99, "1K"),
    (fmt_count, 1.5e15, "1,500T"),
    (fmt_count, 1e18, "1.00e18"),
    (fmt_count, 1e-4, "1.00e-04"),
    (fmt_num, 1e308, "1.00e308"),
    (fmt_num, -1e308, "−1.00e308"),
    (fmt_num, -2.5, "−2.50"),
    (fmt_usd, 1e308, "$1.00e308"),
    (fmt_usd, -1e308, "−$1.00e308"),
    (fmt_usd, 14022.4, "$14,022"),
    (fmt_usd, -0.0, "$0.00"),
    (fmt_bytes, 1e308, "9.31e298 GiB"),
    (fmt_bytes, -1.0, "0.00 GiB"),
    (fmt_pct, 1e308, "1.00e310%"),
    (fmt_pct, 1e-9, "< 0.01%"),
    (fmt_pct, -1e-9, "> −0.01%"),
    (fmt_pct, 0.25, "25%"),
])
def test_filters_at_the_edges(fmt: Any, value: float, text: str) -> None:
    assert fmt(value) == text


# --- the last guard: a reply with an infinity is an error, never printed ------------------------

def test_a_non_finite_result_is_an_error_naming_the_numbers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The one guard is in the result models (issue 15): a result with an infinity or a NaN
    cannot be built, and the CLI reports it as bad input naming the numbers given."""
    from compute_budget import skill

    real = skill.estimate_run

    def broken(spec: Any) -> Any:
        est = real(spec)
        return type(est).model_validate({**est.model_dump(), "flops": math.nan})

    monkeypatch.setattr(skill, "estimate_run", broken)
    for json_flag in ([], ["--json"]):
        code, out, err = run_cli("estimate", *RUN, *json_flag)
        assert (code, out) == (2, "")
        assert err.startswith("error: estimate: the result is not a finite number")
        assert "--params 7B" in err and "--tokens 100B" in err


def test_words_the_user_typed_are_not_taken_for_nan() -> None:
    code, out, _ = run_cli("decide", *RUN, "--gain", "1", "--uncertainty", "0.1",
                           "--benefit", "nan bread for inf users")
    assert code == 0 and "nan bread" in out


# --- the command line, fuzzed -------------------------------------------------------------------

COMMANDS: dict[str, tuple[list[str], tuple[type[BaseModel], ...]]] = {
    "estimate": (RUN, (RunSpec,)),
    "decide": ([*RUN, "--gain", "1", "--uncertainty", "0.5"], (RunSpec, DecisionInputs)),
    "alternatives": (RUN, (RunSpec, AlternativesOptions)),
    "memory": (["--params", "7B", "--gpus", "8", "--gpu", "h100"], (MemorySpec,)),
    "split": (["--budget", "1e21", "--gpu", "h100"], (BudgetTableSpec,)),
}


def _numeric_flags(command: str) -> dict[str, tuple[float, float]]:
    """The command's flags for numeric fields, with the field's bounds."""
    bounds = {f: b for model in COMMANDS[command][1] for f, b in numeric_bounds(model).items()}
    return {flag: bounds[field] for field, flag in flag_names(build_parser(), command).items()
            if field in bounds}


NUMERIC_FLAGS = {command: _numeric_flags(command) for command in COMMANDS}
ALL_FLAGS = {command: set(flag_names(build_parser(), command).values()) | {"--json"}
             for command in COMMANDS}
WORDS = st.sampled_from(["1e-308", "5e-324", "1e308", "-1e308", "true", "false", "nan", "inf",
                         "-inf", "0", "-0", "1e-12", "1e12"])


@st.composite
def _command_lines(draw: st.DrawFn, command: str) -> list[str]:
    base, _ = COMMANDS[command]
    flags = NUMERIC_FLAGS[command]
    chosen = draw(st.lists(st.sampled_from(sorted(flags)), min_size=1, max_size=3, unique=True))
    argv = [command, *base]
    for flag in chosen:
        low, high = flags[flag]
        inside = st.floats(math.log10(max(low, 1e-300)), math.log10(high)).map(
            lambda e: f"{10 ** e:.6g}")
        value = draw(st.one_of(WORDS, st.sampled_from([f"{low:g}", f"{high:g}"]), inside))
        if flag in argv:  # replace the base value, never give a flag twice
            argv[argv.index(flag) + 1] = value
        else:
            argv += [f"{flag}={value}"]
    return argv + draw(st.sampled_from([[], ["--json"]]))


@pytest.mark.slow  # 3.6 s of the quick set's minute; the slow set runs it
@pytest.mark.parametrize("command", sorted(COMMANDS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_cli_numbers_never_crash_nor_print_inf(command: str, data: st.DataObject) -> None:
    argv = data.draw(_command_lines(command))
    assert_clean_reply(*run_cli(*argv), ALL_FLAGS[command])
