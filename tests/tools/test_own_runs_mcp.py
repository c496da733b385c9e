"""Issue 17 item 4 through the in-memory MCP client: ``calibration`` (the team's past runs, a
list of objects) on every tool that prices a run, the same numbers as the library and the
command line, and every bad run named at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from compute_budget.skill import RunSpec, estimate_run, get_accelerator
from tests.conftest import Cli

pytestmark = pytest.mark.anyio

RUN: dict[str, Any] = {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 64}


def past(mfu: float, gpu: str = "h100") -> dict[str, Any]:
    """A 7B × 1T past run at ``mfu`` end to end."""
    hours = 6 * 7e9 * 1e12 / (mfu * get_accelerator(gpu).peak("bf16") * 1e12 * 3600)
    return {"params": "7B", "tokens": "1T", "gpu": gpu, "gpu_hours": round(hours, 1)}


CAL = [past(0.45), past(0.42), past(0.40, "a100")]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_the_estimate_uses_the_runs_and_says_so(client: Client) -> None:
    result = await client.call_tool("estimate_run_cost", {**RUN, "calibration": CAL})
    assert not result.is_error, _text(result)
    data = result.structured_content
    library = estimate_run(RunSpec(**RUN, calibration=CAL))
    # the brief content keeps six significant digits (tools/toolkit.py BRIEF_DIGITS)
    assert data["mfu"] == pytest.approx(library.mfu, rel=1e-5)
    assert data["gpu_hours_range"] == pytest.approx(list(library.gpu_hours_range), rel=1e-5)
    used = data["mfu_used"]
    assert used["origin"] == "own_runs" and used["own_runs"]["n_runs"] == 3
    assert "runs" not in used["own_runs"]  # the per-run detail is in the full reply only
    assert "MFU: 0." in _text(result) and "from your 3 runs (the published prior weighs" in (
        _text(result))
    full = await client.call_tool("estimate_run_cost", {**RUN, "calibration": CAL,
                                                        "detail": "full"})
    assert len(full.structured_content["mfu_used"]["own_runs"]["runs"]) == 3
    assert "Gelman et al." in _text(full) and "1 of them ran on another generation" in _text(full)


async def test_both_doors_give_the_same_numbers(client: Client, cli: Cli,
                                                tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(CAL))
    argv = ["--params", "7B", "--tokens", "1T", "--gpu", "h100", "--gpus", "64",
            "--calibration", str(path)]
    code, out, err = cli("estimate", *argv, "--json")
    assert code == 0, err
    by_cli = json.loads(out)
    by_mcp = (await client.call_tool("estimate_run_cost",
                                     {**RUN, "calibration": CAL})).structured_content
    for key in ("mfu", "gpu_hours", "gpu_hours_range", "dollar_cost_with_failures"):
        assert by_cli[key] == pytest.approx(by_mcp[key], rel=1e-5)  # six digits over MCP
    assert by_cli["mfu_used"]["own_runs"]["weight"] == pytest.approx(
        by_mcp["mfu_used"]["own_runs"]["weight"])
    split = await client.call_tool("split_budget", {"budget_usd": "$400k", "gpu": "h100",
                                                    "calibration": CAL})
    code, out, err = cli("split", "--budget-usd", "400k", "--gpu", "h100",
                         "--calibration", str(path))
    assert code == 0, err
    assert _text(split) == out  # one template: both doors say the same


@pytest.mark.parametrize(("tool", "arguments"), [
    ("render_verdict", {**RUN, "predicted_gain": 2, "gain_uncertainty": 1}),
    ("split_budget", {"budget_usd": "$400k", "gpu": "h100"}),
    ("plan_run", {"params": "7B", "tokens": "1T", "deadline_days": 30, "gpus": ["h100"]}),
    ("suggest_alternatives", RUN),
])
async def test_every_tool_that_prices_time_uses_the_runs(client: Client, tool: str,
                                                         arguments: dict[str, Any]) -> None:
    result = await client.call_tool(tool, {**arguments, "calibration": CAL})
    assert not result.is_error, _text(result)
    assert ("from your 3 runs" in _text(result)
            or "moved toward your 3 runs" in _text(result)), _text(result)


async def test_bad_runs_are_an_error_naming_each(client: Client) -> None:
    result = await client.call_tool("estimate_run_cost", {**RUN, "calibration": [
        past(0.4) | {"gpu_hours": -5},
        past(0.4) | {"gpu": "h999"},
        {"params": "7B", "tokens": "1T", "gpu": "h100"},
    ]})
    assert result.is_error
    text = _text(result)
    for named in ("calibration[0].gpu_hours: -5 is not allowed; must be > 0",
                  "calibration[1].gpu: 'h999' is not allowed; unknown accelerator",
                  "calibration[2].gpu_hours: required but missing; give gpu_hours or wall_days"):
        assert named in text, text
    both = await client.call_tool("estimate_run_cost", {**RUN, "calibration": CAL, "mfu": 0.4})
    assert both.is_error and "not together with mfu" in _text(both)


async def test_estimate_run_cost_lists_calibration_with_the_keys_of_a_run(
        client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    described = tools["estimate_run_cost"].input_schema["properties"]["calibration"]
    array = next(b for b in described.get("anyOf", [described]) if b.get("type") == "array")
    keys = json.dumps(array) + described.get("description", "")  # the keys, in either form
    for key in ("params", "tokens", "gpu", "gpu_hours", "wall_days", "gpu_count"):
        assert key in keys, key
    # the other tools take it too (test_every_tool_that_prices_time_uses_the_runs); which of
    # them list it is the schemas' choice (tool_specs.py)


@pytest.mark.parametrize(("tool", "arguments"), [
    ("estimate_run_cost", {**RUN, "gpu": "a100"}),
    ("render_verdict", {**RUN, "gpu": "a100", "predicted_gain": 2, "gain_uncertainty": 1}),
    ("split_budget", {"budget_usd": "$400k", "gpu": "a100"}),
    ("plan_run", {"params": "7B", "tokens": "1T", "deadline_days": 30, "gpus": ["a100"]}),
])
async def test_the_relay_says_the_runs_ran_on_another_generation(
        client: Client, tool: str, arguments: dict[str, Any]) -> None:
    # a review: H100 runs priced an A100 with "fitted to your past runs" and nothing more
    hopper = [past(0.45), past(0.42)]
    result = await client.call_tool(tool, {**arguments, "calibration": hopper})
    assert not result.is_error, _text(result)
    relay = result.structured_content["relay"]
    assert ("fitted to your past runs on H100 SXM, carried to Ampere as a ratio to each "
            "generation's prior (×2.") in relay["mfu_source"], relay
    assert "from your 2 runs" in _text(result) and "carried to " in _text(result)
    same = await client.call_tool(tool, {**arguments, "calibration": [past(0.4, "a100")] * 2})
    assert "carried to" not in same.structured_content["relay"]["mfu_source"]
    assert "carried to" not in _text(same) and "from your 2 runs" in _text(same)


async def test_the_brief_content_names_the_devices_a_level_was_carried_from(
        client: Client) -> None:
    data = (await client.call_tool("estimate_run_cost",
                                   {**RUN, "calibration": CAL})).structured_content
    own = data["mfu_used"]["own_runs"]
    assert own["same_generation"] == 2 and own["carried_from"] == ["A100 80GB SXM"]
    assert own["generation_label"] == "Hopper"


async def test_a_value_left_out_says_what_it_needs_not_none(client: Client) -> None:
    # "calibration[0].gpu_count: None is not allowed" (review of the doors' wording, item 4)
    run = {"params": "7B", "tokens": "1T", "gpu": "h100", "wall_days": 3, "gpu_count": None}
    result = await client.call_tool("estimate_run_cost", {**RUN, "calibration": [run]})
    assert result.is_error
    assert _text(result).endswith(
        "calibration[0].gpu_count: required but missing; the number of devices, needed with "
        "wall_days (devices × wall_days × 24 is the GPU-hours)"), _text(result)


async def test_a_run_on_a_device_without_a_peak_names_its_device(client: Client) -> None:
    # "calibration[0].precision: None is not allowed; no published dense tensor peak is known
    # for A10G (AWS G5); give peak_tflops", which a past run does not take (item 6)
    run = {"params": "1B", "tokens": "20B", "gpu": "a10g", "gpu_hours": 3000}
    text = _text(await client.call_tool("estimate_run_cost", {**RUN, "calibration": [run]}))
    assert text.endswith(
        "calibration[0].gpu: 'a10g' is not allowed; a device with a published dense peak, "
        "which A10G (AWS G5) lacks: a run on it gives no MFU (a past run takes no "
        "peak_tflops); leave this run out"), text
    fp8 = past(0.4, "a100") | {"precision": "fp8"}
    text = _text(await client.call_tool("estimate_run_cost", {**RUN, "calibration": [fp8]}))
    assert text.endswith("calibration[0].precision: 'fp8' is not allowed; a precision A100 80GB "
                         "SXM has a published dense peak at: bf16, fp16"), text


async def test_both_times_say_which_to_keep(client: Client) -> None:
    # refused even when they agree, as before, but "give one of the two" said not which (item 8)
    run = past(0.4) | {"wall_days": 1, "gpu_count": 8}
    text = _text(await client.call_tool("estimate_run_cost", {**RUN, "calibration": [run]}))
    assert text.endswith("calibration[0].wall_days: 1.0 is not allowed; not together with "
                         "gpu_hours, even when they agree: keep one, gpu_hours alone or "
                         "wall_days with gpu_count"), text
