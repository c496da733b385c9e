"""A mixture of experts given by its parameter counts over MCP (issue 16, item 3): expert
parallelism, named errors and compute_optimal by the active parameters."""

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

BIG: dict[str, Any] = {"params": "400B", "active_params": "40B", "gpu": "h100", "gpu_count": 64}
"""The issue's model: 400B total, 40B active, on 64 × H100."""


async def test_the_mcp_tools(client: Client) -> None:
    result = await client.call_tool("estimate_memory", {**BIG, "ep": 8})
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["ep"] == 8
    assert result.structured_content["fits"] is True
    for bad, name in (({"ep": 0}, "ep"), ({"experts": 8, "experts_per_token": 16},
                                         "experts_per_token")):
        result = await client.call_tool("estimate_memory", {**BIG, **bad})
        assert result.is_error and name + ":" in result.content[0].text  # type: ignore[union-attr]
    result = await client.call_tool("compute_optimal", {"params": "30B", "active_params": "3B",
                                                        "tokens": "2T"})
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["flops"] == pytest.approx(3.6e22)
    assert result.structured_content["notes"] == ["moe_dense_law_on_active_params"]
    result = await client.call_tool("compute_optimal", {"preset": "mixtral-8x7b",
                                                        "tokens": "1T"})
    assert not result.is_error
