"""How far a fit in compute alone can carry small runs that lie on one tokens-per-parameter line.

When every small run trains at about the same tokens per parameter (note tokens_follow_params),
the fit in compute alone, L(C), is the loss along that line. A target far off it (a 1B model on
2T tokens from runs at 20 tokens per parameter) is not on the curve: at the same compute a model
trained on many more tokens per parameter than the runs lands above or below it by more than the
fit's interval can show (Hoffmann et al. 2022, eq. 2: 1B × 2T sits 0.05 above the 20:1 curve,
five of that fit's σ). So beyond :data:`OFF_LINE` times the runs' ratio, either side, the fit
gives the curve's value with no uncertainty (warning off_the_runs_line): the verdict then cannot
be go on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .points import ScalingPoint
from .result import FitWarning, Note

__all__ = ["OFF_LINE", "off_the_runs_line"]

OFF_LINE = 3.0
"""A target's tokens per parameter more than this factor from the runs' (their geometric mean)."""


def off_the_runs_line(points: Sequence[ScalingPoint], notes: Sequence[Note],
                      params: float | None, tokens: float | None) -> FitWarning | None:
    """The warning when the runs lie on one tokens-per-parameter line and the target of
    ``params`` × ``tokens`` lies over :data:`OFF_LINE` times off it; else None."""
    if "tokens_follow_params" not in notes or params is None or tokens is None:
        return None
    logs = [math.log(p.tokens / p.params) for p in points
            if p.tokens is not None and p.params is not None]
    runs = math.exp(sum(logs) / len(logs))
    target = tokens / params
    if max(target / runs, runs / target) <= OFF_LINE:
        return None
    return FitWarning(code="off_the_runs_line", numbers={
        "runs_ratio": runs, "target_ratio": target, "limit": OFF_LINE})
