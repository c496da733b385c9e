"""SKILL.md's words on the gain, the kill criteria and the alternatives (issue 16, item 5): each
tool is told when to take the gain, and the example's stop rule is what the tool says."""

from pathlib import Path

import pytest

from compute_budget import RunSpec, suggest_alternatives

SKILL = (Path(__file__).parents[1] / "SKILL.md").read_text(encoding="utf-8")
FLAT = " ".join(SKILL.split())


def test_each_tool_is_told_when_to_take_the_gain() -> None:
    assert "call it with the same run arguments plus the gain, always" in FLAT.lower()
    assert "whenever the gain is known, `predicted_gain` and `gain_uncertainty` (not only for an" \
           " ablation" in FLAT
    assert "| `fit_scaling_law` | 3 | whenever small runs exist:" in SKILL
    # spending is not an abort condition; the kill criteria check the metric or the loss
    assert "budget line (`spend_by_checkpoint_usd`), not a reason to stop" in FLAT
    assert "the dollars spent by day N)" not in FLAT


def test_the_examples_stop_rule_is_what_the_tool_says() -> None:
    # "30B tokens first (about $6.1k, 70% less), stopping unless the metric has moved by 0.09"
    assert "30B tokens first (about $6.1k, 70% less), stopping unless the metric has moved by " \
           "0.09 by then" in FLAT
    report = suggest_alternatives(
        RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8, kind="continued-pretrain"),
        predicted_gain=0.3, gain_uncertainty=0.2)
    (fewer,) = [a for a in report.alternatives if a.kind == "fewer_tokens"]
    assert fewer.tokens == pytest.approx(30e9)
    assert fewer.detail.stop_if_gain_below == pytest.approx(0.09)
    assert fewer.cost_ratio == pytest.approx(0.3)
    assert fewer.dollar_cost is not None and round(fewer.dollar_cost / 100) == 61


def test_the_mcp_procedure_says_the_same() -> None:
    from compute_budget.prompts.mcp_texts import procedure_text

    text = " ".join(procedure_text().split())
    assert "Always pass the gain (or the points) with its uncertainty" in text
    assert "the gain and its uncertainty whenever they are known" in text
    assert "The dollars spent by day N are a budget line, not a reason to stop." in text
    assert "tokens and dollars by day N" not in text
