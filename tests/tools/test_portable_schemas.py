"""Issue 19: one portable schema dialect for every tool's input and output, the calls a strict
client makes (every argument present, null for the ones it does not mean), and the new forms of
the arguments accepted beside the old ones."""

import json
from typing import Any

import pytest
from mcp import Client

from compute_budget.tools.schemas import portability_problems
from compute_budget.tools.server import tool_specs

from .test_server import RUN, VALID_CALLS

pytestmark = pytest.mark.anyio
GPT2 = {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257,
        "n_positions": 1024}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_every_schema_is_in_the_portable_dialect(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert len(tools) == 10
    for tool in tools:
        assert portability_problems(tool.input_schema) == [], tool.name
        assert tool.output_schema is not None
        assert portability_problems(tool.output_schema, output=True) == [], tool.name


@pytest.mark.parametrize(("schema", "problem"), [
    ({"type": "object", "properties": {"a": {"type": ["number", "string"],
                                             "description": "x"}}, "required": ["a"]},
     "$.a: type is an array"),
    ({"type": "object", "properties": {}, "additionalProperties": False},
     "$: has additionalProperties"),
    ({"type": "object", "properties": {"a": {"type": "object", "description": "x"}},
      "required": ["a"]}, "$.a: object without declared properties"),
    ({"type": "object", "properties": {"a": {"type": "integer", "enum": [4, 8],
                                             "description": "x"}}, "required": ["a"]},
     "$.a: enum of non-strings"),
    ({"type": "object", "properties": {"a": {"type": "number", "default": 1,
                                             "description": "x"}}, "required": ["a"]},
     "$.a: has default"),
    ({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]},
     "$.a: no description"),
    ({"type": "object", "properties": {"a": {"type": "number", "description": "x"}}},
     "$.a: optional but not nullable"),
    ({"type": "object", "properties": {"a": {"anyOf": [
        {"type": "number", "description": "x"}, {"type": "string"}]}}},
     "$.a: anyOf is not one type or null"),
    ({"type": "object", "properties": {"a": {"type": "array", "description": "x"}},
      "required": ["a"]}, "$.a: array without items"),
])
def test_the_validator_names_each_departure(schema: dict[str, Any], problem: str) -> None:
    assert problem in portability_problems(schema)


def _nulls(properties: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """What a strict client sends: every listed argument, null for those it does not mean."""
    return {name: given.get(name) for name in properties} | given


@pytest.mark.parametrize("tool", sorted(VALID_CALLS))
async def test_a_strict_client_passing_null_for_every_other_argument(client: Client,
                                                                     tool: str) -> None:
    schema = next(t for t in (await client.list_tools()).tools if t.name == tool).input_schema
    given = dict(VALID_CALLS[tool][0])
    if "candidates" in given:  # the candidates' objects are filled in too
        keys = schema["properties"]["candidates"]["items"]["properties"]
        given["candidates"] = [_nulls(keys, c) for c in given["candidates"]]
    result = await client.call_tool(tool, _nulls(schema["properties"], given))
    assert not result.is_error, _text(result)
    assert result.structured_content == (await client.call_tool(
        tool, VALID_CALLS[tool][0])).structured_content


@pytest.mark.parametrize(("tool", "given"), [
    ("compute_optimal", {"flops": "1e23"}),
    ("compute_optimal", {"params": "7B", "tokens": "140B"}),
    ("split_budget", {"budget_usd": "$400k", "gpu": "h100"}),
    ("split_budget", {"budget_flops": "1e23"}),
])
async def test_mutually_exclusive_inputs_are_resolved_by_null(client: Client, tool: str,
                                                              given: dict[str, Any]) -> None:
    schema = next(t for t in (await client.list_tools()).tools if t.name == tool).input_schema
    result = await client.call_tool(tool, _nulls(schema["properties"], given))
    assert not result.is_error, _text(result)


async def test_the_new_forms_and_the_old_ones_give_the_same_answers(client: Client) -> None:
    plan = {"params": "7B", "tokens": "100B", "deadline_days": 30, "gpus": ["h100", "a100"]}
    pairs: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("plan_run", {**plan, "available": [{"gpu": "h100", "count": 64}]},
         {**plan, "available": {"h100": 64}}),
        ("estimate_memory", {"params": "7B", "gpu": "h100", "gpu_count": 1, "lora_rank": 16,
                             "weights_bits": "4"},
         {"params": "7B", "gpu": "h100", "gpu_count": 1, "lora_rank": 16, "weights_bits": 4}),
        ("estimate_run_cost", {**RUN, "config": json.dumps(GPT2), "params": None},
         {**RUN, "config": GPT2, "params": None}),
        ("estimate_run_cost", {**RUN, "params": "7000000000", "tokens": "1e11"},
         {**RUN, "params": 7e9, "tokens": 1e11}),
        ("fit_scaling_law", {"points": [{"compute": c, "params": None, "tokens": None,
                                         "loss": 1.8 + 40 * c ** -0.12}
                                        for c in (1e17, 1e18, 1e19, 1e20, 1e21)],
                             "target_compute": "1e23"},
         {"points": [{"compute": c, "loss": 1.8 + 40 * c ** -0.12}
                     for c in (1e17, 1e18, 1e19, 1e20, 1e21)], "target_compute": 1e23}),
    ]
    for tool, new, old in pairs:
        first, second = await client.call_tool(tool, new), await client.call_tool(tool, old)
        assert not first.is_error and not second.is_error, (tool, _text(first), _text(second))
        assert first.structured_content == second.structured_content, tool


async def test_unknown_arguments_are_still_refused_by_name(client: Client) -> None:
    """No additionalProperties in the schemas: the server refuses an unknown name itself."""
    for spec in tool_specs():
        given = {**VALID_CALLS[spec.name][0], "gpu_cont": 8}
        result = await client.call_tool(spec.name, given)
        assert result.is_error and "gpu_cont" in _text(result), spec.name
    listed = await client.call_tool("plan_run", {**VALID_CALLS["plan_run"][0],
                                                 "available": [{"gpu": "h100", "cuont": 8}]})
    assert listed.is_error and "available" in _text(listed)


async def test_a_strict_client_can_send_the_users_price_to_every_tool_that_prices_a_run(
        client: Client) -> None:
    # a strict client sends only the keys a schema lists: render_verdict listed six run
    # arguments, not the price, so the verdict weighed the catalog's $/h, not the user's $2.20
    # (a reviewer's 3B x 600B on 64 H100: $56,847 with the failure budget became $103,100, and a
    # GO under a $60k budget a NO-GO)
    tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    for tool in ("estimate_run_cost", "render_verdict", "suggest_alternatives", "split_budget"):
        assert "usd_per_gpu_hour" in tools[tool]["properties"], tool
    items = tools["compare_candidates"]["properties"]["candidates"]["items"]
    assert {"usd_per_gpu_hour", "preset"} <= set(items["properties"])
    run = {"params": "3B", "tokens": "600B", "gpu": "h100", "gpu_count": 64,
           "predicted_gain": 4, "gain_uncertainty": 2, "budget_usd": "$60k"}
    given = await client.call_tool("render_verdict", {**run, "usd_per_gpu_hour": 2.2})
    catalog = await client.call_tool("render_verdict", run)
    assert given.structured_content is not None and catalog.structured_content is not None
    # 6·3e9·6e11 = 1.08e22 FLOPs; the user's rate, not the catalog's, prices it
    hours = given.structured_content["gpu_hours"]
    assert given.structured_content["dollar_cost"] == pytest.approx(hours * 2.2, rel=1e-5)
    assert given.structured_content["verdict"] == "go"
    assert catalog.structured_content["dollar_cost"] != pytest.approx(hours * 2.2, rel=1e-3)
