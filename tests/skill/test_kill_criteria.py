"""Kill criteria that can kill (issue 16, item 5): throughput, progress, and the metric or the
loss at a checkpoint, derived from the gain and its σ or from a fit of small runs; spending is a
budget line apart; a marginal run's trial carries its own stop rule, the same number the
alternatives' fewer-tokens row gives."""

import pytest

from compute_budget import (
    RunSpec,
    ScalingPoint,
    decision_summary,
    estimate_run,
    fit_scaling_law,
    suggest_alternatives,
)
from compute_budget.skill.advice.kill_criteria import GainBasis, trial_gain

# The stage-3 skill's worked example: 7B × 100B tokens on 8 A100 at MFU 0.4 and $1.50 (48.7
# days, $21,034 with the failure budget).
WORKED = RunSpec(params="7B", tokens="100B", gpu="a100", gpu_count=8, mfu=0.4,
                 usd_per_gpu_hour=1.5)
EST = estimate_run(WORKED)
FINE_TUNE = estimate_run(WORKED.model_copy(update={"kind": "continued-pretrain"}))

# Hoffmann et al. 2022 ("Chinchilla"), eq. 2 and their fit: L(N, D) = E + A/N^α + B/D^β.
E, A, B, ALPHA, BETA = 1.69, 406.4, 410.7, 0.34, 0.28


def _chinchilla(n: float, d: float) -> float:
    return E + A / n**ALPHA + B / d**BETA


def _kills(decision):
    return {k.metric: k for k in decision.kill_criteria}


def test_spending_is_a_budget_line_not_a_kill_criterion() -> None:
    d = decision_summary(EST, 2.0, 0.5, 1.0, budget_usd=40_000)
    assert [k.metric for k in d.kill_criteria] == [
        "tokens_per_second_per_gpu", "tokens_trained_by_day", "gain_at_end"]
    # day 4.9 (10% of 48.7 days) × 24 h × 8 devices × $1.50
    assert d.checkpoint_day == 4.9
    assert d.spend_by_checkpoint_usd == pytest.approx(4.9 * 24 * 8 * 1.5)
    assert all(k.unit != "USD" and k.budget_share is None for k in d.kill_criteria)


@pytest.mark.parametrize(("gain", "sigma", "baseline", "least", "bar"), [
    (2.0, 0.5, 1.0, 1.5, "gain_low_end"),  # gain − σ = 1.5 ≥ the baseline 1
    (1.4, 0.5, 1.0, 1.0, "baseline"),  # gain − σ = 0.9 < 1: the run must at least beat 1
    (0.6, 0.7, 0.0, 0.0, "any_gain"),  # gain − σ = −0.1: only "any gain" is left
])
def test_a_run_from_a_model_has_a_metric_level_at_the_checkpoint(
        gain: float, sigma: float, baseline: float, least: float, bar: str) -> None:
    d = decision_summary(FINE_TUNE, gain, sigma, baseline)
    check = _kills(d)["gain_by_tokens"]
    # 10% of the tokens (10B of 100B), at about day N; the least final gain F, 10% of it by
    # then (the gain is concave in the tokens); a run on course for the predicted gain has
    # made at least 10% of it
    assert (check.share, check.tokens, check.day) == (0.1, pytest.approx(10e9), 4.9)
    assert check.threshold == pytest.approx(0.1 * least)
    assert check.expected == pytest.approx(0.1 * gain)
    assert (check.bar, check.direction, check.unit) == (bar, "at_least", "metric")
    assert check.level is None  # a delta: where the metric starts is unknown


def test_the_level_is_in_the_users_metric_when_it_is_known() -> None:
    # "we score 55; it will reach 57 ± 1.5": F = 0.5, by 10B tokens at least 55.05
    d = decision_summary(FINE_TUNE, None, 1.5, metric_now=55, metric_expected=57)
    check = _kills(d)["gain_by_tokens"]
    assert check.level == pytest.approx(55.05) and check.expected_level == pytest.approx(55.2)
    # a loss 2.10 → 2.05 ± 0.02: F = 0.03, by then at most 2.097
    loss = decision_summary(FINE_TUNE, None, 0.02, metric_now=2.10, metric_expected=2.05,
                            higher_is_better=False)
    check = _kills(loss)["gain_by_tokens"]
    assert (check.unit, check.threshold) == ("loss", pytest.approx(0.003))
    assert check.level == pytest.approx(2.097)


@pytest.mark.parametrize("kind", ["pretrain", "ablation"])
def test_without_a_curve_the_bar_is_at_the_end(kind: str) -> None:
    est = estimate_run(WORKED.model_copy(update={"kind": kind}))
    d = decision_summary(est, 1.5, 1.2, 0.0)
    check = _kills(d)["gain_at_end"]
    # the metric must end at least gain − σ = 0.3 above today's (an ablation: its control's)
    assert check.threshold == pytest.approx(0.3) and check.bar == "gain_low_end"
    assert (check.share, check.day) == (1.0, None)
    assert "gain_by_tokens" not in _kills(d)


@pytest.mark.parametrize("share", [0.05, 0.1, 0.3, 0.5])
@pytest.mark.parametrize(("n", "d0", "tokens"), [
    (7e9, 1e12, 1e11),  # continued pre-training of a model trained on 1T tokens
    (1e9, 1e10, 1e9),  # a fine-tune on a tenth of the pre-training tokens
    (70e9, 1.4e12, 2e12),  # more tokens than the model has seen
])
def test_the_trial_bar_never_stops_a_run_on_the_power_law(share: float, n: float, d0: float,
                                                          tokens: float) -> None:
    # A run that follows L(N, D) (Hoffmann et al. 2022) from D0 gains L(D0) − L(D0 + t): at
    # share s of its tokens it has made at least s × its final gain, the bar of a trial.
    def gained(t: float) -> float:
        return _chinchilla(n, d0) - _chinchilla(n, d0 + t)

    final = gained(tokens)
    assert gained(share * tokens) >= trial_gain(final, share)
    # and the bar is not empty: it is share × the final gain
    assert trial_gain(final, share) == pytest.approx(share * final)


def test_a_marginal_runs_trial_carries_its_stop_rule() -> None:
    # 0.6 ± 0.7: marginal; try 30% of the tokens (30B, 30% of $21,034) and go on only if the
    # metric has moved by 30% of 0.6 = 0.18 by then (to 55.18 when it starts at 55)
    d = decision_summary(FINE_TUNE, None, 0.7, metric_now=55, metric_expected=55.6)
    assert d.verdict == "marginal"
    (trial,) = [s for s in d.next_steps if s.code == "fewer_tokens_first"]
    assert trial.numbers["tokens"] == pytest.approx(30e9)
    assert trial.numbers["cost_with_failures"] == pytest.approx(
        0.3 * FINE_TUNE.dollar_cost_with_failures)
    assert trial.numbers["gain_at_least"] == pytest.approx(0.18)
    assert trial.numbers["level"] == pytest.approx(55.18)
    # a predicted gain ≤ 0: the bar is any movement at all
    (none,) = [s for s in decision_summary(FINE_TUNE, -0.1, 0.5).next_steps
               if s.code == "fewer_tokens_first"]
    assert none.numbers["gain_at_least"] == 0


def test_the_verdict_and_the_alternatives_give_the_same_stop_rule() -> None:
    spec = WORKED.model_copy(update={"kind": "fine-tune"})
    for gain, sigma in ((0.6, 0.7), (0.4, 1.0), (-0.2, 0.5)):
        d = decision_summary(estimate_run(spec), gain, sigma)
        (trial,) = [s for s in d.next_steps if s.code == "fewer_tokens_first"]
        report = suggest_alternatives(spec, predicted_gain=gain, gain_uncertainty=sigma)
        (row,) = [a for a in report.alternatives if a.kind == "fewer_tokens"]
        assert row.detail.stop_if_gain_below == pytest.approx(trial.numbers["gain_at_least"])


def _points_at(ratio: float) -> list[ScalingPoint]:
    """Six complete small runs at ``ratio`` tokens per parameter, on Hoffmann et al.'s fit."""
    sizes = (20e6, 40e6, 80e6, 160e6, 320e6, 640e6)
    return [ScalingPoint(compute=6 * n * ratio * n, loss=_chinchilla(n, ratio * n))
            for n in sizes]


def test_a_fit_in_compute_alone_gives_no_checkpoint_loss() -> None:
    # Measured: 1B params on 20B tokens, small runs at 20 tokens per parameter. The compute fit
    # at a tenth of the compute is a smaller model trained to the end (2.95); this run's
    # checkpoint, 1B params on 2B tokens, sits at 3.07 (Hoffmann et al.'s L(N, D)): a check
    # at the top of the fit's interval there would stop a run that is on its curve.
    fit = fit_scaling_law(_points_at(20), target_params=1e9, target_tokens=20e9,
                          baseline_loss=2.7)
    assert fit.form == "compute" and fit.kill_loss is None  # the fit gives no checkpoint
    tenth = fit_scaling_law(_points_at(20), target_compute=0.1 * fit.target_compute)
    assert tenth.interval is not None and tenth.interval[1] < _chinchilla(1e9, 2e9) - 0.1
    spec = RunSpec(params="1B", tokens="20B", gpu="h100", gpu_count=8)
    d = decision_summary(estimate_run(spec), fit.predicted_gain, fit.gain_uncertainty, fit=fit)
    kills = _kills(d)
    assert "loss_by_day" not in kills
    end = kills["loss_at_end"]
    assert (end.threshold, end.expected) == (fit.interval[1], fit.predicted)
    assert (end.direction, end.unit, end.share) == ("at_most", "loss", 1.0)


# The reviewer's six runs (FINDINGS.md section 2), generated from Hoffmann et al. 2022's fit
# (E = 1.69, A = 406.4, B = 410.7, α = 0.34, β = 0.28) at 20 tokens per parameter, losses
# rounded to 5 decimals; the same file as /tmp/cbw/pts3.csv.
REVIEWED = [ScalingPoint(params=n, tokens=20 * n, loss=round(_chinchilla(n, 20 * n), 5))
            for n in (20e6, 50e6, 100e6, 200e6, 400e6, 800e6)]


def test_the_fit_and_the_verdict_read_the_checkpoint_rule_from_the_fit() -> None:
    # `fit` gave "at 10% of its tokens the fit expects loss 2.39 (2.39 – 2.39); above 2.39 then,
    # stop", while a healthy 7B run at 14B tokens is at L(7B, 14B) = 2.465 (Hoffmann et al.):
    # the compute curve at a tenth of the compute is a 700M model trained to the end
    assert REVIEWED[0].loss == 4.63151 and REVIEWED[-1].loss == 2.64251  # as in the file
    assert _chinchilla(7e9, 14e9) == pytest.approx(2.4650, abs=1e-4)
    fit = fit_scaling_law(REVIEWED, target_params=7e9, target_tokens=140e9, baseline_loss=2.3)
    assert fit.form == "compute" and fit.notes == ["tokens_follow_params"]
    assert fit.kill_loss is None
    old_level = fit_scaling_law(REVIEWED, target_compute=0.1 * fit.target_compute)
    assert old_level.interval is not None
    assert old_level.interval[1] < _chinchilla(7e9, 14e9) - 0.07  # it would stop a healthy run
    spec = RunSpec(params="7B", tokens="140B", gpu="h100", gpu_count=64)
    d = decision_summary(estimate_run(spec), fit.predicted_gain, fit.gain_uncertainty, fit=fit)
    kills = _kills(d)
    assert "loss_by_day" not in kills and kills["loss_at_end"].share == 1.0
    # the generating law's loss at the run itself lies below the bar at its end
    assert fit.interval is not None and _chinchilla(7e9, 140e9) < kills["loss_at_end"].threshold


def test_a_two_variable_fit_gives_the_loss_at_the_checkpoint() -> None:
    # Sizes and tokens varied independently: L(N, D) itself; at 10% of the tokens its checkpoint
    # is L(1B, 2B) = 3.065 (Hoffmann et al.'s fit, reproduced by the points). The losses are
    # rounded to 4 decimals as a measured loss is reported: points exactly on the curve would
    # leave the fit's uncertainty unknown (no interval, so no level at the checkpoint).
    points = [ScalingPoint(params=n, tokens=r * n, loss=round(_chinchilla(n, r * n), 4))
              for n in (20e6, 40e6, 80e6, 160e6, 320e6) for r in (5, 20, 80)]
    fit = fit_scaling_law(points, target_params=1e9, target_tokens=20e9, baseline_loss=2.7)
    assert fit.form == "params_tokens"
    spec = RunSpec(params="1B", tokens="20B", gpu="h100", gpu_count=8)
    d = decision_summary(estimate_run(spec), fit.predicted_gain, fit.gain_uncertainty, fit=fit)
    check = _kills(d)["loss_by_day"]
    assert check.expected == pytest.approx(_chinchilla(1e9, 2e9), abs=2e-3)
    assert fit.kill_loss.interval is not None
    assert check.threshold == fit.kill_loss.interval[1] >= check.expected
    assert (check.tokens, check.share) == (pytest.approx(2e9), 0.1)


def test_a_fit_for_a_run_from_a_model_reads_its_gain_in_loss() -> None:
    # A from-scratch curve says nothing of a checkpoint of a run that starts from a model: the
    # fit's gain and σ give the bar, in loss, from its baseline loss
    fit = fit_scaling_law(_points_at(20), target_params=1e9, target_tokens=20e9,
                          baseline_loss=2.7)
    spec = RunSpec(params="1B", tokens="20B", gpu="h100", gpu_count=8, kind="fine-tune")
    d = decision_summary(estimate_run(spec), fit.predicted_gain, fit.gain_uncertainty, fit=fit)
    check = _kills(d)["gain_by_tokens"]
    least = fit.predicted_gain - fit.gain_uncertainty
    assert check.unit == "loss" and check.threshold == pytest.approx(0.1 * least)
    assert check.level == pytest.approx(2.7 - 0.1 * least)


def test_the_least_gain_and_its_level() -> None:
    basis = GainBasis(predicted_gain=2.0, gain_uncertainty=0.5, start=2.1, rises=False)
    assert basis.least_gain == (1.5, "gain_low_end") and basis.level(0.15) == pytest.approx(1.95)
    assert GainBasis(predicted_gain=0.3, gain_uncertainty=0.5,
                     baseline_to_beat=-1.0).least_gain == (0.0, "any_gain")
