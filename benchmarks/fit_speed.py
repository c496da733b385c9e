"""How fast a small scaling fit answers (issue 18): ratios measured in one run.

    uv run python -m benchmarks.fit_speed

- The fit of 5 points with its bootstrap interval against one bare ``scipy.optimize.
  least_squares`` call on the same points and curve (L = E + a·C^−b): the interval costs
  ``DEFAULT_RESAMPLES`` quick refits, so the target is a few hundred such calls.
- The ``fit`` command, launch to exit, against launching Python to ``import scipy.optimize``
  (the floor any fit pays; ``scipy.stats``, a second on its own, is no longer imported).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from compute_budget.skill import ScalingPoint, fit_scaling_law

POINTS = ((1e17, 3.52), (1e18, 3.11), (3e18, 2.95), (1e19, 2.83), (1e20, 2.64))
"""A clean saturating curve read off at five computes (tests/test_fit_cli.py's): four would
leave one spare point, too few for an interval, and the fit would skip its bootstrap."""
FIT_VS_LEAST_SQUARES_TARGET = 400.0
CLI_VS_FLOOR_TARGET = 1.5
RUNS = 5


def _median(f: object, runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _bare() -> None:
    from scipy.optimize import least_squares

    x = np.log([c for c, _ in POINTS]) - np.log(POINTS[-1][0])
    y = np.array([loss for _, loss in POINTS])
    least_squares(lambda p: p[0] + np.exp(p[1] + p[2] * -x) - y, [2.0, 0.0, 0.2])


def _fit() -> None:
    fit_scaling_law([ScalingPoint(compute=c, loss=v) for c, v in POINTS], target_compute=1e21)


def _launch(argv: list[str]) -> float:
    def run() -> None:
        subprocess.run(argv, check=True, capture_output=True)
    return _median(run)


def main() -> int:
    _bare(), _fit()  # warm: imports and first-call set-up
    bare, fit = _median(_bare, 50), _median(_fit)
    with tempfile.TemporaryDirectory() as tmp:
        points = Path(tmp) / "points.csv"
        points.write_text("compute,loss\n" + "".join(f"{c},{v}\n" for c, v in POINTS))
        floor = _launch([sys.executable, "-c", "import scipy.optimize"])
        cli = _launch([sys.executable, "-m", "compute_budget.cli", "fit", "--points",
                       str(points), "--target-compute", "1e21"])
    rows = [
        ("bare least_squares, 5 points", f"{bare * 1e3:.2f} ms", "", ""),
        ("fit with its interval, 5 points", f"{fit * 1e3:.1f} ms", "", ""),
        ("fit / least_squares", f"{fit / bare:.0f}x", f"≤ {FIT_VS_LEAST_SQUARES_TARGET:.0f}x",
         "yes" if fit / bare <= FIT_VS_LEAST_SQUARES_TARGET else "**no**"),
        ("launch to `import scipy.optimize`", f"{floor * 1e3:.0f} ms", "", ""),
        ("`compute-budget fit`, launch to exit", f"{cli * 1e3:.0f} ms", "", ""),
        ("fit command / floor", f"{cli / floor:.2f}x", f"≤ {CLI_VS_FLOOR_TARGET}x",
         "yes" if cli / floor <= CLI_VS_FLOOR_TARGET else "**no**"),
    ]
    print("| measure | value | target | met |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    met = fit / bare <= FIT_VS_LEAST_SQUARES_TARGET and cli / floor <= CLI_VS_FLOOR_TARGET
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
