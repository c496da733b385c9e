"""Issue 20 over MCP: the server runs no probe (it may not have the device) but takes a probe's
result, as the JSON text of its file (or the object), on every tool that prices a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

TEXT = (Path(__file__).parent.parent / "fixtures" / "probe_h100_llama-3.2-1b.json").read_text()
RUN: dict[str, Any] = {"preset": "llama-3.2-1b", "tokens": "100B", "gpu": "h100-sxm",
                       "gpu_count": 8}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_the_tools_list_the_probe_as_json_text(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert "probe" not in [t for t in tools]  # the server does not run one
    for name in ("estimate_run_cost", "render_verdict", "split_budget", "plan_run"):
        schema = tools[name].input_schema["properties"]["probe"]
        value = next(b for b in schema["anyOf"] if b != {"type": "null"})
        assert value["type"] == "string" and "probe" in value["description"]


@pytest.mark.parametrize("probe", [TEXT, json.loads(TEXT)], ids=["text", "object"])
async def test_the_estimate_uses_the_measurement(client: Client, probe: Any) -> None:
    result = await client.call_tool("estimate_run_cost", {**RUN, "probe": probe})
    assert not result.is_error, _text(result)
    used = result.structured_content["mfu_used"]
    assert used["origin"] == "measured"
    assert used["probe"]["device"] == "NVIDIA H100 80GB HBM3"
    assert used["probe"]["measured_at"] == "2026-12-01"
    assert "measured on 1 × NVIDIA H100 80GB HBM3" in _text(result)
    relay = result.structured_content["relay"]  # for a client that reads only this
    assert relay["mfu_source"].startswith("0.42, measured by a probe on 1 × NVIDIA H100")


@pytest.mark.parametrize(("tool", "arguments"), [
    ("render_verdict", {**RUN, "predicted_gain": 1, "gain_uncertainty": 0.5}),
    ("split_budget", {"budget_usd": "$50k", "gpu": "h100-sxm"}),
    ("plan_run", {"preset": "llama-3.2-1b", "tokens": "100B", "deadline_days": 10,
                  "gpus": ["h100-sxm"]}),
])
async def test_the_other_pricing_tools_take_it(client: Client, tool: str,
                                               arguments: dict[str, Any]) -> None:
    result = await client.call_tool(tool, {**arguments, "probe": TEXT})
    assert not result.is_error, _text(result)
    assert "measured" in _text(result) or '"step_mfu"' in json.dumps(result.structured_content)


@pytest.mark.parametrize(("probe", "words"), [
    ("{not json", "not JSON: give the text of the file compute-budget probe wrote"),
    (json.dumps({**json.loads(TEXT), "setup": {**json.loads(TEXT)["setup"], "seq_len": -3}}),
     "probe.setup.seq_len"),
])
async def test_a_bad_probe_is_an_error_naming_it(client: Client, probe: str, words: str) -> None:
    result = await client.call_tool("estimate_run_cost", {**RUN, "probe": probe})
    assert result.is_error and words in _text(result)
    again = await client.call_tool("estimate_run_cost", RUN)  # and the server keeps serving
    assert not again.is_error
