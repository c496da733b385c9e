"""Issue 8 through the in-memory MCP client: advice an assistant can relay as it is."""

from typing import Any

import pytest
from mcp import Client

pytestmark = pytest.mark.anyio

RUN = {"params": "7B", "tokens": "100B", "gpu": "a100", "gpu_count": 8}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def _verdict(client: Client, **arguments: Any) -> tuple[dict[str, Any], str]:
    result = await client.call_tool("render_verdict", {**RUN, **arguments})
    assert not result.is_error, _text(result)
    return result.structured_content, _text(result)


async def test_the_same_gain_three_ways_gives_the_same_verdict(client: Client) -> None:
    # "Our dense model scores 55.0; the MoE will hit 57 ± 1.5", worth $50,000 a point.
    delta, _ = await _verdict(client, predicted_gain=2, gain_uncertainty=1.5,
                              usd_per_unit_gain=50_000)
    metric, text = await _verdict(client, metric_now=55, metric_expected=57,
                                  gain_uncertainty=1.5, usd_per_unit_gain="$50k")
    absolute, warned = await _verdict(client, predicted_gain=57, baseline_to_beat=55,
                                      gain_uncertainty=1.5, usd_per_unit_gain="50,000")
    for d in (delta, metric, absolute):
        assert d["net_gain"] == 2 and d["value_usd"] == 100_000
    assert delta["verdict"] == metric["verdict"] == absolute["verdict"]
    assert "55 → 57" in text  # the reply states the gain it used
    assert absolute["gain_notes"] == ["looks_absolute"] and "two absolute scores" in warned


async def test_a_go_states_its_chance_of_no_gain_and_its_kill_criteria(client: Client) -> None:
    # a 1σ go: gain 1 ± 0.99 → P(no gain) = 1 − Φ(1.0101) = 15.6%
    d, text = await _verdict(client, predicted_gain=1, gain_uncertainty=0.99)
    assert d["verdict"] == "go"
    assert d["p_positive"] == pytest.approx(0.8438, abs=1e-4)
    assert "84% that it gives any gain (16% that it gives none)" in text
    assert "of none" not in text and "the chance that it" not in text
    metrics = [k["metric"] for k in d["kill_criteria"]]
    # throughput, progress, and the metric: a run from scratch without small runs gets the bar
    # at the end, gain − σ = 0.01; spending is a budget line, not a kill criterion
    assert metrics == ["tokens_per_second_per_gpu", "tokens_trained_by_day", "gain_at_end"]
    assert d["kill_criteria"][2]["threshold"] == pytest.approx(0.01)
    assert all({"metric", "threshold", "unit"} <= set(k) for k in d["kill_criteria"])
    assert "**Kill criteria**" in text
    kills = text[text.index("**Kill criteria**"):text.index("**Next:**")]
    assert "$" not in kills.split("\n\nBudget:")[0]
    assert f"Budget: about ${d['spend_by_checkpoint_usd']:,.0f} spent by day" in text


async def test_marginal_advice_follows_the_stake(client: Client) -> None:
    # The same odds (net 0.74σ: Φ(0.74) = 77%) on a $26k run and on a 100x larger one.
    cheap, cheap_text = await _verdict(client, predicted_gain=0.37, gain_uncertainty=0.5)
    big, big_text = await _verdict(client, predicted_gain=0.37, gain_uncertainty=0.5,
                                   tokens="10T", gpu_count=1024)
    assert cheap["verdict"] == big["verdict"] == "marginal"
    assert cheap["p_beats_baseline"] == pytest.approx(0.7703, abs=1e-3)
    # k = ceil((0.5/0.37)²) = 2 quarter-scale runs = half the run: a study first, for both;
    # the stake is named in dollars in each reply.
    assert "at stake" in cheap_text and "at stake" in big_text
    assert big["dollar_cost_with_failures"] > 50 * cheap["dollar_cost_with_failures"]
    # with a wider uncertainty the study costs more than the run: running it is the cheapest
    # way to find out, stated as a bet with its stake
    wide, wide_text = await _verdict(client, predicted_gain=0.37, gain_uncertainty=0.8)
    assert wide["next_steps"][0]["code"] == "run_is_the_experiment"
    assert "cheapest way to find out" in wide_text and "It is a bet" in wide_text


async def test_an_ablations_remedy_is_seeds(client: Client) -> None:
    # "1.3B model, 26B tokens, +0.3% ± 0.5%": 3 seeds bring σ/√k under 0.3.
    d, text = await _verdict(client, params="1.3B", tokens="26B", kind="ablation",
                             predicted_gain=0.3, gain_uncertainty=0.5)
    assert d["verdict"] == "marginal" and d["kind"] == "ablation"
    (seeds,) = [s for s in d["next_steps"] if s["code"] == "more_seeds"]
    assert seeds["numbers"]["seeds"] == 3
    assert "3 seeds" in text and "small-scale data" not in text


async def test_money_is_read_one_way_and_never_dropped(client: Client) -> None:
    for budget in (400000, 4e5, "$400k", "400,000", "$400,000"):
        d, _ = await _verdict(client, predicted_gain=2, gain_uncertainty=0.5, budget_usd=budget)
        assert d["budget_usd"] == 400_000, budget
    bad = await client.call_tool("render_verdict", {**RUN, "predicted_gain": 2,
                                                    "gain_uncertainty": 0.5,
                                                    "budget_usd": "a lot"})
    assert bad.is_error and "budget_usd" in _text(bad)


@pytest.mark.parametrize(("arguments", "field"), [
    ({"predicted_gain": 2, "metric_now": 1, "metric_expected": 3, "gain_uncertainty": 1},
     "predicted_gain"),
    ({"metric_now": 1, "gain_uncertainty": 1}, "metric_expected"),
    ({"predicted_gain": 2, "gain_uncertainty": -1}, "gain_uncertainty"),
    ({"predicted_gain": 2, "gain_uncertainty": 1, "kind": "sweep"}, "kind"),
    ({"predicted_gain": 2, "gain_uncertainty": 1, "usd_per_unit_gain": "cheap"},
     "usd_per_unit_gain"),
])
async def test_bad_gain_inputs_name_the_field(client: Client, arguments: dict[str, Any],
                                              field: str) -> None:
    result = await client.call_tool("render_verdict", {**RUN, **arguments})
    assert result.is_error
    assert f"{field}:" in _text(result) or f"`{field}`" in _text(result), _text(result)


async def test_a_metric_pair_without_uncertainty_is_reported_missing(client: Client) -> None:
    result = await client.call_tool("render_verdict", {**RUN, "metric_now": 55,
                                                       "metric_expected": 57})
    assert result.is_error and "gain_uncertainty" in _text(result)


async def test_how_big_a_model_for_50k_answers_in_days_and_dollars(client: Client) -> None:
    result = await client.call_tool("split_budget", {"budget_usd": "$50,000", "gpu": "h100"})
    assert not result.is_error, _text(result)
    d, text = result.structured_content, _text(result)
    assert d["gpu_count"] == 8 and d["gpu_count_source"] == "default"
    assert "8 × H100 SXM" in text and "default" in text
    for row in d["rows"]:
        assert row["wall_days"] > 0 and row["dollar_cost_with_failures"] is not None
        low, high = row["dollar_cost_with_failures_range"]
        assert low < row["dollar_cost_with_failures"] < high
    # the median size spends the budget (shown rounded down: 6.98B on 139B, a little under
    # it); the safe size fits it even at the slow end
    assert 0.99 * 50_000 < d["ratio_split"]["dollar_cost_with_failures"] <= 50_000
    assert d["safe_split"]["dollar_cost_with_failures_range"][1] <= 50_000 * (1 + 1e-9)
    assert d["safe_split"]["params"] < d["ratio_split"]["params"]


async def test_a_marginal_fine_tunes_next_step_says_what_the_trial_must_show(
        client: Client) -> None:
    # 0.6 ± 0.7 from 55: marginal; try 30% of the tokens and go on only at 55.18 or more (30%
    # of the predicted 0.6), with the same number in the structured next step
    d, text = await _verdict(client, metric_now=55, metric_expected=55.6,
                             gain_uncertainty=0.7, kind="fine-tune")
    assert d["verdict"] == "marginal"
    (trial,) = [s for s in d["next_steps"] if s["code"] == "fewer_tokens_first"]
    assert trial["numbers"]["gain_at_least"] == pytest.approx(0.18)
    assert trial["numbers"]["level"] == pytest.approx(55.18)
    assert ("go on only if, by then, the metric is at least 0.18 above where it started "
            "(at least 55.18)") in text
    # its kill criteria check the metric at 10% of the tokens: here, any gain at all
    (check,) = [k for k in d["kill_criteria"] if k["metric"] == "gain_by_tokens"]
    assert (check["threshold"], check["bar"], check["tokens"]) == (0, "any_gain", 10e9)
    assert "At 10B tokens (10% of them, about day" in text
