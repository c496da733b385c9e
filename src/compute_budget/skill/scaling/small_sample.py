"""Two small-sample statistics the scaling fit needs, without ``scipy.stats`` (about a second
to import on every fit's start): the Student-t over normal quantile ratio that inflates a
bootstrap spread, and Spearman's rank correlation (ties at their mean rank)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

__all__ = ["rank_correlation", "t_over_z"]

Array = NDArray[np.float64]


def t_over_z(q: float, dof: int) -> float:
    """t_{dof}(q) / z(q): the small-sample factor on the bootstrap's spread. (``scipy.special``
    comes with ``scipy.optimize``, which the fit imports anyway; ``scipy.stats`` would add
    about a second to every fit's start.)"""
    from scipy.special import stdtrit

    return float(stdtrit(dof, q) / NormalDist().inv_cdf(q))


def _ranks(values: Array) -> Array:
    """Ranks 1..n, ties sharing their mean rank (as Spearman's coefficient takes them)."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def rank_correlation(a: Array, b: Array) -> float:
    """Spearman's rank correlation of ``a`` and ``b`` (0 when either is constant)."""
    ra, rb = _ranks(np.asarray(a, dtype=float)), _ranks(np.asarray(b, dtype=float))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = math.sqrt(float((ra * ra).sum() * (rb * rb).sum()))
    return 0.0 if denominator == 0 else float((ra * rb).sum()) / denominator
