"""Through the in-memory MCP client: a verdict never reads as a confident GO on what it cannot
know. A scaling fit with too few spare points gave 0.2883 ± 1.9e-12 and a GO (> 99%); a device
without a catalog price gave a GO with the cost unknown. Both are now marginal, say why, and the
relay asks for what is missing."""

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

RUN = {"params": "7B", "tokens": "140B", "gpu": "h100", "gpu_count": 64}
# The reviewer's six two-variable runs (L(N, D) has 5 parameters: one spare point).
SIX = [{"params": n, "tokens": d, "loss": loss} for n, d, loss in (
    ("100M", "2B", 3.2), ("300M", "6B", 2.9), ("1B", "20B", 2.65),
    ("100M", "6B", 3.1), ("300M", "2B", 3.0), ("1B", "6B", 2.75))]
# Four runs for the 3 parameters of L(C): one spare point, and no smaller form to fall back on.
FOUR = [{"compute": 1e17, "loss": 3.05}, {"compute": 1e18, "loss": 2.66},
        {"compute": 1e19, "loss": 2.42}, {"compute": 1e20, "loss": 2.25}]


async def _call(client: Client, tool: str,
                arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    result = await client.call_tool(tool, arguments)
    text = "\n".join(block.text for block in result.content)
    assert not result.is_error, text
    assert result.structured_content is not None
    return result.structured_content, text


@pytest.mark.slow  # 2.3 s (a bootstrap of six points); the slow set runs it
async def test_six_points_no_longer_give_a_near_zero_sigma(client: Client) -> None:
    data, text = await _call(client, "render_verdict",
                             {**RUN, "points": SIX, "baseline_loss": 2.65})
    assert data["gain_uncertainty"] > 0.01  # was 1.9e-12
    assert "e-12" not in text and "e-12" not in data["relay"]["headline"]
    assert "in compute alone (L(N, D) needs 7 runs or more: its 5 parameters and 2 spare" in text


async def test_a_fit_without_spare_points_gives_a_marginal_verdict(client: Client) -> None:
    data, text = await _call(client, "render_verdict",
                             {**RUN, "points": FOUR, "baseline_loss": 2.4})
    assert (data["verdict"], data["cause"]) == ("marginal", "uncertainty_unknown")
    assert data["gain_uncertainty"] is None and data["p_beats_baseline"] is None
    relay = data["relay"]
    assert relay["headline"].startswith("MARGINAL: the gain's uncertainty cannot be estimated "
                                        "from 4 small runs (1 spare for 3 parameters)")
    assert "±" not in relay["headline"]
    assert relay["ask"].startswith("Can you add 1 or more small runs")
    assert "cannot be estimated from 4 small runs" in text
    fit, fit_text = await _call(client, "fit_scaling_law", {"points": FOUR, "target_params": "7B",
                                                            "target_tokens": "140B",
                                                            "baseline_loss": 2.4})
    assert fit["gain_uncertainty"] is None and fit["interval"] is None
    assert fit["warnings"][0]["code"] == "too_few_spare_points"
    assert "1σ unknown" in fit_text and "are the predicted gain and uncertainty" not in fit_text


async def test_a_verdict_without_a_price_is_marginal_and_asks_for_it(client: Client) -> None:
    run = {"params": "7B", "tokens": "1T", "gpu": "h800", "gpu_count": 8,
           "predicted_gain": 0.5, "gain_uncertainty": 0.3}
    data, text = await _call(client, "render_verdict", run)
    assert (data["verdict"], data["cause"]) == ("marginal", "unknown_cost")
    assert data["dollar_cost"] is None
    relay = data["relay"]
    assert relay["headline"].startswith("MARGINAL: the cost is unknown without a price, though the "
                                        "net gain 0.5 ± 0.3 clears its uncertainty")
    assert relay["ask"] == "What do you pay per GPU-hour (usd_per_gpu_hour)?"
    assert "(`usd_per_gpu_hour`)" in text and "--price" not in text
    priced, _ = await _call(client, "render_verdict", {**run, "usd_per_gpu_hour": 2.5})
    assert priced["verdict"] == "go" and priced["dollar_cost"] > 0
