"""The machine and pricing arithmetic of the budget-split table (:mod:`.budget_table`).

Time and money come from :func:`~..hardware.cost.cost_from_flops`, the one place that
formula lives: on a named accelerator (``gpu_count`` devices, 8 by default) at the MFU prior of
:mod:`.mfu` (or the user's MFU), with the catalog price, and with the MFU band as the range,
as in :func:`~compute_budget.skill.estimate.estimate_run`. A dollar budget becomes FLOPs by
inverting that formula at the central MFU, after the failure budget is set aside (dollars are
proportional to FLOPs, so C = budget / dollars-per-FLOP)::

    C        = budget_usd / cost_from_flops(1 FLOP, MFU central).dollar_cost_with_failures
    C_safe   = budget_usd / cost_from_flops(1 FLOP, MFU low).dollar_cost_with_failures

With the MFU prior the MFU follows the size of the model the FLOPs buy, so the two are settled
together (:func:`flops_for_usd`). On a named accelerator each row also says whether a model of
its size fits the devices (the memory search, shape guessed from N).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..hardware.cost import CostEstimate, cost_from_flops
from ..hardware.mfu import MfuPrior
from ..memory.estimate import MemorySpec, estimate_memory
from ..scaling.lesson import split_budget

__all__ = [
    "Machine",
    "Range",
    "default_sizes",
    "flops_for_usd",
    "row_columns",
]

Range = tuple[float, float]


@dataclass(frozen=True)
class Machine:
    """What a FLOP costs in time and money: devices × peak at an MFU, and a price."""

    gpus: int
    peak_tflops: float
    mfu: float
    band: Range | None
    usd_per_gpu_hour: float | None
    failure_budget: float
    gpu: str | None = None
    prior_at: Callable[[float], MfuPrior] | None = None
    """With the MFU prior: the prior for a model of N active parameters (MFU follows size)."""

    def at(self, params: float) -> Machine:
        """This machine for a model of ``params`` parameters: the prior's size term applied,
        as ``estimate_run`` applies it; unchanged with a given MFU or rate."""
        if self.prior_at is None:
            return self
        prior = self.prior_at(params)
        return dataclasses.replace(self, mfu=prior.central, band=(prior.low, prior.high))

    def cost(self, flops: float, mfu: float) -> CostEstimate:
        return cost_from_flops(flops, self.gpus, self.peak_tflops, mfu, self.usd_per_gpu_hour,
                               self.failure_budget)

    def flops_for_usd(self, usd: float, mfu: float) -> float:
        # Dollars are proportional to FLOPs: the FLOPs that cost `usd` with failures at `mfu`.
        per_flop = self.cost(1.0, mfu).dollar_cost_with_failures
        if per_flop is None:  # BudgetTableSpec guarantees a price for a dollar budget
            raise InputError("usd_per_gpu_hour", None, "a price, to turn budget_usd into FLOPs")
        return usd / per_flop


def flops_for_usd(usd: float, ratio: float, machine: Machine, *, slow: bool) -> float:
    """The FLOPs a dollar budget buys at the MFU of the model it buys (central, or the slow
    end of the band): the prior follows the model's size, which follows the FLOPs, so the two
    are settled together (a few rounds: MFU moves as N^0.07)."""
    at = machine
    flops = 0.0
    for _ in range(8):
        mfu = at.band[0] if slow and at.band is not None else at.mfu
        flops = at.flops_for_usd(usd, mfu)
        at = machine.at(split_budget(flops, ratio)[0])
    return flops


def _range(fast: float | None, slow: float | None) -> Range | None:
    return None if fast is None or slow is None else (min(fast, slow), max(fast, slow))


def row_columns(flops: float, n: float, machine: Machine | None) -> dict[str, Any]:
    """The time, money and memory fields of a :class:`~.budget_table.BudgetTableRow` spending
    ``flops`` on a model of ``n`` parameters on ``machine`` (None each without a machine)."""
    point = fast = slow = None
    if machine is not None:
        machine = machine.at(n)
        point = machine.cost(flops, machine.mfu)
        if machine.band is not None:
            slow = machine.cost(flops, machine.band[0])
            fast = machine.cost(flops, machine.band[1])
    on_devices = machine is not None and machine.band is not None

    def spread(field: str) -> Range | None:
        if fast is None or slow is None:
            return None
        return _range(getattr(fast, field), getattr(slow, field))

    fits = min_count = slowdown = offload = None
    if machine is not None and machine.gpu is not None:
        memory = estimate_memory(MemorySpec(params=n, gpu=machine.gpu, gpu_count=machine.gpus))
        fits, min_count = memory.fits, memory.min_gpu_count
        if fits:
            slowdown, offload = memory.layout.slowdown.total, memory.offload
    return dict(
        fits=fits, min_gpu_count=min_count, fit_slowdown=slowdown, fit_needs_offload=offload,
        seconds=None if point is None else point.wall_seconds,
        hours=None if point is None else point.wall_hours,
        wall_days=None if point is None else point.wall_days,
        wall_days_range=spread("wall_days"),
        gpu_hours=point.gpu_hours if point is not None and on_devices else None,
        dollar_cost=point.dollar_cost if point is not None else None,
        dollar_cost_range=spread("dollar_cost"),
        dollar_cost_with_failures=point.dollar_cost_with_failures if point is not None else None,
        dollar_cost_with_failures_range=spread("dollar_cost_with_failures"),
    )


def default_sizes(c: float) -> list[float]:
    """The default model sizes of the table for a budget of ``c`` FLOPs."""
    # Four decades: two below the size where D = N, one above (the lesson's 1e5 … 1e8 for 6e14).
    middle = math.floor(math.log10(math.sqrt(c / 6)))
    return [10.0**k for k in range(middle - 2, middle + 2)]
