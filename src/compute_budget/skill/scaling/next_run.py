"""The next small run worth making: among 2x, 4x, 10x and 30x the largest point's compute (at
most :data:`NEXT_RUN_MAX_SHARE` of the target's: a small run), the run whose addition shrinks
the interval at the target most, by the delta method.

The variance of the prediction is g·(JᵀJ)⁻¹·gᵀ (J the Jacobian at the points, g at the target);
adding a point adds its row to J. The expected width is today's bootstrap width × sqrt(variance
after / before) × the ratio of the inflation factors with one more degree of freedom. For
two-variable data the run is at the fit's compute-optimal split of that compute. When the fit
cannot estimate its uncertainty (no width today), the run is still the one that shrinks the
variance most, and the widths are None.
"""

from __future__ import annotations

import math

import numpy as np

from .curve import Array, Curve, curve_jacobian, curve_value
from .result import NextRun
from .small_sample import t_over_z

__all__ = ["NEXT_RUN_MAX_SHARE", "NEXT_RUN_MULTIPLES", "next_run"]

NEXT_RUN_MULTIPLES = (2.0, 4.0, 10.0, 30.0)
NEXT_RUN_MAX_SHARE = 0.1
"""A next small run costs at most this share of the target's compute."""


def next_run(curve: Curve, x: Array, target: Array, c_t: float, c_max: float,
             width_now: float | None, q: float, dof: int) -> NextRun | None:
    """The candidate run that shrinks the delta-method variance at the target most."""
    jac = curve_jacobian(curve.theta, x)
    information = jac.T @ jac
    g = curve_jacobian(curve.theta, target[None, :])[0]
    before = float(g @ np.linalg.pinv(information) @ g)
    # One more point is also one more degree of freedom for σ: a smaller small-sample factor.
    dof_gain = t_over_z(q, dof + 1) / t_over_z(q, dof)
    best: tuple[float, float, float | None, float | None, Array] | None = None
    candidates: list[tuple[float, float | None]] = []
    for multiple in NEXT_RUN_MULTIPLES:
        c = multiple * c_max
        if c > NEXT_RUN_MAX_SHARE * c_t:  # no longer a small run beside the target
            continue
        n, d = curve.optimum(c) if curve.form == "params_tokens" else (None, None)
        at = curve.at(c, n, d)
        row = curve_jacobian(curve.theta, at[None, :])[0]
        after = float(g @ np.linalg.pinv(information + np.outer(row, row)) @ g)
        shrink = dof_gain * (math.sqrt(after / before) if before > 0 else 1.0)
        candidates.append((c, None if width_now is None else width_now * shrink))
        if best is None or shrink < best[1]:
            best = (c, shrink, n, d, at)
    if best is None:
        return None
    c, shrink, n, d, at = best
    return NextRun(compute=c, multiple=c / c_max, params=n, tokens=d,
                   expected_loss=curve.user(float(curve_value(curve.theta, at[None, :])[0])),
                   width_now=width_now,
                   width_after=None if width_now is None else width_now * shrink,
                   candidates=candidates)
