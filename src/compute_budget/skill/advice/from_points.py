"""The verdict on a run: its spec (the run, what the gain is weighed against, and optionally
small-run points for the gain) and the one call both doors make.

:func:`gain_for_run` aims the scaling fit (:mod:`..scaling.fit`) at a run: its target is the
run's 6·N·T (the convention small-run points are given in), its parameters and tokens.
:func:`decide` is the verdict on an estimate with the gain from :class:`GainFromPoints` or from
:class:`~.decision.DecisionInputs`; :func:`verdict_on` estimates a :class:`VerdictSpec` and
decides.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..estimate import estimate_run
from ..estimate_result import RunEstimate
from ..quantities import Gain
from ..run_spec import RunSpec
from ..scaling.lesson import train_flops
from ..scaling.points import MAX_POINTS, ScalingPoint
from ..scaling.result import ScalingFit
from .decision import Decision, DecisionInputs, decision_summary

__all__ = ["GainFromPoints", "VerdictSpec", "decide", "gain_for_run", "verdict_on"]


def gain_for_run(points: list[ScalingPoint], *, params: float, tokens: float,
                 baseline_loss: float, higher_is_better: bool = False) -> ScalingFit:
    """The fit aimed at a run being decided (``params`` active parameters, ``tokens``): its
    predicted gain over ``baseline_loss`` and the gain's 1σ for the verdict, and the loss to
    expect at 10% of its tokens for the kill criteria."""
    from ..scaling.fit import fit_scaling_law

    return fit_scaling_law(points, target_compute=train_flops(params, tokens), target_params=params,
                           target_tokens=tokens, baseline_loss=baseline_loss,
                           higher_is_better=higher_is_better)


class GainFromPoints(BaseModel):
    """The verdict's gain from small runs instead of a number (``render_verdict``, ``decide``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    points: list[ScalingPoint] | None = Field(
        default=None, max_length=MAX_POINTS,
        description="Small runs instead of predicted_gain, as fit_scaling_law takes them. "
                    "The gain is the fit's at this run over baseline_loss.")
    baseline_loss: Gain | None = Field(
        default=None, description="With points: the current model's loss (or metric).")


def decide(estimate: RunEstimate, inputs: DecisionInputs,
           gain: GainFromPoints | None = None) -> Decision:
    """The verdict on ``estimate``: with ``inputs`` alone, :func:`decision_summary`; with
    small-run points, the gain and its 1σ are the fit's at this run (6·N_active·T, N, T) over
    the baseline loss, the kill criteria check the loss (:mod:`.kill_criteria`: at 10% of the
    tokens from a two-variable fit, at the end from a fit in compute alone, the gain's bar in
    loss for a run from a model), and the decision carries the fit's summary. A loss falls:
    give higher_is_better for a metric."""
    values = {name: getattr(inputs, name) for name in DecisionInputs.model_fields}
    if gain is None or gain.points is None:
        if gain is not None and gain.baseline_loss is not None:
            raise InputError("baseline_loss", gain.baseline_loss,
                             "only with points (the small runs whose fit it is compared with)")
        return decision_summary(estimate, **values, kind=estimate.kind)
    for field in ("predicted_gain", "metric_now", "metric_expected", "gain_uncertainty"):
        if values[field] is not None:
            raise InputError(field, values[field],
                             "not together with points: the fit gives the gain and its 1σ")
    if gain.baseline_loss is None:
        raise InputError("baseline_loss", None,
                         "with points: the current model's loss, which the gain is over")
    higher = inputs.higher_is_better if "higher_is_better" in inputs.model_fields_set else False
    params = estimate.active_params or estimate.params
    fit = gain_for_run(gain.points, params=params, tokens=estimate.tokens,
                       baseline_loss=gain.baseline_loss, higher_is_better=higher)
    assert fit.predicted_gain is not None  # a baseline was given
    # gain_uncertainty is None when the fit cannot estimate it: the verdict says so (marginal)
    values.update(predicted_gain=fit.predicted_gain, gain_uncertainty=fit.gain_uncertainty,
                  metric_now=None, metric_expected=None, higher_is_better=True)
    return decision_summary(estimate, **values, kind=estimate.kind, fit=fit)


class VerdictSpec(RunSpec, DecisionInputs, GainFromPoints):
    """A run and what the verdict weighs its cost against: the gain (or small-run points and
    the baseline loss), its uncertainty, the baseline to beat, a value or a budget."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def verdict_on(spec: VerdictSpec) -> Decision:
    """The verdict on the run ``spec`` describes: its estimate, then :func:`decide`."""
    return decide(estimate_run(spec), spec, spec)
