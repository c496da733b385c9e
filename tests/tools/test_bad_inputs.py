"""One table of bad inputs, tried on both doors (issue 15): the MCP server and the CLI must name
the same arguments, every one of them in one reply, each door in its own words (argument names
over MCP, flags on the command line)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from mcp import Client

from compute_budget.cli import build_parser
from compute_budget.cli.parser import flag_names
from tests.conftest import run_cli

pytestmark = [pytest.mark.anyio, pytest.mark.adversarial]

RUN = {"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8}
RUN_FLAGS = ["--params", "7B", "--tokens", "100B", "--gpu", "h100", "--gpus", "8"]

# (tool, command, MCP arguments, CLI argv after the command, the fields named)
TABLE: list[tuple[str, str, dict[str, Any], list[str], set[str]]] = [
    ("estimate_run_cost", "estimate", {**RUN, "mfu": 2, "optimizer": "nope"},
     [*RUN_FLAGS, "--mfu", "2", "--optimizer", "nope"], {"mfu", "optimizer"}),
    ("estimate_run_cost", "estimate", {**RUN, "tokens": -5, "gpu": "h1000", "mfu": 2},
     ["--params", "7B", "--tokens", "-5", "--gpu", "h1000", "--gpus", "8", "--mfu", "2"],
     {"tokens", "gpu", "mfu"}),
    ("estimate_run_cost", "estimate", {**RUN, "params": "abc", "gpu_count": 0},
     ["--params", "abc", "--tokens", "100B", "--gpu", "h100", "--gpus", "0"],
     {"params", "gpu_count"}),
    ("estimate_run_cost", "estimate", {**RUN, "seq_len": 0, "micro_batch": 0, "zero": 5},
     [*RUN_FLAGS, "--seq-len", "0", "--micro-batch", "0", "--zero", "5"],
     {"seq_len", "micro_batch", "zero"}),
    ("estimate_run_cost", "estimate", {**RUN, "usd_per_gpu_hour": -1, "failure_budget": 0.5},
     [*RUN_FLAGS, "--price", "-1", "--failure-budget", "0.5"],
     {"usd_per_gpu_hour", "failure_budget"}),
    ("estimate_run_cost", "estimate",
     {**RUN, "pue": 5, "grid_kg_co2_per_kwh": -1, "board_power_w": 0},
     [*RUN_FLAGS, "--pue", "5", "--grid-kg-co2-per-kwh", "-1", "--board-power-w", "0"],
     {"pue", "grid_kg_co2_per_kwh", "board_power_w"}),
    ("estimate_run_cost", "estimate", {**RUN, "lora_rank": 0, "achieved_tflops": 0},
     [*RUN_FLAGS, "--lora-rank", "0", "--achieved-tflops", "0"],
     {"lora_rank", "achieved_tflops"}),
    ("estimate_run_cost", "estimate", {**RUN, "batch_tokens": 0, "host_memory_gbs": "fast"},
     [*RUN_FLAGS, "--batch-tokens", "0", "--host-memory-gbs", "fast"],
     {"batch_tokens", "host_memory_gbs"}),
    ("estimate_run_cost", "estimate", {"params": "7B"}, ["--params", "7B"],
     {"tokens", "gpu", "gpu_count"}),
    ("estimate_run_cost", "estimate", {**RUN, "active_params": "-1B", "trainable_params": "x"},
     [*RUN_FLAGS, "--active-params", "-1B", "--trainable-params", "x"],
     {"active_params", "trainable_params"}),
    ("estimate_memory", "memory", {"params": "70B", "gpu_count": 0, "tp": 0, "pp": 0},
     ["--params", "70B", "--gpus", "0", "--tp", "0", "--pp", "0"], {"gpu_count", "tp", "pp"}),
    ("estimate_memory", "memory", {"params": "-7B", "gpu_count": 8, "ep": 0},
     ["--params", "-7B", "--gpus", "8", "--ep", "0"], {"params", "ep"}),
    ("estimate_memory", "memory", {"params": "70B", "gpu_count": 8, "host_ram_gib": 0},
     ["--params", "70B", "--gpus", "8", "--host-ram-gib", "0"], {"host_ram_gib"}),
    # a review: a shape of ~26B beside 7B was accepted (7B of weights, 26B of activations)
    ("estimate_memory", "memory",
     {"params": "7B", "gpu_count": 8, "layers": 32, "hidden": 8192, "heads": 64},
     ["--params", "7B", "--gpus", "8", "--layers", "32", "--hidden", "8192", "--heads", "64"],
     {"params"}),
    ("render_verdict", "decide", {**RUN, "predicted_gain": "big", "gain_uncertainty": -1},
     [*RUN_FLAGS, "--gain", "big", "--uncertainty", "-1"],
     {"predicted_gain", "gain_uncertainty"}),
    ("render_verdict", "decide",
     {**RUN, "predicted_gain": 1, "gain_uncertainty": 0.1, "budget_usd": -5,
      "usd_per_unit_gain": "lots"},
     [*RUN_FLAGS, "--gain", "1", "--uncertainty", "0.1", "--budget-usd", "-5",
      "--value-per-unit", "lots"], {"budget_usd", "usd_per_unit_gain"}),
    ("render_verdict", "decide", {**RUN, "tokens": "0", "predicted_gain": 1e300,
                                  "gain_uncertainty": 0.1},
     [*RUN_FLAGS[:2], "--tokens", "0", *RUN_FLAGS[4:], "--gain", "1e300", "--uncertainty",
      "0.1"], {"tokens", "predicted_gain"}),
    ("suggest_alternatives", "alternatives",
     {**RUN, "teacher_params": 0, "predicted_gain": "x"},
     [*RUN_FLAGS, "--teacher-params", "0", "--gain", "x"], {"teacher_params", "predicted_gain"}),
    ("split_budget", "split", {"budget_flops": -1, "ratio": 0},
     ["--budget", "-1", "--ratio", "0"], {"budget_flops", "ratio"}),
    ("split_budget", "split", {"budget_flops": "1e21", "gpu": "nope", "mfu": 5},
     ["--budget", "1e21", "--gpu", "nope", "--mfu", "5"], {"gpu", "mfu"}),
    ("compute_optimal", "optimal", {"flops": 0, "params": -1, "tokens": "x"},
     ["--flops", "0", "--params", "-1", "--tokens", "x"], {"flops", "params", "tokens"}),
    ("plan_run", "plan", {"params": "7B", "tokens": "1T", "deadline_days": 0,
                          "max_gpu_count": 0, "top": 100},
     ["--params", "7B", "--tokens", "1T", "--deadline-days", "0", "--max-gpus", "0",
      "--top", "100"], {"deadline_days", "max_gpu_count", "top"}),
    ("plan_run", "plan", {"params": "7B", "tokens": "1T", "deadline_days": 30,
                          "budget_usd": -1, "mfu": 3},
     ["--params", "7B", "--tokens", "1T", "--deadline-days", "30", "--budget", "-1",
      "--mfu", "3"], {"budget_usd", "mfu"}),
    ("fit_scaling_law", "fit", {"target_compute": -1, "level": 2},
     ["--target-compute", "-1", "--level", "2"], {"target_compute", "level"}),
    ("list_accelerators", "gpus", {"query": "x" * 200}, ["--query", "x" * 200], {"query"}),
    # a CLI review's silently accepted inputs (tests/skill/test_refused_inputs.py)
    ("estimate_memory", "memory", {"params": "70B", "preset": "llama-3-8b", "gpu_count": 8},
     ["--params", "70B", "--preset", "llama-3-8b", "--gpus", "8"], {"params"}),
    ("estimate_memory", "memory", {"params": "7B", "gpu": "h100", "gpu_count": 8, "sp": True,
                                   "tp": 1},
     ["--params", "7B", "--gpu", "h100", "--gpus", "8", "--sp", "--tp", "1"], {"sp"}),
    ("suggest_alternatives", "alternatives",
     {**RUN, "kind": "continued-pretrain", "teacher_params": "70B"},
     [*RUN_FLAGS, "--kind", "continued-pretrain", "--teacher-params", "70B"], {"teacher_params"}),
    ("fit_scaling_law", "fit", {"target_params": "7B", "target_tokens": "1T",
                                "target_compute": 1e23},
     ["--target-params", "7B", "--target-tokens", "1T", "--target-compute", "1e23"],
     {"target_compute"}),
]


def _mcp_fields(text: str) -> set[str]:
    """The arguments an MCP error names: each line's ``name:``, and the missing inputs."""
    named: set[str] = set()
    for line in re.sub(r"^Error executing tool \w+: ", "", text).splitlines():
        missing = re.match(r"Missing inputs: (.*?)\. ", line)
        if missing:
            named |= {name.strip() for name in missing[1].split(",")}
        elif (field := re.match(r"^([a-z0-9_]+)(?:\[\d+\])?: ", line)):
            named.add(field[1])
    return named


def _cli_fields(command: str, err: str) -> set[str]:
    """The fields a CLI error names, through the flags the command gives them."""
    field_of = {f: field for field, f in flag_names(build_parser(command), command).items()}
    named = set()
    for line in err.removeprefix("error: ").splitlines():
        flag = re.match(r"^(--[a-z0-9-]+): ", line)
        if flag:
            named.add(field_of[flag[1]])
    return named


@pytest.mark.parametrize(("tool", "command", "arguments", "argv", "fields"), TABLE,
                         ids=[f"{row[1]}-{'-'.join(sorted(row[4]))}" for row in TABLE])
async def test_both_doors_name_every_bad_argument_at_once(
        client: Client, tool: str, command: str, arguments: dict[str, Any], argv: list[str],
        fields: set[str]) -> None:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error and "Traceback" not in text
    assert _mcp_fields(text) == fields, text
    code, _, err = run_cli(command, *argv)
    assert code == 2 and "Traceback" not in err
    assert _cli_fields(command, err) == fields, err


def test_the_table_is_broad() -> None:
    assert len(TABLE) >= 20
    assert {row[0] for row in TABLE} >= {"estimate_run_cost", "estimate_memory",
                                         "render_verdict", "suggest_alternatives",
                                         "split_budget", "compute_optimal", "plan_run",
                                         "fit_scaling_law", "list_accelerators"}
