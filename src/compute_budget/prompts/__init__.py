"""How replies read: one Jinja template per reply, rendered from ``skill`` result models."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING

from .naming import arg, naming
from .render import render

if TYPE_CHECKING:
    from ..skill import (
        Accelerator,
        AlternativesReport,
        BudgetTable,
        Comparison,
        Decision,
        MemoryEstimate,
        OptimalSplit,
        ParamReport,
        PlanReport,
        ProbeReport,
        PublishedPrediction,
        RunEstimate,
        ScalingFit,
    )

__all__ = [
    "TOOL_PHRASES",
    "arg",
    "name_tools",
    "naming",
    "render",
    "render_accelerators",
    "render_alternatives",
    "render_comparison",
    "render_decision",
    "render_estimate",
    "render_fit",
    "render_memory",
    "render_optimal",
    "render_params",
    "render_plan",
    "render_presets",
    "render_probe",
    "render_split",
]


def render_estimate(estimate: RunEstimate, *, closing: bool = True,
                    detail: str | None = None) -> str:
    """The estimate table with its assumptions, one line each (``detail="full"``: every
    source quoted and the breakdowns); ``closing`` adds the step-3 question."""
    return render("estimate", estimate=estimate, closing=closing, detail=detail or "short")


def render_memory(memory: MemoryEstimate) -> str:
    """The memory table and the fits / does-not-fit line."""
    return render("memory", memory=memory)


def render_decision(decision: Decision, *, assistant: bool = False) -> str:
    """The verdict, its reason, the checks and the next step; ``assistant``: arguments named as
    the MCP tool takes them, else as the CLI's flags (:mod:`.naming`)."""
    with naming(None) if assistant else nullcontext():
        return render("verdict", decision=decision, assistant=assistant)


def render_alternatives(report: AlternativesReport) -> str:
    """The table of cheaper alternatives with their savings."""
    return render("alternatives", original=report.original, alternatives=report.alternatives,
                  kind=report.kind)


def render_comparison(comparison: Comparison) -> str:
    """Candidates side by side, ranked by gain per dollar, with the pool's best set."""
    return render("compare", comparison=comparison)


def render_fit(result: ScalingFit | PublishedPrediction) -> str:
    """A scaling fit's prediction, interval, gain and advice; or, without small runs, the
    published fits' prediction, labelled as a fallback."""
    from ..skill.scaling.published import PublishedPrediction as Published

    if isinstance(result, Published):
        return render("published", prediction=result)
    return render("fit", fit=result)


def render_optimal(optimal: OptimalSplit) -> str:
    """The compute-optimal split of a budget, and where a proposed run sits against it."""
    return render("optimal", optimal=optimal)


def render_plan(report: PlanReport, *, assistant: bool = False) -> str:
    """The cheapest and fastest plans for a deadline, or what keeps every plan out;
    ``assistant``: arguments named as the MCP tool takes them, not as CLI flags."""
    with naming(None) if assistant else nullcontext():
        return render("plan", report=report, assistant=assistant)


def render_split(split: BudgetTable, *, detail: str | None = None) -> str:
    """The lesson's budget-split table: the sizes, the table and the assumptions with their
    short sources (``detail="full"``: every source quoted and the calibration spelled out)."""
    return render("split", split=split, detail=detail or "short")


def render_accelerators(
    accelerators: Sequence[Accelerator] | None = None, *, show_sources: bool = False
) -> str:
    """The accelerator catalog table, optionally with every source."""
    from ..skill import load_catalog

    catalog = load_catalog()
    return render("accelerators", catalog=catalog,
                  accelerators=list(accelerators or catalog.accelerators),
                  show_sources=show_sources)


def render_probe(report: ProbeReport) -> str:
    """A probe's measurement and what it changes in an estimate."""
    return render("probe", r=report)


def render_params(report: ParamReport) -> str:
    """The parameter breakdown of an architecture."""
    return render("params", report=report)


def render_presets(reports: Sequence[ParamReport]) -> str:
    """The presets with their sizes and sources (same order as ``list_presets``)."""
    from ..skill import list_presets

    return render("presets", reports=list(zip(list_presets(), reports, strict=True)))


TOOL_PHRASES = {"memory": "the memory tool", "compare": "the compare tool",
                "alternatives": "the alternatives tool"}
"""How a reply names another operation (by its CLI command), for either door to rename."""


def name_tools(text: str, name_of: Callable[[str], str]) -> str:
    """``text`` with each phrase of :data:`TOOL_PHRASES` (also capitalised) replaced by the
    door's own name of that operation: ``name_of(command)``."""
    for command, phrase in TOOL_PHRASES.items():
        name = name_of(command)
        text = text.replace(phrase, name).replace(phrase[0].upper() + phrase[1:], name)
    return text
