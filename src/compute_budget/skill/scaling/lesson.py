"""The five budget calculators of the scaling-and-budgets lesson.

All rest on the dense-transformer rule of thumb C ≈ 6·N·D (Kaplan et al. 2020, "Scaling Laws for
Neural Language Models", Table 1): 2 FLOPs per parameter per token in the forward pass (one
multiply-add) and 4 in the backward pass. Every argument must be a positive finite number; a
``ValueError`` (:class:`~compute_budget.skill.errors.InputError`) names the argument otherwise.
"""

from __future__ import annotations

import math

from ..errors import InputError
from ..quantities import check_positive
from ..vocabulary import FLOPS_PER_PARAM_PER_TOKEN

__all__ = [
    "params_for_budget",
    "split_budget",
    "tokens_for_budget",
    "train_flops",
    "training_seconds",
]



def train_flops(N: float, D: float) -> float:
    """Training compute C = 6·N·D in FLOPs, for N parameters and D tokens."""
    n = check_positive(N, "N")
    d = check_positive(D, "D")
    return FLOPS_PER_PARAM_PER_TOKEN * n * d


def tokens_for_budget(C: float, N: float) -> float:
    """Tokens D = C / (6·N) that a budget of C FLOPs buys for a model of N parameters."""
    c = check_positive(C, "C")
    n = check_positive(N, "N")
    return c / (FLOPS_PER_PARAM_PER_TOKEN * n)


def params_for_budget(C: float, D: float) -> float:
    """Parameters N = C / (6·D) that a budget of C FLOPs allows when training on D tokens."""
    c = check_positive(C, "C")
    d = check_positive(D, "D")
    return c / (FLOPS_PER_PARAM_PER_TOKEN * d)


def training_seconds(C: float, flops_per_sec: float, utilization: float = 1.0) -> float:
    """Seconds to execute C FLOPs on a machine of peak ``flops_per_sec`` at ``utilization``.

    seconds = C / (flops_per_sec · utilization), with 0 < utilization ≤ 1.
    """
    c = check_positive(C, "C")
    rate = check_positive(flops_per_sec, "flops_per_sec")
    if isinstance(utilization, bool) or not isinstance(utilization, int | float):
        raise InputError("utilization", utilization, "a number in (0, 1]")
    if not (math.isfinite(utilization) and 0 < utilization <= 1):
        raise InputError("utilization", utilization, "a number in (0, 1]")
    return c / (rate * utilization)


def split_budget(C: float, ratio: float) -> tuple[float, float]:
    """Split C FLOPs into (N, D) with 6·N·D = C and D = ratio·N.

    Substituting D = r·N into C = 6·N·D gives N = sqrt(C / (6·r)). A ratio of about 20 tokens per
    parameter is compute-optimal in Hoffmann et al. 2022 ("Chinchilla"), for their data and setup.
    """
    c = check_positive(C, "C")
    r = check_positive(ratio, "ratio")
    n = math.sqrt(c / (FLOPS_PER_PARAM_PER_TOKEN * r))
    return n, r * n
