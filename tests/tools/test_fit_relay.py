"""fit_scaling_law through the in-memory MCP client: a client that reads the structured content
alone learns that a fit switched to compute alone and why (notes, relay caveat), that such a fit
gives no loss level at a checkpoint (kill_loss null, relay loss_check), and that a two-variable
fit's level is measured on a decayed checkpoint, the words render_verdict gives.

Points from Hoffmann et al. 2022's fit (E = 1.69, A = 406.4, B = 410.7, α = 0.34, β = 0.28)."""

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio


def _chinchilla(n: float, d: float) -> float:
    return 1.69 + 406.4 / n**0.34 + 410.7 / d**0.28


# The reviewer's six runs at 20 tokens per parameter (FINDINGS.md section 2), to 5 decimals.
SAME_RATIO = [{"params": n, "tokens": 20 * n, "loss": round(_chinchilla(n, 20 * n), 5)}
              for n in (20e6, 50e6, 100e6, 200e6, 400e6, 800e6)]
# Sizes and tokens varied independently, to 4 decimals: L(N, D) itself.
GRID = [{"params": n, "tokens": r * n, "loss": round(_chinchilla(n, r * n), 4)}
        for n in (20e6, 40e6, 80e6, 160e6, 320e6) for r in (5, 20, 80)]
TARGET = {"target_params": "7B", "target_tokens": "140B", "baseline_loss": 2.3}
DECAYED = "measured on a checkpoint whose learning rate has decayed (or after a short cooldown)"


async def _fit(client: Client, points: list[dict[str, float]]) -> tuple[dict[str, Any], str]:
    result = await client.call_tool("fit_scaling_law", {"points": points, **TARGET})
    text = "\n".join(block.text for block in result.content)
    assert not result.is_error, text
    assert result.structured_content is not None
    return result.structured_content, text


async def test_a_switch_to_compute_is_said_and_gives_no_checkpoint_level(client: Client) -> None:
    assert SAME_RATIO[0]["loss"] == 4.63151  # the reviewer's file, /tmp/cbw/pts3.csv
    data, text = await _fit(client, SAME_RATIO)
    assert data["form"] == "compute" and data["notes"] == ["tokens_follow_params"]
    assert data["kill_loss"] is None
    relay = data["relay"]
    assert relay["headline"].startswith("Predicted loss 2.185 (80% interval ")
    assert relay["caveat"].startswith("fitted in compute alone, not in L(N, D): your runs give "
                                      "params and tokens, but the runs' tokens follow from")
    assert relay["loss_check"].startswith("by the end, loss at most ")
    assert "A fit in compute alone gives no level at a checkpoint" in relay["loss_check"]
    assert "**Fitted in compute alone, not in L(N, D):**" in text
    assert relay["ask"].endswith("(render_verdict)?")


async def test_a_two_variable_level_carries_the_verdicts_caveat(client: Client) -> None:
    data, text = await _fit(client, GRID)
    assert data["form"] == "params_tokens" and data["notes"] == []
    assert data["kill_loss"]["tokens"] == pytest.approx(14e9)
    relay = data["relay"]
    assert relay["loss_check"].startswith("at 14B tokens (10% of them): loss at most ")
    assert DECAYED in relay["loss_check"] and DECAYED in text
    assert "caveat" not in relay
    verdict = await client.call_tool("render_verdict", {
        "params": "7B", "tokens": "140B", "gpu": "h100", "gpu_count": 64, "points": GRID,
        "baseline_loss": 2.3})
    assert DECAYED in verdict.content[0].text
