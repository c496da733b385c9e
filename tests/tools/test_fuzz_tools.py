"""Random arguments to every tool: a result or a clear error, never the SDK's generic crash text."""

import random
from typing import Any

import pytest
from mcp import Client

from compute_budget.tools import TOOL_NAMES

pytestmark = pytest.mark.anyio

VALUES: list[Any] = [None, 0, -1, 1, 8, 2.5, 1e40, "7B", "1T", "h100", "a10g", "nope", "", True,
                     [1], {"a": 1}, "nan", "$2", 0.4, 2048, "full", "fp8", "moe", "llama-3-8b"]
FIELDS = ["params", "tokens", "gpu", "gpu_count", "mfu", "usd_per_gpu_hour", "active_params",
          "precision", "achieved_tflops", "seq_len", "recompute", "tp", "pp", "zero", "preset",
          "predicted_gain", "gain_uncertainty", "baseline_to_beat", "budget_usd", "budget_flops",
          "teacher_params", "optimizer", "query", "config", "colour"]


async def test_random_arguments_never_crash(server: Any, mode: str) -> None:
    rng = random.Random(20261130)
    async with Client(server, mode=mode) as client:
        for _ in range(60):
            tool = rng.choice(TOOL_NAMES)
            arguments = {f: rng.choice(VALUES) for f in rng.sample(FIELDS, rng.randint(0, 8))}
            result = await client.call_tool(tool, arguments)
            text = "\n".join(block.text for block in result.content)
            if result.is_error:
                assert text.strip() != f"Error executing tool {tool}", (tool, arguments)
                assert "Traceback" not in text
