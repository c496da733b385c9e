"""Parsing small-run points, fitting a scaling law to them, and what it predicts."""

import json
import math
from typing import Any

import numpy as np
import pytest

from compute_budget.skill.advice.gain import read_gain
from compute_budget.skill.errors import InputError
from compute_budget.skill.scaling.fit import ScalingFit, fit_scaling_law
from compute_budget.skill.scaling.points import (
    MAX_POINTS,
    ScalingPoint,
    parse_points,
    points_from_objects,
)
from compute_budget.skill.scaling.specs import FitSpec

# Synthetic truth for the compute form: L(C) = 1.8 + a·C^(−0.3), reducible loss 1.5 at 1e17.
E_TRUE, B_TRUE = 1.8, 0.3
A_TRUE = 1.5 * 1e17**B_TRUE
# Hoffmann et al. 2022 eq. 2 with their published fit, the truth for the two-variable form.
CHINCHILLA = {"E": 1.69, "A": 406.4, "alpha": 0.34, "B": 410.7, "beta": 0.28}


def true_loss(c: float) -> float:
    return float(E_TRUE + A_TRUE * c**-B_TRUE)


def chinchilla(n: float, d: float) -> float:
    p = CHINCHILLA
    return float(p["E"] + p["A"] / n ** p["alpha"] + p["B"] / d ** p["beta"])


def compute_points(seed: int = 0, n: int = 8, noise: float = 0.01,
                   decades: float = 3.0) -> list[ScalingPoint]:
    """n runs over `decades` decades from 1e17 FLOPs; noise is a share of the reducible loss."""
    rng = np.random.default_rng(seed)
    c = np.geomspace(1e17, 1e17 * 10**decades, n)
    reducible = A_TRUE * c**-B_TRUE
    loss = E_TRUE + reducible * (1 + noise * rng.standard_normal(n))
    return [ScalingPoint(compute=float(x), loss=float(y)) for x, y in zip(c, loss, strict=True)]


def chinchilla_points(seed: int = 0, noise: float = 0.01) -> list[ScalingPoint]:
    """15 runs: 5 sizes from 10M to 1B parameters at 5, 20 and 80 tokens per parameter."""
    rng = np.random.default_rng(seed)
    out = []
    for n in np.geomspace(1e7, 1e9, 5):
        for tpp in (5, 20, 80):
            reducible = chinchilla(n, n * tpp) - CHINCHILLA["E"]
            loss = CHINCHILLA["E"] + reducible * (1 + noise * rng.standard_normal())
            out.append(ScalingPoint(params=float(n), tokens=float(n * tpp), loss=float(loss)))
    return out


def error_of(call) -> InputError:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as info:
        call()
    return info.value


# --- points --------------------------------------------------------------------------------

def test_csv_with_compute_in_any_order_and_blank_lines() -> None:
    pts = parse_points("loss,compute\n3.1,1e18\n\n2.9, 4e18 \n\n")
    assert [(p.compute, p.loss) for p in pts] == [(1e18, 3.1), (4e18, 2.9)]


def test_csv_params_and_tokens_derive_compute() -> None:
    # compute = 6·N·D (Kaplan et al. 2020, Table 1): 6 × 125e6 × 2.5e9 = 1.875e18.
    pts = parse_points("params,tokens,loss\n125M,2.5B,3.3\n350M,7B,3.0\n")
    assert pts[0].compute == pytest.approx(1.875e18)
    assert pts[1].params == 350e6 and pts[1].tokens == 7e9


def test_mixed_row_kinds_are_fine_when_compute_is_known_everywhere() -> None:
    text = "compute,params,tokens,loss\n1e18,,,3.2\n,1B,20B,2.8\n5e19,1B,,2.7\n"
    pts = parse_points(text)
    assert [p.compute for p in pts] == pytest.approx([1e18, 1.2e20, 5e19])
    # a row with params but neither tokens nor compute cannot be placed
    err = error_of(lambda: parse_points("compute,params,tokens,loss\n1e18,,,3\n,1B,,2.8\n"))
    assert err.field == "points[1].tokens"


def test_json_and_objects() -> None:
    text = json.dumps([{"compute": "1e18", "loss": 3.0}, {"params": "7B", "tokens": 1e11,
                                                          "loss": "2.5"}])
    pts = parse_points(text)
    assert pts[1].compute == pytest.approx(6 * 7e9 * 1e11)
    assert points_from_objects([{"compute": 2e18, "loss": 2.0}])[0].compute == 2e18
    assert parse_points(text, fmt="json") == pts


@pytest.mark.parametrize(("text", "field", "value"), [
    ("compute,loss\n1e18,3\n0,2.9\n", "points[1].compute", "0"),
    ("compute,loss\n-1e18,3\n", "points[0].compute", "-1e18"),
    ("params,tokens,loss\n1B,20B,3\n1B,-5,2\n", "points[1].tokens", "-5"),
    ("params,tokens,loss\n0,20B,3\n", "points[0].params", "0"),
    ("compute,loss\n1e18,3\n2e18,nan\n", "points[1].loss", "nan"),
    ("compute,loss\n1e18,inf\n", "points[0].loss", "inf"),
    ("compute,loss\n1e18,3\n2e18,2.9\n3e18,\n", "points[2].loss", None),
    ("compute,loss\n1e18,3\n2e18\n", "points[1]", "2e18"),
])
def test_bad_csv_values_name_the_row(text: str, field: str, value: object) -> None:
    err = error_of(lambda: parse_points(text))
    assert err.field == field
    assert err.value == value
    assert err.allowed


def test_bad_csv_shapes() -> None:
    err = error_of(lambda: parse_points("compute,loss,gpu\n1e18,3,h100\n"))
    assert err.field == "points" and err.value == ["gpu"] and "gpu" in str(err)
    assert "loss" in error_of(lambda: parse_points("compute\n1e18\n")).allowed
    assert error_of(lambda: parse_points("")).field == "points"
    assert error_of(lambda: parse_points("  \n\n")).field == "points"
    assert "at least one point" in error_of(lambda: parse_points("compute,loss\n")).allowed
    assert error_of(lambda: parse_points("[]")).value == []
    err = error_of(lambda: parse_points("compute,loss\n" + "1e18,3\n" * (MAX_POINTS + 1)))
    assert err.field == "points" and "10,000" in err.allowed


def test_bad_json() -> None:
    assert "JSON" in error_of(lambda: parse_points("[{", fmt="json")).allowed
    assert error_of(lambda: parse_points('{"compute": 1}')).field == "points"
    err = error_of(lambda: points_from_objects([{"compute": 1e18, "loss": 3, "gpu": "h100"}]))
    assert err.field == "points[0]" and err.value == ["gpu"]
    err = error_of(lambda: points_from_objects([{"compute": True, "loss": 3}]))
    assert err.field == "points[0].compute"
    assert error_of(lambda: points_from_objects([3.0])).field == "points[0]"  # type: ignore[list-item]


# --- recovering known parameters -----------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recovers_the_compute_form(seed: int) -> None:
    # 8 points over 3 decades, 1% noise on the reducible loss. Tolerance: E ± 0.05, b ± 0.03,
    # the fitted curve within 1% of the truth over the points (a alone is poorly determined:
    # it trades off against b).
    fit = fit_scaling_law(compute_points(seed), target_compute=3e21, resamples=60)
    assert fit.form == "compute"
    assert fit.parameters["E"] == pytest.approx(E_TRUE, abs=0.05)
    assert fit.parameters["b"] == pytest.approx(B_TRUE, abs=0.03)
    assert 0.4 < fit.parameters["a"] / A_TRUE < 2.5
    for c in (1e17, 1e18, 1e19, 1e20):
        p = fit.parameters
        assert p["E"] + p["a"] * c ** -p["b"] == pytest.approx(true_loss(c), rel=0.01)
    assert fit.predicted == pytest.approx(true_loss(3e21), rel=0.02)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recovers_the_two_variable_form(seed: int) -> None:
    # 15 points (10M-1B parameters, 5-80 tokens per parameter), 1% noise on the reducible
    # loss. Tolerance: E ± 0.1, α and β ± 0.04.
    fit = fit_scaling_law(chinchilla_points(seed), target_params=7e9, target_tokens=1.4e11,
                          resamples=60)
    assert fit.form == "params_tokens"
    p = fit.parameters
    assert p["E"] == pytest.approx(CHINCHILLA["E"], abs=0.1)
    assert p["alpha"] == pytest.approx(CHINCHILLA["alpha"], abs=0.04)
    assert p["beta"] == pytest.approx(CHINCHILLA["beta"], abs=0.04)
    assert fit.target_compute == pytest.approx(6 * 7e9 * 1.4e11)
    assert fit.predicted == pytest.approx(chinchilla(7e9, 1.4e11), rel=0.02)


@pytest.mark.slow
def test_interval_covers_the_true_value_at_the_stated_rate() -> None:
    # 200 synthetic data sets: 5-10 points over 3 decades, noise 1.5% of the reducible loss
    # (at the middle of the range, the same for every point), target 10-30x beyond the largest
    # point. The 80% interval must cover the true curve value 72-90% of the time (the standard
    # error of a rate near 0.8 over 200 trials is 0.028). Fewer resamples than the default to
    # keep it fast; the same method.
    covered = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(5, 11))
        c = np.geomspace(1e17, 1e20, n)
        reducible = A_TRUE * c**-B_TRUE
        noise = 0.015 * math.sqrt(reducible[0] * reducible[-1])
        loss = E_TRUE + reducible + noise * rng.standard_normal(n)
        target = float(rng.uniform(10, 30) * c[-1])
        fit = fit_scaling_law([{"compute": float(x), "loss": float(y)}
                               for x, y in zip(c, loss, strict=True)],
                              target_compute=target, resamples=100, seed=seed)
        covered.append(bool(fit.interval[0] <= true_loss(target) <= fit.interval[1]))
    assert 0.72 <= np.mean(covered) <= 0.90, np.mean(covered)


def test_deterministic() -> None:
    # Its speed is benchmarks/fit_speed.py's (ratios in one run), not a timed unit test's.
    points = compute_points(3, n=10)
    first = fit_scaling_law(points, target_compute=3e21, seed=7)
    assert fit_scaling_law(points, target_compute=3e21, seed=7) == first
    assert fit_scaling_law(points, target_compute=3e21, seed=8).interval != first.interval
    assert first.resamples == 400


# --- what the result says ------------------------------------------------------------------

def test_gain_feeds_the_verdict() -> None:
    fit = fit_scaling_law(compute_points(0), target_compute=3e21, baseline_loss=2.0)
    assert fit.predicted_gain == pytest.approx(2.0 - fit.predicted)
    assert fit.gain_uncertainty is not None and fit.gain_uncertainty > 0
    # About half the interval's width is 1.28σ at 80%.
    width = fit.interval[1] - fit.interval[0]
    assert fit.gain_uncertainty == pytest.approx(width / (2 * 1.2816), rel=0.3)
    reading = read_gain(fit.predicted_gain, fit.gain_uncertainty)
    assert reading.gain == fit.predicted_gain and reading.p_positive > 0.99
    plain = fit_scaling_law(compute_points(0), target_compute=3e21)
    assert plain.predicted_gain is None and plain.gain_uncertainty is None


def test_a_metric_where_higher_is_better() -> None:
    # accuracy = 0.9 − 0.5·(C/1e17)^(−0.3): fitted as its negation, reported with E the ceiling.
    # Rounded to 4 decimals, as a measured score is reported (exact values lie on the curve,
    # and their scatter cannot measure the noise: test_points_on_the_curve_...).
    c = np.geomspace(1e17, 1e20, 8)
    acc = np.round(0.9 - 0.5 * (c / 1e17) ** -0.3, 4)
    points = [{"compute": float(x), "loss": float(y)} for x, y in zip(c, acc, strict=True)]
    fit = fit_scaling_law(points, target_compute=3e21, higher_is_better=True,
                          baseline_loss=0.85)
    assert "fitted_as_negation" in fit.notes
    assert fit.parameters["E"] == pytest.approx(0.9, abs=1e-3)
    expected = 0.9 - 0.5 * (3e21 / 1e17) ** -0.3
    assert fit.predicted == pytest.approx(expected, abs=1e-3)
    assert fit.predicted_gain == pytest.approx(fit.predicted - 0.85)
    assert fit.interval is not None and fit.interval[0] <= fit.predicted <= fit.interval[1]
    # the same rising data read as a loss is refused
    err = error_of(lambda: fit_scaling_law(points, target_compute=3e21))
    assert err.field == "points" and "higher_is_better" in err.allowed


def test_kill_loss_lies_between_the_points_and_the_prediction() -> None:
    points = compute_points(0)
    fit = fit_scaling_law(points, target_compute=3e21)  # 30x the largest point
    # in compute alone, a curve of complete runs: no level at a checkpoint of a longer one
    assert fit.form == "compute" and fit.kill_loss is None
    # two variables: L(N, 0.1·D) at the target's size
    two = fit_scaling_law(chinchilla_points(0), target_params=7e9, target_tokens=1.4e11,
                          resamples=60)
    kill = two.kill_loss
    assert kill is not None and kill.share == 0.1 and kill.compute == pytest.approx(5.88e20)
    assert two.predicted < kill.expected  # the checkpoint has a tenth of the tokens
    assert kill.interval is not None and kill.interval[0] <= kill.expected <= kill.interval[1]
    assert two.kill_loss.params == 7e9 and two.kill_loss.tokens == pytest.approx(1.4e10)
    assert two.kill_loss.expected == pytest.approx(chinchilla(7e9, 1.4e10), rel=0.03)


def test_next_run_narrows_the_interval() -> None:
    fit = fit_scaling_law(compute_points(1, n=5), target_compute=1e22)
    run = fit.next_run
    assert run is not None
    assert run.width_now == pytest.approx(fit.interval[1] - fit.interval[0])
    assert run.width_after < run.width_now
    assert run.multiple in (2, 4, 10, 30) and run.compute < fit.target_compute
    assert run.width_after == min(width for _, width in run.candidates)
    assert run.expected_loss == pytest.approx(true_loss(run.compute), rel=0.02)
    # no candidate below a target just above the largest point
    assert fit_scaling_law(compute_points(1), target_compute=1.5e20).next_run is None


def test_two_variable_next_run_and_compute_only_target() -> None:
    fit = fit_scaling_law(chinchilla_points(1), target_compute=1e22, resamples=60)
    assert "target_at_fit_optimum" in fit.notes
    assert fit.target_params is not None and fit.target_tokens is not None
    assert 6 * fit.target_params * fit.target_tokens == pytest.approx(1e22)
    run = fit.next_run
    assert run is not None and run.params is not None and run.tokens is not None
    assert 6 * run.params * run.tokens == pytest.approx(run.compute)
    assert run.width_after < run.width_now


def test_curve_for_a_plot_and_json() -> None:
    fit = fit_scaling_law(compute_points(0), target_compute=3e21, baseline_loss=2.0)
    assert len(fit.curve) == 40
    assert fit.curve[0][0] == pytest.approx(1e17) and fit.curve[-1][0] == pytest.approx(3e21)
    assert fit.curve[-1][1] == pytest.approx(fit.predicted)
    assert all(low <= mid <= high for _, mid, low, high in fit.curve)
    assert [row[1] for row in fit.curve] == sorted((row[1] for row in fit.curve), reverse=True)
    again = ScalingFit.model_validate_json(fit.model_dump_json())
    assert again == fit


# --- warnings ------------------------------------------------------------------------------

def codes(fit: ScalingFit) -> set[str]:
    return {w.code for w in fit.warnings}


def test_warnings_fire_when_they_should_and_not_otherwise() -> None:
    clean = fit_scaling_law(compute_points(0), target_compute=3e21, baseline_loss=2.0,
                            resamples=60)
    assert codes(clean) == set()
    far = fit_scaling_law(compute_points(0), target_compute=3e22, resamples=60)
    assert codes(far) == {"far_extrapolation"}
    assert far.warnings[0].numbers["ratio"] == pytest.approx(300)
    close = fit_scaling_law(compute_points(0), target_compute=3e21,
                            baseline_loss=clean.predicted + 0.001, resamples=60)
    assert "interval_wider_than_gain" in codes(close)
    few = fit_scaling_law(compute_points(0, n=5), target_compute=3e21, resamples=60)
    assert codes(few) == {"few_points"}
    assert few.warnings[0].numbers == {"points": 5, "parameters": 3, "recommended": 6}
    noisy = fit_scaling_law(compute_points(4, noise=0.4), target_compute=3e21, resamples=60)
    assert "poor_fit" in codes(noisy) and noisy.r_squared < 0.95


# --- the form and the target ---------------------------------------------------------------

def test_two_variable_data_with_too_few_points_or_no_independent_spread() -> None:
    five = chinchilla_points(0)[:5]  # sizes 10M and 30M at 5, 20, 80 tokens per parameter
    fit = fit_scaling_law(five, target_compute=1e19, resamples=60)
    assert fit.form == "compute" and "two_variable_data_fitted_in_compute" in fit.notes
    # all at 20 tokens per parameter: N and D move together, α and β cannot be told apart
    same_ratio = [{"params": n, "tokens": 20 * n, "loss": chinchilla(n, 20 * n)}
                  for n in np.geomspace(1e7, 1e9, 8)]
    fit = fit_scaling_law(same_ratio, target_params=7e9, target_tokens=1.4e11, resamples=60)
    assert fit.form == "compute" and fit.notes == ["tokens_follow_params"]  # it was silent
    assert fit.target_tokens == 1.4e11
    # one size on several token counts, or several sizes on one: nothing to tell N from D by
    one_size = [{"params": 1e8, "tokens": d, "loss": chinchilla(1e8, d)}
                for d in np.geomspace(1e9, 1e11, 8)]
    one_data = [{"params": n, "tokens": 1e10, "loss": chinchilla(n, 1e10)}
                for n in np.geomspace(1e7, 1e9, 8)]
    assert fit_scaling_law(one_size, target_compute=1e20, resamples=60).notes == ["params_fixed"]
    assert fit_scaling_law(one_data, target_compute=1e20, resamples=60).notes == ["tokens_fixed"]
    # compute alone was what the points gave: nothing to say
    assert fit_scaling_law(compute_points(0), target_compute=1e21, resamples=60).notes == []


def test_target_from_any_two_of_three() -> None:
    points = compute_points(0)
    by_size = fit_scaling_law(points, target_params=1e9, target_tokens=5e11, resamples=60)
    assert by_size.target_compute == pytest.approx(3e21)
    derived = fit_scaling_law(points, target_compute=3e21, target_params=1e9, resamples=60)
    assert derived.target_tokens == pytest.approx(5e11)
    err = error_of(lambda: fit_scaling_law(points, target_compute=1e22, target_params=1e9,
                                           target_tokens=5e11))
    assert err.field == "target_compute" and "within 1%" in err.allowed


# --- bad input -----------------------------------------------------------------------------

def test_too_few_points_names_what_each_form_needs() -> None:
    err = error_of(lambda: fit_scaling_law(compute_points(0, n=3), target_compute=1e21))
    assert err.field == "points" and "4 points" in err.allowed
    assert "5 for its uncertainty" in err.allowed and "7 for L(N, D)" in err.allowed


def test_duplicate_points_only() -> None:
    same = [{"compute": 1e18, "loss": 3.0 + 0.01 * i} for i in range(5)]
    err = error_of(lambda: fit_scaling_law(same, target_compute=1e21))
    assert err.field == "points" and "duplicate points only" in err.allowed
    two_places = [{"compute": 1e18 * (1 + i % 2), "loss": 3.0 - 0.1 * (i % 2)} for i in range(6)]
    err = error_of(lambda: fit_scaling_law(two_places, target_compute=1e21))
    assert "3 or more different computes" in err.allowed


def test_a_loss_that_rises_or_stays_flat_is_refused() -> None:
    rising = [{"compute": c, "loss": 2.0 + 0.1 * i}
              for i, c in enumerate(np.geomspace(1e17, 1e20, 6))]
    err = error_of(lambda: fit_scaling_law(rising, target_compute=1e21))
    assert err.field == "points" and "falls as compute grows" in err.allowed
    flat = [{"compute": c, "loss": 2.0} for c in np.geomspace(1e17, 1e20, 6)]
    assert error_of(lambda: fit_scaling_law(flat, target_compute=1e21)).field == "points"


def test_missing_target_and_target_below_the_points() -> None:
    points = compute_points(0)
    err = error_of(lambda: fit_scaling_law(points))
    assert err.field == "target_compute" and err.value is None
    assert error_of(lambda: fit_scaling_law(points, target_params=1e9)).field == \
        "target_compute"
    err = error_of(lambda: fit_scaling_law(points, target_compute=1e16))
    assert err.field == "target_compute" and "smallest point" in err.allowed
    # within the points is allowed (interpolation)
    inside = fit_scaling_law(points, target_compute=1e19, resamples=60)
    assert inside.predicted == pytest.approx(true_loss(1e19), rel=0.01)


@pytest.mark.parametrize("level", [0.49, 0.995, 1.2, 0.0, math.nan, math.inf, True, "0.8"])
def test_level_outside_the_range(level: object) -> None:
    err = error_of(lambda: fit_scaling_law(compute_points(0), target_compute=3e21,
                                           level=level))  # type: ignore[arg-type]
    assert err.field == "level" and "from 0.5 to 0.99" in err.allowed


@pytest.mark.parametrize("level", [0.5, 0.99])
def test_the_levels_bounds_are_allowed(level: float) -> None:
    # the help says "0.5 to 0.99": both ends are levels the bootstrap can give (their quantiles
    # lie among the draws), so the library, the spec and the help agree on them
    fit = fit_scaling_law(compute_points(0), target_compute=3e21, level=level, resamples=60)
    assert fit.level == level and fit.interval is not None
    assert fit.interval[0] < fit.predicted < fit.interval[1]
    assert FitSpec(target_compute=3e21, points=compute_points(0), level=level).level == level


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"target_compute": math.nan}, "target_compute"),
    ({"target_compute": math.inf}, "target_compute"),
    ({"target_compute": "lots"}, "target_compute"),
    ({"target_compute": -1e21}, "target_compute"),
    ({"target_params": 1e9, "target_tokens": math.inf}, "target_tokens"),
    ({"target_params": 0, "target_tokens": 1e12}, "target_params"),
    ({"target_compute": 3e21, "baseline_loss": math.nan}, "baseline_loss"),
    ({"target_compute": 3e21, "baseline_loss": -math.inf}, "baseline_loss"),
    ({"target_compute": 3e21, "resamples": True}, "resamples"),
    ({"target_compute": 3e21, "resamples": 10}, "resamples"),
    ({"target_compute": 3e21, "seed": -1}, "seed"),
    ({"target_compute": 3e21, "higher_is_better": "yes"}, "higher_is_better"),
])
def test_non_finite_and_out_of_range_arguments(kwargs: dict[str, object], field: str) -> None:
    err = error_of(lambda: fit_scaling_law(compute_points(0), **kwargs))  # type: ignore[arg-type]
    assert err.field == field


def test_points_must_be_a_list_of_points() -> None:
    text: Any = "compute,loss"
    assert error_of(lambda: fit_scaling_law(text, target_compute=1e21)).field == "points"
    err = error_of(lambda: fit_scaling_law([{"compute": 1e18, "loss": math.nan}] * 5,
                                           target_compute=1e21))
    assert err.field == "points[0].loss"
    err = error_of(lambda: fit_scaling_law([], target_compute=1e21))
    assert err.field == "points"


def test_the_next_run_stays_a_small_run() -> None:
    """The next run proposed costs at most 10% of the target's compute, however far the target:
    a run at 30% of it would not be a small run."""
    from compute_budget.skill.scaling.fit import NEXT_RUN_MAX_SHARE, fit_scaling_law

    points = [{"compute": c, "loss": 1.8 + 40 * c ** -0.12} for c in (1e17, 1e18, 1e19, 1e20)]
    for target in (3e20, 1e21, 1e22, 1e24):
        fit = fit_scaling_law(points, target_compute=target, resamples=60)
        if fit.next_run is not None:
            assert fit.next_run.compute <= NEXT_RUN_MAX_SHARE * target
    near = fit_scaling_law(points, target_compute=3e20, resamples=60)
    assert near.next_run is None  # 2x the largest point is already 67% of the target


def test_the_small_sample_statistics_match_scipy_stats() -> None:
    # scipy.stats is no longer imported by the fit (issue 18); the replacements must agree.
    import numpy as np
    from scipy import stats

    from compute_budget.skill.scaling.small_sample import rank_correlation, t_over_z

    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(3, 12))
        a, b = rng.integers(0, 4, n).astype(float), rng.normal(size=n)
        if np.ptp(a) > 0:
            assert rank_correlation(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    for q in (0.6, 0.8, 0.95):
        for dof in (1, 3, 30):
            assert t_over_z(q, dof) == pytest.approx(stats.t.ppf(q, dof) / stats.norm.ppf(q))


@pytest.mark.parametrize("bad", [-3.1, 0.0])
def test_a_loss_of_zero_or_below_is_refused(bad: float) -> None:
    # a review: loss -3.1 in one point gave a predicted loss of 0.41 with only "poor fit";
    # L = E + a·C^(−b) with E ≥ 0 and a > 0 has no curve through it
    points = [p.model_dump(exclude_none=True) for p in compute_points(0)]
    points[2]["loss"] = bad
    err = error_of(lambda: fit_scaling_law(points, target_compute=3e21))
    assert (err.field, err.value) == ("points[2].loss", bad)
    assert str(err).endswith("is not allowed; a loss above 0, as every loss L = E + a·C^(−b) "
                             "fits is (E ≥ 0, a > 0); a metric where higher is better may be 0 "
                             "or below, with higher_is_better")


def test_a_metric_where_higher_is_better_may_be_negative() -> None:
    # fitted as E − a·C^(−b) with E free: a negative score (a log-likelihood, a reward) rising
    # with compute is a metric like any other
    # (on the curve exactly: no bootstrap, so the test stays quick)
    points = [ScalingPoint(compute=p.flops, loss=-p.loss) for p in compute_points(0, noise=0)]
    fit = fit_scaling_law(points, target_compute=3e21, higher_is_better=True)
    assert fit.predicted == pytest.approx(-true_loss(3e21), rel=1e-4)
