"""Over MCP, the inputs a CLI review found silently accepted are isError results that name the
argument, its value and what is allowed, as the specs refuse them
(tests/skill/test_refused_inputs.py; the rest are rows of test_bad_inputs.py's table)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

CANDIDATE = {"params": "1B", "tokens": "20B", "gpu": "h100", "gpu_count": 8,
             "predicted_gain": 1.0, "gain_uncertainty": 0.1}


async def _refusal(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    return text.removeprefix(f"Error executing tool {tool}: ")


async def test_an_empty_size_is_named_by_its_place(client: Client) -> None:
    text = await _refusal(client, "split_budget",
                          {"budget_flops": 1e24, "params": ["1B", "", "7B"]})
    assert text.startswith("params[1]: '' is not allowed; a positive number"), text


async def test_a_horizon_without_a_pool(client: Client) -> None:
    rows = [CANDIDATE | {"name": "a"}, CANDIDATE | {"name": "b"}]
    text = await _refusal(client, "compare_candidates", {"candidates": rows, "horizon_days": 15})
    assert text.startswith("horizon_days: 15.0 is not allowed; only together with "
                           "pool_gpu_days"), text


async def test_params_beside_a_preset_name_both(client: Client) -> None:
    text = await _refusal(client, "estimate_run_cost", {
        "params": "70B", "preset": "llama-3-8b", "tokens": "1T", "gpu": "a100", "gpu_count": 8})
    assert text.startswith("params: 70B is not allowed; within 25% of 8.03B, what the model "
                           "given as preset 'llama-3-8b' counts"), text


@pytest.mark.parametrize("level", [0.5, 0.99])
async def test_the_levels_bounds_are_taken(client: Client, level: float) -> None:
    result = await client.call_tool("fit_scaling_law", {
        "target_params": "7B", "target_tokens": "1T", "level": level})
    assert not result.is_error


RUN = {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 8}
_POINT = "is not allowed; use a point for decimals:"


@pytest.mark.parametrize(("tool", "arguments", "expected"), [
    # the review's cases: read as $210/GPU-h, 15T tokens, 75B params and $2,005
    ("estimate_run_cost", RUN | {"usd_per_gpu_hour": "2,10"},
     f"usd_per_gpu_hour: '2,10' {_POINT} 2.10"),
    ("estimate_run_cost", RUN | {"tokens": "1,5T"}, f"tokens: '1,5T' {_POINT} 1.5T"),
    ("estimate_run_cost", RUN | {"params": "7,5B"}, f"params: '7,5B' {_POINT} 7.5B"),
    ("render_verdict", RUN | {"predicted_gain": 1, "gain_uncertainty": 0.1,
                              "budget_usd": "200,5"}, f"budget_usd: '200,5' {_POINT} 200.5"),
])
async def test_a_decimal_comma_is_refused(client: Client, tool: str, arguments: dict[str, Any],
                                          expected: str) -> None:
    text = await _refusal(client, tool, arguments)
    assert text.startswith(expected), text

