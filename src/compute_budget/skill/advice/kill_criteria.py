"""Kill criteria: the numbers to watch once a run is launched, and when to stop it.

A GO or marginal run comes with concrete checks, each a threshold with its unit, taken at
day N, a tenth of the planned wall time (in days, to a tenth of a day; a short run's check
falls within it)::

    throughput floor   tokens/s per device at the slow end of the MFU band: below it, the run
                       is slower than the estimate allows; stop and fix before going on
    progress by day N  tokens the run must have trained by day N at that floor
    spend by day N     dollars spent by day N at the planned rate (devices × 24 h × price);
                       with a budget, the share of it that is

    loss by day N      with a scaling fit of small runs (``ScalingFit``): the loss
                       the fit expects at 10% of the tokens, at most the top of its interval
                       (a metric: at least the bottom); a run off its curve by then stops
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..scaling.result import ScalingFit

__all__ = ["KillCriterion", "kill_criteria"]

CHECKPOINT_SHARE = 0.10
"""Day N is this share of the planned wall time."""
HOURS_PER_DAY = 24.0


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


class KillCriterion(BaseModel):
    """One check to make on a running job, with the threshold that stops it."""

    model_config = ConfigDict(frozen=True)

    metric: Literal["tokens_per_second_per_gpu", "tokens_trained_by_day", "usd_spent_by_day",
                    "loss_by_day"]
    threshold: float = Field(description="The threshold, in unit.")
    unit: str = Field(description="The threshold's unit.")
    direction: Literal["at_least", "at_most"] = Field(
        description="at_least: stop when the run is below it; at_most: stop when above it.")
    day: float | None = Field(description="The day the check is made on; None: throughout.")
    budget_share: float | None = Field(
        default=None, description="For spend: the threshold as a share of the budget.")
    expected: float | None = Field(
        default=None, description="For the loss: the value the fit expects on that day.")


def kill_criteria(estimate: _Estimate, budget_usd: float | None = None,
                  fit: ScalingFit | None = None) -> list[KillCriterion]:
    """The checks for ``estimate`` (module docstring); spend only with a known price, the loss
    only with a fit."""
    slow_seconds = estimate.wall_days_range[1] * HOURS_PER_DAY * 3600
    floor = estimate.tokens / slow_seconds / estimate.gpu_count
    day = max(0.1, round(CHECKPOINT_SHARE * estimate.wall_days, 1))
    out = [
        KillCriterion(metric="tokens_per_second_per_gpu", threshold=floor,
                      unit="tokens/s per device", direction="at_least", day=None),
        KillCriterion(metric="tokens_trained_by_day", threshold=floor * estimate.gpu_count
                      * day * HOURS_PER_DAY * 3600, unit="tokens", direction="at_least",
                      day=day),
    ]
    price = estimate.usd_per_gpu_hour
    if price is not None:
        spent = estimate.gpu_count * HOURS_PER_DAY * day * price
        out.append(KillCriterion(
            metric="usd_spent_by_day", threshold=spent, unit="USD", direction="at_most",
            day=day, budget_share=None if not budget_usd else spent / budget_usd))
    if fit is not None:
        low, high = fit.kill_loss.interval
        out.append(KillCriterion(
            metric="loss_by_day", threshold=low if fit.higher_is_better else high,
            unit="metric" if fit.higher_is_better else "loss",
            direction="at_least" if fit.higher_is_better else "at_most", day=day,
            expected=fit.kill_loss.expected))
    return out
