"""The MCP server through the SDK's in-memory Client, in both connection modes."""

from typing import Any

import pytest
from mcp import Client
from mcp.server import MCPServer
from mcp_types import PromptReference, ResourceTemplateReference

from compute_budget import (
    AlternativesReport,
    BudgetTable,
    Catalog,
    Comparison,
    Decision,
    MemoryEstimate,
    OptimalSplit,
    PlanReport,
    RunEstimate,
    ScalingFit,
)
from compute_budget.tools import TOOL_NAMES

from .conftest import Answers

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["auto", "legacy"])
def client_mode(request: pytest.FixtureRequest) -> str:
    """The protocol's own checks run in both connection modes in the quick set."""
    return str(request.param)

RUN = {"params": "7B", "tokens": "100B", "gpu": "a100", "gpu_count": 8}

VALID_CALLS: dict[str, tuple[dict[str, Any], type]] = {
    "estimate_run_cost": ({**RUN, "mfu": 0.4, "usd_per_gpu_hour": "$1.50"}, RunEstimate),
    "render_verdict": ({**RUN, "predicted_gain": 2.0, "gain_uncertainty": 0.5,
                        "baseline_to_beat": 1.0}, Decision),
    "suggest_alternatives": ({**RUN, "teacher_params": "70B"}, AlternativesReport),
    "estimate_memory": ({"params": "7B", "gpu_count": 8, "gpu": "h100", "zero": 3},
                        MemoryEstimate),
    "split_budget": ({"budget_flops": "6e14"}, BudgetTable),
    "list_accelerators": ({"query": "h100"}, Catalog),
    "compare_candidates": ({"candidates": [
        {**RUN, "name": "small", "predicted_gain": 1.0, "gain_uncertainty": 0.2},
        {**RUN, "name": "big", "params": "13B", "predicted_gain": 1.5, "gain_uncertainty": 0.4},
    ], "pool_gpu_days": 200}, Comparison),
    "fit_scaling_law": ({"points": [{"compute": c, "loss": 1.8 + 40 * c ** -0.12}
                                    for c in (1e17, 1e18, 1e19, 1e20, 1e21)],
                         "target_compute": "1e23", "baseline_loss": 2.3}, ScalingFit),
    "compute_optimal": ({"flops": "5.76e23"}, OptimalSplit),
    "plan_run": ({"params": "7B", "tokens": "100B", "deadline_days": 14,
                  "gpus": ["h100", "a100"]}, PlanReport),
}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_lists_the_tools_with_schemas_and_annotations(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(TOOL_NAMES)
    for tool in tools.values():
        assert tool.title and tool.description and len(tool.description) > 80
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.open_world_hint is False
        assert tool.annotations.destructive_hint is False
        schema = tool.input_schema
        assert schema["type"] == "object" and "additionalProperties" not in schema
        for name, prop in schema["properties"].items():
            # every argument has its one line (issue 19), under "value or null" if optional
            value = next((b for b in prop.get("anyOf", []) if b != {"type": "null"}), prop)
            assert value.get("description"), f"{tool.name}.{name}"
            assert "title" not in value and "default" not in value
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"


async def test_estimate_schema_carries_units_ranges_and_string_numbers(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    props = tools["estimate_run_cost"].input_schema["properties"]
    assert set(props) >= {"params", "tokens", "gpu", "gpu_count", "mfu", "usd_per_gpu_hour",
                          "active_params", "precision"}
    assert tools["estimate_run_cost"].input_schema["required"] == ["tokens"]
    assert {"config", "preset", "seq_len", "recompute", "achieved_tflops", "tp", "pp", "sp",
            "micro_batch"} <= set(props)
    value = {n: next((b for b in p.get("anyOf", []) if b != {"type": "null"}), p)
             for n, p in props.items()}
    assert value["config"]["type"] == "string"  # a path or the JSON object, as a string
    assert value["params"]["type"] == "string"  # '7B' or 7e9
    assert "7B or 7e9" in value["params"]["description"]
    assert value["mfu"]["type"] == "number" and "0 to 1" in value["mfu"]["description"]
    assert "USD" in value["usd_per_gpu_hour"]["description"]
    assert value["recompute"]["enum"] == ["none", "selective", "full"]
    assert value["weights_bits"]["enum"] == ["4", "8", "16"]


@pytest.mark.parametrize("name", TOOL_NAMES)
async def test_each_tool_returns_markdown_and_structured_content(client: Client,
                                                                 name: str) -> None:
    arguments, model = VALID_CALLS[name]
    brief = await client.call_tool(name, arguments)
    result = await client.call_tool(name, {**arguments, "detail": "full"})
    assert not result.is_error, _text(result)
    assert _text(result).startswith("### ") and _text(brief).startswith("### ")
    assert set(brief.structured_content) <= set(result.structured_content)
    parsed = model.model_validate(result.structured_content)  # the full result, every field
    if isinstance(parsed, RunEstimate):
        assert parsed.dollar_cost == pytest.approx(14_022, abs=1)  # the skill's worked example
    if isinstance(parsed, Decision):
        assert parsed.verdict == "go"


async def test_estimate_reply_closes_with_the_step_3_question(client: Client) -> None:
    result = await client.call_tool("estimate_run_cost", VALID_CALLS["estimate_run_cost"][0])
    text = _text(result)
    assert "| Cost with failure budget" in text
    assert "what gain should this run produce" in text
    assert "uncertain" in text and "cheapest alternative" in text


@pytest.mark.parametrize(
    ("tool", "arguments", "names"),
    [
        ("estimate_run_cost", {**RUN, "params": -7}, "params"),
        ("estimate_run_cost", {**RUN, "params": "lots"}, "params"),
        ("estimate_run_cost", {**RUN, "tokens": "1e40"}, "tokens"),
        ("estimate_run_cost", {**RUN, "gpu_count": "eight"}, "gpu_count"),
        ("estimate_run_cost", {**RUN, "gpu_count": 0}, "gpu_count"),
        ("estimate_run_cost", {**RUN, "mfu": 1.5}, "mfu"),
        ("estimate_run_cost", {**RUN, "mfu": [0.4]}, "mfu"),
        ("estimate_run_cost", {**RUN, "gpu": "h1000"}, "gpu"),
        ("estimate_run_cost", {**RUN, "precision": "int4"}, "precision"),
        ("estimate_run_cost", {**RUN, "colour": "blue"}, "colour"),
        ("estimate_run_cost", {"tokens": "1T", "gpu": "h100", "gpu_count": 8}, "params"),
        ("estimate_run_cost", {**RUN, "active_params": "70B"}, "active_params"),
        ("render_verdict", {**RUN, "predicted_gain": "x", "gain_uncertainty": 0.1,
                            "baseline_to_beat": 0}, "predicted_gain"),
        ("render_verdict", {**RUN, "predicted_gain": 1, "gain_uncertainty": -1,
                            "baseline_to_beat": 0}, "gain_uncertainty"),
        ("suggest_alternatives", {**RUN, "shorter_run_fraction": 2}, "shorter_run_fraction"),
        ("estimate_memory", {"params": "7B", "gpu_count": 8, "zero": 4}, "zero"),
        ("estimate_memory", {"params": "7B", "gpu_count": 8, "tp": 16}, "tp"),
        ("estimate_memory", {"params": "7B", "gpu_count": 8, "optimizer": "lion"}, "optimizer"),
        ("split_budget", {"budget_flops": 0}, "budget_flops"),
        ("list_accelerators", {"query": "quantum"}, "query"),
        ("list_accelerators", {"vendor": "AMD"}, "vendor"),
    ],
)
async def test_bad_input_is_an_error_result_naming_the_argument(
    client: Client, tool: str, arguments: dict[str, Any], names: str
) -> None:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = _text(result)
    assert f"{names}:" in text, text
    assert "Traceback" not in text
    # The server keeps serving.
    again = await client.call_tool("estimate_run_cost", RUN)
    assert not again.is_error


async def test_unexpected_exception_leaks_no_traceback(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compute_budget import skill

    def explode(*_: object, **__: object) -> None:
        raise RuntimeError("secret internal state /home/user/key")

    monkeypatch.setattr(skill, "estimate_memory", explode)
    result = await client.call_tool("estimate_memory", {"params": "7B", "gpu_count": 8})
    assert result.is_error
    assert "secret" not in _text(result) and "Traceback" not in _text(result)
    assert not (await client.call_tool("estimate_run_cost", RUN)).is_error


async def test_missing_inputs_without_elicitation_are_listed_with_meanings(
    client: Client,
) -> None:
    result = await client.call_tool("estimate_run_cost", {"params": "7B", "tokens": "100B"})
    assert result.is_error
    text = _text(result)
    assert "Missing inputs: gpu, gpu_count" in text
    assert "Catalog accelerator, e.g. 'h100'" in text
    assert "do not invent" in text
    verdict = await client.call_tool("render_verdict", RUN)
    assert "predicted_gain, gain_uncertainty" in _text(verdict)


async def test_missing_hardware_is_elicited(answering_client: Any) -> None:
    answers = Answers(gpu="h100-sxm", gpu_count=16)
    async with answering_client(answers) as client:
        result = await client.call_tool("estimate_run_cost", {"params": "7B", "tokens": "1T"})
    assert not result.is_error, _text(result)
    assert len(answers.asked) == 1
    message, fields = answers.asked[0]
    assert fields == ["gpu", "gpu_count"] and "accelerator" in message
    assert result.structured_content["accelerator"] == "H100 SXM"
    assert result.structured_content["gpu_count"] == 16


async def test_given_inputs_are_not_asked_again(answering_client: Any) -> None:
    answers = Answers(gpu="b200", gpu_count=1)
    async with answering_client(answers) as client:
        result = await client.call_tool("estimate_run_cost", RUN)
    assert not result.is_error
    assert answers.asked == []
    assert result.structured_content["accelerator_key"] == "a100-80gb"


async def test_gain_is_elicited_for_the_verdict(answering_client: Any) -> None:
    answers = Answers(predicted_gain=0.3, gain_uncertainty=0.2, baseline_to_beat=1.0)
    async with answering_client(answers) as client:
        result = await client.call_tool("render_verdict", RUN)
    assert not result.is_error, _text(result)
    assert [fields for _, fields in answers.asked] == [
        ["predicted_gain", "gain_uncertainty", "baseline_to_beat"]]
    assert result.structured_content["verdict"] == "no-go"


async def test_declined_elicitation_reports_what_is_missing(answering_client: Any) -> None:
    async with answering_client(Answers(action="decline")) as client:
        result = await client.call_tool("estimate_run_cost", {"params": "7B", "tokens": "1T"})
    assert result.is_error
    assert "declined" in _text(result) and "gpu_count" in _text(result)


async def test_invalid_arguments_are_reported_before_asking(answering_client: Any) -> None:
    answers = Answers(gpu="h100-sxm", gpu_count=8)
    async with answering_client(answers) as client:
        result = await client.call_tool("estimate_run_cost", {"params": -1, "tokens": "1T"})
    assert result.is_error and "params:" in _text(result)
    assert answers.asked == []


async def test_prevalidate_prompt(client: Client) -> None:
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(prompts) == {"prevalidate_run"}
    assert {a.name for a in prompts["prevalidate_run"].arguments or []} == {"description", "gpu"}
    result = await client.get_prompt("prevalidate_run",
                                     {"description": "a 13B model on 2T tokens"})
    text = result.messages[0].content.text
    assert "a 13B model on 2T tokens" in text
    for tool in ("estimate_run_cost", "render_verdict", "suggest_alternatives",
                 "estimate_memory"):
        assert tool in text
    for mistake in ("without MFU", "without dollars", "failure budget"):
        assert mistake in text
    assert "honest" in text


async def test_prompt_without_arguments(client: Client) -> None:
    result = await client.get_prompt("prevalidate_run", {})
    assert "The run I am planning" not in result.messages[0].content.text


async def test_resources(client: Client) -> None:
    resources = {str(r.uri): r for r in (await client.list_resources()).resources}
    assert {"compute-budget://catalog", "compute-budget://catalog.json",
            "compute-budget://procedure"} <= set(resources)
    catalog = (await client.read_resource("compute-budget://catalog")).contents[0].text
    assert "compiled 2026-12-01" in catalog and "**Sources**" in catalog
    data = Catalog.model_validate_json(
        (await client.read_resource("compute-budget://catalog.json")).contents[0].text)
    assert any(a.key == "h100-sxm" for a in data.accelerators)
    procedure = (await client.read_resource("compute-budget://procedure")).contents[0].text
    assert "## 4. Render the verdict" in procedure
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["compute-budget://accelerators/{name}"]
    one = (await client.read_resource("compute-budget://accelerators/mi300x")).contents[0].text
    assert "MI300X" in one and "AMD Instinct MI300X datasheet" in one


async def test_unknown_accelerator_resource_is_an_error(client: Client) -> None:
    with pytest.raises(Exception, match="h1000"):
        await client.read_resource("compute-budget://accelerators/h1000")
    assert not (await client.call_tool("estimate_run_cost", RUN)).is_error


async def test_completions_for_accelerator_names(client: Client) -> None:
    prompt = PromptReference(type="ref/prompt", name="prevalidate_run")
    got = await client.complete(prompt, {"name": "gpu", "value": "h1"})
    assert got.completion.values[:2] == ["h100-sxm", "h100-pcie"]
    template = ResourceTemplateReference(type="ref/resource",
                                         uri="compute-budget://accelerators/{name}")
    got = await client.complete(template, {"name": "name", "value": "mi"})
    assert set(got.completion.values) == {"mi250", "mi250-gcd", "mi250x", "mi250x-gcd", "mi300x",
                                          "mi325x", "mi350x", "mi355x"}
    other = await client.complete(prompt, {"name": "description", "value": "a"})
    assert other.completion.values == []


async def test_server_instructions(server: MCPServer) -> None:
    assert server.instructions is not None and "prevalidate_run" in server.instructions


async def test_estimate_accepts_a_config_object_and_returns_the_breakdown(
    client: Client,
) -> None:
    import json
    from pathlib import Path

    path = Path(__file__).parent.parent / "fixtures" / "configs" / "meta-llama-3-8b.json"
    arguments = {"tokens": "15T", "gpu": "h100", "gpu_count": 64, "seq_len": 8192}
    from_object = await client.call_tool(
        "estimate_run_cost", {**arguments, "config": json.loads(path.read_text()),
                              "detail": "full"})
    from_path = await client.call_tool("estimate_run_cost", {**arguments, "config": str(path)})
    assert not from_object.is_error and not from_path.is_error
    data = from_object.structured_content
    assert data["params"] == 8_030_261_248  # HF Meta-Llama-3-8B
    assert data["flops_breakdown"]["attention"] > 0
    assert data["param_breakdown"]["lm_head"] == 128256 * 4096
    # the brief content keeps six significant digits (tools/toolkit.py BRIEF_DIGITS)
    assert data["flops"] == pytest.approx(from_path.structured_content["flops"], rel=1e-5)
    assert "attention" in _text(from_object)


async def test_memory_tool_accepts_a_preset_and_measured_layout(client: Client) -> None:
    result = await client.call_tool("estimate_memory", {
        "preset": "llama-3-70b", "gpu_count": 64, "gpu": "h100", "zero": 1, "tp": 8, "pp": 1,
        "sp": True, "recompute": "selective", "seq_len": 8192, "stack": "megatron"})
    assert not result.is_error, _text(result)
    assert result.structured_content["data_parallel"] == 8


async def test_bad_config_is_an_error_naming_the_field(client: Client) -> None:
    result = await client.call_tool("estimate_run_cost", {
        "tokens": "1T", "gpu": "h100", "gpu_count": 8,
        "config": {"model_type": "llama", "hidden_size": 4096}})
    assert result.is_error
    assert "num_attention_heads:" in _text(result)
    missing = await client.call_tool("estimate_run_cost", {
        "tokens": "1T", "gpu": "h100", "gpu_count": 8, "config": "/no/such/config.json"})
    assert missing.is_error and "config:" in _text(missing)


async def test_prompt_rejects_unknown_arguments_and_unknown_gpus(client: Client) -> None:
    with pytest.raises(Exception, match="params: unknown argument"):
        await client.get_prompt("prevalidate_run", {"params": "7B"})
    with pytest.raises(Exception, match="gpu: 'nope' is not allowed"):
        await client.get_prompt("prevalidate_run", {"gpu": "nope"})
    good = await client.get_prompt("prevalidate_run", {"gpu": "h100"})
    assert "H100 SXM" in good.messages[0].content.text


async def test_only_the_missing_input_is_asked(answering_client: Any) -> None:
    answers = Answers(gpu_count=16)
    async with answering_client(answers) as client:
        result = await client.call_tool("estimate_run_cost",
                                        {"params": "7B", "tokens": "1T", "gpu": "b200"})
    assert not result.is_error, _text(result)
    assert [fields for _, fields in answers.asked] == [["gpu_count"]]
    assert result.structured_content["accelerator_key"] == "b200"
    assert result.structured_content["gpu_count"] == 16


async def test_every_invalid_and_missing_argument_in_one_reply(client: Client) -> None:
    result = await client.call_tool("estimate_run_cost", {
        "params": "7B", "tokens": -5, "gpu": "h1000", "mfu": 2})
    text = _text(result)
    assert result.is_error
    for name in ("tokens:", "gpu:", "mfu:", "gpu_count"):
        assert name in text, name
    # MCP vocabulary: the catalog is a tool here, not a subcommand
    assert "list_accelerators" in text and "compute-budget gpus" not in text


def test_building_the_server_leaves_logging_alone() -> None:
    # MCPServer() would put a rich handler on the root logger (and import rich, ~60 ms of a
    # start-up); the server is built without it, and the SDK's own set-up is restored after.
    import logging

    import mcp.server.mcpserver.server as sdk_server

    from compute_budget.tools.server import build_server

    root = logging.getLogger()
    before = list(root.handlers)
    sdk_setup = sdk_server.configure_logging  # type: ignore[attr-defined]
    build_server()
    assert root.handlers == before
    assert sdk_server.configure_logging is sdk_setup  # type: ignore[attr-defined]


def test_importing_the_server_pauses_the_collector_and_restores_it() -> None:
    import gc
    import importlib

    import compute_budget.tools

    assert gc.isenabled()
    importlib.reload(compute_budget.tools)  # runs the package's import again
    assert gc.isenabled()
    gc.disable()
    try:
        importlib.reload(compute_budget.tools)
        assert not gc.isenabled()  # a collector paused before stays paused
    finally:
        gc.enable()


async def test_replies_name_other_tools_as_the_door_knows_them(client: Client) -> None:
    # "the memory tool" read the same over MCP and on the command line
    import contextlib
    import io

    from compute_budget.cli import main

    result = await client.call_tool("estimate_run_cost", {
        "params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 8, "detail": "full"})
    text = result.content[0].text
    assert "`estimate_memory` has the breakdown" in text and "memory tool" not in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["estimate", "--params", "7B", "--tokens", "1T", "--gpu", "h100", "--gpus",
                     "8", "--detail", "full"]) == 0
    assert "`compute-budget memory` has the breakdown" in out.getvalue()


async def test_tools_that_take_a_run_say_they_take_estimate_run_costs_arguments(
        client: Client) -> None:
    # plan_run and estimate_memory list fewer properties than they accept; a MoE given by
    # params alone would be planned at its total size, 3.6x its FLOPs (Mixtral: 47B, 13B active)
    tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("plan_run", "estimate_memory"):
        assert "estimate_run_cost's" in (tools[name].description or "")
        assert "active_params" in (tools[name].description or "")
    result = await client.call_tool("plan_run", {
        "params": "47B", "active_params": "13B", "tokens": "1T", "deadline_days": 30,
        "gpus": ["h100"]})
    assert not result.is_error
    assert result.content[0].text.startswith("### Plans to train 7.80 × 10²² FLOPs")


async def test_available_takes_the_command_lines_text_too(client: Client) -> None:
    # "available": "a100=64,l40s=32" read "must be a valid dictionary"
    result = await client.call_tool("plan_run", {
        "params": "13B", "tokens": "260B", "deadline_days": 10, "available": "a100=64,l40s=32"})
    assert not result.is_error
    assert "**Your 64 × A100 80GB SXM**" in result.content[0].text
    # a client that passes on the structured content alone relays them too (one line for both)
    assert result.structured_content is not None
    yours = result.structured_content["relay"]["yours"]
    assert yours.startswith("your 64 × A100 80GB SXM: ") and ". Your 32 × L40S: " in yours
    bad = await client.call_tool("plan_run", {
        "params": "13B", "tokens": "260B", "deadline_days": 10, "available": "a100:64"})
    assert bad.is_error and "NAME=COUNT pairs" in bad.content[0].text
    # a list of objects with a key misspelt read "must be a valid dictionary"
    listed = await client.call_tool("plan_run", {
        "params": "13B", "tokens": "260B", "deadline_days": 10,
        "available": [{"gpu": "h100", "cnt": 8}]})
    assert listed.is_error and "as [{'gpu': 'h100', 'count': 64}]" in listed.content[0].text


async def test_gpus_takes_one_name_or_the_command_lines_text(client: Client) -> None:
    # the renamed-argument reply says "Call plan_run again with gpus='h100'"; the retry read
    # "must be a valid list"
    result = await client.call_tool("plan_run", {
        "params": "1B", "tokens": "20B", "deadline_days": 10, "gpus": "h100, a100"})
    assert not result.is_error
    assert result.structured_content is not None
    assert {p["gpu"] for p in result.structured_content["plans"]} == {"h100-sxm", "a100-80gb"}
    blank = await client.call_tool("plan_run", {
        "params": "1B", "tokens": "20B", "deadline_days": 10, "gpus": " , "})
    assert blank.is_error and "gpus: ' , ' is not allowed" in blank.content[0].text
