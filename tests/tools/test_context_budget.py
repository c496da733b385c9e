"""The context an assistant pays for (issue 9): the whole tools/list, the descriptions and input
schemas, and the structured content of each reply, measured as compact JSON."""

import json
from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

TOOLS_LIST_MAX = 28_000
"""30,000 until issue 19, which set 28 KB for the whole list with every argument described."""
DESCRIPTIONS_AND_INPUTS_MAX = 23_500
"""12,000 until issue 16, 12,500 until issue 17, 12,750 until issue 19, 21,250 until issue 20
(a probe's JSON text on four tools, 0.5k), 21,500 until the price was listed on render_verdict,
suggest_alternatives and the candidates (a strict client sends only listed keys, so a verdict
weighed the catalog's price, not the user's; 0.2k, some argument lines shortened to hold the
whole list within TOOLS_LIST_MAX), 21,750 until active_params, model, lora_rank, weights_bits
and seq_len were listed on every tool that takes a run (1.7k, paid for by the output schemas'
key lists, 3.9k: a strict client priced an MoE plan at its total size): the arguments were left
undescribed to meet it (89 of 134). Issue 19's portable schemas describe every argument in one
short line and make every optional one "value or null" (20.8k); the output schemas list their
keys only (``tools/schemas.py``), which keeps the whole list within TOOLS_LIST_MAX."""
STRUCTURED_MAX = 6_000
PER_DEVICE_MAX = 160
"""list_accelerators lists the whole catalog, so its budget grows with it: at most 160 bytes a
device (6,163 bytes for 40 devices once the MI250 and its GCD were added for issue 17)."""

HEAVY_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("estimate_run_cost", {"preset": "deepseek-v3", "tokens": "1T", "gpu": "h100",
                           "gpu_count": 256}),
    ("estimate_run_cost", {"params": "7T", "tokens": "1T", "gpu": "rtx-4090", "gpu_count": 1}),
    # an MoE on PCIe cards that fits only offloaded, with its EP note and the larger device that
    # would fit: 6,279 bytes before the estimate's memory left the memory tool's detail to it
    ("estimate_run_cost", {"preset": "qwen3-30b-a3b", "tokens": "100B", "gpu": "rtx-4090",
                           "gpu_count": 8}),
    ("render_verdict", {"preset": "llama-3-70b", "tokens": "1T", "gpu": "h100",
                        "gpu_count": 64, "predicted_gain": 2, "gain_uncertainty": 1,
                        "usd_per_unit_gain": 1e5, "budget_usd": "$2M"}),
    ("suggest_alternatives", {"preset": "llama-3-8b", "tokens": "100B", "gpu": "h100",
                              "gpu_count": 8, "kind": "continued-pretrain"}),
    ("suggest_alternatives", {"preset": "llama-3-8b", "tokens": "2B", "gpu": "h100",
                              "gpu_count": 8, "kind": "fine-tune", "predicted_gain": 1,
                              "gain_uncertainty": 0.8}),  # every fine-tune row, with its gain
    ("suggest_alternatives", {"params": "1.3B", "tokens": "26B", "gpu": "a100", "gpu_count": 8,
                              "kind": "ablation", "predicted_gain": 0.3,
                              "gain_uncertainty": 0.5}),
    ("estimate_memory", {"preset": "mixtral-8x7b", "gpu": "h100", "gpu_count": 2}),
    ("split_budget", {"budget_usd": "$400k", "gpu": "h100"}),
    # the cheapest plan on a modelled network beside a cheapest plan on PCIe cards that span
    # machines: its estimate was left in whole (15 KB)
    ("plan_run", {"params": "1B", "tokens": "20B", "deadline_days": 365,
                  "available": [{"gpu": "t4", "count": 12}]}),
    ("list_accelerators", {}),
    # six candidates on five devices, one unpriced, one too long, one that does not fit, with a
    # pool: each with its price and MFU in the relay (about 4.2 KB)
    ("compare_candidates", {"pool_gpu_days": 5000, "candidates": [
        {"name": n, "params": p, "tokens": t, "gpu": g, "gpu_count": k, "predicted_gain": gain,
         "gain_uncertainty": sigma} for n, p, t, g, k, gain, sigma in (
            ("big", "70B", "1.4T", "h100", 8, 100, 1),
            ("small", "7B", "140B", "h100", 8, 0.5, 0.2),
            ("mid-a100", "13B", "260B", "a100", 64, 1.5, 0.5),
            ("l4-run", "3B", "60B", "l4", 12, 0.3, 0.2),
            ("tpu", "3B", "60B", "tpu-v3", 8, 0.3, 0.2),
            ("huge", "7T", "1T", "rtx-4090", 1, 10, 1))]}),
]


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


async def test_tools_list_fits_the_context_budget(client: Client) -> None:
    tools = (await client.list_tools()).tools
    dumped = [t.model_dump(by_alias=True, exclude_none=True) for t in tools]
    assert sum(_size(t) for t in dumped) <= TOOLS_LIST_MAX
    assert sum(len(t["description"].encode()) + _size(t["inputSchema"])
               for t in dumped) <= DESCRIPTIONS_AND_INPUTS_MAX


@pytest.mark.parametrize(("tool", "arguments"), HEAVY_CALLS)
async def test_each_reply_keeps_its_structured_content_small(client: Client, tool: str,
                                                             arguments: dict[str, Any]) -> None:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error
    content = result.structured_content
    assert content is not None
    if tool == "list_accelerators":
        assert _size(content) <= PER_DEVICE_MAX * len(content["accelerators"])
    else:
        assert _size(content) <= STRUCTURED_MAX
    full = await client.call_tool(tool, {**arguments, "detail": "full"})
    assert _size(full.structured_content) >= _size(result.structured_content)


def test_a_result_with_a_non_finite_number_cannot_be_built() -> None:
    """Issue 15: one guard, in the result models: none can hold an infinity or a NaN."""
    import math

    from pydantic import ValidationError

    from compute_budget import RunSpec, estimate_run

    est = estimate_run(RunSpec(params="7B", tokens="1T", gpu="h100", gpu_count=8))
    for path, value in (("flops", math.inf), ("mfu_used", {**est.mfu_used.model_dump(),
                                                           "range": (0.1, math.nan)})):
        with pytest.raises(ValidationError, match="not a finite number"):
            type(est).model_validate({**est.model_dump(), path: value})


async def test_a_non_finite_result_is_an_error_naming_the_arguments(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    import math

    from compute_budget import skill

    real = skill.estimate_run

    def broken(spec: Any) -> Any:
        est = real(spec)
        return type(est).model_validate({**est.model_dump(), "flops": math.nan})

    monkeypatch.setattr(skill, "estimate_run", broken)
    result = await client.call_tool("estimate_run_cost", {
        "params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 8})
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and "not a finite number (RunEstimate.flops)" in text
    assert "arguments given: gpu, gpu_count, params, tokens" in text


async def test_a_strict_client_can_send_what_changes_a_run_s_cost(client: Client) -> None:
    # A strict client sends only listed arguments: plan_run priced a 16B MoE with 2.5B active
    # at its total size ($361,832 against $71,985; a reviewer, 2026-12-08), and a QLoRA verdict
    # without lora_rank read "cannot run at any layout". Every tool that takes a run lists them.
    tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in ("estimate_run_cost", "render_verdict", "suggest_alternatives", "plan_run"):
        listed = tools[name].input_schema["properties"]
        assert {"active_params", "lora_rank", "weights_bits", "seq_len", "model"} <= set(
            listed), name
    candidate = tools["compare_candidates"].input_schema["properties"]["candidates"]
    assert "active_params" in candidate["items"]["properties"]
    # the output schemas say only where the sentences to relay are (the keys are in the reply)
    assert tools["estimate_run_cost"].output_schema == {
        "type": "object", "description": "relay: what to tell the user"}
    assert tools["compute_optimal"].output_schema == {"type": "object"}


async def test_the_brief_content_keeps_six_significant_digits(client: Client) -> None:
    # 0.18512012528460414 cost 19 bytes where 0.18512 says as much: with calibration runs the
    # split's structured content was 6,347 bytes, over the cap
    def floats(data: Any) -> list[float]:
        if isinstance(data, float):
            return [data]
        if isinstance(data, dict):
            return [f for v in data.values() for f in floats(v)]
        if isinstance(data, list):
            return [f for v in data for f in floats(v)]
        return []

    run = {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 64}
    brief = (await client.call_tool("estimate_run_cost", run)).structured_content
    full = (await client.call_tool("estimate_run_cost",
                                   {**run, "detail": "full"})).structured_content
    assert brief is not None and full is not None
    # six significant digits, but whole units kept from a million up to 1e15 (dollars,
    # parameters, bytes): a budget of $1,906,335 came back as $1,906,340, above the cost
    assert all(f == float(f"{f:.6g}") or (1e6 <= abs(f) < 1e15 and f == round(f))
               for f in floats(brief))
    assert brief["gpu_hours"] == float(f"{full['gpu_hours']:.6g}") != full["gpu_hours"]
    assert brief["params"] == full["params"] == 7e9
    assert brief["memory"]["gpu_memory_bytes"] == full["memory"]["gpu_memory_bytes"]
    over = (await client.call_tool("render_verdict", {
        **run, "predicted_gain": 2, "gain_uncertainty": 0.5,
        "budget_usd": round(full["dollar_cost"] - 1.01, 2)})).structured_content
    assert over is not None and over["cause"] == "over_budget"
    assert over["budget_usd"] < over["dollar_cost"]
    cal = [{"params": p, "tokens": t, "gpu": "h100", "gpu_hours": h}
           for p, t, h in (("1B", "20B", 96), ("3B", "60B", 800), ("7B", "140B", 4000))]
    split = await client.call_tool("split_budget", {"budget_usd": "$400k", "gpu": "h100",
                                                    "calibration": cal})
    assert len(json.dumps(split.structured_content, separators=(",", ":"),
                          ensure_ascii=False)) <= STRUCTURED_MAX
