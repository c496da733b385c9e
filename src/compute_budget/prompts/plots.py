"""Pictures: the scaling fit and the plan frontier as PNG.

Each picture is built in two steps: a ``*_picture_data`` function turns a ``skill`` result into
the plain series it plots (what the tests snapshot), and :func:`draw_png` draws them with
matplotlib. matplotlib is imported only here, and only when a picture is asked for, so no other
command pays for it; it is the optional ``plot`` extra (``pip install 'compute-budget[plot]'``).
The words on a picture (titles, axis labels, legends) live here, beside the templates.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any

from ..skill.errors import InputError

__all__ = [
    "Picture",
    "Series",
    "draw_png",
    "fit_picture_data",
    "plan_picture_data",
]

PNG_SOFTWARE = "compute-budget"
"""The PNG's Software tag: how ``--plot`` knows a file it may overwrite is one it drew."""
WIDTH_IN, HEIGHT_IN, DPI = 7.5, 4.6, 110
"""750 × 460 pixels at 100 dpi would be a little small for the labels; 825 × 506 reads well."""


@dataclass(frozen=True)
class Series:
    """One thing drawn: points, a line, or a band between two lines."""

    label: str
    kind: str
    """``points``, ``line``, ``band`` (x, low, high), ``hline`` (y), ``vline`` (x) or
    ``marker`` (one point with an optional error bar: x, y, low, high)."""
    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()
    group: str = ""
    """Series of one group share a colour (an accelerator type, the fit)."""


@dataclass(frozen=True)
class Picture:
    """What a picture shows: a title, axis labels and scales, and its series."""

    title: str
    x_label: str
    y_label: str
    x_log: bool
    y_log: bool
    series: tuple[Series, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        """The plotted data as plain values (rounded to 6 significant digits), for tests."""
        def r(values: tuple[float, ...]) -> list[float]:
            return [float(f"{v:.6g}") for v in values]

        return {
            "title": self.title, "x_label": self.x_label, "y_label": self.y_label,
            "x_log": self.x_log, "y_log": self.y_log,
            "series": [{"label": s.label, "kind": s.kind, "group": s.group, "x": r(s.x),
                        "y": r(s.y), "low": r(s.low), "high": r(s.high)}
                       for s in self.series],
        }


def _matplotlib() -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("plot", True, "matplotlib, which draws the pictures: install it with "
                         "pip install 'compute-budget[plot]'") from None
    return Figure, FigureCanvasAgg


def draw_png(picture: Picture) -> bytes:
    """The picture as PNG bytes (matplotlib's Agg canvas; no global pyplot state)."""
    figure_class, canvas_class = _matplotlib()
    figure = figure_class(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    canvas_class(figure)
    axes = figure.add_subplot()
    colours: dict[str, str] = {}
    palette = [f"C{i}" for i in range(10)]

    def colour(group: str) -> str:
        if group not in colours:
            colours[group] = palette[len(colours) % len(palette)]
        return colours[group]

    for s in picture.series:
        c = colour(s.group or s.label)
        if s.kind == "points":
            axes.scatter(s.x, s.y, label=s.label, color=c, zorder=3, s=22)
        elif s.kind == "line":
            axes.plot(s.x, s.y, label=s.label, color=c, marker="o" if len(s.x) < 30 else None,
                      markersize=3)
        elif s.kind == "band":
            axes.fill_between(s.x, s.low, s.high, color=c, alpha=0.18, label=s.label,
                              linewidth=0)
        elif s.kind == "hline":
            axes.axhline(s.y[0], color="0.35", linestyle="--", linewidth=1, label=s.label)
        elif s.kind == "vline":
            axes.axvline(s.x[0], color="0.35", linestyle=":", linewidth=1, label=s.label)
        elif s.kind == "marker":
            errors = None
            if s.low and s.high:
                errors = [[s.y[0] - s.low[0]], [s.high[0] - s.y[0]]]
            axes.errorbar(s.x, s.y, yerr=errors, fmt="*", markersize=11, capsize=4,
                          color=c, label=s.label, zorder=4)
    if picture.x_log:
        axes.set_xscale("log")
    if picture.y_log:
        axes.set_yscale("log")
    axes.set_title(picture.title, fontsize=11)
    axes.set_xlabel(picture.x_label)
    axes.set_ylabel(picture.y_label)
    axes.grid(True, which="major", alpha=0.3)
    if len(picture.series) > 6:  # many accelerators: the legend beside the axes, not over them
        axes.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    else:
        axes.legend(fontsize=8, loc="best")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": PNG_SOFTWARE})
    return buffer.getvalue()


def _finite(*values: float | None) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def fit_picture_data(fit: Any, points: Any) -> Picture:
    """The scaling fit: the small-run points, the fitted curve and its interval band out to the
    target, the prediction at the target with its interval, and the baseline (no band and no
    error bar when the fit's uncertainty is unknown)."""
    higher = bool(getattr(fit, "higher_is_better", False))
    metric = "metric" if higher else "loss"
    curve = list(fit.curve)  # (compute, predicted, low, high) rows
    xs = tuple(row[0] for row in curve)
    series = [] if fit.interval is None else [
        Series(f"interval ({fit.level:.0%})", "band", x=xs,
               low=tuple(row[2] for row in curve), high=tuple(row[3] for row in curve),
               group="fit")]
    series += [
        Series("fitted curve", "line", x=xs, y=tuple(row[1] for row in curve), group="fit"),
        Series("small runs", "points", x=tuple(p.flops for p in points),
               y=tuple(p.loss for p in points), group="points"),
    ]
    ends = () if fit.interval is None else fit.interval
    series.append(Series("prediction at the target", "marker", x=(fit.target_compute,),
                         y=(fit.predicted,), low=ends[:1], high=ends[1:], group="target"))
    if _finite(fit.baseline_loss):
        series.append(Series(f"baseline {metric}", "hline", y=(fit.baseline_loss,)))
    return Picture(
        title=f"Scaling fit: predicted {metric} {fit.predicted:.4g} at "
              f"{fit.target_compute:.2e} FLOPs",
        x_label="training compute (FLOPs)", y_label=metric, x_log=True, y_log=False,
        series=tuple(series))


def plan_picture_data(report: Any, deadline_days: float | None = None,
                      budget_usd: float | None = None) -> Picture:
    """The plan frontier: cost with the failure budget against wall days, one line per
    accelerator type over the device counts evaluated, the chosen plans starred, the deadline
    and the budget as lines."""
    series: list[Series] = []
    for front in report.frontier:
        points = sorted((p for p in front.points
                         if _finite(p.wall_days, p.dollar_cost_with_failures) and p.fits),
                        key=lambda p: p.wall_days)
        if not points:
            continue
        series.append(Series(front.accelerator, "line", x=tuple(p.wall_days for p in points),
                             y=tuple(p.dollar_cost_with_failures for p in points),
                             group=front.accelerator))
    for plan in report.plans[:3]:
        if _finite(plan.wall_days, plan.dollar_cost_with_failures):
            series.append(Series(f"{plan.gpu_count} × {plan.accelerator}", "marker",
                                 x=(plan.wall_days,), y=(plan.dollar_cost_with_failures,),
                                 group=plan.accelerator))
    if _finite(deadline_days):
        series.append(Series("deadline", "vline", x=(float(deadline_days or 0),)))
    if _finite(budget_usd):
        series.append(Series("budget", "hline", y=(float(budget_usd or 0),)))
    return Picture(
        title="Plans: cost against wall time, per accelerator (device counts that fit)",
        x_label="wall time (days)", y_label="cost with failure budget (US$)",
        x_log=True, y_log=True, series=tuple(series))
