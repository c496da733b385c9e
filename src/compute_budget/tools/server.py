"""The compute-budget MCP server: ten tools, the ``prevalidate_run`` prompt, resources, completions.

``compute-budget-mcp`` serves it over stdio; ``compute-budget-mcp --http [--port P]`` serves
streamable HTTP on 127.0.0.1 with the SDK's DNS-rebinding protection on and the limits of
``tools/http.py`` (body size, session cap, idle timeout, optional bearer token). Logs go to stderr.
Every tool is a thin layer: arguments model → one ``skill`` call → one template.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from collections.abc import Sequence
from typing import Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.prompts.base import Prompt, PromptArgument
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from .. import __version__
from ..prompts import (
    render_accelerators,
    render_alternatives,
    render_comparison,
    render_decision,
    render_estimate,
    render_fit,
    render_memory,
    render_optimal,
    render_plan,
    render_split,
)
from ..prompts.mcp_texts import (
    prevalidate_text,
    procedure_text,
    question_text,
    server_instructions,
    tool_description,
)
from ..skill import (
    AlternativesOptions,
    AlternativesReport,
    BudgetTable,
    BudgetTableSpec,
    Catalog,
    CompareSpec,
    Comparison,
    ComputeBudgetError,
    Decision,
    DecisionInputs,
    FitSpec,
    GainFromPoints,
    MemoryEstimate,
    MemorySpec,
    OptimalSpec,
    OptimalSplit,
    PlanReport,
    PlanSpec,
    RunEstimate,
    RunSpec,
    ScalingFit,
    budget_table,
    compare_candidates,
    decide,
    describe_error,
    estimate_memory,
    estimate_run,
    get_accelerator,
    list_accelerators,
    load_catalog,
    optimal,
    plan_run,
    predict,
    suggest_alternatives,
)
from ..skill.hardware.catalog import AcceleratorKey
from ..skill.vocabulary import normalize_name
from .toolkit import Question, ToolSpec, build_tool, merge_arguments

__all__ = ["TOOL_NAMES", "build_server", "main"]

TOOL_NAMES = (
    "estimate_run_cost",
    "render_verdict",
    "suggest_alternatives",
    "estimate_memory",
    "split_budget",
    "list_accelerators",
    "compare_candidates",
    "fit_scaling_law",
    "compute_optimal",
    "plan_run",
)
CATALOG_URI = "compute-budget://catalog"
CATALOG_JSON_URI = "compute-budget://catalog.json"
ACCELERATOR_URI = "compute-budget://accelerators/{name}"
PROCEDURE_URI = "compute-budget://procedure"

logger = logging.getLogger("compute_budget.mcp")


# --- what the tools ask the user for ------------------------------------------------------

_GPU_KEYS = tuple(a.key for a in list_accelerators()
                  if a.peak_tflops.get(a.default_precision) is not None)

_literal: Any = Literal
_hardware_fields: dict[str, Any] = {
    "gpu": (_literal[_GPU_KEYS], Field(description=RunSpec.model_fields["gpu"].description)),
    "gpu_count": (int, Field(ge=1, description=RunSpec.model_fields["gpu_count"].description)),
}
HardwareForm: type[BaseModel] = create_model("HardwareForm", **_hardware_fields)
"""What the user is asked for when the GPU type or count is missing (catalog keys to choose)."""

_gain_fields: dict[str, Any] = {
    name: (float, Field(ge=0 if name == "gain_uncertainty" else None,
                        description=DecisionInputs.model_fields[name].description))
    for name in ("predicted_gain", "gain_uncertainty")
} | {"baseline_to_beat": (float, Field(
    default=0.0, description=DecisionInputs.model_fields["baseline_to_beat"].description))}
GainForm: type[BaseModel] = create_model("GainForm", **_gain_fields)
"""What the user is asked for in step 3 when the gain, its uncertainty or the baseline is
missing."""

HARDWARE = Question("hardware", ("gpu", "gpu_count"), HardwareForm, question_text("hardware"))
GAIN = Question("gain", ("predicted_gain", "gain_uncertainty", "baseline_to_beat"), GainForm,
                question_text("gain"), required=("predicted_gain", "gain_uncertainty"),
                alternatives=(("metric_now", "metric_expected", "gain_uncertainty"),
                              ("points", "baseline_loss")))


# --- arguments: the skill models, with the askable inputs optional -------------------------

class ReplyOptions(BaseModel):
    """How much every tool returns."""

    model_config = ConfigDict(extra="forbid")

    detail: Literal["short", "full"] | None = Field(
        default=None,
        description="full: the long reply with every source quoted and the nested detail in "
                    "the structured content. Default short.",
    )


EstimateArguments = merge_arguments(
    "EstimateRunCostArguments", RunSpec, ReplyOptions, optional=frozenset(HARDWARE.fields))
VerdictArguments = merge_arguments(
    "RenderVerdictArguments", RunSpec, DecisionInputs, GainFromPoints, ReplyOptions,
    optional=frozenset((*HARDWARE.fields, "predicted_gain", "gain_uncertainty")))
AlternativesArguments = merge_arguments(
    "SuggestAlternativesArguments", RunSpec, AlternativesOptions, ReplyOptions,
    optional=frozenset(HARDWARE.fields))


MemoryArguments = merge_arguments("EstimateMemoryArguments", MemorySpec, ReplyOptions)
SplitArguments = merge_arguments("SplitBudgetArguments", BudgetTableSpec, ReplyOptions)
CompareArguments = merge_arguments("CompareCandidatesArguments", CompareSpec, ReplyOptions)


class PlotOption(BaseModel):
    """Whether a tool adds a picture."""

    model_config = ConfigDict(extra="forbid")

    plot: bool | None = Field(default=None, description="true: add the picture as a PNG image.")


FitArguments = merge_arguments("FitScalingLawArguments", FitSpec, PlotOption, ReplyOptions)
OptimalArguments = merge_arguments("ComputeOptimalArguments", OptimalSpec, ReplyOptions)
PlanArguments = merge_arguments("PlanRunArguments", PlanSpec, PlotOption, ReplyOptions)


class ListAcceleratorsArguments(ReplyOptions):
    """Optional filter for the catalog."""

    query: str | None = Field(
        default=None, max_length=100,
        description="Part of a device name, key, alias, vendor or generation (e.g. 'h100', "
                    "'AMD', 'hopper'); omit for the whole catalog.",
    )


def _pick(model: type[BaseModel], arguments: BaseModel) -> Any:
    values = arguments.model_dump(include=set(model.model_fields), exclude_none=True,
                                  exclude_unset=True)  # a default is not a choice
    return model.model_validate(values)


# --- the calls ------------------------------------------------------------------------------

def _estimate(arguments: BaseModel) -> tuple[BaseModel, str]:
    estimate = estimate_run(_pick(RunSpec, arguments))
    return estimate, render_estimate(estimate, closing=True,
                                     detail=getattr(arguments, "detail", None))


def _verdict(arguments: BaseModel) -> tuple[BaseModel, str]:
    estimate = estimate_run(_pick(RunSpec, arguments))
    inputs: DecisionInputs = _pick(DecisionInputs, arguments)
    decision = decide(estimate, inputs, _pick(GainFromPoints, arguments))
    return decision, render_decision(decision)


def _alternatives(arguments: BaseModel) -> tuple[BaseModel, str]:
    options: AlternativesOptions = _pick(AlternativesOptions, arguments)
    report = suggest_alternatives(_pick(RunSpec, arguments), **options.model_dump())
    return report, render_alternatives(report)


def _memory(arguments: BaseModel) -> tuple[BaseModel, str]:
    memory = estimate_memory(_pick(MemorySpec, arguments))
    return memory, render_memory(memory)


def _split(arguments: BaseModel) -> tuple[BaseModel, str]:
    split = budget_table(_pick(BudgetTableSpec, arguments))
    return split, render_split(split)


def _compare(arguments: BaseModel) -> tuple[BaseModel, str]:
    comparison = compare_candidates(_pick(CompareSpec, arguments))
    return comparison, render_comparison(comparison)


def _fit(arguments: BaseModel) -> tuple[BaseModel, str]:
    result = predict(_pick(FitSpec, arguments))
    return result, render_fit(result)


def _fit_picture(arguments: BaseModel, result: BaseModel) -> bytes | None:
    if not getattr(arguments, "plot", None):
        return None
    if not isinstance(result, ScalingFit):
        raise ComputeBudgetError("plot: a picture needs a fit of your points (give points)")
    from ..prompts.plots import draw_png, fit_picture_data

    return draw_png(fit_picture_data(result, _pick(FitSpec, arguments).points))


def _optimal(arguments: BaseModel) -> tuple[BaseModel, str]:
    result = optimal(_pick(OptimalSpec, arguments))
    return result, render_optimal(result)


def _plan(arguments: BaseModel) -> tuple[BaseModel, str]:
    report = plan_run(_pick(PlanSpec, arguments))
    return report, render_plan(report)


def _plan_picture(arguments: BaseModel, result: BaseModel) -> bytes | None:
    if not getattr(arguments, "plot", None):
        return None
    from ..prompts.plots import draw_png, plan_picture_data

    assert isinstance(result, PlanReport)
    return draw_png(plan_picture_data(result, result.deadline_days, result.budget_usd))


def _matches(query: str, *labels: str) -> bool:
    wanted = normalize_name(query)
    return any(wanted in normalize_name(label) for label in labels)


def _accelerators(arguments: BaseModel) -> tuple[BaseModel, str]:
    query = getattr(arguments, "query", None)
    catalog = load_catalog()
    chosen = [a for a in catalog.accelerators
              if not query or _matches(query, a.key, a.name, a.vendor, a.generation, *a.aliases)]
    if not chosen:
        raise ComputeBudgetError(
            f"query: {query!r} matches no accelerator; call list_accelerators without a query "
            "for the whole catalog"
        )
    result = Catalog(compiled=catalog.compiled, notes=catalog.notes, accelerators=tuple(chosen))
    return result, render_accelerators(chosen)


def _drop_empty_items(key: str) -> Any:
    """Drop the null keys of each item of the list under ``key`` (rows say only what applies
    to them; a top-level unknown stays null)."""
    def trim(data: dict[str, Any]) -> dict[str, Any]:
        data[key] = [{k: v for k, v in item.items() if v is not None and v != []}
                     for item in data.get(key, [])]
        return data
    return trim


DESCRIBED_ON_ESTIMATE = frozenset(info.alias or name
                                  for name, info in RunSpec.model_fields.items())
"""Run arguments: described once, in estimate_run_cost's schema; other tools list them bare."""
DESCRIBED_ON_VERDICT = frozenset(DecisionInputs.model_fields)
"""The gain and money arguments: described once, in render_verdict's schema."""
DESCRIBED_ON_FIT = frozenset(GainFromPoints.model_fields)
"""Small-run points and the baseline loss: described once, in fit_scaling_law's schema."""
CORE_RUN = ("params", "preset", "tokens", "gpu", "gpu_count", "kind")
"""The run arguments render_verdict and suggest_alternatives list; they take the rest of
estimate_run_cost's too (described once, there)."""
MEMORY_BRIEF: dict[str, Any] = {"shape": True, "optimizer": {"holds", "source"},
                                "layout": {"tried", "slowdown"}}
"""The memory result without the shape, the optimizer's texts and the search's working."""
ESTIMATE_BRIEF: dict[str, Any] = {
    "param_breakdown": True, "flops_breakdown": True,
    "peak_source": True, "price": {"reference"},
    "mfu_used": {"prior": {"runs", "source", "basis", "trend"}},
    "memory": MEMORY_BRIEF,
    "energy": {"board_power_w": {"source", "as_of"}, "pue": {"source", "as_of"},
               "grid_kg_co2_per_kwh": {"source", "as_of"}},
}
"""The estimate without the breakdowns, the long source quotes and the memory's detail."""


def tool_specs() -> list[ToolSpec]:
    """The tools, in the order of the procedure, then the planning tools."""
    return [
        ToolSpec("estimate_run_cost", "Estimate a training run's time and cost",
                 tool_description("estimate_run_cost"), EstimateArguments, RunEstimate,
                 _estimate, (HARDWARE,), brief=ESTIMATE_BRIEF),
        ToolSpec("render_verdict", "Go / marginal / no-go verdict on a run",
                 tool_description("render_verdict"), VerdictArguments, Decision, _verdict,
                 (HARDWARE, GAIN),
                 brief={"findings": {"__all__": {"numbers"}}, "gain_fit": {"curve"}},
                 published=(*CORE_RUN, *DecisionInputs.model_fields,
                            *GainFromPoints.model_fields, "detail"),
                 undescribed=DESCRIBED_ON_ESTIMATE | DESCRIBED_ON_FIT),
        ToolSpec("suggest_alternatives", "Price cheaper alternatives to a run",
                 tool_description("suggest_alternatives"), AlternativesArguments,
                 AlternativesReport, _alternatives, (HARDWARE,),
                 published=(*CORE_RUN, *AlternativesOptions.model_fields, "detail"),
                 undescribed=DESCRIBED_ON_ESTIMATE | DESCRIBED_ON_VERDICT,
                 brief={"original": ESTIMATE_BRIEF | {"memory": True},
                        "alternatives": {"__all__": {"estimate"}}},
                 trim=_drop_empty_items("alternatives")),
        ToolSpec("estimate_memory", "Memory per device and whether it fits",
                 tool_description("estimate_memory"), MemoryArguments, MemoryEstimate, _memory,
                 brief=MEMORY_BRIEF, undescribed=DESCRIBED_ON_ESTIMATE,
                 published=("params", "config", "preset", "gpu", "gpu_count", "lora_rank",
                            "weights_bits", "seq_len", "micro_batch", "zero", "tp", "pp",
                            "recompute", "offload", "optimizer", "detail")),
        ToolSpec("split_budget", "Split a compute budget between model size and data",
                 tool_description("split_budget"), SplitArguments, BudgetTable, _split,
                 brief={"mfu_prior": True, "peak_source": True}),
        ToolSpec("list_accelerators", "List accelerators: peaks, memory, prices, sources",
                 tool_description("list_accelerators"), ListAcceleratorsArguments, Catalog,
                 _accelerators, brief={"notes": True, "accelerators": {"__all__": {
                     "spec_source": True, "spec_as_of": True, "prices": True, "aliases": True,
                     "board_power_w": True, "board_power_source": True, "generation": True,
                     "vendor": True,
                     "memory_bandwidth_tbs": True,
                     "default_price": {"offer", "source", "default"}}}},
                 trim=_drop_empty_items("accelerators")),
        ToolSpec("compare_candidates", "Rank candidate runs by gain per dollar",
                 tool_description("compare_candidates"), CompareArguments, Comparison,
                 _compare, brief={"candidates": {"__all__": {"estimate", "decision"}}},
                 undescribed=DESCRIBED_ON_VERDICT),
        ToolSpec("fit_scaling_law", "Predict a run's loss and gain from small runs",
                 tool_description("fit_scaling_law"), FitArguments, ScalingFit, _fit,
                 brief={"curve": True}, picture=_fit_picture),
        ToolSpec("compute_optimal", "Compute-optimal params and tokens for a budget",
                 tool_description("compute_optimal"), OptimalArguments, OptimalSplit, _optimal),
        ToolSpec("plan_run", "Cheapest devices and count to meet a deadline",
                 tool_description("plan_run"), PlanArguments, PlanReport, _plan,
                 published=("params", "preset", "tokens", "kind", "deadline_days",
                            "budget_usd", "gpus", "available", "max_gpu_count",
                            "max_batch_tokens", "plot", "detail"),
                 undescribed=DESCRIBED_ON_ESTIMATE | DESCRIBED_ON_VERDICT,
                 brief={"frontier": True, "plans": {"__all__": {"estimate"}},
                        "fastest": {"__all__": {"estimate"}}},
                 picture=_plan_picture),
    ]


# --- the prompt ------------------------------------------------------------------------------

class PrevalidateArguments(BaseModel):
    """Arguments of the ``prevalidate_run`` prompt (MCP prompt arguments are strings)."""

    model_config = ConfigDict(extra="forbid")

    description: str | None = Field(
        default=None, max_length=4000,
        description="The run being planned, in the user's words (model, data, hardware).",
    )
    gpu: AcceleratorKey | None = Field(
        default=None,
        description="Accelerator the user has in mind, a catalog name (completion offers them).",
    )


def _prevalidate_prompt() -> Prompt:
    """The prompt, validating its arguments like the tools do (one clear message naming the
    argument, unknown arguments refused) instead of failing with an internal error."""

    def render(**arguments: Any) -> str:
        try:
            given = PrevalidateArguments.model_validate(arguments)
        except ValidationError as exc:
            raise MCPError(code=INVALID_PARAMS, message=describe_error(exc)) from None
        gpu = None if given.gpu is None else get_accelerator(given.gpu).name
        return prevalidate_text(given.description, gpu)

    fields = PrevalidateArguments.model_fields
    return Prompt(
        name="prevalidate_run",
        title="Pre-validate a training run",
        description="The five-step procedure for deciding whether a training run is worth "
                    "launching: which tool for which step, what to ask, how to read the verdict.",
        arguments=[PromptArgument(name=name, description=info.description, required=False)
                   for name, info in fields.items()],
        fn=render,
    )


# --- completions ---------------------------------------------------------------------------

def complete_accelerator(partial: str, limit: int = 100) -> list[str]:
    """Catalog keys whose key, name or an alias starts with (or contains) ``partial``."""
    wanted = normalize_name(partial)
    starts: list[str] = []
    contains: list[str] = []
    for acc in list_accelerators():
        labels = [normalize_name(x) for x in (acc.key, acc.name, *acc.aliases)]
        if any(label.startswith(wanted) for label in labels):
            starts.append(acc.key)
        elif any(wanted in label for label in labels):
            contains.append(acc.key)
    return (starts + contains)[:limit]


def build_server() -> MCPServer:
    """The MCP server with every tool, prompt, resource and completion registered."""
    tools: list[Tool] = [build_tool(spec) for spec in tool_specs()]
    server: MCPServer = MCPServer(
        name="compute-budget",
        title="compute-budget",
        version=__version__,
        instructions=server_instructions(),
        tools=tools,
    )

    server.add_prompt(_prevalidate_prompt())

    @server.resource(CATALOG_URI, name="accelerator-catalog", title="Accelerator catalog",
                     description="Dense peaks, memory, bandwidth and dated prices, with every "
                                 "source.", mime_type="text/markdown")
    def catalog_markdown() -> str:
        return render_accelerators(show_sources=True)

    @server.resource(CATALOG_JSON_URI, name="accelerator-catalog-json",
                     title="Accelerator catalog (JSON)",
                     description="The catalog as data, with sources and dates.",
                     mime_type="application/json")
    def catalog_json() -> str:
        return load_catalog().model_dump_json(indent=1)

    @server.resource(ACCELERATOR_URI, name="accelerator", title="One accelerator",
                     description="One accelerator's figures, prices and sources; {name} is a "
                                 "catalog key or alias.", mime_type="text/markdown")
    def accelerator(name: str) -> str:
        try:
            acc = get_accelerator(name, field="name")
        except ComputeBudgetError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        return render_accelerators([acc], show_sources=True)

    @server.resource(PROCEDURE_URI, name="procedure", title="The pre-validation procedure",
                     description="The five steps, the boundaries and the common mistakes.",
                     mime_type="text/markdown")
    def procedure() -> str:
        return procedure_text()

    @server.completion()  # type: ignore[no-untyped-call,untyped-decorator]
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        if argument.name not in ("gpu", "name"):
            return None
        values = complete_accelerator(argument.value)
        return Completion(values=values, total=len(values), has_more=False)

    return server


def main(argv: Sequence[str] | None = None) -> int:
    """``compute-budget-mcp``: serve over stdio, or streamable HTTP on 127.0.0.1 with --http."""
    import os

    from ..skill.model.source import set_config_policy
    from . import http

    parser = argparse.ArgumentParser(
        prog="compute-budget-mcp",
        description="The compute-budget MCP server (stdio by default).",
    )
    parser.add_argument("--http", action="store_true",
                        help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    parser.add_argument("--max-sessions", type=int, metavar="N",
                        help="with --http: most sessions open at once; a client that would open "
                             f"another gets 503 (default {http.DEFAULT_MAX_SESSIONS})")
    parser.add_argument("--session-idle-timeout", type=float, metavar="SECONDS",
                        help="with --http: end a session after this long with no request in "
                             f"flight (default {http.DEFAULT_SESSION_IDLE_TIMEOUT_S:g})")
    parser.add_argument("--max-body-bytes", type=int, metavar="BYTES",
                        help="with --http: refuse a larger request body with 413 (default "
                             f"{http.DEFAULT_MAX_BODY_BYTES}, 1 MiB)")
    parser.add_argument("--token", metavar="TOKEN",
                        help="with --http: refuse any request without 'Authorization: Bearer "
                             f"TOKEN' with 401; prefer setting {http.TOKEN_ENV}, which other "
                             "users cannot read from the process list")
    parser.add_argument("--config-dir", metavar="DIR",
                        help="read a config path only if it resolves inside DIR (a relative "
                             "path is taken from DIR); without it, --http reads no paths, only "
                             "inline config objects, and stdio reads local paths")
    parser.add_argument("--no-hub", action="store_true",
                        help="refuse model ids (the server then makes no outbound request to "
                             "the Hugging Face Hub); presets and inline configs still work")
    parser.add_argument("--log-level", default="WARNING",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
                        help="log level; logs go to stderr (default WARNING)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = parser.parse_args(argv)
    try:
        limits = http.limits_from_args(args, os.environ)
        policy = http.config_policy_from_args(args)
    except ValueError as exc:
        parser.error(str(exc))
    set_config_policy(policy)
    logging.basicConfig(stream=sys.stderr, level=args.log_level, force=True)
    # Building ten tools' models and schemas allocates tens of thousands of objects that all
    # live as long as the server: collecting garbage meanwhile only delays the first answer
    # (about 50 ms of 120 on the development machine). Afterwards they are frozen: moved out
    # of the collector's way for good.
    gc.disable()
    try:
        server = build_server()
    finally:
        gc.enable()
    gc.freeze()
    logging.getLogger().setLevel(args.log_level)
    if args.http:
        http.serve(server, args.port, args.log_level, limits)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
