"""The five-step procedure as a conversation would run it: estimate → verdict → alternatives."""

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

# The user's plan: continue-pretraining a 7B model on 100B tokens on 8 A100s (the stage-3
# skill's worked example), hoping for +0.3 points ± 0.2 where a cheaper fine-tune gives +1.0.
RUN = {"params": "7B", "tokens": "100B", "gpu": "a100", "gpu_count": 8, "mfu": 0.4,
       "usd_per_gpu_hour": 1.5}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_five_steps_no_go_then_alternatives(client: Client) -> None:
    # Steps 1–2: the estimate, with the table, its assumptions and the step-3 question.
    estimate = await client.call_tool("estimate_run_cost", RUN)
    text = _text(estimate)
    assert not estimate.is_error
    for row in ("| Compute | 4.20 × 10²¹ FLOPs", "| Wall time | 1,169 h (48.7 days)",
                "| Cost | $14,022", "| Cost with failure budget (×1.50) | **$21,034**"):
        assert row in text
    assert "MFU: 0.40, given by you" in text
    assert "**Next:** what gain should this run produce" in text

    # Step 3 is the user's answer; step 4: the verdict on it.
    verdict = await client.call_tool("render_verdict", {
        **RUN, "predicted_gain": 0.3, "gain_uncertainty": 0.2, "baseline_to_beat": 1.0})
    text = _text(verdict)
    assert verdict.structured_content["verdict"] == "no-go"
    assert "### Verdict: **NO-GO**" in text
    assert "Even the optimistic gain 0.5 (gain + σ) is below the 1 the cheaper option" in text
    assert "| Net gain per $1M |" in text
    assert 'I think this will help' not in text  # no preaching on a no-go
    assert "Price the cheaper alternatives" in text

    # Step 5: the alternatives, each with its own cost and saving against $14,022.
    alternatives = await client.call_tool("suggest_alternatives", RUN)
    text = _text(alternatives)
    report = alternatives.structured_content
    assert report["original"]["dollar_cost"] == pytest.approx(14_022, abs=1)
    kinds = [a["kind"] for a in report["alternatives"]]
    assert kinds[:2] == ["smaller_scale", "shorter_run"]
    assert "distillation" not in kinds  # no larger model to distil a generic 7B from
    assert kinds[-1] == "different_idea"
    for row in ("| Smaller scale | 3.5B params × 50B tokens", "| Shorter run first | 30B tokens",
                "| Other hardware |", "\nA different idea: the same money buys"):
        assert row in text
    small = report["alternatives"][0]
    assert small["dollar_cost"] == pytest.approx(14_022 / 4, abs=1)
    assert small["saving_usd"] == pytest.approx(14_022 * 3 / 4, abs=1)


async def test_go_verdict_reminds_of_kill_criterion(client: Client) -> None:
    verdict = await client.call_tool("render_verdict", {
        **RUN, "predicted_gain": 3.0, "gain_uncertainty": 0.5, "baseline_to_beat": 1.0,
        "benefit": "the headline result of a paper"})
    text = _text(verdict)
    assert verdict.structured_content["verdict"] == "go"
    assert "**Kill criteria**" in text and "tokens/s per device" in text
    assert "Tied to: the headline result of a paper." in text


async def test_marginal_verdict_advises_small_scale_data(client: Client) -> None:
    verdict = await client.call_tool("render_verdict", {
        **RUN, "predicted_gain": 1.2, "gain_uncertainty": 0.5, "baseline_to_beat": 1.0})
    assert verdict.structured_content["verdict"] == "marginal"
    # net 0.2 ± 0.5: 7 quarter-scale runs would cost more than the run itself
    assert "the cheapest way to find out" in _text(verdict)
