"""The verdict rule: go, marginal, no-go, and the optional inputs that make it stricter."""

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
    return next(c for c in decision.checks if c.name == name)


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
    assert d.verdict == "no-go"
    assert "baseline" in d.reason


def test_marginal_advises_more_small_scale_data() -> None:
    d = decision_summary(EST, 1.2, 0.5, 1.0)
    assert d.verdict == "marginal"
    assert "small-scale data" in d.advice


def test_gain_per_dollar_is_always_reported() -> None:
    d = decision_summary(EST, 2.0, 0.5, 1.0)
    assert d.dollar_cost is not None and d.dollar_cost_with_failures is not None
    assert d.gain_per_dollar == pytest.approx(2.0 / d.dollar_cost)
    assert d.gain_per_dollar_with_failures == pytest.approx(2.0 / d.dollar_cost_with_failures)
    assert d.gain_per_gpu_hour == pytest.approx(2.0 / EST.gpu_hours)


def test_value_below_cost_with_failures_is_no_go() -> None:
    # Worth $10,000 per unit × 2 units = $20,000 < $21,034 with failures.
    d = decision_summary(EST, 2.0, 0.5, 1.0, usd_per_unit_gain=10_000)
    assert d.verdict == "no-go"
    assert d.value_usd == pytest.approx(20_000)
    assert not _check(d, "value_covers_cost").passed


def test_value_above_cost_keeps_go() -> None:
    d = decision_summary(EST, 2.0, 0.5, 1.0, usd_per_unit_gain=20_000)
    assert d.verdict == "go"


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
    assert d.gain_per_dollar is None
    assert d.verdict == "go"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"predicted_gain": math.nan}, "predicted_gain"),
        ({"gain_uncertainty": -0.1}, "gain_uncertainty"),
        ({"baseline_to_beat": math.inf}, "baseline_to_beat"),
        ({"usd_per_unit_gain": -5}, "usd_per_unit_gain"),
        ({"budget_usd": 0}, "budget_usd"),
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
    assert "unknown cost" in d.reason
