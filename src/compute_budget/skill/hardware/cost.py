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

import math

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..quantities import check_positive
from ..vocabulary import (
    DEFAULT_FAILURE_BUDGET,
    FLOPS_PER_PARAM_PER_TOKEN,
    HOURS_PER_DAY,
    SECONDS_PER_HOUR,
)

__all__ = [
    "CostEstimate",
    "cost_from_flops",
    "estimate_run_cost",
]



class CostEstimate(BaseModel):
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


def _check_count(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, value, "a whole number of devices, at least 1")
    if not math.isfinite(value) or value < 1 or float(value) != int(value):
        raise InputError(field, value, "a whole number of devices, at least 1")
    return int(value)


def _check_mfu(value: object, field: str = "mfu") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, value, "a fraction in (0, 1], e.g. 0.4")
    if not (math.isfinite(value) and 0 < value <= 1):
        raise InputError(field, value, "a fraction in (0, 1], e.g. 0.4")
    return float(value)


def estimate_run_cost(
    N_params: float,
    T_tokens: float,
    gpus: int,
    gpu_tflops: float,
    mfu: float,
    dollar_per_gpu_hour: float,
    *,
    failure_budget: float = DEFAULT_FAILURE_BUDGET,
) -> CostEstimate:
    """Cost of training N parameters on T tokens: the stage-3 skill's function.

    FLOPs = 6·N·T (Kaplan et al. 2020); wall time = FLOPs / (gpus · gpu_tflops·10¹² · mfu);
    dollars = wall hours · gpus · dollar_per_gpu_hour. ``gpu_tflops`` must be the *dense* peak
    for the precision used. Every argument is checked; a ``ValueError`` names the one at fault.
    """
    n = check_positive(N_params, "N_params")
    t = check_positive(T_tokens, "T_tokens")
    count = _check_count(gpus, "gpus")
    peak = check_positive(gpu_tflops, "gpu_tflops")
    utilisation = _check_mfu(mfu)
    price = check_positive(dollar_per_gpu_hour, "dollar_per_gpu_hour")
    budget = check_positive(failure_budget, "failure_budget")
    if budget < 1:
        raise InputError("failure_budget", failure_budget, "a multiplier of at least 1")
    return cost_from_flops(FLOPS_PER_PARAM_PER_TOKEN * n * t, count, peak, utilisation, price,
                           budget)
