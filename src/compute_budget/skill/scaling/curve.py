"""The numerical core of the scaling fit: the curve in its well-scaled form, its Jacobian, the
least-squares solve and its starting points, and the way back to the user's units.

Scaled form: losses divided by their largest magnitude, C, N, D by the largest point's, and
x = log(C/C_max) (or log(N/N_max), log(D/D_max)), so that with θ = (E, u₁ … u_k, e₁ … e_k)::

    y = E + Σ exp(u_j − e_j·x_j)        (= E + Σ exp(u_j)·(C/C_max)^(−e_j))

Fitting: ``scipy.optimize.least_squares`` with bounds e ∈ [0, 3] (:data:`MAX_EXPONENT`) and, for
a loss, E ≥ 0; started from the best few of a grid of exponents whose linear parameters are
solved exactly (:func:`grid_starts`). A bootstrap refit starts from θ̂ and tries unbounded
Levenberg-Marquardt first (:func:`solve` with ``quick``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .published import optimal_split
from .result import Form

__all__ = ["MAX_EXPONENT", "Array", "Curve", "curve_jacobian", "curve_value", "grid_starts",
           "solve"]

Array = NDArray[np.float64]
MAX_EXPONENT = 3.0
_GRID: dict[int, list[tuple[float, ...]]] = {
    1: [(e,) for e in (0.05, 0.1, 0.2, 0.35, 0.5, 0.8, 1.2)],
    2: [(a, b) for a in (0.1, 0.25, 0.5, 0.8) for b in (0.1, 0.25, 0.5, 0.8)]}


def curve_value(theta: Array, x: Array) -> Array:
    """y at the scaled coordinates ``x`` (one row per run)."""
    k = x.shape[1]
    terms = np.exp(theta[1:1 + k] - theta[1 + k:] * x)
    return np.asarray(theta[0] + terms.sum(axis=1), dtype=np.float64)


def curve_jacobian(theta: Array, x: Array) -> Array:
    """∂y/∂θ at the scaled coordinates ``x``: one row per run."""
    k = x.shape[1]
    terms = np.exp(theta[1:1 + k] - theta[1 + k:] * x)
    return np.column_stack([np.ones(len(x)), terms, -terms * x])


def solve(x: Array, y: Array, starts: list[Array], lower_e: float,
          quick: bool = False) -> tuple[Array, float]:
    """The least-squares θ from the best of ``starts``, and its residual sum of squares.
    (``scipy.optimize`` is imported here, on the first fit: most commands never fit.)"""
    from scipy import optimize

    k = x.shape[1]
    lower = np.r_[lower_e, np.full(k, -60.0), np.zeros(k)]
    upper = np.r_[np.inf, np.full(k, 60.0), np.full(k, MAX_EXPONENT)]

    def residual(t: Array) -> Array:
        return curve_value(t, x) - y

    def jacobian(t: Array) -> Array:
        return curve_jacobian(t, x)

    with np.errstate(over="ignore", invalid="ignore"):
        if quick:
            # A bootstrap refit from θ̂: unbounded Levenberg-Marquardt is several times faster,
            # and its optimum is the bounded one when within the bounds; when only E ≥ 0 is
            # broken, the bounded optimum lies on the face E = 0 (refitted the same way).
            fast = optimize.least_squares(residual, starts[0], jac=jacobian, method="lm")
            theta = np.asarray(fast.x, dtype=np.float64)
            if fast.success and np.isfinite(lower[0]) and theta[0] < lower[0]:
                fast = optimize.least_squares(
                    lambda t: residual(np.r_[lower[0], t]), starts[0][1:], method="lm",
                    jac=lambda t: jacobian(np.r_[lower[0], t])[:, 1:])
                theta = np.r_[lower[0], fast.x]
            if fast.success and np.all((theta >= lower) & (theta <= upper)):
                return theta, 2.0 * float(fast.cost)
        best = None
        for start in starts:
            result = optimize.least_squares(residual, np.clip(start, lower, upper), jac=jacobian,
                                            bounds=(lower, upper), method="trf")
            if best is None or result.cost < best.cost:
                best = result
    assert best is not None
    return np.asarray(best.x, dtype=np.float64), 2.0 * float(best.cost)


def grid_starts(x: Array, y: Array, lower_e: float) -> list[Array]:
    """The three best starting θ of the exponent grid, each with its linear parameters solved
    exactly."""
    scored = []
    for exponents in _GRID[x.shape[1]]:
        e = np.array(exponents)
        design = np.column_stack([np.ones(len(x)), np.exp(-e * x)])
        coef = np.linalg.lstsq(design, y, rcond=None)[0]
        coef[0] = max(coef[0], lower_e)
        coef[1:] = np.maximum(coef[1:], 1e-9)
        theta = np.r_[coef[0], np.log(coef[1:]), e]
        residual = curve_value(theta, x) - y
        scored.append((float(residual @ residual), theta))
    scored.sort(key=lambda s: s[0])
    return [theta for _, theta in scored[:3]]


@dataclass(frozen=True)
class Curve:
    """The fitted curve, in its scaled form, and the way back to the user's units."""

    form: Form
    theta: Array
    scale_x: Array  # largest compute, or largest params and tokens
    scale_y: float  # largest |loss|
    sign: float  # −1 for a metric fitted as its negation

    def at(self, c: float, n: float | None = None, d: float | None = None) -> Array:
        """Scaled coordinates of a run: log(C/C_max), or log(N/N_max), log(D/D_max)."""
        raw = [n, d] if self.form == "params_tokens" and n is not None and d is not None else [c]
        return np.asarray(np.log(np.array(raw, dtype=np.float64) / self.scale_x),
                          dtype=np.float64)

    def user(self, value: float) -> float:
        return float(self.sign * self.scale_y * value)

    def optimum(self, c: float) -> tuple[float, float]:
        """The fit's compute-optimal (N, D) for C (Hoffmann et al. eq. 4), two-variable form:
        in scaled units L = E + c₁·n^(−α) + c₂·d^(−β) with n·d = C/(6·N_max·D_max)."""
        t, (n_max, d_max) = self.theta, self.scale_x
        n, d = optimal_split(c / (n_max * d_max), math.exp(t[1]), math.exp(t[2]), float(t[3]),
                             float(t[4]))
        return n * n_max, d * d_max

    def parameters(self) -> dict[str, float]:
        t, k = self.theta, len(self.scale_x)
        coef = [math.exp(math.log(self.scale_y) + t[1 + j] + t[1 + k + j]
                         * math.log(self.scale_x[j])) for j in range(k)]
        e = float(self.sign * self.scale_y * t[0])
        if k == 1:
            return {"E": e, "a": coef[0], "b": float(t[2])}
        return {"E": e, "A": coef[0], "alpha": float(t[3]), "B": coef[1], "beta": float(t[4])}
