"""The compute-budget MCP server: ten tools, the ``prevalidate_run`` prompt, resources, completions.

``compute-budget-mcp`` serves it over stdio; ``compute-budget-mcp --http [--port P]`` serves
streamable HTTP on 127.0.0.1 with the SDK's DNS-rebinding protection on and the limits of
``tools/http.py`` (body size, session cap, idle timeout, optional bearer token). Logs go to stderr.
Every tool is an operation of the table (:mod:`compute_budget.operations`): its spec validated
once, one ``skill`` call, one template (:mod:`.toolkit`, :mod:`.tool_specs`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from collections.abc import Sequence
from typing import Any

import mcp.server.mcpserver.server as sdk_server
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
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import __version__
from ..prompts import render_accelerators
from ..prompts.mcp_texts import prevalidate_text, procedure_text, server_instructions
from ..skill import (
    ComputeBudgetError,
    describe_error,
    get_accelerator,
    list_accelerators,
    load_catalog,
)
from ..skill.hardware.catalog import AcceleratorKey
from ..skill.vocabulary import normalize_name
from .tool_specs import TOOL_NAMES, tool_specs
from .toolkit import build_tool

__all__ = ["TOOL_NAMES", "build_server", "main"]

CATALOG_URI = "compute-budget://catalog"
CATALOG_JSON_URI = "compute-budget://catalog.json"
ACCELERATOR_URI = "compute-budget://accelerators/{name}"
PROCEDURE_URI = "compute-budget://procedure"

logger = logging.getLogger("compute_budget.mcp")

SWITCH_INTERVAL_S = 0.001
"""How often the interpreter lets another thread run (Python's default is 5 ms): a heavy tool
in its worker thread hands the event loop the lock five times as often, so a cheap call from
another client waits about 2x its own time instead of 5x (``benchmarks/fair_share.py``)."""


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


def _new_server(tools: list[Tool]) -> MCPServer:
    """The SDK's server, without the SDK's logging set-up: ``MCPServer()`` configures the root
    logger through ``rich`` whenever ``rich`` is importable (about 60 ms of a start-up, for a
    handler nobody asked for); :func:`main` configures logging itself, and a program that
    builds the server in-process keeps its own."""
    saved = getattr(sdk_server, _SDK_LOGGING)  # fails loudly if the SDK renames it
    setattr(sdk_server, _SDK_LOGGING, _leave_logging_alone)
    try:
        return MCPServer(name="compute-budget", title="compute-budget", version=__version__,
                         instructions=server_instructions(), tools=tools)
    finally:
        setattr(sdk_server, _SDK_LOGGING, saved)


_SDK_LOGGING = "configure_logging"


def _leave_logging_alone(level: str = "INFO") -> None:
    del level


def build_server() -> MCPServer:
    """The MCP server with every tool, prompt, resource and completion registered."""
    server = _new_server([build_tool(spec) for spec in tool_specs()])

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


def _parser() -> argparse.ArgumentParser:
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
    parser.add_argument("--max-sessions-per-client", type=int, metavar="N",
                        help="with --http: most sessions one client address may hold; past it "
                             f"429 (default {http.DEFAULT_MAX_SESSIONS_PER_CLIENT})")
    parser.add_argument("--session-idle-timeout", type=float, metavar="SECONDS",
                        help="with --http: a session that makes no call for this long gives its "
                             "slot to a new client (an open event stream is not a call) "
                             f"(default {http.DEFAULT_SESSION_IDLE_TIMEOUT_S:g})")
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``compute-budget-mcp``: serve over stdio, or streamable HTTP on 127.0.0.1 with --http."""
    import os

    from ..skill.model.source import set_config_policy
    from . import http
    from .duplicate_keys import serve_stdio

    parser = _parser()
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
    sys.setswitchinterval(SWITCH_INTERVAL_S)
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
        serve_stdio(server)  # server.run("stdio"), repeated argument keys refused
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
