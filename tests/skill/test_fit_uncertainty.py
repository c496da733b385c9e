"""A scaling fit that cannot estimate its own uncertainty says so (no interval, no 1σ), and the
verdict on its gain is marginal with that reason, never a go on a near-zero σ.

The case that prompted it: six two-variable points for the five parameters of L(N, D) left one
spare point; the fit interpolated them (residual σ 1e-13) and handed on 0.2883 ± 1.9e-12, which
the verdict called a GO at > 99%."""

import numpy as np
import pytest

from compute_budget import (
    RunSpec,
    ScalingPoint,
    VerdictSpec,
    estimate_run,
    fit_scaling_law,
    verdict_on,
)
from compute_budget.prompts import render_decision, render_fit
from compute_budget.skill.advice.from_points import GainFromPoints, decide
from compute_budget.skill.advice.gain import read_gain
from compute_budget.skill.advice.kill_criteria import GainBasis
from compute_budget.skill.errors import InputError
from compute_budget.skill.scaling.fit import EXACT_FIT, MIN_SPARE_POINTS

# The reviewer's six runs: 100M-1B parameters on 2B-20B tokens, losses as reported.
SIX = [{"params": n, "tokens": d, "loss": loss} for n, d, loss in (
    ("100M", "2B", 3.2), ("300M", "6B", 2.9), ("1B", "20B", 2.65),
    ("100M", "6B", 3.1), ("300M", "2B", 3.0), ("1B", "6B", 2.75))]
# L(C) = 1.8 + 40·C^(−0.12) at 1e17-1e20 FLOPs, with ±1% of the reducible loss alternating: a
# curve of 3 parameters through 4 points leaves 1 spare.
FOUR = [{"compute": c, "loss": 1.8 + 40 * c ** -0.12 * (1 + 0.01 * (-1) ** i)}
        for i, c in enumerate((1e17, 1e18, 1e19, 1e20))]
ON_THE_CURVE = [{"compute": float(c), "loss": float(1.8 + 40 * c ** -0.12)}
                for c in np.geomspace(1e17, 1e20, 8)]
RUN = {"params": "7B", "tokens": "140B", "gpu": "h100", "gpu_count": 64}


def _codes(fit) -> list[str]:  # type: ignore[no-untyped-def]
    return [w.code for w in fit.warnings]


@pytest.mark.slow  # about 1 s: the quick set keeps its minute on two cores
def test_six_two_variable_points_are_fitted_in_compute_with_spare_points() -> None:
    fit = fit_scaling_law(SIX, target_params=7e9, target_tokens=1.4e11, baseline_loss=2.65,
                          resamples=60)
    # L(N, D) needs 5 + 2 points; in compute alone (3 parameters) 6 points leave 3 spare
    assert fit.form == "compute" and "two_variable_data_fitted_in_compute" in fit.notes
    assert fit.gain_uncertainty is not None and fit.gain_uncertainty > 0.01  # was 1.9e-12
    assert fit.interval is not None and fit.interval[1] - fit.interval[0] > 0.05
    assert fit.residual_std > 0.01  # the split of compute between N and D is now residual
    seventh = [*SIX, {"params": "1B", "tokens": "2B", "loss": 2.9}]
    assert fit_scaling_law(seventh, target_params=7e9, target_tokens=1.4e11,
                           resamples=60).form == "params_tokens"


def test_too_few_spare_points_leave_the_uncertainty_unknown() -> None:
    fit = fit_scaling_law(FOUR, target_compute=1e22, baseline_loss=2.5)
    assert MIN_SPARE_POINTS == 2 and fit.points_used - 3 < MIN_SPARE_POINTS
    assert _codes(fit) == ["too_few_spare_points", "few_points"]
    assert fit.warnings[0].numbers == {"points": 4, "parameters": 3, "spare": 1, "needed": 5}
    assert fit.predicted_gain == pytest.approx(2.5 - fit.predicted)
    assert fit.gain_uncertainty is None and fit.interval is None and fit.resamples == 0
    assert fit.kill_loss is None  # in compute alone: no checkpoint, and no bar at the end
    assert all(low is None and high is None for _, _, low, high in fit.curve)
    run = fit.next_run  # still the run that would help most, without widths to quote
    assert run is not None and run.width_now is None and run.width_after is None
    reply = render_fit(fit)
    assert "1σ unknown" in reply and "4 points for 3 parameters leave 1 spare" in reply
    assert "±" not in reply and "interval unknown" in reply
    assert "**No loss check for the long run:**" in reply and "at most" not in reply
    # a fifth point leaves two spare: the bootstrap gives its interval and 1σ again
    fifth = [*FOUR, {"compute": 3e19, "loss": 1.8 + 40 * 3e19 ** -0.12}]
    known = fit_scaling_law(fifth, target_compute=1e22, baseline_loss=2.5, resamples=60)
    assert known.gain_uncertainty is not None and known.gain_uncertainty > 0
    assert "too_few_spare_points" not in _codes(known)


def test_points_on_the_curve_leave_the_uncertainty_unknown() -> None:
    # 8 points, 5 spare, but exactly on L(C): residual σ ~1e-15 measures no noise
    fit = fit_scaling_law(ON_THE_CURVE, target_compute=1e22, baseline_loss=2.5)
    assert _codes(fit)[0] == "exact_fit"
    numbers = fit.warnings[0].numbers
    # the limit is EXACT_FIT of the largest loss, 1.8 + 40·(1e17)^(−0.12) = 2.165
    largest = max(p["loss"] for p in ON_THE_CURVE)
    assert numbers["points"] == 8 and numbers["limit"] == pytest.approx(EXACT_FIT * largest)
    assert fit.residual_std < EXACT_FIT and fit.gain_uncertainty is None
    assert "lie on the curve" in render_fit(fit)
    # the same losses as reported to 4 decimals carry their rounding: known again
    rounded = [{**p, "loss": round(p["loss"], 4)} for p in ON_THE_CURVE]
    known = fit_scaling_law(rounded, target_compute=1e22, baseline_loss=2.5, resamples=60)
    assert known.gain_uncertainty is not None and "exact_fit" not in _codes(known)


def test_a_verdict_on_a_gain_without_its_sigma_is_marginal() -> None:
    d = verdict_on(VerdictSpec(**RUN, points=FOUR, baseline_loss=2.4))
    assert d.verdict == "marginal" and d.cause == "uncertainty_unknown"
    assert d.gain_uncertainty is None and d.p_beats_baseline is None and d.p_positive is None
    assert d.signal_to_noise is None and d.predicted_gain > 0
    gain_checks = [f for f in d.findings if f.check in ("clears_uncertainty", "beats_baseline")]
    assert [(f.passed, f.caps, f.cause) for f in gain_checks] == \
        [(None, "marginal", "uncertainty_unknown")] * 2
    step = d.next_steps[0]
    assert step.code == "more_points" and step.numbers["more"] == 1
    assert d.gain_fit is not None and d.gain_fit.next_run is not None
    assert step.numbers["compute"] == d.gain_fit.next_run.compute
    # no loss level at the end without the fit's interval; throughput and progress remain
    assert [k.metric for k in d.kill_criteria] == ["tokens_per_second_per_gpu",
                                                   "tokens_trained_by_day"]
    reply = render_decision(d)
    assert "### Verdict: **MARGINAL**" in reply
    assert "cannot be estimated from 4 small runs" in reply and "1σ unknown" in reply
    assert "unknown without the gain's 1σ" in reply and "Add 1 or more small runs" in reply


def test_a_verdict_on_points_that_lie_on_the_curve_asks_for_measured_losses() -> None:
    d = verdict_on(VerdictSpec(**RUN, points=ON_THE_CURVE, baseline_loss=2.4))
    assert (d.verdict, d.cause) == ("marginal", "uncertainty_unknown")
    assert d.next_steps[0].code == "measured_losses"
    assert "lie on the fitted curve" in render_decision(d)


def test_a_run_from_a_model_with_an_unknown_sigma_keeps_a_bar_without_a_low_end() -> None:
    estimate = estimate_run(RunSpec(**RUN, kind="continued-pretrain"))
    d = decide(estimate, VerdictSpec(**RUN, kind="continued-pretrain", points=FOUR,
                                     baseline_loss=2.4),
               GainFromPoints(points=[ScalingPoint(**p) for p in FOUR], baseline_loss=2.4))
    check = next(k for k in d.kill_criteria if k.metric == "gain_by_tokens")
    assert (check.threshold, check.bar) == (0.0, "any_gain")
    assert "the gain's low end is unknown without its 1σ" in render_decision(d)
    basis = GainBasis(predicted_gain=0.5, gain_uncertainty=None, baseline_to_beat=0.2)
    assert basis.least_gain == (0.2, "baseline")


def test_only_a_fit_may_leave_sigma_unknown() -> None:
    with pytest.raises(InputError) as info:
        read_gain(0.5, None)
    assert info.value.field == "gain_uncertainty"
    reading = read_gain(0.5, None, uncertainty_known=False)
    assert reading.gain_uncertainty is None and reading.p_beats_baseline is None
