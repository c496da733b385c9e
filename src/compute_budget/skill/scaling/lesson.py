"""The five budget calculators of the scaling-and-budgets lesson.

All rest on the dense-transformer rule of thumb C ≈ 6·N·D (Kaplan et al. 2020, "Scaling Laws for
Neural Language Models", Table 1): 2 FLOPs per parameter per token in the forward pass (one
multiply-add) and 4 in the backward pass. Every argument is checked against the same types the
specs use (a parameter count in [1, 10¹⁸], tokens in [1, 10¹⁷], FLOPs in [10⁷, 10³⁵], …; ``"7B"``
is read as 7·10⁹); an :class:`~..errors.ArgumentsError` names each argument refused.
"""

from __future__ import annotations

import math

from ..quantities import FlopCount, FlopRate, ParamCount, TokenCount, TokensPerParam, validated
from ..vocabulary import FLOPS_PER_PARAM_PER_TOKEN, Mfu, flops_6nd, renamed_arguments

__all__ = [
    "params_for_budget",
    "split_budget",
    "tokens_for_budget",
    "train_flops",
    "training_seconds",
]


@renamed_arguments(N="params")
@validated
def train_flops(params: ParamCount, D: TokenCount) -> float:
    """Training compute C = 6·N·D in FLOPs, for ``params`` = N parameters and D tokens."""
    return flops_6nd(params, D)


@renamed_arguments(N="params")
@validated
def tokens_for_budget(C: FlopCount, params: ParamCount) -> float:
    """Tokens D = C / (6·N) that a budget of C FLOPs buys for a model of ``params`` = N
    parameters."""
    return C / (FLOPS_PER_PARAM_PER_TOKEN * params)


@validated
def params_for_budget(C: FlopCount, D: TokenCount) -> float:
    """Parameters N = C / (6·D) that a budget of C FLOPs allows when training on D tokens."""
    return C / (FLOPS_PER_PARAM_PER_TOKEN * D)


@validated
def training_seconds(C: FlopCount, flops_per_sec: FlopRate, utilization: Mfu = 1.0) -> float:
    """Seconds to execute C FLOPs on a machine of peak ``flops_per_sec`` at ``utilization``.

    seconds = C / (flops_per_sec · utilization), with 10⁻⁴ ≤ utilization ≤ 1.
    """
    return C / (flops_per_sec * utilization)


@validated
def split_budget(C: FlopCount, ratio: TokensPerParam) -> tuple[float, float]:
    """Split C FLOPs into (N, D) with 6·N·D = C and D = ratio·N.

    Substituting D = r·N into C = 6·N·D gives N = sqrt(C / (6·r)). A ratio of about 20 tokens per
    parameter is compute-optimal in Hoffmann et al. 2022 ("Chinchilla"), for their data and setup.
    """
    n = math.sqrt(C / (FLOPS_PER_PARAM_PER_TOKEN * ratio))
    return n, ratio * n
