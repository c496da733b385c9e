"""Kill criteria: the numbers to watch once a run is launched, and when to stop it.

A GO or marginal run comes with concrete checks, each a threshold with its unit. The checkpoint
is 10% of the planned tokens, reached about day N, a tenth of the planned wall time (to a
tenth of a day from day 1 on, to two significant figures before it: a run of 4.4 days is
checked 10.6 hours in, not at a rounded 0.4 day's 9.6)::

    throughput floor   tokens/s per device at the slow end of the MFU band: below it, the run
                       is slower than the estimate allows; stop and fix before going on
    progress by day N  tokens the run must have trained by day N at that floor
    the metric or the loss, one of:
      gain_by_tokens   a run that starts from a model, with a gain g ± σ (given, or a fit's):
                       by 10% of its tokens the metric has moved by at least 10% of
                       F = max(g − σ, baseline to beat, 0), the least final gain that keeps the
                       run's case; ``expected`` is 10% of g, the least a run on course for the
                       predicted gain has moved by then
      loss_by_day      a run from scratch with a fit that gives a checkpoint level (the fit's
                       kill_loss: a two-variable fit of small runs): the loss at 10% of the
                       tokens, L(N, 0.1·D), at most the top of its interval (a metric: at
                       least the bottom)
      loss_at_end      a run from scratch with a fit in compute alone (no kill_loss): at most
                       the top of the interval at the run itself, by its end (no checkpoint
                       level, below)
      gain_at_end      a run from scratch or an ablation without a fit: at least F by the end

Why 10% of F at 10% of the tokens (and :func:`trial_gain`'s share of g for a trial): the loss
falls with the tokens as E + B/D^β (Hoffmann et al. 2022, eq. 2: β = 0.28), convex and falling,
so the gain made after t tokens is concave in t with no gain at t = 0, and a concave g has
g(s·T) ≥ s·g(T). A run whose metric has moved by less than s·F at share s is heading for less
than F. The bound assumes the metric's gains come no later than linearly in the tokens, which a
thresholded score that jumps late (exact match) may break, and a checkpoint whose learning rate
has decayed (a warmup-stable-decay run: a short cooldown branched off at that point, Hägele et
al. 2024, "Scaling Laws and Compute-Optimal Training Beyond Fixed Training Durations").

No level at a checkpoint follows from a gain alone for a run from scratch (it starts far below
the model it is to beat) or an ablation (the gap to its control may open late): the check is F
by the end, and small runs given as points turn it into a loss curve. A fit in compute alone,
L(C) = E + a·C^(−b), is a curve of complete small runs, each at its own size: at a tenth of the
compute its loss is a smaller model's, trained to the end, not a checkpoint of this run (a larger
model on fewer tokens sits above it: about 0.1 nats for 1B params on 20B tokens under Hoffmann et
al.'s fit, 3.07 at the checkpoint against 2.95 on the curve of 20-tokens-per-parameter runs), so
it gives only the bar at the end.

Spending is not a kill criterion: :func:`spend_by` is the dollars spent by day N at the planned
rate, a budget line of the verdict.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..scaling.result import ScalingFit
from ..vocabulary import RunKind, starts_from_a_model

__all__ = ["CHECKPOINT_SHARE", "GainBasis", "KillCriterion", "checkpoint_day", "kill_criteria",
           "spend_by", "trial_gain"]

CHECKPOINT_SHARE = 0.10
"""The checkpoint is this share of the planned tokens (and day N this share of the time)."""
HOURS_PER_DAY = 24.0

KillMetric = Literal["tokens_per_second_per_gpu", "tokens_trained_by_day", "gain_by_tokens",
                     "loss_by_day", "loss_at_end", "gain_at_end"]
Bar = Literal["gain_low_end", "baseline", "any_gain", "fit_interval"]
"""Where a metric or loss threshold comes from: g − σ; the baseline to beat (above g − σ); no
gain at all (both at most 0); the edge of a scaling fit's interval."""


class _Estimate(Protocol):
    @property
    def tokens(self) -> float: ...

    @property
    def gpu_count(self) -> int: ...

    @property
    def wall_days(self) -> float: ...

    @property
    def wall_days_range(self) -> tuple[float, float]: ...

    @property
    def usd_per_gpu_hour(self) -> float | None: ...


class GainBasis(BaseModel):
    """The gain a verdict weighed, as the kill criteria read it."""

    model_config = ConfigDict(frozen=True)

    predicted_gain: float = Field(description="Predicted gain, user's units, higher is better.")
    gain_uncertainty: float | None = Field(description="Its 1σ, same units; None when "
                                                       "unknown.")
    baseline_to_beat: float = Field(default=0.0, description="Gain the cheaper option gives.")
    start: float | None = Field(
        default=None, description="The metric (or loss) the run starts from, when known.")
    rises: bool = Field(default=True, description="The metric rises as it improves (a loss "
                                                  "falls).")
    kind: RunKind = Field(default="pretrain", description="The kind of run.")

    @property
    def least_gain(self) -> tuple[float, Bar]:
        """F, the least final gain that keeps the run's case, and where it comes from (with σ
        unknown, the baseline or any gain: no low end)."""
        sigma = self.gain_uncertainty
        low = None if sigma is None else self.predicted_gain - sigma
        if low is not None and low > 0 and low >= self.baseline_to_beat:
            return low, "gain_low_end"
        if self.baseline_to_beat > 0:
            return self.baseline_to_beat, "baseline"
        return 0.0, "any_gain"

    def level(self, gain: float) -> float | None:
        """The metric (or loss) after a gain, when the start is known."""
        if self.start is None:
            return None
        return self.start + gain if self.rises else self.start - gain


class KillCriterion(BaseModel):
    """One check to make on a running job, with the threshold that stops it."""

    model_config = ConfigDict(frozen=True)

    metric: KillMetric
    threshold: float = Field(description="The threshold, in unit (a gain: the change since "
                                         "the start, higher is better).")
    unit: str = Field(description="The threshold's unit.")
    direction: Literal["at_least", "at_most"] = Field(
        description="at_least: stop when the run is below it; at_most: stop when above it.")
    day: float | None = Field(
        description="The day the check is made on (at the estimated speed for a share of the "
                    "tokens); None: throughout, or at the end.")
    budget_share: float | None = Field(
        default=None, description="Retired with the spend check (now the verdict's "
                                  "spend_by_checkpoint_usd): always None.")
    expected: float | None = Field(
        default=None, description="The loss: what the fit expects there. A gain: the least a "
                                  "run on course for the predicted gain has made by then.")
    share: float | None = Field(
        default=None, description="Share of the planned tokens at the check (1: the end); "
                                  "None: by day.")
    tokens: float | None = Field(default=None, description="Tokens trained at the check.")
    level: float | None = Field(
        default=None, description="A gain's threshold as a level of the metric (or loss), "
                                  "when the start is known.")
    expected_level: float | None = Field(
        default=None, description="expected as a level of the metric (or loss), when known.")
    bar: Bar | None = Field(default=None, description="Where the threshold comes from.")


def checkpoint_day(estimate: _Estimate) -> float:
    """Day N: a tenth of the planned wall time, to a tenth of a day from day 1 on, to two
    significant figures before it."""
    day = CHECKPOINT_SHARE * estimate.wall_days
    return round(day, 1) if day >= 0.95 else float(f"{day:.2g}")


def spend_by(estimate: _Estimate, day: float) -> float | None:
    """US dollars spent by ``day`` at the planned rate (devices × 24 h × price); None without a
    price."""
    price = estimate.usd_per_gpu_hour
    return None if price is None else estimate.gpu_count * HOURS_PER_DAY * day * price


def trial_gain(predicted_gain: float, share: float) -> float:
    """What a trial on ``share`` of the tokens must have gained to go on: share × g, the least a
    run on course for the predicted gain g shows then (module docstring); 0 for g ≤ 0."""
    return share * max(predicted_gain, 0.0)


def kill_criteria(estimate: _Estimate, gain: GainBasis | None = None,
                  fit: ScalingFit | None = None) -> list[KillCriterion]:
    """The checks for ``estimate`` (module docstring): throughput and progress always; the
    metric or the loss with a gain (``gain``) or small runs (``fit``)."""
    slow_seconds = estimate.wall_days_range[1] * HOURS_PER_DAY * 3600
    floor = estimate.tokens / slow_seconds / estimate.gpu_count
    day = checkpoint_day(estimate)
    out = [
        KillCriterion(metric="tokens_per_second_per_gpu", threshold=floor,
                      unit="tokens/s per device", direction="at_least", day=None),
        KillCriterion(metric="tokens_trained_by_day", threshold=floor * estimate.gpu_count
                      * day * HOURS_PER_DAY * 3600, unit="tokens", direction="at_least",
                      day=day),
    ]
    if gain is not None and starts_from_a_model(gain.kind):
        out.append(_gain_by_tokens(gain, estimate.tokens, day))
    elif fit is not None:
        out += _loss_check(fit, day)
    elif gain is not None:
        least, bar = gain.least_gain
        out.append(KillCriterion(metric="gain_at_end", threshold=least,
                                 unit="metric" if gain.rises else "loss",
                                 direction="at_least", day=None, share=1.0,
                                 tokens=estimate.tokens, level=gain.level(least), bar=bar))
    return out


def _gain_by_tokens(gain: GainBasis, tokens: float, day: float) -> KillCriterion:
    """10% of F by 10% of the tokens, for a run from a model."""
    least, bar = gain.least_gain
    threshold = CHECKPOINT_SHARE * least
    on_course = trial_gain(gain.predicted_gain, CHECKPOINT_SHARE)
    return KillCriterion(
        metric="gain_by_tokens", threshold=threshold, unit="metric" if gain.rises else "loss",
        direction="at_least", day=day, share=CHECKPOINT_SHARE,
        tokens=CHECKPOINT_SHARE * tokens, expected=on_course, level=gain.level(threshold),
        expected_level=gain.level(on_course), bar=bar)


def _loss_check(fit: ScalingFit, day: float) -> list[KillCriterion]:
    """The fit's loss at its checkpoint, when it gives one (``fit.kill_loss``: a two-variable
    fit, the rule of :mod:`..scaling.fit`, which the fit's own reply follows too), else at the
    run itself; none when the fit has no interval (its uncertainty is unknown)."""
    higher = fit.higher_is_better
    checkpoint = fit.kill_loss
    if fit.interval is None:
        return []
    if checkpoint is not None:
        assert checkpoint.interval is not None  # one bootstrap gives both intervals
        low, high = checkpoint.interval
        return [KillCriterion(
            metric="loss_by_day", threshold=low if higher else high,
            unit="metric" if higher else "loss",
            direction="at_least" if higher else "at_most", day=day,
            expected=checkpoint.expected, share=checkpoint.share,
            tokens=checkpoint.tokens, bar="fit_interval")]
    low, high = fit.interval
    return [KillCriterion(
        metric="loss_at_end", threshold=low if higher else high,
        unit="metric" if higher else "loss", direction="at_least" if higher else "at_most",
        day=None, expected=fit.predicted, share=1.0, tokens=fit.target_tokens,
        bar="fit_interval")]
