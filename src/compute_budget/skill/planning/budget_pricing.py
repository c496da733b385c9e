"""The rows of the budget-split table (:mod:`.budget_table`) and their pricing arithmetic.

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
its size fits the devices (the memory search, shape guessed from N), and with a dollar budget
whether its cost stays within it. Below the calibrated sizes the prior's size term stops, so
adjacent rows there take the same time and cost: :func:`group_rows` puts them in one group.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..estimate_result import LayoutCost
from ..hardware.cost import CostEstimate, cost_from_flops
from ..hardware.mfu import MfuPrior
from ..memory.estimate import MemorySpec, OffloadGap, estimate_memory
from ..model.fields import MIN_MODEL_PARAMS
from ..scaling.lesson import split_budget, tokens_for_budget

__all__ = [
    "BudgetRowGroup",
    "BudgetStatus",
    "BudgetTableRow",
    "Machine",
    "Range",
    "default_sizes",
    "flops_for_usd",
    "group_rows",
    "mfu_clamps",
    "price_row",
]

Range = tuple[float, float]
BudgetStatus = Literal["within", "over_at_slow_end", "over"]

BISECTIONS = 16
"""Rounds of :func:`flops_for_usd`'s bisection where the layout has no fixed point (1/65,536
of the gap between the two sizes)."""
_SAME = 1e-9
"""Relative tolerance under which two costs are the same (rounding of one formula)."""


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
    prior_params: float | None = None
    """After :meth:`at` with the MFU prior: the size its size term used (N clamped to the
    calibrated range)."""
    layout_at: Callable[[float, float], LayoutCost | None] | None = None
    """On a named device: the layout cost of a model of N parameters spending C FLOPs there
    (``estimate_run``'s, the one computation of it)."""
    layout: LayoutCost | None = None
    """After :meth:`at` on a named device: that layout cost."""

    def at(self, params: float, flops: float | None = None) -> Machine:
        """This machine for a model of ``params`` parameters (spending ``flops``): the prior's
        size term and the layout's cost applied, as ``estimate_run`` applies them; unchanged
        with a given MFU or rate."""
        if self.prior_at is None:
            return self
        prior = self.prior_at(params)
        cost = None if self.layout_at is None or flops is None else self.layout_at(params, flops)
        total, (fast, slow) = (1.0, (1.0, 1.0)) if cost is None or not cost.applied else (
            cost.total, cost.total_range)
        return dataclasses.replace(self, mfu=prior.central / total,
                                   band=(prior.low / slow, prior.high / fast),
                                   prior_params=prior.params, layout=cost)

    def cost(self, flops: float, mfu: float) -> CostEstimate:
        return cost_from_flops(flops, self.gpus, self.peak_tflops, mfu, self.usd_per_gpu_hour,
                               self.failure_budget)

    def flops_for_usd(self, usd: float, mfu: float) -> float:
        # Dollars are proportional to FLOPs: the FLOPs that cost `usd` with failures at `mfu`.
        per_flop = self.cost(1.0, mfu).dollar_cost_with_failures
        if per_flop is None:  # BudgetTableSpec guarantees a price for a dollar budget
            raise InputError("usd_per_gpu_hour", None, "a price, to turn budget_usd into FLOPs")
        return usd / per_flop


class BudgetTableRow(BaseModel):
    """One way to spend the budget, with its time and money when a rate is known."""

    model_config = ConfigDict(frozen=True)

    params: float = Field(description="Parameters N.")
    tokens: float = Field(description="Tokens D = flops / (6·N).")
    tokens_per_param: float = Field(description="D / N.")
    flops: float = Field(description="Training compute 6·N·D of this split, in FLOPs.")
    seconds: float | None = Field(
        description="Wall-clock seconds at the central MFU; None when no rate was given."
    )
    hours: float | None = Field(description="The same in hours; None when no rate was given.")
    wall_days: float | None = Field(
        description="The same in days; None when no rate was given."
    )
    wall_days_range: Range | None = Field(
        description="Wall days [low, high] over the MFU band (fast end, slow end); None without "
                    "an accelerator."
    )
    gpu_hours: float | None = Field(
        description="Device-hours at the central MFU; None without an accelerator."
    )
    dollar_cost: float | None = Field(
        description="US dollars at the central MFU, without failures; None when no accelerator "
                    "or no price."
    )
    dollar_cost_range: Range | None = Field(
        description="US dollars [low, high] over the MFU band; None when dollar_cost is."
    )
    dollar_cost_with_failures: float | None = Field(
        description="US dollars × failure budget at the central MFU; None when dollar_cost is."
    )
    dollar_cost_with_failures_range: Range | None = Field(
        description="US dollars × failure budget [low, high] over the MFU band; None when "
                    "dollar_cost is."
    )
    fits: bool | None = Field(
        default=None,
        description="Whether a model of this size fits the devices for training at some layout "
                    "(the memory search, shape guessed from N); None without an accelerator.")
    min_gpu_count: int | None = Field(
        default=None, description="The fewest such devices it fits on; None when unknown.")
    min_gpu_count_rented: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The devices the catalog's machines pay for to hold min_gpu_count, when "
                    "more (10 TPU v6e rent a slice of 16); left out otherwise.")
    fit_slowdown: float | None = Field(
        default=None,
        description="When it fits: the layout's cost in time (recomputation, TP, PP and ZeRO-3 "
                    "beyond what the model needs at scale, CPU offload; ≥ 1), as the run "
                    "estimate computes it; in the row's time and cost with the MFU prior. None "
                    "otherwise.")
    fit_needs_offload: bool | None = Field(
        default=None,
        description="When it fits: whether only with CPU offload (its "
                    "slowdown not estimated); None otherwise.")
    fit_offload_gaps: list[OffloadGap] = Field(
        default_factory=list, exclude_if=lambda v: not v,
        description="When it fits with CPU offload: what that leaves unchecked on these "
                    "devices (host_ram_unknown, host_step_not_estimated); left out when "
                    "nothing.")
    mfu: float | None = Field(
        default=None,
        description="MFU the row is priced at (the prior at its size, or yours); the "
                    "utilisation with flops_per_sec; None without a rate.")
    mfu_range: Range | None = Field(
        default=None,
        description="MFU band [slow end, fast end] of the row's ranges; None without an "
                    "accelerator.")
    mfu_prior_params: float | None = Field(
        default=None,
        description="With the MFU prior: the size its size term used, N clamped to the "
                    "calibrated range (equal for rows priced alike); None otherwise.")
    budget_status: BudgetStatus | None = Field(
        default=None,
        description="With a dollar budget and a price: whether the cost with failures stays "
                    "within it across the MFU band (within), only at the central MFU "
                    "(over_at_slow_end) or not even there (over); None otherwise.")


class BudgetRowGroup(BaseModel):
    """Adjacent rows of the table with one outcome (time, cost, fit), shown as one row."""

    model_config = ConfigDict(frozen=True)

    first: int = Field(description="Index in rows of the group's first row.")
    last: int = Field(description="Index in rows of its last row (first when alone).")
    mfu_prior_params: float | None = Field(
        description="When the group holds several rows: the size at which the MFU prior's "
                    "size term stops (the calibrated range's end), so they take the same time "
                    "and cost; None for a row alone.")


def flops_for_usd(usd: float, ratio: float, machine: Machine, *, slow: bool) -> float:
    """The FLOPs a dollar budget buys at the MFU of the model it buys (central, or the slow
    end of the band): the prior follows the model's size, which follows the FLOPs, so the two
    are settled together (a few rounds: MFU moves as N^0.07). Where the layout changes between
    the sizes the rounds reach (no fixed point: ×1.05 below a size, ×1.34 above), the most
    FLOPs whose own cost is within the budget, by bisection between the last two rounds (it
    returned the last round's, priced at the other layout: 80% of a $300k budget spent)."""
    def mfu_of(at: Machine) -> float:
        return at.band[0] if slow and at.band is not None else at.mfu

    def own(flops: float) -> Machine:
        return machine.at(split_budget(flops, ratio)[0], flops)

    at, rounds = machine, [0.0]
    for _ in range(8):
        rounds.append(at.flops_for_usd(usd, mfu_of(at)))
        at = own(rounds[-1])
    lo, hi = sorted(rounds[-2:])
    if hi - lo <= 1e-6 * hi:
        return rounds[-1]

    def within(flops: float) -> bool:
        there = own(flops)
        cost = there.cost(flops, mfu_of(there)).dollar_cost_with_failures
        return cost is not None and cost <= usd * (1 + _SAME)

    if not within(lo):
        return lo
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if within(mid) else (lo, mid)
    return lo


def _range(fast: float | None, slow: float | None) -> Range | None:
    return None if fast is None or slow is None else (min(fast, slow), max(fast, slow))


def _status(point: CostEstimate | None, slow: CostEstimate | None,
            budget_usd: float | None) -> BudgetStatus | None:
    if budget_usd is None or point is None or point.dollar_cost_with_failures is None:
        return None
    limit = budget_usd * (1 + 1e-6)
    if point.dollar_cost_with_failures > limit:
        return "over"
    worst = slow.dollar_cost_with_failures if slow is not None else None
    return "over_at_slow_end" if worst is not None and worst > limit else "within"


def _memory(n: float, machine: Machine | None) -> dict[str, Any]:
    fits = min_count = rented = slowdown = offload = None
    gaps: list[OffloadGap] = []
    # below a run spec's floor (a lesson's tiny budget) the memory is not estimated: unknown
    if machine is not None and machine.gpu is not None and n >= MIN_MODEL_PARAMS:
        memory = estimate_memory(MemorySpec(params=n, gpu=machine.gpu, gpu_count=machine.gpus))
        fits, min_count = memory.fits, memory.min_gpu_count
        rented = memory.layout.min_gpu_count_rented
        if fits:
            offload, gaps = memory.offload, memory.offload_gaps
            slowdown = machine.layout.total if machine.layout is not None else 1.0
    return dict(fits=fits, min_gpu_count=min_count, min_gpu_count_rented=rented,
                fit_slowdown=slowdown, fit_needs_offload=offload, fit_offload_gaps=gaps)


def price_row(flops: float, n: float, machine: Machine | None,
              budget_usd: float | None = None, *, tokens: float | None = None
              ) -> BudgetTableRow:
    """The row spending ``flops`` on a model of ``n`` parameters on ``machine`` (time, money
    and memory None each without a machine), against ``budget_usd`` when given; its tokens
    ``flops / 6n``, or ``tokens`` as given when ``flops`` is 6·n·tokens (so they are exact)."""
    point = fast = slow = None
    if machine is not None:
        machine = machine.at(n, flops)
        point = machine.cost(flops, machine.mfu)
        if machine.band is not None:
            slow = machine.cost(flops, machine.band[0])
            fast = machine.cost(flops, machine.band[1])
    on_devices = machine is not None and machine.band is not None

    def spread(field: str) -> Range | None:
        if fast is None or slow is None:
            return None
        return _range(getattr(fast, field), getattr(slow, field))

    d = tokens_for_budget(flops, n) if tokens is None else tokens
    return BudgetTableRow(
        params=n, tokens=d, tokens_per_param=d / n, flops=flops, **_memory(n, machine),
        seconds=None if point is None else point.wall_seconds,
        hours=None if point is None else point.wall_hours,
        wall_days=None if point is None else point.wall_days,
        wall_days_range=spread("wall_days"),
        gpu_hours=point.gpu_hours if point is not None and on_devices else None,
        dollar_cost=point.dollar_cost if point is not None else None,
        dollar_cost_range=spread("dollar_cost"),
        dollar_cost_with_failures=point.dollar_cost_with_failures if point is not None else None,
        dollar_cost_with_failures_range=spread("dollar_cost_with_failures"),
        mfu=None if machine is None else machine.mfu,
        mfu_range=None if machine is None else machine.band,
        mfu_prior_params=None if machine is None else machine.prior_params,
        budget_status=_status(point, slow, budget_usd),
    )


_OUTCOME = ("wall_days", "dollar_cost_with_failures", "fits", "min_gpu_count",
            "min_gpu_count_rented", "fit_slowdown", "fit_needs_offload", "fit_offload_gaps",
            "budget_status")
"""The columns two rows must share to be shown as one."""


def _priced_alike(a: BudgetTableRow, b: BudgetTableRow) -> bool:
    """Whether two rows run at one MFU because the prior's size term stopped at the same size
    for at least one of them (not: the same size given twice)."""
    if a.mfu_prior_params is None or a.mfu_prior_params != b.mfu_prior_params:
        return False
    return a.params != a.mfu_prior_params or b.params != b.mfu_prior_params


def _same_outcome(a: BudgetTableRow, b: BudgetTableRow) -> bool:
    for field in _OUTCOME:
        x, y = getattr(a, field), getattr(b, field)
        both_float = isinstance(x, float) and isinstance(y, float)
        if not (math.isclose(x, y, rel_tol=_SAME) if both_float else x == y):
            return False
    return True


def _runs(rows: list[BudgetTableRow],
          together: Callable[[BudgetTableRow, BudgetTableRow], bool]) -> list[BudgetRowGroup]:
    groups: list[BudgetRowGroup] = []
    for i, row in enumerate(rows):
        if groups and together(rows[groups[-1].last], row):
            groups[-1] = BudgetRowGroup(first=groups[-1].first, last=i,
                                        mfu_prior_params=row.mfu_prior_params)
        else:
            groups.append(BudgetRowGroup(first=i, last=i, mfu_prior_params=None))
    return groups


def group_rows(rows: list[BudgetTableRow]) -> list[BudgetRowGroup]:
    """The rows as shown: adjacent rows the MFU prior prices alike (its size term stopped at
    the same size) with the same outcome form one group; every other row is a group alone."""
    return _runs(rows, lambda a, b: _priced_alike(a, b) and _same_outcome(a, b))


def mfu_clamps(rows: list[BudgetTableRow]) -> list[BudgetRowGroup]:
    """The runs of two or more adjacent rows the MFU prior prices alike: the same days and
    cost, whether or not their fit lets them share a row."""
    return [g for g in _runs(rows, _priced_alike) if g.last > g.first]


def default_sizes(c: float) -> list[float]:
    """The default model sizes of the table for a budget of ``c`` FLOPs."""
    # Four decades: two below the size where D = N, one above (the lesson's 1e5 … 1e8 for 6e14).
    middle = math.floor(math.log10(math.sqrt(c / 6)))
    return [10.0**k for k in range(middle - 2, middle + 2)]
