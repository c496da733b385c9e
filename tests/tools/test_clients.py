"""Issue 19 item 4: the tool schemas through the client libraries that assistants and agent
frameworks are built on, with no model provider reached. Each converts all ten tools without an
error and without dropping an argument, a description or a choice; estimate_run_cost and
render_verdict are called through google-genai's MCP adapter (in memory) and through
openai-agents' strict MCP function tools (the server as a stdio subprocess).

The libraries are the ``clients`` dependency group (pinned in pyproject.toml); ``.ci/run``
installs it and sets COMPUTE_BUDGET_REQUIRE_CLIENTS, so a missing one fails there instead of
skipping."""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

pytestmark = [pytest.mark.anyio, pytest.mark.external]

REQUIRED = os.environ.get("COMPUTE_BUDGET_REQUIRE_CLIENTS") == "1"
RUN = {"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8}
VERDICT = {**RUN, "predicted_gain": 2, "gain_uncertainty": 0.5}


def _library(name: str) -> Any:
    if REQUIRED:
        return __import__(name, fromlist=["_"])
    return pytest.importorskip(name)


def _enums(node: Any, name: str | None = None) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(property, choices) of every enum under a property, at any depth and in any branch."""
    if isinstance(node, list):
        for item in node:
            yield from _enums(item, name)
    elif isinstance(node, dict):
        if node.get("enum") and name is not None:
            yield name, tuple(str(v) for v in node["enum"] if v is not None)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    yield from _enums(sub, prop)
            elif key != "enum":
                yield from _enums(value, name)


def _described(node: Any) -> set[str]:
    """The top-level arguments that carry a description, in any branch."""
    return {p for p, sub in node.get("properties", {}).items()
            if '"description"' in json.dumps(sub)}


async def _tools(client: Client) -> list[Any]:
    tools = (await client.list_tools()).tools
    assert len(tools) == 10
    return tools


def _keeps_everything(tool: Any, converted: dict[str, Any]) -> None:
    """The converted schema lists every argument, every choice, and every description."""
    schema = tool.input_schema
    assert set(converted.get("properties", {})) == set(schema["properties"]), tool.name
    assert set(_enums(converted)) == set(_enums(schema)), tool.name
    assert _described(converted) == set(schema["properties"]), tool.name


async def test_google_genai_converts_every_tool(client: Client) -> None:
    _library("google.genai")
    from google.genai import _mcp_utils

    tools = await _tools(client)
    for tool, converted in zip(tools, _mcp_utils.mcp_to_gemini_tools(tools), strict=True):
        declaration = converted.function_declarations[0]  # type: ignore[index]
        assert declaration.name == tool.name and declaration.parameters is not None
        _keeps_everything(tool, declaration.parameters.model_dump(exclude_none=True))
        optional = set(tool.input_schema["properties"]) - set(
            tool.input_schema.get("required", []))
        properties = declaration.parameters.properties or {}
        for name in optional:  # "value or null" reaches Gemini as nullable
            assert properties[name].nullable, (tool.name, name)


async def test_google_genai_calls_through_its_mcp_adapter(client: Client) -> None:
    _library("google.genai")
    from google.genai._adapters import McpToGenAiToolAdapter
    from google.genai.types import FunctionCall

    listed: Any = await client.list_tools()
    adapter = McpToGenAiToolAdapter(client, listed)
    assert len(adapter.tools) == 10
    estimate = await adapter.call_tool(FunctionCall(name="estimate_run_cost", args=RUN))
    verdict = await adapter.call_tool(FunctionCall(name="render_verdict", args={
        **VERDICT, "predicted_gain": 2.0, "gain_uncertainty": 0.5, "detail": None}))
    assert not estimate.is_error and not verdict.is_error
    estimated: Any = estimate.structured_content
    decided: Any = verdict.structured_content
    assert estimated["relay"]["fits"] is True
    assert decided["relay"]["headline"].startswith("GO: ")


TRANSFORMERS = [("pydantic_ai.profiles.openai", "OpenAIJsonSchemaTransformer", True),
                ("pydantic_ai.profiles.google", "GoogleJsonSchemaTransformer", False),
                ("pydantic_ai.providers.anthropic", "AnthropicJsonSchemaTransformer", True)]


@pytest.mark.parametrize(("module", "name", "strict"), TRANSFORMERS)
async def test_pydantic_ai_transforms_every_tool(client: Client, module: str, name: str,
                                                 strict: bool) -> None:
    transformer = getattr(_library(module), name)
    for tool in await _tools(client):
        walker = transformer(copy.deepcopy(tool.input_schema), strict=strict or None)
        converted = walker.walk()
        assert walker.is_strict_compatible, (name, tool.name)
        _keeps_everything(tool, converted)


async def test_openai_agents_makes_every_tool_strict(client: Client) -> None:
    _library("agents")
    from agents.strict_schema import ensure_strict_json_schema

    for tool in await _tools(client):
        converted = ensure_strict_json_schema(copy.deepcopy(tool.input_schema))
        assert converted["required"] == list(converted["properties"]), tool.name
        _keeps_everything(tool, converted)


def _strict_call(schema: dict[str, Any], given: dict[str, Any]) -> str:
    """The arguments a strict model sends: every one, null for those it does not mean."""
    return json.dumps({name: None for name in schema["properties"]} | given)


async def test_openai_agents_strict_function_tools_call_the_server() -> None:
    _library("agents")
    from agents.mcp import MCPServerStdio, MCPUtil
    from agents.tool_context import ToolContext

    command: Any = {"command": sys.executable, "args": ["-m", "compute_budget.tools"],
               "env": dict(os.environ)}
    async with MCPServerStdio(params=command, client_session_timeout_seconds=60) as server:
        listed = await server.list_tools()
        tools = {t.name: MCPUtil.to_function_tool(t, server, convert_schemas_to_strict=True)
                 for t in listed}
        assert len(tools) == 10 and all(t.strict_json_schema for t in tools.values())
        calls: list[tuple[str, dict[str, Any], str]] = [
            ("estimate_run_cost", RUN, "### Run estimate"),
            ("render_verdict", VERDICT, "### Verdict: **GO**"),
            ("compute_optimal", {"flops": "1e23"}, "### Compute-optimal split"),
            ("split_budget", {"budget_usd": "$400k", "gpu": "h100"}, "###")]
        for name, given, expected in calls:
            tool = tools[name]
            arguments = _strict_call(tool.params_json_schema, given)
            context = ToolContext(context=None, tool_name=name, tool_call_id=f"call-{name}",
                                  tool_arguments=arguments)
            output = await tool.on_invoke_tool(context, arguments)
            # a tool error comes back as the SDK's error string, a result as a text item
            assert isinstance(output, dict) and output["type"] == "text", (name, output)
            assert output["text"].startswith(expected), (name, output["text"][:200])
