"""How many devices would bring a too-long run within the longest plan: re-estimated at each
count tried, not scaled from the count asked about.

Scaling the wall time linearly keeps the MFU of the count asked about, and that MFU carries its
layout's cost: on 8 H100 a 70B model needs full recomputation and ZeRO-3 with offload (×1.34),
which 72 devices do not. Linear scaling said 96 H100; the estimate at 72 finishes in 361 days.
So the count is searched: the linear count is the top (raised while its own estimate is still
too long), the linear count without the layout's cost the bottom, and the answer is the fewest
whole machines between them whose own estimate is feasible within the plan (the wall time falls
as devices are added, so a bisection finds it).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable
from typing import NamedTuple, Protocol

from ..vocabulary import GPUS_PER_NODE

__all__ = ["InTime", "in_time"]

MAX_RAISES = 4
"""Times the top is raised while the linear count's own estimate is still too long."""


class Estimated(Protocol):
    """What the search reads of an estimate (a RunEstimate)."""

    @property
    def feasibility(self) -> str: ...
    @property
    def wall_days(self) -> float: ...
    @property
    def max_plan_days(self) -> float: ...
    @property
    def mfu(self) -> float: ...


class InTime(NamedTuple):
    """The count, the MFU its own estimate used, and that estimate (None when the count was
    scaled linearly, without a memory check)."""

    gpu_count: int
    mfu: float
    estimate: Estimated | None = None


def in_time(estimate: Estimated, gpu_count: int, step: int, layout: float | None,
            estimate_at: Callable[[int], Estimated | None]) -> InTime | None:
    """The fewest devices, in multiples of ``step`` (the user's pinned parallel degrees; beyond
    one node, whole nodes of 8), whose own estimate (``estimate_at``; None where that count
    cannot be estimated) is feasible within max_plan_days. ``layout`` is the layout's cost in
    ``estimate`` (None: no memory check, so the MFU does not depend on the count and the linear
    count is exact). None unless ``estimate`` is too long, or when no count up to the top
    finishes."""
    if estimate.feasibility != "too_long":
        return None
    if layout is None:
        return InTime(_whole(_linear(estimate, gpu_count, estimate.wall_days), step), estimate.mfu)
    top, at_top = _top(estimate, gpu_count, step, estimate_at)
    if at_top is None:
        return None
    bottom = _whole(_linear(estimate, gpu_count, estimate.wall_days / max(layout, 1.0)), step)
    found: dict[int, Estimated | None] = {top: at_top}

    def finishes(n: int) -> bool:
        if n not in found:
            found[n] = estimate_at(n)
        at = found[n]
        return at is not None and at.feasibility == "ok"

    counts = _counts(min(bottom, top), top, step)
    best = counts[bisect_left(counts, True, key=finishes)]  # the top finishes: always found
    chosen = found[best]
    assert chosen is not None
    return InTime(best, chosen.mfu, chosen)


def _top(estimate: Estimated, gpu_count: int, step: int,
         estimate_at: Callable[[int], Estimated | None]) -> tuple[int, Estimated | None]:
    """The linear count, raised by its own estimate's excess while that is still too long."""
    top, days = gpu_count, estimate.wall_days
    for _ in range(MAX_RAISES):
        top = max(_whole(_linear(estimate, top, days), step), _whole(top + 1, step))
        at_top = estimate_at(top)
        if at_top is not None and at_top.feasibility == "ok":
            return top, at_top
        days = at_top.wall_days if at_top is not None else days
    return top, None


def _linear(estimate: Estimated, gpu_count: int, wall_days: float) -> int:
    return max(1, math.ceil(gpu_count * wall_days / estimate.max_plan_days))


def _whole(need: int, step: int) -> int:
    """``need`` rounded up to whole machines of ``step`` (and whole nodes beyond one)."""
    if need > GPUS_PER_NODE:
        step = math.lcm(step, GPUS_PER_NODE)
    return step * math.ceil(need / step)


def _counts(bottom: int, top: int, step: int) -> list[int]:
    """The whole-machine counts from ``bottom`` to ``top``, ascending."""
    counts, n = [], bottom
    while n < top:
        counts.append(n)
        n = _whole(n + 1, step)
    return [*counts, top]
