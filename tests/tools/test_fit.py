"""Issue 7 through the in-memory MCP client: "will it fit?" answered in one call, the layout
search behind every tool, feasibility first, and the new arguments' errors."""

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

LAYOUT_KNOBS = ("zero", "tp", "pp", "sp", "ep", "recompute", "micro_batch", "offload")


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_layout_knobs_are_optional_with_no_default_in_every_schema(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["estimate_run_cost"].input_schema
    for knob in LAYOUT_KNOBS:
        prop = schema["properties"][knob]
        assert prop.get("default") is None, knob  # a filled-in default is "not set"
        assert knob not in schema.get("required", [])
    for new in ("lora_rank", "lora_targets", "weights_bits", "stack"):
        assert new in schema["properties"], new
    # estimate_memory lists the common knobs and takes the rest of estimate_run_cost's, like the
    # verdict and the alternatives take its run arguments (described once)
    memory = tools["estimate_memory"].input_schema
    for knob in set(LAYOUT_KNOBS) & set(memory["properties"]):
        assert memory["properties"][knob].get("default") is None, knob
    for name in ("render_verdict", "suggest_alternatives", "estimate_memory"):
        assert "additionalProperties" not in tools[name].input_schema  # issue 19: portable
    assert "tokens" not in tools["estimate_memory"].input_schema["properties"]


async def test_70b_full_fine_tune_on_16_a100_is_not_a_no_go(client: Client) -> None:
    result = await client.call_tool("render_verdict", {
        "preset": "llama-2-70b", "gpu": "a100-80gb", "gpu_count": 16, "seq_len": 4096,
        "tokens": "1B", "predicted_gain": 5, "gain_uncertainty": 1, "baseline_to_beat": 0})
    assert not result.is_error, _text(result)
    assert result.structured_content["verdict"] == "go"
    assert result.structured_content["feasibility"] == "ok"
    assert "does not fit in device memory" not in _text(result)


async def test_70b_lora_r16_on_8_a100_fits_in_one_call_and_says_at_which_layout(
        client: Client) -> None:
    result = await client.call_tool("estimate_memory", {
        "preset": "llama-2-70b", "gpu": "a100-80gb", "gpu_count": 8, "lora_rank": 16})
    assert not result.is_error, _text(result)
    data = result.structured_content
    assert data["fits"] is True and data["lora_params"] > 0
    text = _text(result)
    assert text.splitlines()[2].startswith("**Fits**")
    assert f"ZeRO {data['zero']}, TP {data['tp']} × PP {data['pp']}" in text
    assert data["min_gpu_count"] <= 8


async def test_llama3_8b_at_16k_on_16_h100_fits(client: Client) -> None:
    for tool, extra in (("estimate_memory", {}), ("estimate_run_cost", {"tokens": "10B"})):
        result = await client.call_tool(tool, {
            "preset": "llama-3-8b", "gpu": "h100", "gpu_count": 16, "seq_len": 16384, **extra})
        assert not result.is_error, _text(result)
        memory = result.structured_content.get("memory") or result.structured_content
        assert memory["fits"] is True


@pytest.mark.slow  # about 1 s: the quick set keeps its minute on two cores
async def test_7t_on_one_rtx_4090_says_first_that_it_cannot_run(client: Client) -> None:
    args = {"params": "7T", "tokens": "1T", "gpu": "rtx-4090", "gpu_count": 1}
    estimate = await client.call_tool("estimate_run_cost", args)
    text = _text(estimate)
    first = text.splitlines()[0]
    assert first.startswith("**This run cannot run on 1 × RTX 4090")
    (larger,) = [r for r in estimate.structured_content["memory"]["layout"]["remedies"]
                 if r["kind"] == "larger_device"]
    assert f"{larger['gpu_count']:,} × {larger['accelerator']}" in first  # how many it needs
    assert "years" in first  # and that it would take millennia anyway
    assert "what gain should this run produce" not in text  # no question for the gain
    verdict = await client.call_tool("render_verdict", {
        **args, "predicted_gain": 1, "gain_uncertainty": 0.1, "baseline_to_beat": 0})
    assert verdict.structured_content["verdict"] == "no-go"
    assert _text(verdict).startswith("**This run cannot run")
    alternatives = await client.call_tool("suggest_alternatives", args)
    assert _text(alternatives).startswith("**The run as planned cannot run")


async def test_memory_contract_keys(client: Client) -> None:
    result = await client.call_tool("estimate_memory", {
        "params": "7B", "gpu": "h100", "gpu_count": 8})
    data = result.structured_content
    for key in ("zero", "tp", "pp", "sp", "recompute", "micro_batch", "offload", "ep",
                "min_gpu_count", "stack", "fits"):
        assert key in data
    assert set(data["per_gpu_bytes"]) >= {"weights", "gradients", "optimizer", "activations",
                                          "total"}


@pytest.mark.parametrize(("arguments", "field"), [
    ({"preset": "llama-3-8b", "tp": 3, "gpu_count": 3}, "tp"),
    ({"preset": "mixtral-8x7b", "ep": 3}, "ep"),
    ({"preset": "llama-3-8b", "lora_rank": 0}, "lora_rank"),
    ({"preset": "llama-3-8b", "lora_rank": 5000}, "lora_rank"),
    ({"gpu_count": 8, "lora_rank": 16}, "lora_rank"),
    ({"preset": "llama-3-8b", "weights_bits": 5, "lora_rank": 8}, "weights_bits"),
    ({"preset": "llama-3-8b", "offload": True, "zero": 0}, "offload"),
    ({"preset": "llama-3-8b", "stack": "jax"}, "stack"),
])
async def test_bad_layout_and_fine_tuning_arguments_name_the_argument(
        client: Client, arguments: dict[str, Any], field: str) -> None:
    result = await client.call_tool("estimate_memory", {"gpu_count": 8, "gpu": "h100",
                                                        **arguments})
    assert result.is_error
    assert f"tool estimate_memory: {field}: " in _text(result), _text(result)
    # and the server keeps serving
    assert not (await client.call_tool("estimate_memory", {"params": "1B", "gpu_count": 1})
                ).is_error


async def test_memory_takes_the_knobs_it_does_not_list(client: Client) -> None:
    result = await client.call_tool("estimate_memory", {
        "preset": "llama-3-8b", "gpu": "h100", "gpu_count": 8, "tp": 2, "sp": True,
        "stack": "megatron", "lora_targets": "all-linear", "lora_rank": 16})
    assert not result.is_error, result.content[0].text
    assert result.structured_content["stack"] == "megatron"
    assert "sp" in result.structured_content["layout"]["pinned"]
    bad = await client.call_tool("estimate_memory", {"params": "7B", "gpu_count": 8, "ep": 0})
    assert bad.is_error and "ep" in bad.content[0].text


async def test_qlora_70b_on_two_gaming_cards_fits_by_streaming_its_weights(client: Client) -> None:
    # Answer.AI's FSDP+QLoRA (March 2024) trains a 70B model on two 24 GB cards this way.
    result = await client.call_tool("estimate_memory", {
        "preset": "llama-3-70b", "lora_rank": 16, "weights_bits": 4, "gpu": "rtx-4090",
        "gpu_count": 2, "seq_len": 4096})
    assert not result.is_error
    text = _text(result)
    assert text.startswith("### Memory per device")
    assert "**Fits**" in text and "weights and optimizer offloaded to CPU" in text
    assert "1 × RTX 4090 with CPU offload, 5 without" in text
    data = result.structured_content
    assert data is not None and data["offload_weights"] is True and data["zero"] == 3
