"""What a model must relay of a result without the markdown (issue 19): the headline (the verdict
and its reason; fits or does not fit), the sources of the price and the MFU, and the question to
ask next, as short strings under the structured content's ``relay`` key.

Some clients hand the model the structured content, not the markdown; the numbers are there, but
the sentence a user must hear is not. The words live in ``templates/mcp/relay.md.j2``; this door
only renders them for the tools that have them and adds whether the run fits.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..prompts.render import render
from ..skill import ComputeBudgetError, RunSpec, estimate_run

__all__ = ["RELAYED", "relay", "relayed"]

RELAYED = frozenset({"estimate_run_cost", "render_verdict", "estimate_memory", "split_budget",
                     "plan_run", "suggest_alternatives", "compare_candidates", "fit_scaling_law"})
"""The tools whose structured content carries ``relay``."""
PRIOR_WORKING = frozenset({
    "runs_on_generation", "min_runs", "borrowed_from", "device_peak_tflops",
    "reference_peak_tflops", "fp8_speedup", "reference_params", "size_slope", "size_factor",
    "level", "band_factor", "band_high_factor", "fast_end_cap", "params_clamped"})
"""The MFU prior's working, which the brief structured content leaves out once ``relay``
says where the MFU comes from (``detail: "full"`` keeps it)."""


def _fits(tool: str, result: BaseModel) -> bool | None:
    """Whether the run fits in device memory (None: unknown or not this tool's question)."""
    if tool == "render_verdict":  # the verdict's feasibility: does_not_fit, too_long or ok
        return getattr(result, "feasibility", None) != "does_not_fit"
    memory: Any = result if tool == "estimate_memory" else getattr(result, "memory", None)
    return getattr(memory, "fits", None)


def _priced(tool: str, arguments: BaseModel | None) -> Any:
    """The estimate a verdict weighed, for the sources of its price and MFU (a verdict carries
    the cost, not where it came from): the same spec estimated again, a millisecond, no file
    read (validating the spec resolved its architecture)."""
    if tool != "render_verdict" or not isinstance(arguments, RunSpec):
        return None
    try:
        return estimate_run(arguments, in_time=False)
    except ComputeBudgetError:  # pragma: no cover - the verdict estimated the same spec
        return None


def relay(tool: str, result: BaseModel,
          arguments: BaseModel | None = None) -> dict[str, Any] | None:
    """The ``relay`` of ``tool``'s ``result``: headline, price_source, mfu_source, ask and fits,
    where they apply; None for a tool without one."""
    if tool not in RELAYED:
        return None
    fields: dict[str, Any] = {}
    text = render("mcp/relay", tool=tool, r=result, e=_priced(tool, arguments))
    for line in text.splitlines():
        key, sep, text = line.partition(": ")
        if sep and key.isidentifier():  # a key said twice (two caveats) keeps both
            fields[key] = (f"{fields[key].rstrip('.')}; {text.strip()}" if key in fields
                           else text.strip())
    fits = _fits(tool, result)
    if fits is not None:
        fields["fits"] = fits
    return fields


def relayed(tool: str, result: BaseModel, structured: dict[str, Any], full: bool,
            arguments: BaseModel | None = None) -> dict[str, Any]:
    """``structured`` with ``relay`` added; in the brief content, without the MFU prior's
    working that relay's mfu_source replaces (the content stays within its size cap)."""
    told = relay(tool, result, arguments)
    if told is None:
        return structured
    prior = (structured.get("mfu_used") or {}).get("prior")
    if not full and isinstance(prior, dict):
        for key in PRIOR_WORKING & prior.keys():
            del prior[key]
    return {**structured, "relay": told}
