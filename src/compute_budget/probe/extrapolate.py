"""From two measured depths to the full model: every quantity linear in the layer count.

q(L) = q(L1) + (L − L1)·(q(L2) − q(L1))/(L2 − L1), for the step time and for each phase's
peak, the model states and the activations separately. The full model's peak is the highest
of its extrapolated phase peaks plus the allocator's extrapolated reserve; its framework
overhead is that peak minus the model states and activations. A per-layer difference that
comes out negative (timing noise on a layer too small to time) counts as zero.
"""

from __future__ import annotations

from ..skill.hardware.measured import MeasuredMemory
from .measure import PHASES, Depth

__all__ = ["full_memory", "linear", "per_layer"]


def per_layer(low: float, high: float, depths: tuple[int, int]) -> float:
    """What one more decoder layer adds, at least 0."""
    return max(0.0, (high - low) / (depths[1] - depths[0]))


def linear(low: float, high: float, depths: tuple[int, int], layers: int) -> float:
    """``q(layers)`` from ``q(depths[0]) = low`` and ``q(depths[1]) = high``."""
    return low + (layers - depths[0]) * per_layer(low, high, depths)


def full_memory(low: Depth, high: Depth, layers: int, tokens: int) -> MeasuredMemory:
    """The full model's memory from the two depths; ``tokens`` per step."""
    depths = (low.layers, high.layers)

    def at_full(get_low: float, get_high: float) -> float:
        return linear(get_low, get_high, depths, layers)

    phase_peak = max(at_full(low.peaks[p], high.peaks[p]) for p in PHASES)
    peak = phase_peak + at_full(low.reserve_bytes, high.reserve_bytes)
    states = at_full(low.states_bytes, high.states_bytes)
    activations = at_full(low.activation_bytes, high.activation_bytes)
    peak = max(peak, states + activations)
    per_token_layer = per_layer(low.activation_bytes, high.activation_bytes, depths) / tokens
    return MeasuredMemory(
        peak_bytes=max(1, round(peak)), model_states_bytes=round(states),
        activation_bytes=round(activations),
        overhead_bytes=max(0, round(peak) - round(states) - round(activations)),
        activation_bytes_per_token_per_layer=per_token_layer, method=low.method)
