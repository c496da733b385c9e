"""The compute-budget MCP server: six tools, the ``prevalidate_run`` prompt, resources, completions.

``compute-budget-mcp`` serves it over stdio; ``compute-budget-mcp --http [--port P]`` serves
streamable HTTP on 127.0.0.1 with the SDK's DNS-rebinding protection on. Logs go to stderr.
Every tool is a thin layer: arguments model → one ``skill`` call → one template.
"""

from __future__ import annotations

import argparse
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
    render_decision,
    render_estimate,
    render_memory,
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
    BudgetSplit,
    Catalog,
    ComputeBudgetError,
    Decision,
    DecisionInputs,
    MemoryEstimate,
    MemorySpec,
    RunEstimate,
    RunSpec,
    SplitSpec,
    budget_split,
    decision_summary,
    describe_error,
    estimate_memory,
    estimate_run,
    get_accelerator,
    list_accelerators,
    load_catalog,
    suggest_alternatives,
)
from ..skill.catalog import AcceleratorKey, normalize_name
from .toolkit import Question, ToolSpec, build_tool, merge_arguments

__all__ = ["TOOL_NAMES", "build_server", "main"]

TOOL_NAMES = (
    "estimate_run_cost",
    "render_verdict",
    "suggest_alternatives",
    "estimate_memory",
    "split_budget",
    "list_accelerators",
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
                alternatives=(("metric_now", "metric_expected", "gain_uncertainty"),))


# --- arguments: the skill models, with the askable inputs optional -------------------------

EstimateArguments = merge_arguments(
    "EstimateRunCostArguments", RunSpec, optional=frozenset(HARDWARE.fields))
VerdictArguments = merge_arguments(
    "RenderVerdictArguments", RunSpec, DecisionInputs,
    optional=frozenset((*HARDWARE.fields, "predicted_gain", "gain_uncertainty")))
AlternativesArguments = merge_arguments(
    "SuggestAlternativesArguments", RunSpec, AlternativesOptions,
    optional=frozenset(HARDWARE.fields))


class ListAcceleratorsArguments(BaseModel):
    """Optional filter for the catalog."""

    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(
        default=None, max_length=100,
        description="Part of a device name, key, alias, vendor or generation (e.g. 'h100', "
                    "'AMD', 'hopper'); omit for the whole catalog.",
    )


def _pick(model: type[BaseModel], arguments: BaseModel) -> Any:
    values = arguments.model_dump(include=set(model.model_fields), exclude_none=True)
    return model.model_validate(values)


# --- the calls ------------------------------------------------------------------------------

def _estimate(arguments: BaseModel) -> tuple[BaseModel, str]:
    estimate = estimate_run(_pick(RunSpec, arguments))
    return estimate, render_estimate(estimate, closing=True)


def _verdict(arguments: BaseModel) -> tuple[BaseModel, str]:
    estimate = estimate_run(_pick(RunSpec, arguments))
    inputs: DecisionInputs = _pick(DecisionInputs, arguments)
    decision = decision_summary(estimate, **inputs.model_dump(), kind=estimate.kind)
    return decision, render_decision(decision)


def _alternatives(arguments: BaseModel) -> tuple[BaseModel, str]:
    options: AlternativesOptions = _pick(AlternativesOptions, arguments)
    report = suggest_alternatives(_pick(RunSpec, arguments), **options.model_dump())
    return report, render_alternatives(report)


def _memory(arguments: BaseModel) -> tuple[BaseModel, str]:
    memory = estimate_memory(_pick(MemorySpec, arguments))
    return memory, render_memory(memory)


def _split(arguments: BaseModel) -> tuple[BaseModel, str]:
    split = budget_split(_pick(SplitSpec, arguments))
    return split, render_split(split)


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


def tool_specs() -> list[ToolSpec]:
    """The six tools, in the order of the procedure."""
    return [
        ToolSpec("estimate_run_cost", "Estimate a training run's time and cost",
                 tool_description("estimate_run_cost"), EstimateArguments, RunEstimate,
                 _estimate, (HARDWARE,)),
        ToolSpec("render_verdict", "Go / marginal / no-go verdict on a run",
                 tool_description("render_verdict"), VerdictArguments, Decision, _verdict,
                 (HARDWARE, GAIN)),
        ToolSpec("suggest_alternatives", "Price cheaper alternatives to a run",
                 tool_description("suggest_alternatives"), AlternativesArguments,
                 AlternativesReport, _alternatives, (HARDWARE,)),
        ToolSpec("estimate_memory", "Memory per device and whether it fits",
                 tool_description("estimate_memory"), MemorySpec, MemoryEstimate, _memory),
        ToolSpec("split_budget", "Split a compute budget between model size and data",
                 tool_description("split_budget"), SplitSpec, BudgetSplit, _split),
        ToolSpec("list_accelerators", "List accelerators: peaks, memory, prices, sources",
                 tool_description("list_accelerators"), ListAcceleratorsArguments, Catalog,
                 _accelerators),
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
    parser = argparse.ArgumentParser(
        prog="compute-budget-mcp",
        description="The compute-budget MCP server (stdio by default).",
    )
    parser.add_argument("--http", action="store_true",
                        help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    parser.add_argument("--log-level", default="WARNING",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
                        help="log level; logs go to stderr (default WARNING)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level, force=True)
    server = build_server()
    logging.getLogger().setLevel(args.log_level)
    if args.http:
        _serve_http(server, args.port, args.log_level)
    else:
        server.run("stdio")
    return 0


def _serve_http(server: MCPServer, port: int, log_level: str) -> None:
    """Streamable HTTP on 127.0.0.1. Binding to loopback makes the SDK turn its DNS-rebinding
    protection on (Host and Origin must be loopback). uvicorn's access log would go to stdout by
    default; every uvicorn log goes to stderr here."""
    import copy

    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    log_config = copy.deepcopy(LOGGING_CONFIG)
    for handler in log_config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=log_config,
                            log_level=log_level.lower())
    uvicorn.Server(config).run()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
