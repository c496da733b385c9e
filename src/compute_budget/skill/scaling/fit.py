"""The predicted loss of a larger run from the user's small runs: a scaling law, its interval,
the gain over a baseline, the next small run worth making, and the loss to expect early on.

Forms (a metric where higher is better, such as accuracy, is fitted as its negation, so the
formulas hold for −metric; parameters are then reported for metric = E − a·C^(−b), E its
ceiling, and likewise for the two-variable form)::

    compute        L(C)    = E + a·C^(−b)                C in FLOPs (Kaplan et al. 2020)
    params_tokens  L(N, D) = E + A/N^α + B/D^β           Hoffmann et al. 2022, eq. 2

The two-variable form is used when every point gives params and tokens, both vary, and they
vary independently (log D is not a straight-line function of log N: its residuals span at least
a factor 2, else α and β cannot be told apart), and there are at least 7 points (its 5
parameters and :data:`MIN_SPARE_POINTS` spare, below); otherwise the compute form, and when every
point gave params and tokens a note says why (params_fixed, tokens_fixed, tokens_follow_params,
two_variable_data_fitted_in_compute). The target is compute, or params and tokens (any
two of the three); for the two-variable form a compute alone is predicted at the fit's own
compute-optimal split of it (Hoffmann et al. eq. 4), with a note. The target must not lie below
the smallest point's compute: the fit predicts within and above its points, which is what sizing
a larger run needs.

Fitting: bounded least squares on the well-scaled form of :mod:`.curve` (losses divided by
their largest magnitude, C, N, D by the largest point's; exponents in [0, 3] and, for a loss,
E ≥ 0), started from a grid of exponents. A loss that does not fall with compute (Spearman
correlation > 0, or a fitted exponent below 10⁻³) is refused.

Interval: a parametric bootstrap. Each resample is the fitted curve plus normal noise of the
residual standard deviation σ = sqrt(RSS/(n − p)); the refitted curve's predictions give the
percentiles; the spread around the fitted value is then inflated by t_{n−p}(q)/z(q) (q =
(1 + level)/2), the small-sample correction for σ estimated from n − p degrees of freedom.
Measured over 300-400 seeds each (5, 7 or 10 points over 1.5-3 decades, noise 1-2% of the
reducible loss, targets 10-30x beyond the largest point, (E, b) = (1.8, 0.3), (1.8, 0.1),
(0.5, 0.5)), the 80% interval covered the true value 77-85% of the time; without the inflation
68-77%. The two-variable form (8-20 points, same setup) covered 74-84%. ``gain_uncertainty``
is the bootstrap standard deviation of the gain times the same factor.

Unknown uncertainty: σ is estimated from the n − p spare points, and with too few of them it is
no estimate. Over 200 seeds each (the coverage setup, 1.5% noise), the prediction's error
exceeded 2 and 3 of the reported 1σ in 15% and 10.5% of fits with 1 spare point (4 points), 7.5%
and 4% with 2, 4% and 1.5% with 3 (a normal belief: 4.6% and 0.3%); the verdict reads σ as
that normal 1σ. So with fewer than :data:`MIN_SPARE_POINTS` spare points (warning
too_few_spare_points), or a residual σ below :data:`EXACT_FIT` of the largest |loss| (warning
exact_fit: the points lie on the curve, as an interpolating fit's or a synthetic curve's do, and
their scatter says nothing of the noise), there is no bootstrap: the interval, the kill loss's
interval, the curve's band, the next run's widths and ``gain_uncertainty`` are None.

Warnings (codes with numbers): too_few_spare_points and exact_fit (above), far_extrapolation
(target > 100x the largest point's compute), interval_wider_than_gain, few_points (fewer than 2
points per parameter), poor_fit (R² of the fit on the points below 0.95: the curve explains too
little of the losses' spread).

next_run: the small run whose addition shrinks the interval at the target most
(:mod:`.next_run`).

kill_loss: L(N, 0.1·D), the loss at 10% of the target's tokens, in the two-variable form (the
final loss of a run that short: a checkpoint of the long run sits above it until its learning
rate has decayed). None in the compute form: L(C) is a curve of complete runs, each at its own
size, and a checkpoint of the target (a larger model on fewer tokens) sits above it. The one rule
for the fit's reply and the verdict's kill criteria (:mod:`..advice.kill_criteria`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..quantities import GAIN_LIMIT, parse_quantity
from ..vocabulary import FLOPS_PER_PARAM_PER_TOKEN
from .curve import Array, Curve, curve_value, grid_starts, solve
from .lesson import split_budget
from .next_run import NEXT_RUN_MAX_SHARE, next_run
from .points import ScalingPoint, as_points, check_losses, check_target
from .reach import off_the_runs_line
from .result import LEVEL_RANGE, FitWarning, Form, LossCheckpoint, NextRun, Note, ScalingFit
from .small_sample import rank_correlation, t_over_z

__all__ = ["EXACT_FIT", "MIN_SPARE_POINTS", "NEXT_RUN_MAX_SHARE", "FitWarning", "LossCheckpoint",
           "NextRun", "ScalingFit", "fit_scaling_law"]

Range = tuple[float, float]
FAR_EXTRAPOLATION = 100.0
POINTS_PER_PARAMETER = 2
POOR_FIT_R2 = 0.95
MIN_EXPONENT = 1e-3
INDEPENDENT_SPREAD = math.log(2.0)
KILL_SHARE = 0.10
MIN_SPARE_POINTS = 2
"""Points beyond the parameters (n − p) a fit needs to estimate its own uncertainty (module
docstring); the two-variable form is used only when it leaves this many."""
EXACT_FIT = 1e-6
"""A residual σ below this share of the largest |loss|: the points lie on the curve closer than
measured losses can (rounding to 5 significant figures alone leaves errors of order 1e-5 of the
loss, and seeds differ by far more), so their scatter does not measure the noise."""
CURVE_POINTS = 40
DEFAULT_RESAMPLES = 400
_FALLS = "a loss that falls as compute grows (or say higher_is_better for a metric that rises)"


# --- checking the inputs ---------------------------------------------------------------------

def _positive(value: object, field: str) -> float | None:
    if value is None:
        return None
    number = parse_quantity(value, field)
    if number <= 0:
        raise InputError(field, value, "a positive finite number, such as 1e21 or '7B'")
    return number


def _number(value: object, field: str, ok: Callable[[float], bool], allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not (math.isfinite(value) and ok(value)):
        raise InputError(field, value, allowed)
    return float(value)


def _form(pts: list[ScalingPoint]) -> tuple[Form, list[Note]]:
    """The form the points can fix; a note when params and tokens are fitted in compute."""
    if not all(p.params is not None and p.tokens is not None for p in pts):
        return "compute", []
    log_n = np.log([p.params or 1.0 for p in pts])
    log_d = np.log([p.tokens or 1.0 for p in pts])
    if np.ptp(log_n) == 0 or np.ptp(log_d) == 0:
        return "compute", ["params_fixed" if np.ptp(log_n) == 0 else "tokens_fixed"]
    residual = log_d - np.polyval(np.polyfit(log_n, log_d, 1), log_n)
    if np.ptp(residual) < INDEPENDENT_SPREAD:
        return "compute", ["tokens_follow_params"]
    if len(pts) < 5 + MIN_SPARE_POINTS:
        return "compute", ["two_variable_data_fitted_in_compute"]
    return "params_tokens", []


def _losses(values: Array) -> str:
    shown = ", ".join(f"{v:.4g}" for v in values[:8])
    return f"losses {shown}{', …' if len(values) > 8 else ''}"


def _resolve_target(curve: Curve, c: float | None, n: float | None,
                    d: float | None) -> tuple[float, float | None, float | None, list[Note]]:
    six = FLOPS_PER_PARAM_PER_TOKEN
    if c is not None and n is not None and d is not None:
        check_target(c, n, d)
    elif c is not None and n is not None:
        d = c / (six * n)
    elif c is not None and d is not None:
        n = c / (six * d)
    elif n is not None and d is not None:
        c = six * n * d
    elif c is not None and curve.form == "params_tokens":
        n, d = curve.optimum(c)
        return c, n, d, ["target_at_fit_optimum"]
    if c is None:
        raise InputError("target_compute", None,
                         "a target: target_compute, or target_params and target_tokens")
    return c, n, d, []


# --- the fit ---------------------------------------------------------------------------------

def fit_scaling_law(
    points: Sequence[ScalingPoint] | Sequence[Mapping[str, object]],
    *,
    target_compute: float | str | None = None,
    target_params: float | str | None = None,
    target_tokens: float | str | None = None,
    baseline_loss: float | None = None,
    higher_is_better: bool = False,
    level: float = 0.8,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> ScalingFit:
    """Fit a scaling law to ``points`` (ScalingPoint or objects with compute, params, tokens,
    loss) and predict the target, with a bootstrap interval at ``level`` (module docstring)."""
    pts = as_points(points)
    level, baseline = _check_options(level, baseline_loss, seed, resamples, higher_is_better)
    targets = [_positive(v, f) for v, f in ((target_compute, "target_compute"),
                                             (target_params, "target_params"),
                                             (target_tokens, "target_tokens"))]
    fitted = _fit_curve(pts, higher_is_better)
    curve, computes = fitted.curve, fitted.computes
    c_t, n_t, d_t, target_notes = _resolve_target(curve, *targets)
    if c_t < computes.min() * (1 - 1e-9):
        raise InputError("target_compute", c_t,
                         f"at least the smallest point's compute ({computes.min():.3g} FLOPs): "
                         "the fit predicts within and above its points")
    kill_d = None if d_t is None else KILL_SHARE * d_t
    ratio = None if n_t is None or d_t is None else d_t / n_t
    grid = [float(c) for c in np.geomspace(computes.min(), c_t, CURVE_POINTS)]
    along = [curve.at(c) if ratio is None else curve.at(c, *split_budget(c, ratio))
             for c in grid]
    evaluate = np.array([curve.at(c_t, n_t, d_t), curve.at(KILL_SHARE * c_t, n_t, kill_d),
                         *along])
    unknown = _unknown_uncertainty(fitted) or off_the_runs_line(pts, fitted.notes, n_t, d_t)
    draws = None if unknown is not None else _bootstrap(fitted, evaluate, seed, resamples)
    return _summary(fitted, draws, evaluate, grid, (c_t, n_t, d_t), level, baseline,
                    fitted.notes + target_notes, unknown)


def _unknown_uncertainty(fitted: _Fitted) -> FitWarning | None:
    """Why the fit cannot estimate its own uncertainty (module docstring), or None."""
    n, p, scale = fitted.n, fitted.p, fitted.curve.scale_y
    if n - p < MIN_SPARE_POINTS:
        return FitWarning(code="too_few_spare_points", numbers={
            "points": n, "parameters": p, "spare": n - p, "needed": p + MIN_SPARE_POINTS})
    if fitted.sigma < EXACT_FIT:
        return FitWarning(code="exact_fit", numbers={
            "points": n, "residual_std": scale * fitted.sigma, "limit": scale * EXACT_FIT})
    return None


def _check_options(level: object, baseline_loss: object, seed: object, resamples: object,
                   higher_is_better: object) -> tuple[float, float | None]:
    """The checked ``level`` and baseline; the other options are checked and left as given."""
    low, high = LEVEL_RANGE
    checked = _number(level, "level", lambda v: low <= v <= high,
                      f"a probability from {low} to {high}, such as 0.8")
    baseline = None if baseline_loss is None else _number(
        baseline_loss, "baseline_loss", lambda v: abs(v) <= GAIN_LIMIT,
        "a finite number, the baseline run's loss (or metric)")
    for name, value, most in (("seed", seed, 2**63 - 1), ("resamples", resamples, 100_000)):
        least = 50 if name == "resamples" else 0
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise InputError(name, value, f"a whole number from {least} to {most}")
    if not isinstance(higher_is_better, bool):
        raise InputError("higher_is_better", higher_is_better, "true or false")
    return checked, baseline


@dataclass(frozen=True)
class _Fitted:
    """The curve fitted to the points, with the scaled points and what the result reports."""

    curve: Curve
    x: Array  # the points' scaled coordinates
    rss: float  # residual sum of squares, in scaled units
    computes: Array
    y_user: Array  # the points' losses (or metric), as given
    lower_e: float
    higher_is_better: bool
    notes: list[Note]

    @property
    def n(self) -> int:
        return len(self.x)

    @property
    def p(self) -> int:
        return len(self.curve.theta)

    @property
    def sigma(self) -> float:
        """Residual standard deviation sqrt(RSS/(n − p)), in scaled units."""
        return math.sqrt(self.rss / (self.n - self.p))


def _fit_curve(pts: list[ScalingPoint], higher_is_better: bool) -> _Fitted:
    """Choose the form, check the points can fix it and fall, and fit it."""
    form, notes = _form(pts)
    k = 2 if form == "params_tokens" else 1
    p, n = 1 + 2 * k, len(pts)
    if n < 4:
        raise InputError("points", f"{n} points",
                         "at least 4 points for L(C) = E + a·C^(−b) (3 parameters; "
                         f"{3 + MIN_SPARE_POINTS} for its uncertainty), {5 + MIN_SPARE_POINTS} "
                         "for L(N, D) = E + A/N^α + B/D^β (5 parameters)")
    computes = np.array([pt.flops for pt in pts])
    raw = (np.array([[pt.params or 1.0, pt.tokens or 1.0] for pt in pts]) if k == 2
           else computes[:, None])
    distinct = len(np.unique(raw, axis=0))
    if distinct < p:
        what = "computes" if k == 1 else "(params, tokens) pairs"
        raise InputError("points", f"{n} points at {distinct} different {what}",
                         f"points at {p} or more different {what}"
                         + (" (duplicate points only)" if distinct == 1 else ""))
    check_losses(pts, higher_is_better)
    sign = -1.0 if higher_is_better else 1.0
    y_user = np.array([pt.loss for pt in pts])
    oriented = sign * y_user
    if np.ptp(oriented) == 0 or rank_correlation(computes, oriented) > 0:
        raise InputError("points", _losses(y_user), _FALLS)
    notes += ["fitted_as_negation"] if higher_is_better else []
    scale_x = raw.max(axis=0)
    x = np.log(raw / scale_x)
    scale_y = float(np.max(np.abs(oriented)))
    y = oriented / scale_y
    lower_e = -np.inf if higher_is_better else 0.0
    theta, rss = solve(x, y, grid_starts(x, y, lower_e), lower_e)
    if np.any(theta[1 + k:] < MIN_EXPONENT):
        raise InputError("points", _losses(y_user), _FALLS)
    return _Fitted(Curve(form, theta, scale_x, scale_y, sign), x, rss, computes, y_user,
                   lower_e, higher_is_better, notes)


def _bootstrap(fitted: _Fitted, evaluate: Array, seed: int, resamples: int) -> Array:
    """Parametric bootstrap: the fitted curve plus N(0, σ²) noise, refitted from θ̂; the
    refits' values at ``evaluate``, one row per refit that stayed finite."""
    theta, x, sigma = fitted.curve.theta, fitted.x, fitted.sigma
    values = curve_value(theta, x)
    rng = np.random.default_rng(seed)
    draws = np.empty((resamples, len(evaluate)))
    for i in range(resamples):
        again, _ = solve(x, values + sigma * rng.standard_normal(fitted.n), [theta],
                         fitted.lower_e, True)
        draws[i] = curve_value(again, evaluate)
    draws = draws[np.all(np.isfinite(draws), axis=1)]
    if len(draws) < resamples // 2:
        raise InputError("points", _losses(fitted.y_user),
                         "points whose fitted curve is stable under their own noise (most "
                         "refits overflowed)")
    return draws


def _bands(curve: Curve, centre: Array, draws: Array | None, inflation: float,
           q: float) -> list[Range | None]:
    """The interval at each evaluated point (the bootstrap's spread around the fitted value,
    inflated), in the user's units; all None without a bootstrap."""
    if draws is None:
        return [None] * len(centre)
    ends = np.quantile(draws, [1 - q, q], axis=0)
    out: list[Range | None] = []
    for j in range(len(centre)):
        low, high = sorted(curve.user(centre[j] + inflation * (e[j] - centre[j])) for e in ends)
        out.append((low, high))
    return out


def _summary(fitted: _Fitted, draws: Array | None, evaluate: Array, grid: list[float],
             target: tuple[float, float | None, float | None], level: float,
             baseline: float | None, notes: list[Note],
             unknown: FitWarning | None) -> ScalingFit:
    """The prediction, its interval, the gain, the warnings, the next run and the kill loss;
    without a bootstrap (``unknown`` says why), no interval and no 1σ."""
    curve, n, p = fitted.curve, fitted.n, fitted.p
    c_t, n_t, d_t = target
    q = (1 + level) / 2
    inflation = t_over_z(q, n - p)
    centre = curve_value(curve.theta, evaluate)
    bands = _bands(curve, centre, draws, inflation, q)
    predicted, interval = curve.user(centre[0]), bands[0]
    gain = sigma_gain = None
    if baseline is not None:
        gain = curve.sign * (baseline - predicted)
        if draws is not None:
            sigma_gain = float(inflation * curve.scale_y * np.std(draws[:, 0], ddof=1))
    y_user, residual_std = fitted.y_user, curve.scale_y * fitted.sigma
    r_squared = 1 - fitted.rss * curve.scale_y**2 / float(np.sum((y_user - y_user.mean()) ** 2))
    extrapolation = c_t / fitted.computes.max()
    width = None if interval is None else interval[1] - interval[0]
    return ScalingFit(
        form=curve.form, parameters=curve.parameters(), higher_is_better=fitted.higher_is_better,
        points_used=n, target_compute=c_t, target_params=n_t, target_tokens=d_t,
        predicted=predicted, interval=interval, level=level,
        method="parametric_bootstrap_t_inflated", resamples=0 if draws is None else len(draws),
        inflation=inflation, baseline_loss=baseline, predicted_gain=gain,
        gain_uncertainty=sigma_gain, extrapolation_ratio=extrapolation,
        residual_std=residual_std, r_squared=r_squared,
        warnings=([] if unknown is None else [unknown])
        + _warnings(n, p, extrapolation, width, gain, r_squared, residual_std),
        notes=notes,
        next_run=next_run(curve, fitted.x, evaluate[0], c_t, float(fitted.computes.max()),
                          width, q, n - p),
        kill_loss=_checkpoint(curve.form, target, curve.user(centre[1]), bands[1]),
        curve=[(c, curve.user(centre[j + 2]), *(bands[j + 2] or (None, None)))
               for j, c in enumerate(grid)])


def _checkpoint(form: Form, target: tuple[float, float | None, float | None], expected: float,
                interval: Range | None) -> LossCheckpoint | None:
    """The loss at 10% of the target's tokens, L(N, 0.1·D), from a two-variable fit; None from a
    fit in compute alone, a curve of complete runs that gives no level at a checkpoint (module
    docstring)."""
    c_t, n_t, d_t = target
    if form == "compute" or n_t is None or d_t is None:
        return None
    return LossCheckpoint(share=KILL_SHARE, compute=KILL_SHARE * c_t, params=n_t,
                          tokens=KILL_SHARE * d_t, expected=expected, interval=interval)


def _warnings(n: int, p: int, extrapolation: float, width: float | None, gain: float | None,
              r_squared: float, residual_std: float) -> list[FitWarning]:
    out = []
    if extrapolation > FAR_EXTRAPOLATION:
        out.append(FitWarning(code="far_extrapolation",
                              numbers={"ratio": extrapolation, "limit": FAR_EXTRAPOLATION}))
    if gain is not None and width is not None and width > abs(gain):
        out.append(FitWarning(code="interval_wider_than_gain",
                              numbers={"width": width, "gain": gain}))
    if n < POINTS_PER_PARAMETER * p:
        out.append(FitWarning(code="few_points", numbers={
            "points": n, "parameters": p, "recommended": POINTS_PER_PARAMETER * p}))
    if r_squared < POOR_FIT_R2:
        out.append(FitWarning(code="poor_fit", numbers={
            "r_squared": r_squared, "limit": POOR_FIT_R2, "residual_std": residual_std}))
    return out
