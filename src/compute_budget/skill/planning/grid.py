"""The device counts a plan searches: 1, 2, 4, then whole nodes of 8, each a multiple of the
degrees the user pinned (tp·pp·ep); and the count that would meet a deadline at the slow end of
the MFU band, with its price."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..estimate_result import RunEstimate
from ..hardware.catalog import get_accelerator
from ..vocabulary import GPUS_PER_NODE

__all__ = ["SMALL_COUNTS", "CountGrid", "price_at", "slow_end_count"]

SMALL_COUNTS = (1, 2, 4)
"""Counts below one node; above, whole nodes of GPUS_PER_NODE."""


@dataclass(frozen=True)
class CountGrid:
    """Counts 1, 2, 4, then whole nodes, each a multiple of ``step``, up to ``cap``; and ``cap``
    itself last when it is a multiple of ``step`` the others miss (12 available devices are
    searched at 12, not only at 8)."""

    step: int
    cap: int
    small: tuple[int, ...] = field(init=False)
    node_step: int = field(init=False)
    extra: int | None = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "small", tuple(
            c for c in SMALL_COUNTS if c % self.step == 0 and c <= self.cap))
        object.__setattr__(self, "node_step", math.lcm(GPUS_PER_NODE, self.step))
        missed = (self.cap % self.step == 0 and self.cap % self.node_step != 0
                  and self.cap not in self.small)
        object.__setattr__(self, "extra", self.cap if missed else None)

    def __len__(self) -> int:
        return len(self.small) + self.cap // self.node_step + (self.extra is not None)

    def count(self, index: int) -> int:
        """The index-th count."""
        if index < len(self.small):
            return self.small[index]
        if self.extra is not None and index == len(self) - 1:
            return self.extra
        return self.node_step * (index - len(self.small) + 1)

    def first_at_least(self, devices: float) -> int:
        """Index of the first count ≥ ``devices`` (len when none is)."""
        for i, c in enumerate(self.small):
            if c >= devices:
                return i
        if not math.isfinite(devices):
            return len(self)
        index = len(self.small) + max(1, math.ceil(devices / self.node_step)) - 1
        last_node = len(self.small) + self.cap // self.node_step
        if index < last_node:
            return index
        return len(self) - 1 if self.extra is not None and devices <= self.extra else len(self)


def slow_end_count(e: RunEstimate, deadline_days: float, grid: CountGrid) -> int | None:
    """Devices that would finish by the deadline even at the slow end of the MFU band, by the
    estimate's own linear scaling, among the counts the search allows (1, 2, 4, whole nodes,
    multiples of the pinned degrees); None when the plan already does, or no count does."""
    slow = e.wall_days_range[1]
    return None if slow <= deadline_days else count_for(e.gpu_count, slow, deadline_days, grid)


def count_for(gpu_count: int, days: float, deadline_days: float, grid: CountGrid) -> int | None:
    """Devices that would bring ``days`` on ``gpu_count`` within the deadline by linear scaling,
    among the counts the search allows; None when no count does."""
    index = grid.first_at_least(gpu_count * days / deadline_days)
    return grid.count(index) if index < len(grid) else None


def price_at(e: RunEstimate, count: int | None) -> float | None:
    """The catalog's price per device at ``count`` when it is not ``e``'s (a machine rented
    whole and filled otherwise: :mod:`..hardware.prices`); None when it is the same."""
    if count is None or e.price.instance is None:
        return None
    price = get_accelerator(e.accelerator_key).price(None, kind=e.price.kind, gpu_count=count)
    now, then = e.usd_per_gpu_hour, price.usd_per_gpu_hour
    same = now is not None and then is not None and math.isclose(now, then, rel_tol=1e-9)
    return None if same else then


def modelled(e: RunEstimate, notes: Sequence[str]) -> bool:
    """Whether a plan's MFU is its hardware's own and its network one the estimate models
    (none of the plan notes pcie_cluster or instance_network)."""
    return not (e.mfu_used.borrowed or {"pcie_cluster", "instance_network"} & set(notes))
