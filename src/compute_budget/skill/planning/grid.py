"""The device counts a plan searches: 1, 2, 4, then whole nodes of 8, each a multiple of the
degrees the user pinned (tp·pp·ep)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..vocabulary import GPUS_PER_NODE

__all__ = ["SMALL_COUNTS", "CountGrid"]

SMALL_COUNTS = (1, 2, 4)
"""Counts below one node; above, whole nodes of GPUS_PER_NODE."""


@dataclass(frozen=True)
class CountGrid:
    """Counts 1, 2, 4, then whole nodes, each a multiple of ``step``, up to ``cap``."""

    step: int
    cap: int
    small: tuple[int, ...] = field(init=False)
    node_step: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "small", tuple(
            c for c in SMALL_COUNTS if c % self.step == 0 and c <= self.cap))
        object.__setattr__(self, "node_step", math.lcm(GPUS_PER_NODE, self.step))

    def __len__(self) -> int:
        return len(self.small) + self.cap // self.node_step

    def count(self, index: int) -> int:
        """The index-th count."""
        if index < len(self.small):
            return self.small[index]
        return self.node_step * (index - len(self.small) + 1)

    def first_at_least(self, devices: float) -> int:
        """Index of the first count ≥ ``devices`` (len when none is)."""
        for i, c in enumerate(self.small):
            if c >= devices:
                return i
        nodes = max(1, math.ceil(devices / self.node_step)) if math.isfinite(devices) else 0
        return min(len(self), len(self.small) + nodes - 1) if nodes else len(self)
