"""A fit in compute alone carries runs on one tokens-per-parameter line only along it: a target
far off the line gets the curve's value with no 1σ, and the verdict cannot be go on it."""

from __future__ import annotations

import pytest

from compute_budget.prompts import render_decision
from compute_budget.skill.scaling.fit import fit_scaling_law

# Hoffmann et al. 2022, eq. 2 (the Chinchilla fit): E = 1.69, A = 406.4, B = 410.7,
# α = 0.34, β = 0.28
E, A, B, ALPHA, BETA = 1.69, 406.4, 410.7, 0.34, 0.28


def chinchilla(n: float, d: float) -> float:
    return E + A / n**ALPHA + B / d**BETA


POINTS = [{"params": n, "tokens": 20 * n, "loss": round(chinchilla(n, 20 * n), 5)}
          for n in (20e6, 50e6, 100e6, 200e6, 400e6, 800e6)]


def test_a_target_far_off_the_runs_line_has_no_uncertainty() -> None:
    # a reviewer: 1B on 2T tokens (2,000 per parameter) from runs at 20 gave GO, loss 2.14
    # (interval 2.126-2.153) where the law that made the points gives 2.19: five σ off
    fit = fit_scaling_law(POINTS, target_params=1e9, target_tokens=2e12, baseline_loss=2.3)
    assert fit.form == "compute" and "tokens_follow_params" in fit.notes
    (w,) = [w for w in fit.warnings if w.code == "off_the_runs_line"]
    assert w.numbers["runs_ratio"] == pytest.approx(20)
    assert w.numbers["target_ratio"] == pytest.approx(2000)
    assert fit.interval is None and fit.gain_uncertainty is None
    assert abs(fit.predicted - chinchilla(1e9, 2e12)) > 0.04  # why it has none
    # on the line (and within 3x of it) the fit keeps its interval
    on = fit_scaling_law(POINTS, target_params=7e9, target_tokens=140e9, baseline_loss=2.3)
    near = fit_scaling_law(POINTS, target_params=7e9, target_tokens=7e9 * 50, baseline_loss=2.3)
    for kept in (on, near):
        assert kept.interval is not None
        assert not [w for w in kept.warnings if w.code == "off_the_runs_line"]


def test_the_verdict_on_it_cannot_be_go_and_says_why() -> None:
    from compute_budget import VerdictSpec, verdict_on

    decision = verdict_on(VerdictSpec(params="1B", tokens="2T", gpu="h100", gpu_count=8,
                                      points=POINTS, baseline_loss=2.3))
    assert decision.verdict == "marginal" and decision.cause == "uncertainty_unknown"
    assert ("The gain's uncertainty cannot be estimated: the small runs train at about 20.0 "
            "tokens per parameter and this run at 2,000, off the line their curve follows."
            in render_decision(decision))
    from compute_budget.tools.relay import relay

    told = relay("render_verdict", decision)
    assert told is not None and told["headline"].startswith(
        "MARGINAL: the gain's uncertainty cannot be estimated from small runs at about 20.0 "
        "tokens per parameter for a run at 2,000")
    fit = fit_scaling_law(POINTS, target_params=1e9, target_tokens=2e12, baseline_loss=2.3)
    told = relay("fit_scaling_law", fit)
    assert told is not None and "off the line their curve follows" in told["caveat"]
