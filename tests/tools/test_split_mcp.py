"""Issue 16 through the in-memory MCP client: ``split_budget`` answers the common questions in
a short reply (at most 1,500 characters) that matches the command line's, with the full detail
on request and the matching fields in the structured content."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.conftest import Cli

pytestmark = pytest.mark.anyio

SHORT_MAX = 1_500
"""Characters of a default (short) reply to a common question (issue 16)."""
COMMON: dict[str, tuple[dict[str, Any], list[str]]] = {
    "dollars on a gpu": ({"budget_usd": 50_000, "gpu": "h100"},
                         ["--budget-usd", "50000", "--gpu", "h100"]),
    "flops on a gpu": ({"budget_flops": "1e22", "gpu": "h100"},
                       ["--budget", "1e22", "--gpu", "h100"]),
    "flops alone": ({"budget_flops": "1e22"}, ["--budget", "1e22"]),
    "a million on 256": ({"budget_usd": "$1M", "gpu": "h100", "gpu_count": 256},
                         ["--budget-usd", "1M", "--gpu", "h100", "--gpus", "256"]),
}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


@pytest.mark.parametrize("case", COMMON)
async def test_the_short_reply_is_at_most_1500_characters_and_the_clis(
        client: Client, cli: Cli, case: str) -> None:
    arguments, argv = COMMON[case]
    result = await client.call_tool("split_budget", arguments)
    assert not result.is_error, _text(result)
    text = _text(result)
    assert len(text) <= SHORT_MAX, len(text)
    _, out, _ = cli("split", *argv)
    assert text == out  # one template: both doors say the same
    full = await client.call_tool("split_budget", {**arguments, "detail": "full"})
    _, out_full, _ = cli("split", *argv, "--detail", "full")
    assert _text(full) == out_full
    assert len(_text(full)) >= len(text)


async def test_the_full_detail_adds_the_quotes_and_the_calibration(client: Client) -> None:
    arguments = COMMON["dollars on a gpu"][0]
    short = _text(await client.call_tool("split_budget", arguments))
    full = _text(await client.call_tool("split_budget", {**arguments, "detail": "full"}))
    for quoted in ("'BFLOAT16 Tensor Core 1,979 teraFLOPS*'",
                   "covers 85% of the published runs held out one organisation",
                   "calibration set calibration_runs.csv"):
        assert quoted in full and quoted not in short
    assert len(short) * 2 < len(full)


async def test_the_structured_content_has_the_table_as_shown(client: Client) -> None:
    result = await client.call_tool("split_budget", COMMON["dollars on a gpu"][0])
    d = result.structured_content
    # The MFU prior's size term stops at 134.5M active parameters, below 1B: 100M is clamped
    # alone, so each of the four sizes keeps its own row and no rows are merged.
    assert [(g["first"], g["last"]) for g in d["row_groups"]] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert d["row_groups"][0]["mfu_prior_params"] is None
    assert d["mfu_clamps"] == []
    for row in [*d["rows"], d["ratio_split"]]:
        # nominal dollars × the 1.5 failure budget = the dollars with it
        assert row["dollar_cost_with_failures"] == pytest.approx(row["dollar_cost"] * 1.5,
                                                                  rel=1e-5)  # six digits
        assert row["budget_status"] in ("within", "over_at_slow_end", "over")
    assert [r["budget_status"] for r in d["rows"]] == [
        "over", "over", "over_at_slow_end", "over_at_slow_end"]  # 100B: offload's ×1.35
    assert d["safe_split"]["budget_status"] == "within"
    assert (d["mfu_as_of"], d["peak_label"], d["ratio_source"]) == (
        "2026-12-06", "NVIDIA H100 page, 2022", "default")
    assert d["price"]["label"] == "runpod.io/pricing"  # H100 SXM, RunPod Secure Cloud


async def test_the_best_size_as_read_goes_to_the_verdict_within_the_budget(
        client: Client, cli: Cli) -> None:
    """The review's case: split_budget on $60k and H100 read 7.7B on 154B, which the verdict on
    the same 8 devices priced at $60,070 with failures, "$69.70 over budget" (MARGINAL). Rounded
    down to the digits shown, 7.69B on 153B costs $59,602 (tests/skill/test_split_shown.py);
    the markdown, the structured content and the relay say the same numbers and count."""
    result = await client.call_tool("split_budget", {"budget_usd": "$60k", "gpu": "h100"})
    text, d = _text(result), result.structured_content
    assert d is not None
    assert "**Best size at the median MFU (0.20): 7.69B parameters on 153B tokens**" in text
    assert "on 8 × H100 SXM" in text
    best = d["ratio_split"]
    assert (best["params"], best["tokens"], d["gpu_count"]) == (7.69e9, 153e9, 8)
    assert best["dollar_cost_with_failures"] == pytest.approx(59_602.1, abs=0.1)
    assert d["relay"]["headline"].startswith(
        "Best size at the median MFU on 8 × H100 SXM: 7.69B parameters on 153B tokens")
    verdict = await client.call_tool("render_verdict", {
        "params": "7.69B", "tokens": "153B", "gpu": "h100", "gpu_count": 8,
        "budget_usd": "$60k", "predicted_gain": 0.02, "gain_uncertainty": 0.005})
    v = verdict.structured_content
    assert v is not None and v["verdict"] == "go", _text(verdict)
    assert "| Budget | $60,000: within it |" in _text(verdict)
    assert v["dollar_cost_with_failures"] == pytest.approx(best["dollar_cost_with_failures"])
    # the command line reads the same size, and its verdict agrees
    _, out, _ = cli("split", "--budget-usd", "60k", "--gpu", "h100")
    assert "7.69B parameters on 153B tokens" in out
    code, out, _ = cli("decide", "--params", "7.69B", "--tokens", "153B", "--gpu", "h100",
                       "--gpus", "8", "--budget-usd", "60k", "--gain", "0.02",
                       "--uncertainty", "0.005")
    assert code == 0 and out.startswith("### Verdict: **GO**") and "within it" in out
