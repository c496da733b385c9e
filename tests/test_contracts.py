"""Every command's ``--json`` and every tool's ``structuredContent`` keep their top-level keys
(issue 15): ``tests/data/contracts.json`` holds the keys each had before the restructuring, and
the few regrouped since (the price and the MFU of an estimate, an alternative's kind-specific
numbers) are listed there with the key that now holds them."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from compute_budget.cli import main
from compute_budget.tools import build_server

CONTRACTS = json.loads((Path(__file__).parent / "data" / "contracts.json").read_text())
RUN = {"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8}
RUN_FLAGS = ["--params", "7B", "--tokens", "100B", "--gpu", "h100", "--gpus", "8"]

COMMANDS: dict[str, list[str]] = {
    "estimate": ["estimate", *RUN_FLAGS],
    "decide": ["decide", *RUN_FLAGS, "--gain", "2", "--uncertainty", "0.5"],
    "alternatives": ["alternatives", *RUN_FLAGS],
    "memory": ["memory", "--params", "7B", "--gpus", "8", "--gpu", "h100"],
    "params": ["params", "--preset", "llama-3-8b"],
    "split": ["split", "--budget-usd", "50000", "--gpu", "h100"],
    "optimal": ["optimal", "--flops", "1e23"],
    "plan": ["plan", "--params", "7B", "--tokens", "100B", "--deadline-days", "30",
             "--gpu-types", "h100,a100"],
    "gpus": ["gpus"],
    "compare": ["compare", "{table}", "--pool-gpu-days", "100"],
}
TABLE = """name,params,tokens,gpu,gpu_count,predicted_gain,gain_uncertainty
a,7B,100B,h100,8,1,0.5
b,7B,100B,h100,8,2,0.5
"""
CALLS: dict[str, dict[str, Any]] = {
    "estimate_run_cost": RUN,
    "render_verdict": {**RUN, "predicted_gain": 2, "gain_uncertainty": 0.5},
    "suggest_alternatives": RUN,
    "estimate_memory": {"params": "7B", "gpu": "h100", "gpu_count": 8},
    "split_budget": {"budget_usd": 50000, "gpu": "h100"},
    "list_accelerators": {"query": "h100"},
    "compare_candidates": {"candidates": [
        {**RUN, "name": name, "predicted_gain": gain, "gain_uncertainty": 0.5}
        for name, gain in (("a", 1), ("b", 2))]},
    "fit_scaling_law": {"target_params": "7B", "target_tokens": "140B"},
    "compute_optimal": {"flops": "1e23"},
    "plan_run": {"params": "7B", "tokens": "100B", "deadline_days": 30,
                 "gpus": ["h100", "a100"]},
}


def _keys(data: Any) -> set[str]:
    first = data[0] if isinstance(data, list) else data
    return set(first)


def _json_of(command: str, tmp_path: Path) -> Any:
    table = tmp_path / "candidates.csv"
    table.write_text(TABLE)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([a.replace("{table}", str(table)) for a in COMMANDS[command]]
                    + ["--json"]) == 0
    return json.loads(out.getvalue())


def test_every_command_has_a_contract() -> None:
    assert set(CONTRACTS["cli"]) == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_commands_json_keeps_its_keys(command: str, tmp_path: Path) -> None:
    data = _json_of(command, tmp_path)
    keys = _keys(data)
    assert set(CONTRACTS["cli"][command]) <= keys
    moved = CONTRACTS["moved"]["estimate and split"] if command in ("estimate", "split") else {}
    assert set(moved.values()) <= keys


@pytest.mark.parametrize("command", sorted(CONTRACTS["cli_items"]))
def test_each_reports_list_keeps_its_items_keys(command: str, tmp_path: Path) -> None:
    """alternatives and compare print their whole report (review 2, finding 6); the items of
    its list keep the keys the bare list's items had."""
    data = _json_of(command, tmp_path)
    assert isinstance(data, dict)
    for key, item_keys in CONTRACTS["cli_items"][command].items():
        assert data[key] and set(item_keys) <= set(data[key][0]), key


@pytest.mark.anyio
@pytest.mark.parametrize("detail", ["short", "full"])
async def test_each_tools_structured_content_keeps_its_keys(detail: str) -> None:
    async with Client(build_server()) as client:
        for tool, arguments in CALLS.items():
            result = await client.call_tool(tool, {**arguments, "detail": detail})
            assert not result.is_error, tool
            keys = set(result.structured_content or {})
            assert set(CONTRACTS["mcp"][f"{tool}:{detail}"]) <= keys, tool


def test_every_regrouped_key_says_where_it_went() -> None:
    from compute_budget import Alternative, RunEstimate

    for old, new in CONTRACTS["moved"]["estimate and split"].items():
        assert old not in RunEstimate.model_fields and new in RunEstimate.model_fields
    assert set(CONTRACTS["moved"]["alternatives"].values()) == {"detail"}
    assert "detail" in Alternative.model_fields


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
