"""The issue-10 tools over MCP: fit_scaling_law, compute_optimal, plan_run, and their pictures."""

import base64
import struct
from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

POINTS = [{"compute": c, "loss": loss} for c, loss in (
    (1e17, 3.52), (3e17, 3.30), (1e18, 3.11), (3e18, 2.96), (1e19, 2.83), (3e19, 2.73),
    (1e20, 2.64))]


def _png(result: Any) -> bytes:
    images = [c for c in result.content if c.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    data = base64.b64decode(images[0].data)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (825, 506)
    return data


@pytest.mark.slow  # 1.6 s (draws the picture); the slow set runs it
async def test_fit_returns_the_cli_keys_and_a_picture_on_request(client: Client) -> None:
    plain = await client.call_tool("fit_scaling_law", {
        "points": POINTS, "target_compute": "1e22", "baseline_loss": 2.6})
    assert not plain.is_error and [c.type for c in plain.content] == ["text"]
    data = plain.structured_content
    assert {"predicted", "interval", "predicted_gain", "gain_uncertainty"} <= set(data)
    assert data["predicted_gain"] == pytest.approx(2.6 - data["predicted"], abs=1e-5)
    assert "curve" not in data  # the plotted curve only with detail full
    drawn = await client.call_tool("fit_scaling_law", {
        "points": POINTS, "target_compute": "1e22", "plot": True})
    assert len(_png(drawn)) > 10_000


async def test_a_picture_of_no_fit_is_refused_by_name(client: Client) -> None:
    result = await client.call_tool("fit_scaling_law", {
        "target_params": "7B", "target_tokens": "1T", "plot": True})
    assert result.is_error and "plot" in result.content[0].text


async def test_verdict_from_points_adds_the_loss_kill_criterion(client: Client) -> None:
    result = await client.call_tool("render_verdict", {
        "params": "1B", "tokens": "20B", "gpu": "h100", "gpu_count": 8,
        "points": POINTS, "baseline_loss": 2.7})
    assert not result.is_error, result.content[0].text
    text = result.content[0].text
    assert "| Gain from | your scaling fit of 7 small runs" in text
    assert "the edge of the scaling fit's interval at this run" in text


async def test_plan_run_reply_and_picture(client: Client) -> None:
    result = await client.call_tool("plan_run", {
        "params": "7B", "tokens": "300B", "deadline_days": 20, "gpus": ["h100", "a100"],
        "plot": True})
    assert not result.is_error, result.content[0].text
    assert result.content[0].text.startswith("### Plans to train")
    assert "estimate" not in result.structured_content["plans"][0]  # brief by default
    _png(result)


async def test_compute_optimal_places_a_run(client: Client) -> None:
    result = await client.call_tool("compute_optimal", {"params": "7B", "tokens": "100B"})
    assert result.structured_content["proposed"]["placement"] == "under_trained"
