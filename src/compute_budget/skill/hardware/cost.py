"""Time and money from FLOPs: wall time, GPU-hours and dollars, with the failure budget.

The arithmetic (the stage-3 compute-budget skill; Kaplan et al. 2020 for 6·N·T)::

    flops        = 6 · N · T                         model FLOPs (N = active parameters for MoE)
    throughput   = devices · peak · MFU              FLOP/s the whole job sustains
    wall_seconds = flops / throughput
    gpu_hours    = wall_hours · devices
    dollars      = gpu_hours · $/device-hour
    with failures: × failure budget (1.5 by default: one partial re-run)
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import ConfigDict, Field

from ..quantities import DeviceCount, ParamCount, Price, TflopsPerDevice, TokenCount, validated
from ..vocabulary import (
    DEFAULT_FAILURE_BUDGET,
    HOURS_PER_DAY,
    SECONDS_PER_HOUR,
    FailureBudget,
    FiniteResult,
    Mfu,
    flops_6nd,
    renamed_arguments,
)

__all__ = [
    "CostBand",
    "CostEstimate",
    "band_ranges",
    "cost_band",
    "cost_from_flops",
    "estimate_run_cost",
]



class CostEstimate(FiniteResult):
    """Time and money for a given amount of compute on a given set of devices."""

    model_config = ConfigDict(frozen=True)

    flops: float = Field(description="Model FLOPs for the whole run.")
    gpu_count: int = Field(description="Number of devices.")
    peak_tflops_per_gpu: float = Field(description="Dense peak per device in TFLOP/s.")
    mfu: float = Field(description="Model FLOPs utilisation used (fraction of the peak).")
    effective_tflops_per_gpu: float = Field(description="peak × MFU per device, in TFLOP/s.")
    wall_seconds: float = Field(description="Wall-clock time in seconds.")
    wall_hours: float = Field(description="Wall-clock time in hours.")
    wall_days: float = Field(description="Wall-clock time in days.")
    gpu_hours: float = Field(description="Device-hours: wall hours × devices.")
    usd_per_gpu_hour: float | None = Field(
        description="Price in US dollars per device-hour; None when unknown."
    )
    dollar_cost: float | None = Field(
        description="Cost in US dollars without failures; None when the price is unknown."
    )
    failure_budget: float = Field(description="Multiplier for failures and re-runs.")
    gpu_hours_with_failures: float = Field(description="Device-hours × failure budget.")
    dollar_cost_with_failures: float | None = Field(
        description="US dollars × failure budget; None when the price is unknown."
    )


def cost_from_flops(
    flops: float,
    gpus: int,
    peak_tflops: float,
    mfu: float,
    usd_per_gpu_hour: float | None,
    failure_budget: float = DEFAULT_FAILURE_BUDGET,
) -> CostEstimate:
    """The one place time and money are computed from FLOPs (see the module docstring)."""
    throughput = gpus * peak_tflops * 1e12 * mfu  # FLOP/s for the whole job
    wall_seconds = flops / throughput
    wall_hours = wall_seconds / SECONDS_PER_HOUR
    gpu_hours = wall_hours * gpus
    dollars = None if usd_per_gpu_hour is None else gpu_hours * usd_per_gpu_hour
    return CostEstimate(
        flops=flops,
        gpu_count=gpus,
        peak_tflops_per_gpu=peak_tflops,
        mfu=mfu,
        effective_tflops_per_gpu=peak_tflops * mfu,
        wall_seconds=wall_seconds,
        wall_hours=wall_hours,
        wall_days=wall_hours / HOURS_PER_DAY,
        gpu_hours=gpu_hours,
        usd_per_gpu_hour=usd_per_gpu_hour,
        dollar_cost=dollars,
        failure_budget=failure_budget,
        gpu_hours_with_failures=gpu_hours * failure_budget,
        dollar_cost_with_failures=None if dollars is None else dollars * failure_budget,
    )


@renamed_arguments(N_params="params")
@validated
def estimate_run_cost(
    params: ParamCount,
    T_tokens: TokenCount,
    gpus: DeviceCount,
    gpu_tflops: TflopsPerDevice,
    mfu: Mfu,
    dollar_per_gpu_hour: Price,
    *,
    failure_budget: FailureBudget = DEFAULT_FAILURE_BUDGET,
) -> CostEstimate:
    """Cost of training ``params`` = N parameters on T tokens: the stage-3 skill's function.

    FLOPs = 6·N·T (Kaplan et al. 2020); wall time = FLOPs / (gpus · gpu_tflops·10¹² · mfu);
    dollars = wall hours · gpus · dollar_per_gpu_hour. ``gpu_tflops`` must be the *dense* peak
    for the precision used. Every argument is checked against the types the run spec uses; an
    :class:`~..errors.ArgumentsError` names each one refused.
    """
    return cost_from_flops(flops_6nd(params, T_tokens), gpus, gpu_tflops,
                           mfu, dollar_per_gpu_hour, failure_budget)


class CostBand(NamedTuple):
    """The cost at the central MFU and at the ends of the band."""

    point: CostEstimate
    fast: CostEstimate
    slow: CostEstimate


def band_ranges(band: CostBand) -> dict[str, object]:
    """The band's low–high pairs."""
    _, fast, slow = band

    def pair(a: float, b: float) -> tuple[float, float]:
        return (min(a, b), max(a, b))

    def dollars(field: str) -> tuple[float, float] | None:
        lo, hi = getattr(fast, field), getattr(slow, field)
        return None if lo is None or hi is None else pair(lo, hi)

    return dict(
        wall_hours_range=pair(fast.wall_hours, slow.wall_hours),
        wall_days_range=pair(fast.wall_days, slow.wall_days),
        gpu_hours_range=pair(fast.gpu_hours, slow.gpu_hours),
        dollar_cost_range=dollars("dollar_cost"),
        dollar_cost_with_failures_range=dollars("dollar_cost_with_failures"),
    )


def cost_band(flops: float, gpu_count: int, peak: float, mfu: float, band: tuple[float, float],
              price: float | None, failure_budget: float) -> CostBand:
    """The cost at the central MFU and at either end of the band ``(slow, fast)``."""
    def at(utilisation: float) -> CostEstimate:
        return cost_from_flops(flops, gpu_count, peak, utilisation, price, failure_budget)

    return CostBand(at(mfu), at(band[1]), at(band[0]))
