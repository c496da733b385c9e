"""The verdict: findings with caps and cause codes, the net gain, probabilities, the stake,
kill criteria, and the optional inputs that make it stricter (codes and numbers, no English)."""

import math

import pytest

from compute_budget import decision_summary, estimate_run_cost

# The skill's worked example: $14,022 nominal, $21,034 with the 1.5x failure budget.
EST = estimate_run_cost(7e9, 1e11, 8, 312, 0.4, 1.5)


class _NoPrice:
    """An estimate on a device the catalog has no price for."""

    dollar_cost = None
    dollar_cost_with_failures = None
    gpu_hours = 1_000.0


def _check(decision, name):
    return next(c for c in decision.findings if c.check == name)


def _steps(decision):
    return [s.code for s in decision.next_steps]


@pytest.mark.parametrize(
    ("gain", "sigma", "baseline", "verdict"),
    [
        (2.0, 0.5, 1.0, "go"),  # 2 − 0.5 ≥ 1 and 2 > 0.5
        (1.5, 0.5, 1.0, "go"),  # boundary: gain − σ == baseline
        (1.4, 0.5, 1.0, "marginal"),  # gain − σ < baseline ≤ gain + σ
        (0.4, 0.5, 0.0, "marginal"),  # beats baseline 0 only within noise: gain ≤ σ
        (0.5, 0.5, 0.0, "marginal"),  # boundary: gain == σ is not > σ
        (0.5, 0.5, 1.0, "marginal"),  # boundary: gain + σ == baseline is not below it
        (0.4, 0.5, 1.0, "no-go"),  # gain + σ = 0.9 < 1
        (-1.0, 0.1, 0.0, "no-go"),
    ],
)
def test_verdict_rule(gain: float, sigma: float, baseline: float, verdict: str) -> None:
    assert decision_summary(EST, gain, sigma, baseline).verdict == verdict


def test_no_go_when_gain_plus_sigma_below_baseline() -> None:
    d = decision_summary(EST, 0.4, 0.5, 1.0)
    assert d.verdict == "no-go" and d.cause == "below_baseline"
    assert _check(d, "beats_baseline").caps == "no-go"
    assert "spend_elsewhere" in _steps(d)


def test_marginal_advice_follows_the_stake() -> None:
    # net 0.2 ± 0.5: k = ceil((0.5 / 0.2)²) = 7 quarter-scale runs settle it, 7 × ¼ × $21,034
    # = $36,810 > $21,034: the run is itself the cheapest experiment.
    d = decision_summary(EST, 1.2, 0.5, 1.0)
    assert d.verdict == "marginal" and d.cause == "noise"
    (step,) = [s for s in d.next_steps if s.code == "run_is_the_experiment"]
    assert step.numbers["runs"] == 7
    assert step.numbers["study_cost"] == pytest.approx(7 * 0.25 * EST.dollar_cost_with_failures)
    # net 0.5 ± 0.6: k = ceil(1.44) = 2 → 2 × ¼ of the cost: a small study first.
    small = decision_summary(EST, 1.5, 0.6, 1.0)
    assert small.verdict == "marginal"
    (step,) = [s for s in small.next_steps if s.code == "small_study"]
    assert step.numbers["runs"] == 2


def test_an_ablations_remedy_is_seeds_not_small_scale_data() -> None:
    # "1.3B model, 26B tokens, +0.3% ± 0.5%": k = ceil((0.5 / 0.3)²) = ceil(2.78) = 3 seeds.
    d = decision_summary(EST, 0.3, 0.5, 0.0, kind="ablation")
    assert d.verdict == "marginal" and d.kind == "ablation"
    (step,) = [s for s in d.next_steps if s.code == "more_seeds"]
    assert step.numbers["seeds"] == 3
    # this run and 2 more, priced nominally like the alternatives' more_seeds row
    assert step.numbers["extra_cost"] == pytest.approx(2 * EST.dollar_cost)
    assert "small_study" not in _steps(d) and "run_is_the_experiment" not in _steps(d)


def test_probabilities_against_hand_computations() -> None:
    # net 1 ± 1: P(beats) = Φ(1) = 0.8413; gain 2 ± 1: P(> 0) = Φ(2) = 0.9772.
    d = decision_summary(EST, 2.0, 1.0, 1.0)
    assert d.p_beats_baseline == pytest.approx(0.841345, abs=1e-6)
    assert d.p_positive == pytest.approx(0.977250, abs=1e-6)
    assert d.go_threshold == pytest.approx(0.841345, abs=1e-6)
    assert d.no_go_threshold == pytest.approx(0.158655, abs=1e-6)
    # a 1σ go carries a 16% chance of no gain at all: gain 1 ± 1 over 0 → P(> 0) = Φ(1)
    one_sigma = decision_summary(EST, 1.0, 1.0, 0.0)
    assert 1 - one_sigma.p_positive == pytest.approx(0.158655, abs=1e-6)
    # "a $23,000 run with a 77% chance of beating its baseline": net 0.74σ → Φ(0.74) = 0.7704
    assert decision_summary(EST, 0.74, 1.0, 0.0).p_beats_baseline == pytest.approx(
        0.770350, abs=1e-5)
    # σ = 0: certainty
    sure = decision_summary(EST, 2.0, 0.0, 1.0)
    assert (sure.p_beats_baseline, sure.p_positive, sure.signal_to_noise) == (1.0, 1.0, None)


def test_kill_criteria_against_hand_computation() -> None:
    from compute_budget import RunSpec, estimate_run

    est = estimate_run(RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8, mfu=0.4,
                               usd_per_gpu_hour=1.5))
    d = decision_summary(est, 2.0, 0.5, 1.0, budget_usd=40_000)
    kills = {k.metric: k for k in d.kill_criteria}
    # slow end of the band: min(prior low, 0.4) = the Ampere prior's low end for a 7B model
    # (0.165 in the 2026-12-06 calibration, its band ÷ 2.04 of the central) → 1e11 tokens over
    # 4.2e21 / (8 · 312e12 · low) s; per device:
    low = est.mfu_used.range[0]
    assert low == pytest.approx(est.mfu_used.prior.low) and 0.15 < low < 0.25
    slow_seconds = 4.2e21 / (8 * 312e12 * low)
    floor = 1e11 / slow_seconds / 8
    assert kills["tokens_per_second_per_gpu"].threshold == pytest.approx(floor, rel=1e-3)
    assert kills["tokens_per_second_per_gpu"].unit == "tokens/s per device"
    # day N = 10% of 48.7 days = 4.9; tokens by then at the floor.
    assert kills["tokens_trained_by_day"].day == 4.9 == d.checkpoint_day
    assert kills["tokens_trained_by_day"].threshold == pytest.approx(floor * 8 * 4.9 * 86400,
                                                                      rel=1e-3)
    assert kills["tokens_trained_by_day"].threshold < est.tokens
    # spending is a budget line, not a kill criterion: $1.5 × 8 devices × 24 h × 4.9 days
    assert "usd_spent_by_day" not in kills
    assert d.spend_by_checkpoint_usd == pytest.approx(4.9 * 24 * 8 * 1.5)
    no_go = decision_summary(est, 0.1, 0.5, 1.0)
    assert (no_go.kill_criteria, no_go.spend_by_checkpoint_usd) == ([], None)  # no-go: none


def test_the_gain_as_the_metric_itself() -> None:
    # "Our dense model scores 55.0; the MoE will hit 57 ± 1.5", worth $50,000 a point.
    d = decision_summary(EST, None, 1.5, metric_now=55, metric_expected=57,
                         usd_per_unit_gain=50_000)
    assert (d.predicted_gain, d.net_gain, d.gain_source) == (2, 2, "metric")
    assert d.value_usd == pytest.approx(100_000)
    assert d.expected_net_value_usd == pytest.approx(100_000 - EST.dollar_cost_with_failures)
    # a loss: 2.10 → 2.05, lower is better: a gain of 0.05
    loss = decision_summary(EST, None, 0.01, metric_now=2.10, metric_expected=2.05,
                            higher_is_better=False)
    assert loss.predicted_gain == pytest.approx(0.05) and loss.verdict == "go"


def test_value_and_gain_per_dollar_use_the_net_gain() -> None:
    # gain 57 over a baseline of 55 is net 2: worth $100,000, not $2,850,000.
    d = decision_summary(EST, 57, 1.5, 55, usd_per_unit_gain=50_000)
    assert d.net_gain == 2 and d.value_usd == pytest.approx(100_000)
    assert d.gain_per_dollar == pytest.approx(2 / EST.dollar_cost)
    assert "looks_absolute" in d.gain_notes


def test_a_gain_that_reads_like_a_level_is_noted() -> None:
    # SKILL.md's own example of the mistake: "the new model will hit 57 ± 1.5" passed as a gain
    # of 57 went through as a GO with no word (a reviewer, 2026-12-07)
    from compute_budget.prompts import render_decision

    d = decision_summary(EST, 57, 1.5)
    assert d.gain_notes == ["looks_like_a_level"]
    assert "⚠ A gain of 57 ± 1.5 reads like the score you expect rather than its change." \
        in render_decision(d)
    # a large gain with a wide σ, a small precise one, and a level beside a baseline (the
    # looks_absolute note, not both) are not noted as a level
    assert decision_summary(EST, 25, 10).gain_notes == []
    # ordinary large deltas (a reviewer's): Elo +50 ± 4, a win rate +25 ± 2, +100 ± 10
    for gain, sigma in ((50, 4), (25, 2), (100, 10), (20, 2)):
        assert decision_summary(EST, gain, sigma).gain_notes == [], (gain, sigma)
    assert decision_summary(EST, 5, 0.2).gain_notes == []
    assert decision_summary(EST, 57, 1.5, 55).gain_notes == ["looks_absolute"]


def test_unit_slip_is_noted() -> None:
    assert "unit_slip" in decision_summary(EST, 0.02, 1.5, 0.0).gain_notes
    assert decision_summary(EST, 2.0, 0.5, 1.0).gain_notes == []


def test_a_baseline_below_zero_is_noted_and_the_verdict_says_what_it_does() -> None:
    # 0.02 over a baseline of -0.01 is net 0.03: the alternative's loss counted as gain, where
    # doing nothing gains 0
    from compute_budget.prompts import render_decision

    d = decision_summary(EST, 0.02, 0.01, -0.01)
    assert d.net_gain == pytest.approx(0.03) and "baseline_below_zero" in d.gain_notes
    text = render_decision(d)
    assert "A baseline of −0.01 is a loss, so the net gain 0.03 is more than the gain 0.02" in text
    assert "baseline_below_zero" not in decision_summary(EST, 0.02, 0.01, 0.0).gain_notes


def test_gain_per_dollar_is_always_reported() -> None:
    d = decision_summary(EST, 2.0, 0.5, 1.0)
    assert d.dollar_cost is not None and d.dollar_cost_with_failures is not None
    # net gain 2 − 1 = 1
    assert d.gain_per_dollar == pytest.approx(1.0 / d.dollar_cost)
    assert d.gain_per_dollar_with_failures == pytest.approx(1.0 / d.dollar_cost_with_failures)
    assert d.gain_per_gpu_hour == pytest.approx(1.0 / EST.gpu_hours)


def test_value_below_cost_with_failures_is_no_go() -> None:
    # Net 2 − 1 = 1 unit × $20,000 = $20,000 < $21,034 with failures.
    d = decision_summary(EST, 2.0, 0.5, 1.0, usd_per_unit_gain=20_000)
    assert d.verdict == "no-go" and d.cause == "value_below_cost"
    assert d.value_usd == pytest.approx(20_000)
    assert d.expected_net_value_usd == pytest.approx(20_000 - 21_034.2, abs=1)
    assert not _check(d, "value_covers_cost").passed


def test_value_above_cost_keeps_go() -> None:
    d = decision_summary(EST, 2.0, 0.5, 1.0, usd_per_unit_gain=25_000)
    assert d.verdict == "go" and d.cause == "ok"


def test_budget_cap() -> None:
    assert decision_summary(EST, 2, 0.5, 1, budget_usd=10_000).verdict == "no-go"
    # Nominal $14,022 fits $18,000 but $21,034 with failures does not: marginal.
    assert decision_summary(EST, 2, 0.5, 1, budget_usd=18_000).verdict == "marginal"
    assert decision_summary(EST, 2, 0.5, 1, budget_usd=25_000).verdict == "go"


def test_benefit_is_kept() -> None:
    d = decision_summary(EST, 2, 0.5, 1, benefit="  a deployment that saves a contract ")
    assert d.benefit == "a deployment that saves a contract"
    assert decision_summary(EST, 2, 0.5, 1, benefit=" ").benefit is None


def test_unknown_cost_gives_unknown_gain_per_dollar() -> None:
    d = decision_summary(_NoPrice(), 2, 0.5, 1)
    assert d.gain_per_dollar is None and d.dollar_cost is None


def test_an_unknown_cost_is_never_an_unconditional_go() -> None:
    # A gain that clears its noise (2 − 0.5 ≥ 1) on a device without a price: with neither a
    # value per unit nor a budget the cost is still weighed against nothing, so it caps at
    # marginal (it was go), and the next step asks for the price.
    d = decision_summary(_NoPrice(), 2, 0.5, 1)
    assert d.verdict == "marginal" and d.cause == "unknown_cost"
    known = _check(d, "cost_known")
    assert (known.passed, known.caps, known.numbers) == (False, "marginal", {"gpu_hours": 1000})
    assert _check(d, "clears_uncertainty").passed and _check(d, "beats_baseline").passed
    assert _steps(d)[0] == "give_price"
    # the gain's own verdict still comes first: a gain lost in its noise says noise
    assert decision_summary(_NoPrice(), 0.4, 0.5, 0).cause == "noise"
    # one finding about the cost: a value or a budget already says it is unknown
    valued = decision_summary(_NoPrice(), 2, 0.5, 1, usd_per_unit_gain=100)
    assert "cost_known" not in {f.check for f in valued.findings}
    # a known price: no such finding, and the verdict is go as before
    priced = decision_summary(EST, 2, 0.5, 1)
    assert priced.verdict == "go" and "cost_known" not in {f.check for f in priced.findings}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"predicted_gain": math.nan}, "predicted_gain"),
        ({"gain_uncertainty": -0.1}, "gain_uncertainty"),
        ({"baseline_to_beat": math.inf}, "baseline_to_beat"),
        ({"usd_per_unit_gain": -5}, "usd_per_unit_gain"),
        ({"budget_usd": 0}, "budget_usd"),
        ({"metric_now": 55.0, "metric_expected": 57.0}, "predicted_gain"),  # both forms
        ({"predicted_gain": None, "metric_now": 55.0}, "metric_expected"),  # half a pair
        ({"predicted_gain": None, "gain_uncertainty": None, "metric_now": 55.0,
          "metric_expected": 57.0}, "gain_uncertainty"),  # a pair without uncertainty
        ({"gain_uncertainty": None}, "gain_uncertainty"),
    ],
)
def test_bad_decision_input(kwargs: dict[str, float], field: str) -> None:
    args = {"predicted_gain": 1.0, "gain_uncertainty": 0.1, "baseline_to_beat": 0.5}
    args.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{field}: "):
        decision_summary(EST, **args)


def test_a_run_that_does_not_fit_is_no_go() -> None:
    from compute_budget import RunSpec, estimate_run

    # 70B on one H100: its 16-bit weights alone are 140 GB, at any layout (offload included).
    est = estimate_run(RunSpec(params="70B", tokens="1B", gpu="h100", gpu_count=1))
    assert est.feasibility == "does_not_fit"
    d = decision_summary(est, 2.0, 0.1, 0.0)
    assert d.verdict == "no-go"
    assert d.feasibility == "does_not_fit"
    assert d.min_gpu_count == est.memory.min_gpu_count  # type: ignore[union-attr]
    assert d.min_gpu_count is not None and d.min_gpu_count > 1
    assert _check(d, "fits_in_memory").passed is False


def test_a_run_longer_than_a_year_is_no_go() -> None:
    from compute_budget import RunSpec, estimate_run

    # 7B on 2T tokens on one H100 at the Hopper prior: 8.4e22 FLOPs / (989e12 · 0.22) ≈ 12 years.
    est = estimate_run(RunSpec(params="7B", tokens="2T", gpu="h100", gpu_count=1))
    assert est.feasibility == "too_long" and est.wall_days > 365
    d = decision_summary(est, 2.0, 0.1, 0.0)
    assert d.verdict == "no-go"
    assert _check(d, "finishes_in_time").passed is False


def test_a_run_that_fits_only_with_another_layout_is_not_no_go() -> None:
    from compute_budget import RunSpec, estimate_run

    # Llama 2 70B on 2048 A100 (it trained): needs recomputation or TP, which the plan left open.
    est = estimate_run(RunSpec(params="70B", tokens="2T", gpu="a100", gpu_count=2048))
    assert est.memory is not None and est.memory.layout.chosen_by == "search"
    assert est.memory.fits is True and est.feasibility == "ok"
    d = decision_summary(est, 5, 1, 0)
    assert d.verdict == "go"
    assert _check(d, "fits_in_memory").passed is True


def test_a_budget_against_an_unknown_cost_cannot_be_go() -> None:
    d = decision_summary(_NoPrice(), 2, 0.5, 0.5, budget_usd=1)
    assert d.verdict == "marginal"
    assert _check(d, "within_budget").passed is None


def test_value_against_an_unknown_cost_cannot_be_go() -> None:
    d = decision_summary(_NoPrice(), 2, 0.2, 1, usd_per_unit_gain=100)
    assert d.verdict == "marginal"
    assert _check(d, "value_covers_cost").passed is None
    assert d.cause == "unknown_cost" and "give_price" in _steps(d)


def test_findings_cap_and_the_verdict_is_the_strictest() -> None:
    d = decision_summary(EST, 2, 0.5, 1, budget_usd=18_000, benefit="a paper")
    caps = {f.check: f.caps for f in d.findings}
    assert caps == {"clears_uncertainty": "go", "beats_baseline": "go",
                    "finishes_in_time": "go", "within_budget": "marginal",
                    "benefit_named": "go"}
    assert d.verdict == "marginal" and d.cause == "over_budget_with_failures"
    assert "cut_cost" in _steps(d)


def test_a_missing_benefit_is_asked_once_and_caps_nothing() -> None:
    d = decision_summary(EST, 2, 0.5, 1)
    assert d.verdict == "go" and _steps(d).count("name_benefit") == 1
    assert _check(d, "benefit_named").passed is False
    assert "name_benefit" not in _steps(decision_summary(EST, 2, 0.5, 1, benefit="a paper"))


def test_kill_criteria_fall_within_a_short_run() -> None:
    from compute_budget import RunSpec, estimate_run

    # a 0.7-day LoRA run: the check is a tenth of it to two figures (0.072 day, 1.7 hours; it
    # was rounded to 0.1 day, 2.4 hours, a seventh of the run), before its 200M tokens are done
    est = estimate_run(RunSpec(preset="llama-3-8b", tokens="200M", gpu="a100", gpu_count=1,
                               lora_rank=16, kind="fine-tune"))
    assert est.wall_days < 1
    d = decision_summary(est, 4, 2, 0)
    kills = {k.metric: k for k in d.kill_criteria}
    assert kills["tokens_trained_by_day"].day == pytest.approx(0.1 * est.wall_days, rel=0.05)
    assert kills["tokens_trained_by_day"].threshold < est.tokens


def test_lower_is_better_only_with_the_metric_pair() -> None:
    # the error named higher_is_better, which the CLI knows as --lower-is-better: it names the
    # gain the user gave instead, and what to give
    with pytest.raises(ValueError, match=r"^predicted_gain: -0.05 is not allowed; for a metric "
                                         r"where lower is better: give metric_now and "):
        decision_summary(EST, -0.05, 0.02, higher_is_better=False)


def test_a_baseline_that_looks_like_a_score_is_noted() -> None:
    d = decision_summary(EST, None, 1.5, 56, metric_now=55, metric_expected=57)
    assert "baseline_looks_absolute" in d.gain_notes


def test_continued_pretraining_settles_with_fewer_tokens_not_a_smaller_model() -> None:
    d = decision_summary(EST, 1.0, 1.5, kind="continued-pretrain")
    (step,) = [s for s in d.next_steps if s.code == "fewer_tokens_first"]
    assert step.numbers["token_share"] == 0.3
    assert "small_study" not in _steps(d) and "run_is_the_experiment" not in _steps(d)


def test_no_benefit_question_when_the_gain_has_a_dollar_value() -> None:
    d = decision_summary(EST, 2.0, 0.5, 1.0, usd_per_unit_gain=25_000)
    assert "name_benefit" not in _steps(d)
