"""The result of a scaling fit (:mod:`.scaling_fit`), as plain models: what a reply, the verdict
and a picture read. Kept apart from the fitting so that reading a result (the MCP server's
output schema, the verdict's summary) never imports numpy and scipy."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..vocabulary import FiniteResult

__all__ = ["LEVEL_RANGE", "FitWarning", "Form", "LossCheckpoint", "NextRun", "Note", "ScalingFit",
           "WarningCode"]

LEVEL_RANGE = (0.5, 0.99)
"""An interval's probability lies between these, both included: its ends are the bootstrap's
(1 − level)/2 and (1 + level)/2 quantiles, interpolated between draws, so they exist at either
bound (at 0.99 about the 2nd of the default 400 draws from each end; at 0.5 the quartiles)."""

Form = Literal["compute", "params_tokens"]
WarningCode = Literal["too_few_spare_points", "exact_fit", "off_the_runs_line",
                      "far_extrapolation", "interval_wider_than_gain", "few_points", "poor_fit"]
Note = Literal["fitted_as_negation", "target_at_fit_optimum", "two_variable_data_fitted_in_compute",
               "tokens_follow_params", "params_fixed", "tokens_fixed"]
"""How the inputs were read. The last four: points gave params and tokens and the fit is in
compute alone, for too few points for L(N, D), tokens that follow from the params (one
tokens-per-parameter line), or the same params (tokens) in every run."""
Range = tuple[float, float]


class FitWarning(BaseModel):
    """Something about the fit to weigh, as a code with its numbers."""

    model_config = ConfigDict(frozen=True)

    code: WarningCode
    numbers: dict[str, float | str | None] = Field(default_factory=dict)


class LossCheckpoint(BaseModel):
    """The loss to expect part-way through the target run (a kill criterion)."""

    model_config = ConfigDict(frozen=True)

    share: float = Field(description="Share of the target's tokens (or compute) at the check.")
    compute: float = Field(description="Compute at the check, FLOPs.")
    params: float | None = Field(description="Parameters at the check; None when unknown.")
    tokens: float | None = Field(description="Tokens at the check; None when unknown.")
    expected: float = Field(description="Fitted loss (or metric) there, the user's units.")
    interval: Range | None = Field(description="[low, high] at the fit's level, the user's "
                                               "units; None when the fit's uncertainty is "
                                               "unknown.")


class NextRun(BaseModel):
    """The small run that would narrow the interval at the target most."""

    model_config = ConfigDict(frozen=True)

    compute: float = Field(description="Its compute, FLOPs.")
    multiple: float = Field(description="Its compute ÷ the largest point's.")
    params: float | None = Field(description="Its parameters (fit's optimal split); None for "
                                             "the compute form.")
    tokens: float | None = Field(description="Its tokens; None for the compute form.")
    expected_loss: float = Field(description="The fitted loss (or metric) there.")
    width_now: float | None = Field(description="Width of the interval at the target today; "
                                                "None when the uncertainty is unknown.")
    width_after: float | None = Field(description="Expected width with this run added (delta "
                                                  "method); None when unknown.")
    candidates: list[tuple[float, float | None]] = Field(
        description="(compute, expected width) of each candidate.")


class ScalingFit(FiniteResult):
    """A scaling law fitted to small runs and what it predicts at the target."""

    model_config = ConfigDict(frozen=True)

    form: Form = Field(description="compute: L(C) = E + a·C^(−b); params_tokens: L(N, D) = "
                                   "E + A/N^α + B/D^β.")
    parameters: dict[str, float] = Field(
        description="E, a, b (C in FLOPs) or E, A, alpha, B, beta (N in parameters, D in "
                    "tokens), in the user's units; for a metric, of metric = E − a·C^(−b).")
    higher_is_better: bool = Field(description="True for a metric fitted as its negation.")
    points_used: int = Field(description="Points the fit used.")
    target_compute: float = Field(description="Target compute, FLOPs.")
    target_params: float | None = Field(description="Target parameters; None when unknown.")
    target_tokens: float | None = Field(description="Target tokens; None when unknown.")
    predicted: float = Field(description="Fitted loss (or metric) at the target.")
    interval: Range | None = Field(
        description="[low, high] of the prediction at level (bootstrap); None when the fit "
                    "cannot estimate its uncertainty (warning too_few_spare_points or exact_fit).")
    level: float = Field(description="Probability the interval is meant to cover.")
    method: Literal["parametric_bootstrap_t_inflated"] = Field(
        description="How the interval is made (module docstring).")
    resamples: int = Field(description="Bootstrap resamples (0: no bootstrap, the uncertainty "
                                       "is unknown).")
    inflation: float = Field(description="t_{n−p}(q)/z(q), the small-sample factor applied.")
    baseline_loss: float | None = Field(description="The baseline's loss (or metric).")
    predicted_gain: float | None = Field(
        description="baseline − predicted for a loss, predicted − baseline for a metric; None "
                    "without a baseline.")
    gain_uncertainty: float | None = Field(
        description="1σ of the gain: bootstrap standard deviation × inflation; None without a "
                    "baseline, or when the fit cannot estimate its uncertainty.")
    extrapolation_ratio: float = Field(description="Target compute ÷ the largest point's.")
    residual_std: float = Field(description="sqrt(RSS/(n − p)) of the fit, the user's units.")
    r_squared: float = Field(description="1 − RSS/TSS of the fit on the points.")
    warnings: list[FitWarning] = Field(description="Codes with numbers (module docstring).")
    notes: list[Note] = Field(description="How the inputs were read, as codes.")
    next_run: NextRun | None = Field(description="None when no candidate lies below the target.")
    kill_loss: LossCheckpoint | None = Field(
        description="The loss expected at 10% of the target's tokens (params_tokens form); None "
                    "in the compute form, a curve of complete runs, which gives no level at a "
                    "checkpoint of a longer one.")
    curve: list[tuple[float, float, float | None, float | None]] = Field(
        description="(compute, predicted, low, high) at 40 log-spaced computes from the smallest "
                    "point to the target (two-variable form: at the target's tokens per "
                    "parameter); low and high None when the uncertainty is unknown.")


# --- the curve y = E + Σ exp(u_j − e_j·x_j), x the log of the normalised coordinates --------
