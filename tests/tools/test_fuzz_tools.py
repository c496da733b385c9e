"""Random arguments to every tool: a result or a clear error, never the SDK's generic crash text,
and never an infinity, a NaN or a number turned into null (tiny, huge and boolean values)."""

import math
import random
import re
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from mcp import Client
from mcp.server import MCPServer

from compute_budget.tools import TOOL_NAMES
from compute_budget.tools.server import tool_specs
from tests.test_numbers import (
    INPUT_MODELS,
    INVALID_EVERYWHERE,
    NOT_FINITE_TEXT,
    non_finite,
    numeric_bounds,
)

pytestmark = pytest.mark.anyio

VALUES: list[Any] = [None, 0, -1, 1, 8, 2.5, 1e40, "7B", "1T", "h100", "a10g", "nope", "", True,
                     [1], {"a": 1}, "nan", "$2", 0.4, 2048, "full", "fp8", "moe", "llama-3-8b",
                     5e-324, 1e-308, 1e308, -1e308, False, "1e-308", "1e308"]
FIELDS = ["params", "tokens", "gpu", "gpu_count", "mfu", "usd_per_gpu_hour", "active_params",
          "precision", "achieved_tflops", "seq_len", "recompute", "tp", "pp", "zero", "preset",
          "predicted_gain", "gain_uncertainty", "baseline_to_beat", "budget_usd", "budget_flops",
          "teacher_params", "optimizer", "query", "config", "colour", "peak_tflops",
          "failure_budget", "ratio", "flops_per_sec", "usd_per_unit_gain", "metric_now",
          "shorter_run_fraction", "micro_batch", "lora_rank"]

RUN = {"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8}
BASE: dict[str, dict[str, Any]] = {
    "estimate_run_cost": RUN,
    "render_verdict": {**RUN, "predicted_gain": 1.0, "gain_uncertainty": 0.5},
    "suggest_alternatives": RUN,
    "estimate_memory": {"params": "7B", "gpu": "h100", "gpu_count": 8},
    "split_budget": {"budget_flops": 1e21, "gpu": "h100"},
    "compare_candidates": {"candidates": [
        {**RUN, "name": "a", "predicted_gain": 1.0, "gain_uncertainty": 0.5},
        {**RUN, "name": "b", "predicted_gain": 2.0, "gain_uncertainty": 0.5}],
        "pool_gpu_days": 100, "horizon_days": 30},
}
"""A valid call of each tool with numeric arguments, to vary one argument at a time."""
BOUNDS = {name: bounds for model in INPUT_MODELS for name, bounds in numeric_bounds(model).items()}
ARGUMENTS = {spec.name: set(spec.arguments.model_fields) for spec in tool_specs()}
NUMERIC = {tool: sorted(ARGUMENTS[tool] & set(BOUNDS)) for tool in BASE}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def _check(tool: str, arguments: dict[str, Any], result: Any) -> None:
    """A finite reply, or an error naming one of the tool's arguments; never the SDK's own."""
    text = _text(result)
    assert "Traceback" not in text
    if result.is_error:
        assert text.strip() != f"Error executing tool {tool}", (tool, arguments)
        named = set(re.findall(r"(?:^|: |\n)([a-z0-9_]+)[.:/[]", text))
        assert named & ARGUMENTS[tool], (text, arguments)
        return
    assert not NOT_FINITE_TEXT.search(text), (NOT_FINITE_TEXT.search(text), arguments)
    assert not non_finite(result.structured_content), arguments


async def test_random_arguments_never_crash(server: Any, mode: str) -> None:
    rng = random.Random(20261130)
    async with Client(server, mode=mode) as client:
        for _ in range(60):
            tool = rng.choice(TOOL_NAMES)
            arguments = {f: rng.choice(VALUES) for f in rng.sample(FIELDS, rng.randint(0, 8))}
            result = await client.call_tool(tool, arguments)
            text = _text(result)
            if result.is_error:
                assert text.strip() != f"Error executing tool {tool}", (tool, arguments)
                assert "Traceback" not in text


def test_every_tool_has_numeric_arguments_to_fuzz() -> None:
    assert all(NUMERIC.values())
    assert {"gpu_count", "mfu", "params", "tokens", "usd_per_gpu_hour"} <= set(
        NUMERIC["estimate_run_cost"])
    assert {"predicted_gain", "usd_per_unit_gain"} <= set(NUMERIC["render_verdict"])
    assert {"ratio", "flops_per_sec", "budget_usd"} <= set(NUMERIC["split_budget"])


def _as_given(tool: str, field: str, value: Any) -> Any:
    return [value] if tool == "split_budget" and field == "params" else value  # a list of sizes


async def test_tiny_huge_and_boolean_values_are_refused_by_name(server: MCPServer) -> None:
    async with Client(server) as client:
        for tool, fields in NUMERIC.items():
            for field in fields:
                for value in INVALID_EVERYWHERE:
                    arguments = {**BASE[tool], field: _as_given(tool, field, value)}
                    result = await client.call_tool(tool, arguments)
                    text = _text(result)
                    assert result.is_error, (tool, field, value)
                    assert re.search(rf"(^|: |\n){field}[.:[]", text), (tool, field, value, text)


@pytest.mark.slow
async def test_the_edges_of_the_bounds_give_finite_replies(server: MCPServer) -> None:
    async with Client(server) as client:
        for tool, fields in NUMERIC.items():
            for field in fields:
                for value in BOUNDS[field]:
                    arguments = {**BASE[tool], field: _as_given(tool, field, value)}
                    _check(tool, arguments, await client.call_tool(tool, arguments))


_EXTREMES = st.sampled_from([*INVALID_EVERYWHERE, 0, -1, "7B", "1e-12", 1e-12, 1e12, 1e17])


@st.composite
def _calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(NUMERIC)))
    arguments = dict(BASE[tool])
    for field in draw(st.lists(st.sampled_from(NUMERIC[tool]), min_size=1, max_size=3,
                               unique=True)):
        low, high = BOUNDS[field]
        inside = st.floats(math.log10(max(low, 1e-12)), math.log10(high)).map(lambda e: 10**e)
        value = draw(st.one_of(_EXTREMES, st.sampled_from([low, high]), inside))
        arguments[field] = _as_given(tool, field, value)
    return tool, arguments


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@pytest.mark.slow
@given(call=_calls())
def test_numbers_over_mcp_never_crash_nor_turn_infinite(
    server: MCPServer, call: tuple[str, dict[str, Any]]
) -> None:
    tool, arguments = call

    async def go() -> Any:
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)

    _check(tool, arguments, anyio.run(go))
