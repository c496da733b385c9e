"""The per-type count search of :mod:`.plan`: which counts of one accelerator type to estimate,
and which of them is the cheapest and the fastest plan.

The search uses the shape of the estimate rather than trying every count. On one type, with
the model FLOPs, the peak and the MFU fixed, the device-hours are ``wall_hours · n = K · r(n)``,
where ``r(n) ≥ 1`` is the layout's cost in time (recomputation, model parallelism beyond
what the model needs at scale, CPU offload; 1 with a given MFU), and the dollars are
proportional to them (at one price per device; a machine rented whole and filled only partly
is the exception of step 3). More devices leave more memory per
device, so as a rule the run fits from some count on, ``r(n)`` does not grow, the layout's
model-parallel degree ``mp(n) = tp·pp`` does not grow, the wall days fall at least as ``1/n``
and the dollars fall or stay flat. The smallest global batch, ``n · s / mp(n)`` tokens for
``s`` tokens per data-parallel rank (the sequence length times the micro-batch), then grows
with ``n``, so the counts within the batch cap are those up to some count. So, per type:

0. find the largest count within the batch cap. Every count up to ``cap / s`` is within it
   whatever its layout (``mp ≥ 1``); above, the largest count allowed is estimated first (if
   it is within the cap, the cap does not bind). A probe within the cap puts every larger count
   above ``cap · n / batch(n)`` over it, and a probe over the cap puts every smaller count below
   that within it (the layout's ``mp`` can only be larger there), so the largest count known
   within is probed next (the answer when the layout does not change), then the bound it sets,
   then bisection. The counts above are not feasible; below, the largest is "the largest
   count" of the steps that follow. If it does not fit or misses the deadline while the
   largest count allowed would not, the batch cap binds: the type's status says so, with the
   fewest devices that fit in time (step 2 on every count);
1. estimate the largest count: if it does not fit, or misses the deadline, no count does;
   ``K`` (its device-hours without recomputation) bounds the count from below,
   ``n ≥ K / deadline``;
2. find the fewest devices that fit and meet the deadline by bisection from that bound, probing
   first where the largest count's device-hours, the memory check's fewest devices or the last
   too-slow probe (``n ≥ wall_days·n_probe / deadline``) put it, then the count below it;
3. the cheapest plan on the type is the fewest devices from there on whose device-hours are
   down to the largest count's (or to ``K``; of the counts estimated, the one of fewest
   dollars, as a machine filled only partly pays for all its devices: :mod:`..hardware.prices`):
   the memory check's fewest devices for that count's whole layout (its ZeRO stage, TP, PP,
   recomputation and offload, where it costs what the largest count's does) first, then
   galloping and bisection; the fastest is the largest count.

Estimates are cached per count, and each type's answer is the best of the counts estimated.
The rule has exceptions the search does not chase: optimizer offload, a last resort whose host
step shrinks with the devices while each device's share of the batch does too, can make a
middle count cheaper than the largest, pinned
layout knobs make the fit depend on divisibility, and at small counts the layout search can
trade recomputation for tensor parallelism from one count to the next, so that a count's batch
is below a smaller count's; and between PCIe cards ZeRO-3's gathers, which the compute does not
hide there, shrink with the micro-batch each count's memory allows, so a middle count can be
cheaper than the one found (by 17% for Llama-2 70B on L40S in the tests).
``tests/skill/test_plan.py`` checks the search, batch cap included, against trying every count
on subsets of the catalog.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from ..estimate import RunEstimate, estimate_run
from ..hardware.catalog import Accelerator
from ..memory.estimate import estimate_memory
from ..vocabulary import HOURS_PER_DAY
from .grid import CountGrid

if TYPE_CHECKING:
    from .plan_spec import PlanSpec

__all__ = ["ALMOST", "TIE", "TypeStatus", "min_global_batch_tokens"]

TIE = 1e-9
"""Relative difference below which two costs or two wall times are equal (rounding noise)."""
ALMOST = 1 - 1e-9
"""Slack on a lower bound computed in floating point: a bound stays a bound."""

TypeStatus = Literal["feasible", "no_peak", "no_count", "does_not_fit", "misses_deadline",
                     "over_batch_cap", "over_budget", "unpriced_with_budget"]
"""Why a type has feasible plans or none: no_peak (no dense peak for the precision, not
searched), no_count (no allowed count is a multiple of the pinned degrees), does_not_fit (no
allowed count fits), misses_deadline (none finishes in time), over_batch_cap (the counts that
fit and finish in time imply a global batch above max_batch_tokens), over_budget (the cheapest
that finishes in time within the batch cap costs more than the budget), unpriced_with_budget
(no price to check the budget against)."""


def _fill_machines(result: TypeResult, grid: CountGrid, at: Callable[[int], RunEstimate],
                   limit: int, timely: Callable[[RunEstimate], bool]) -> None:
    """Where the cheapest count found fills its machines only partly, also estimate the count
    that fills them (up to index ``limit``): a machine is paid in full (:mod:`..hardware.prices`),
    so the same dollars an hour buy more devices (2 L4 pay for a g6.12xlarge's 4). When that
    count is ``timely`` and costs no more, it is the cheapest in time (a budget binding names
    it: 280 TPU v5p were named at $1.28M where the 288 they pay for cost $1.25M)."""
    if result.in_time is None:
        return
    paid = result.points[result.in_time].price.paid_gpus
    index = grid.first_at_least(paid) if paid is not None else len(grid)
    if index <= limit and grid.count(index) == paid:
        filled = at(index)
        if timely(filled) and _dollars_or_hours(filled) <= _dollars_or_hours(
                result.points[result.in_time]):
            result.in_time = paid


def _dollars_or_hours(e: RunEstimate) -> float:
    """What the cheapest count on one type minimises: its dollars where it is priced (a machine
    filled only partly pays for all its devices: :mod:`..hardware.prices`), else its
    device-hours."""
    return e.dollar_cost if e.dollar_cost is not None else e.gpu_hours


def min_global_batch_tokens(e: RunEstimate) -> float:
    """Tokens per optimizer step at the estimate's layout with one micro-batch per data-parallel
    rank and no gradient accumulation: data_parallel · micro_batch · seq_len."""
    memory = e.memory
    data_parallel = memory.data_parallel if memory is not None else e.gpu_count
    micro_batch = memory.micro_batch if memory is not None else 1
    return float(data_parallel * micro_batch * e.seq_len)


# --- one type ----------------------------------------------------------------------------


@dataclass
class TypeResult:
    acc: Accelerator
    cap: int
    status: TypeStatus
    points: dict[int, RunEstimate]
    feasible: dict[int, bool]
    top: int | None = None
    """The largest count the statuses were decided on (within the batch cap when one fits in
    time there; else the largest count allowed)."""
    best: int | None = None
    """The cheapest feasible count (the fewest dollars, or device-hours without a price; ties:
    fewer devices)."""
    fastest: int | None = None
    """The fastest feasible count."""
    in_time: int | None = None
    """The cheapest count that fits, meets the deadline and the batch cap, budget aside (for
    the budget binding)."""
    fewest_in_time: int | None = None
    """The fewest devices that fit and meet the deadline, batch cap aside (for its binding)."""
    min_gpu_count: int | None = None
    """When nothing fits: the memory check's fewest devices."""


@dataclass
class TypeSearch:
    spec: PlanSpec
    estimates: int = 0
    max_batch: float = field(init=False)
    """The batch cap in tokens (PlanSpec.batch_cap)."""

    def __post_init__(self) -> None:
        self.max_batch = self.spec.batch_cap[0]

    def fits(self, e: RunEstimate) -> bool:
        return not self.spec.must_fit or e.feasibility != "does_not_fit"

    def in_time(self, e: RunEstimate) -> bool:
        return self.fits(e) and e.wall_days <= self.spec.deadline_days

    def within_batch(self, e: RunEstimate) -> bool:
        return min_global_batch_tokens(e) <= self.max_batch

    def within_budget(self, e: RunEstimate) -> bool:
        budget = self.spec.budget_usd
        cost = e.dollar_cost_with_failures
        return budget is None or (cost is not None and cost <= budget)

    def one_type(self, acc: Accelerator, cap: int) -> TypeResult:
        """The cheapest and fastest plans on ``acc`` with at most ``cap`` devices."""
        grid = CountGrid(self.spec.count_step, cap)
        points: dict[int, RunEstimate] = {}
        result = TypeResult(acc=acc, cap=cap, status="no_count", points=points, feasible={})
        if not len(grid):
            return result

        def at(index: int) -> RunEstimate:
            n = grid.count(index)
            if n not in points:
                self.estimates += 1
                points[n] = estimate_run(self.spec.run_spec(acc.key, n), in_time=False)
            return points[n]

        last = len(grid) - 1
        limit = self._largest_within_batch(grid, at, last)
        if limit < last and (limit < 0 or not self.in_time(at(limit))):
            # Nothing within the batch cap fits in time: would more devices?
            if self.in_time(at(last)):
                first = self._fewest_in_time(grid, at, at(last), last)
                result.fewest_in_time = grid.count(first)
                result.status = "over_batch_cap"
            else:
                limit = last  # no count does: the largest says why
        if result.status != "over_batch_cap":
            self._up_to(result, grid, at, limit)
            _fill_machines(result, grid, at, limit,
                           lambda e: self.in_time(e) and self.within_batch(e))
        result.feasible = {n: self.in_time(e) and self.within_batch(e) and self.within_budget(e)
                           for n, e in points.items()}
        good = [n for n, ok in result.feasible.items() if ok]
        if good:
            result.status = "feasible"
            result.best = pick(good, lambda n: _dollars_or_hours(points[n]),
                                lambda n: (n, points[n].wall_days))
            result.fastest = pick(good, lambda n: points[n].wall_days,
                                   lambda n: (points[n].gpu_hours, n))
        return result

    def _up_to(self, result: TypeResult, grid: CountGrid, at: Callable[[int], RunEstimate],
               limit: int) -> None:
        """Steps 1-3 of the module docstring on the counts up to index ``limit``."""
        top = at(limit)
        result.top = top.gpu_count
        if not self.fits(top):
            result.status = "does_not_fit"
            result.min_gpu_count = top.memory.min_gpu_count if top.memory is not None else None
        elif top.wall_days > self.spec.deadline_days:
            result.status = "misses_deadline"
        else:
            first = self._fewest_in_time(grid, at, top, limit)
            result.fewest_in_time = grid.count(first)
            best = self._cheapest_level(grid, at, first, top, limit)
            if not (self.in_time(at(best)) and self.within_batch(at(best))):
                best = first  # the rule's exception: keep the fewest in time
            if not self.within_batch(at(best)):  # a layout change raised the batch below limit
                result.status = "over_batch_cap"
                return
            result.in_time = grid.count(best)
            result.status = ("feasible" if self.within_budget(at(best))
                             else "unpriced_with_budget" if at(best).dollar_cost is None
                             else "over_budget")

    def _largest_within_batch(self, grid: CountGrid, at: Callable[[int], RunEstimate],
                              last: int) -> int:
        """Index of the largest count up to ``last`` whose smallest global batch is within the
        cap (−1 when none is): step 0 of the module docstring."""
        per_rank = self.spec.tokens_per_rank
        if self.max_batch < per_rank:
            return -1  # one sequence per step is already too many

        def last_up_to(per_device: float) -> int:
            """Index of the last count whose batch at ``per_device`` tokens a device is within
            the cap (−1 when none is)."""
            n = math.floor(self.max_batch / per_device)
            while (n + 1) * per_device <= self.max_batch:  # exact at the boundary
                n += 1
            while n > 0 and n * per_device > self.max_batch:
                n -= 1
            return grid.first_at_least(n + 1) - 1

        known = min(last_up_to(per_rank), last)  # within whatever the layout: no estimate
        if known == last:
            return last
        hi = last  # counts above hi are over the cap
        probe = last
        seen: set[int] = set()
        while True:
            e = at(probe)
            seen.add(probe)
            bound = last_up_to(min_global_batch_tokens(e) / e.gpu_count)
            if self.within_batch(e):  # above bound, a count is over at this layout or a leaner
                known, hi = max(known, probe), min(hi, bound)
                probe = hi
            else:  # up to bound, a count is within at this layout or a more parallel one
                hi = probe - 1
                known = min(max(known, bound), hi)
                probe = (known + hi + 1) // 2
            if known >= hi:
                return known
            if known >= 0 and known not in seen:
                probe = known  # the answer when the layout does not change; its layout bounds hi

    def _fewest_in_time(self, grid: CountGrid, at: Callable[[int], RunEstimate],
                        top: RunEstimate, last: int) -> int:
        """Index of the fewest devices that fit and meet the deadline, up to index ``last``
        (``top``, its estimate, does)."""
        deadline = self.spec.deadline_days
        # Below the floor device-days / deadline no count is fast enough; the largest count's
        # device-days / deadline is where it usually is (its layout recomputes the least).
        lo = min(grid.first_at_least(_floor_hours(top) / HOURS_PER_DAY / deadline * ALMOST),
                 last)
        guess = grid.first_at_least(top.wall_days * top.gpu_count / deadline * ALMOST)
        hint = top.memory.min_gpu_count if top.memory is not None else None
        if hint and self.spec.must_fit:
            guess = max(guess, grid.first_at_least(hint))

        confirming = _Confirm()

        def next_guess(i: int, e: RunEstimate, ok: bool) -> int | None:
            if ok:
                return confirming.below(i)  # a prediction is usually exact: check the count below
            if self.fits(e):  # too slow here: these device-days would be fast enough
                return grid.first_at_least(e.wall_days * e.gpu_count / deadline * ALMOST)
            if e.memory is not None and e.memory.min_gpu_count:
                return grid.first_at_least(e.memory.min_gpu_count)
            return None

        return _first(lo, last, lambda i: self.in_time(at(i)), at, guess, next_guess)

    def _cheapest_level(self, grid: CountGrid, at: Callable[[int], RunEstimate], first: int,
                        top: RunEstimate, last: int) -> int:
        """Index of the fewest devices from ``first`` on whose device-hours are down to those of
        ``top``, the count at index ``last`` (its layout recomputes the least), or to the floor
        (no recomputation): the memory check's fewest devices for that whole layout (the knobs
        the user left open pinned to its values) is the first guess, then galloping and
        bisection. Pinning only its recomputation left the guess below where the cost drops
        (TP 8 where the largest count runs TP 4), and galloping from there took most of the
        estimates of a large mixture of experts (DeepSeek-V3: 539 estimates, 295 then). Its
        micro-batch is pinned too when the search raised it (ZeRO-3 between PCIe cards):
        without, the catalog search of DeepSeek-V3 took 469 estimates, 327 with."""
        target = top.gpu_hours * (1 + TIE)
        floor = _floor_hours(top) * (1 + TIE)
        if at(first).gpu_hours <= max(target, floor) or first == last:
            return first
        spec = self.spec.run_spec(top.accelerator_key, top.gpu_count)
        hint = None
        memory = top.memory
        if spec.recompute is None and memory is not None:
            # the fewest devices on which top's whole layout fits: there its cost is top's
            knobs = {"recompute": memory.recompute, "zero": memory.zero, "tp": memory.tp,
                     "pp": memory.pp, "offload": memory.offload,
                     "micro_batch": memory.micro_batch if memory.layout.micro_batch_raised
                     else None}
            self.estimates += 1
            hint = estimate_memory(spec.model_copy(update={
                k: v for k, v in knobs.items() if getattr(spec, k) is None and v is not None}
            )).min_gpu_count
        guess = max(first + 1, grid.first_at_least(hint)) if hint else first + 1
        step = [1]
        confirming = _Confirm()

        def next_guess(i: int, e: RunEstimate, ok: bool) -> int | None:
            if ok:
                return confirming.below(i)
            step[0] *= 2
            return i + step[0]

        return _first(first + 1, last, lambda i: at(i).gpu_hours <= target, at, guess,
                      next_guess)


class _Confirm:
    """After a prediction holds, probe the count just below it once: a prediction is usually
    exact. When that holds too the prediction was off (the layout's cost changes with the
    count, as CPU offload's does), and bisection takes over instead of walking down."""

    def __init__(self) -> None:
        self.done = False

    def below(self, i: int) -> int | None:
        if self.done:
            return None
        self.done = True
        return i - 1


def _first(lo: int, hi: int, holds: Callable[[int], bool], at: Callable[[int], RunEstimate],
           guess: int | None,
           next_guess: Callable[[int, RunEstimate, bool], int | None]) -> int:
    """The smallest index in [lo, hi] where ``holds`` (monotone: false, then true; true at
    hi): bisection that probes ``guess`` first, then what ``next_guess`` says after each probe
    (when it lies inside the bracket), else the middle."""
    while lo < hi:
        i = guess if guess is not None and lo <= guess < hi else (lo + hi) // 2
        ok = holds(i)
        if ok:
            hi = i
        else:
            lo = i + 1
        guess = next_guess(i, at(i), ok)
    return hi


def _floor_hours(e: RunEstimate) -> float:
    """The fewest device-hours any count of this type can take: without the layout's cost (a
    prior or measured MFU is divided by it; a given MFU is not)."""
    if e.mfu_used.origin == "user":
        return e.gpu_hours
    cost = e.layout_cost
    return e.gpu_hours / (cost.total if cost is not None and cost.applied
                          else e.recompute_slowdown)


T = TypeVar("T")


def pick(items: Iterable[T], value: Callable[[T], float],
          tie_break: Callable[[T], tuple[float | str, ...]]) -> T:
    """The item of least ``value``; values within TIE of the least are equal and broken by
    ``tie_break``."""
    pool = list(items)
    least = min(value(i) for i in pool)
    return min((i for i in pool if value(i) <= least * (1 + TIE)), key=tie_break)
