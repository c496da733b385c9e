"""The predicted gain, read one unambiguous way, and the probabilities it implies.

A gain is given either as a delta (``predicted_gain`` ± ``gain_uncertainty``) or as the metric
itself (``metric_now`` → ``metric_expected`` ± ``gain_uncertainty``, with ``higher_is_better``
false for a loss or a perplexity). ``baseline_to_beat`` (default 0) is the gain the cheapest
alternative already gives; what the run adds is the *net* gain::

    gain      = predicted_gain,  or  ±(metric_expected − metric_now)   (sign: higher is better)
    net gain  = gain − baseline_to_beat
    P(beats the baseline) = Φ(net gain / σ)      P(any gain) = Φ(gain / σ)

with Φ the standard normal distribution, σ the 1σ uncertainty (a normal belief about the gain).
At σ = 0 the probabilities are 1 or 0. A scaling fit that cannot estimate its own uncertainty
(:mod:`..scaling.fit`) gives σ unknown (``uncertainty_known=False``): σ and both probabilities
are then None, never 0.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError

__all__ = ["GAIN_FORMS", "NO_GAIN", "GainNote", "GainReading", "normal_cdf", "read_gain"]

GainNote = Literal["looks_absolute", "looks_like_a_level", "baseline_looks_absolute",
                   "unit_slip", "baseline_below_zero"]
"""looks_absolute: a delta next to a baseline of the same size reads like two absolute scores;
looks_like_a_level: a delta of LEVEL_FLOOR or more known to a twentieth of itself reads like
the score expected ("57 ± 1.5") rather than its change (Elo +50 ± 4 or a win rate +25 ± 2 do
not);
baseline_looks_absolute: with the metric pair, a baseline the size of the metric reads like the
alternative's score rather than its gain; unit_slip: an uncertainty far larger than the gain
reads like a fraction beside points; baseline_below_zero: an alternative that loses raises the
net gain above the gain, though doing nothing gains 0."""
ABSOLUTE_BAND = (0.5, 2.0)
"""A delta between half and twice the baseline, both above ABSOLUTE_FLOOR, looks absolute."""
ABSOLUTE_FLOOR = 5.0
LEVEL_FLOOR = 20.0
LEVEL_PRECISION = 0.05
"""A delta of at least LEVEL_FLOOR with σ at most LEVEL_PRECISION of it reads like a level."""
UNIT_SLIP_RATIO = 10.0
"""σ more than this many times a gain below 1 looks like a unit slip."""
GAIN_FORMS = ("predicted_gain", "metric_now", "metric_expected")
"""The fields that give a gain, one way or the other."""
NO_GAIN = ("the expected gain in your metric as a delta, higher is better; or metric_now and "
           "metric_expected")
"""What a gain given neither way needs (an error with ``predicted_gain`` missing)."""


def normal_cdf(z: float) -> float:
    """Φ(z), the standard normal distribution function."""
    if math.isinf(z):
        return 1.0 if z > 0 else 0.0
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def _probability(mean: float, sigma: float) -> float:
    if sigma == 0:
        return 1.0 if mean > 0 else 0.0
    return normal_cdf(mean / sigma)


class GainReading(BaseModel):
    """The gain the verdict uses, how it was read, and what it implies."""

    model_config = ConfigDict(frozen=True)

    gain: float = Field(description="Predicted gain, in the user's metric, oriented so that "
                                    "higher is better.")
    gain_uncertainty: float | None = Field(
        description="1σ uncertainty of the gain, same units; None when unknown.")
    baseline_to_beat: float = Field(description="Gain the cheapest alternative already gives.")
    net_gain: float = Field(description="gain − baseline_to_beat: what this run adds.")
    source: Literal["delta", "metric"] = Field(
        description="delta: predicted_gain given; metric: metric_now and metric_expected.")
    metric_now: float | None = Field(description="The metric today, when given.")
    metric_expected: float | None = Field(description="The metric expected, when given.")
    higher_is_better: bool = Field(description="False for a loss or a perplexity.")
    p_beats_baseline: float | None = Field(
        description="P(gain > baseline_to_beat) = Φ(net / σ); None when σ is unknown.")
    p_positive: float | None = Field(description="P(gain > 0) = Φ(gain / σ); None when σ is "
                                                 "unknown.")
    notes: list[GainNote] = Field(description="Codes for readings that look like mistakes.")


def _finite(value: object, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(field, value, "a finite number")
    return float(value)


def _check_form(predicted_gain: float | None, metric_now: float | None,
                metric_expected: float | None, higher_is_better: bool) -> None:
    """Refuse both forms at once, half a metric pair, neither form, or ``higher_is_better``
    false beside a delta."""
    metric_given = metric_now is not None or metric_expected is not None
    if predicted_gain is not None and metric_given:
        raise InputError("predicted_gain", predicted_gain,
                         "either predicted_gain (a delta) or metric_now and metric_expected "
                         "(the metric itself), not both")
    if metric_given and (metric_now is None or metric_expected is None):
        missing = "metric_now" if metric_now is None else "metric_expected"
        raise InputError(missing, None, "metric_now and metric_expected together")
    if predicted_gain is None and not metric_given:
        raise InputError("predicted_gain", None, NO_GAIN)
    if predicted_gain is not None and not higher_is_better:
        raise InputError("predicted_gain", predicted_gain,
                         "for a metric where lower is better: give metric_now and "
                         "metric_expected instead, or the gain alone as a delta oriented so "
                         "that higher is better (a loss reduction as a positive number)")


def read_gain(
    predicted_gain: float | None,
    gain_uncertainty: float | None,
    baseline_to_beat: float | None = None,
    *,
    metric_now: float | None = None,
    metric_expected: float | None = None,
    higher_is_better: bool = True,
    uncertainty_known: bool = True,
) -> GainReading:
    """Read the gain from a delta or from the metric pair (module docstring);
    ``uncertainty_known`` false: ``gain_uncertainty`` is None, a fit's that is unknown.

    Raises :class:`InputError` naming the field for both forms at once, half a metric pair, a
    missing or negative uncertainty, or a non-finite number.
    """
    _check_form(predicted_gain, metric_now, metric_expected, higher_is_better)
    sigma: float | None = None
    if uncertainty_known or gain_uncertainty is not None:
        if gain_uncertainty is None:
            raise InputError("gain_uncertainty", None,
                             "the 1σ uncertainty of the gain (0 if you are certain)")
        sigma = _finite(gain_uncertainty, "gain_uncertainty")
        if sigma < 0:
            raise InputError("gain_uncertainty", gain_uncertainty, "a finite number ≥ 0")
    baseline = 0.0 if baseline_to_beat is None else _finite(baseline_to_beat, "baseline_to_beat")
    if predicted_gain is not None:
        gain = _finite(predicted_gain, "predicted_gain")
        now = expected = None
        source: Literal["delta", "metric"] = "delta"
    else:
        now = _finite(metric_now, "metric_now")
        expected = _finite(metric_expected, "metric_expected")
        gain = (expected - now) if higher_is_better else (now - expected)
        source = "metric"
    notes: list[GainNote] = []
    low, high = ABSOLUTE_BAND
    if (source == "delta" and baseline > ABSOLUTE_FLOOR and gain > ABSOLUTE_FLOOR
            and low <= gain / baseline <= high):
        notes.append("looks_absolute")
    elif (source == "delta" and gain >= LEVEL_FLOOR and sigma is not None
          and sigma <= LEVEL_PRECISION * gain):
        notes.append("looks_like_a_level")
    if (source == "metric" and now is not None and baseline > ABSOLUTE_FLOOR
            and abs(now) > ABSOLUTE_FLOOR and low <= baseline / abs(now) <= high):
        notes.append("baseline_looks_absolute")
    if sigma is not None and 0 < abs(gain) < 1 and sigma > UNIT_SLIP_RATIO * abs(gain):
        notes.append("unit_slip")
    if baseline < 0:
        notes.append("baseline_below_zero")
    net = gain - baseline
    return GainReading(
        gain=gain, gain_uncertainty=sigma, baseline_to_beat=baseline, net_gain=net,
        source=source, metric_now=now, metric_expected=expected,
        higher_is_better=higher_is_better,
        p_beats_baseline=None if sigma is None else _probability(net, sigma),
        p_positive=None if sigma is None else _probability(gain, sigma), notes=notes,
    )

