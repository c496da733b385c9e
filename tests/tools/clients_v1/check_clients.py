"""The compute-budget MCP server through the two client libraries that need ``mcp<2``:
langchain-mcp-adapters and mcp-use (issue 19 item 4).

Run by tests/tools/test_clients_v1.py under the python of a separate venv that holds those
libraries and their own mcp 1.x (requirements.txt beside this file); so it imports nothing of
compute_budget and talks to the server only over the wire, as a stdio subprocess:

    python check_clients.py /path/to/.venv/bin/compute-budget-mcp [args...]

For each client it lists the tools through the library's own API, converts each the way the
library hands it to a model (langchain-mcp-adapters: ``convert_to_openai_tool(tool)`` and its
strict form; mcp-use: what its ``MCPAgent`` binds to its chat model, a local fake here, which
converts like ChatOpenAI.bind_tools does), summarises what each argument kept, and calls
``estimate_run_cost`` and ``render_verdict`` through the library's own tool wrapper. No model
provider is reached. It prints one JSON report on stdout (everything else goes to stderr):

    {"versions": {package: version}, "seconds": {client: float},
     "declared": {tool: Summary},
     "<client>": {"tools": {tool: {"<form>": {"ok", "error", "summary", ...}}},
                  "calls": {name: {"ok", "text" | "error"}}, "answer" (mcp-use's agent)}}

where a Summary maps every argument, nested ones as ``calibration[].params``, to
``{"described", "top_described", "enum": [choices] | null, "required", "nullable"}``, and a
strict form also says what OpenAI's strict mode would refuse in it (``strict_problems``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import traceback
from collections.abc import Iterator, Mapping
from typing import Any

# mcp-use sends anonymised telemetry unless told not to (and no test may reach the internet).
os.environ.setdefault("MCP_USE_ANONYMIZED_TELEMETRY", "false")

RUN = {"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8}
VERDICT = {**RUN, "predicted_gain": 2, "gain_uncertainty": 0.5}
CALLS = {"estimate_run_cost": RUN, "render_verdict": VERDICT}
SERVER = "compute-budget"


# --- what a schema keeps -------------------------------------------------------------------

def _nodes(schema: Any, defs: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The schema nodes that together describe one value: the node, its references resolved,
    and every branch of anyOf / oneOf / allOf."""
    if not isinstance(schema, Mapping):
        return
    if "$ref" in schema:
        yield from _nodes(defs.get(schema["$ref"].split("/")[-1], {}), defs)
    yield schema
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            yield from _nodes(branch, defs)


def summary(schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None,
            prefix: str = "") -> dict[str, dict[str, Any]]:
    """Every argument of an object schema, at any depth: whether it has a description (and
    whether on the property itself, not in a branch), its enum choices (None when it has none),
    whether it is required, and whether it accepts null."""
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    required = set(schema.get("required", []))
    found: dict[str, dict[str, Any]] = {}
    for name, sub in schema.get("properties", {}).items():
        path = prefix + name
        nodes = list(_nodes(sub, defs))
        choices = [str(v) for n in nodes for v in n.get("enum", []) if v is not None]
        kinds = [t for n in nodes for t in (n["type"] if isinstance(n.get("type"), list)
                                            else [n.get("type")])]
        found[path] = {"described": any(n.get("description") for n in nodes),
                       "top_described": bool(sub.get("description")),
                       "enum": sorted(set(choices)) or None,
                       "required": name in required, "nullable": "null" in kinds}
        for node in nodes:
            if "properties" in node:
                found |= summary(node, defs, path + ".")
            for item in _nodes(node.get("items"), defs):
                if "properties" in item:
                    found |= summary(item, defs, path + "[].")
    return found


def strict_problems(schema: Mapping[str, Any], defs: Mapping[str, Any] | None = None,
                    path: str = "$") -> list[str]:
    """What OpenAI's strict mode would refuse: an object that does not close itself
    (``additionalProperties: false``) or does not require every property."""
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    problems: list[str] = []
    for node in _nodes(schema, defs):
        if "properties" in node or node.get("type") == "object":
            properties = node.get("properties", {})
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties is not false")
            if set(node.get("required", [])) != set(properties):
                problems.append(f"{path}: not every property is required")
            for name, sub in properties.items():
                problems += strict_problems(sub, defs, f"{path}.{name}")
        if isinstance(node.get("items"), Mapping):
            problems += strict_problems(node["items"], defs, f"{path}[]")
    return sorted(set(problems))


def _form(convert: Any) -> dict[str, Any]:
    """One conversion: its summary, or the error it raised."""
    try:
        converted = convert()
    except Exception as error:  # the report says which tool failed and why
        return {"ok": False, "error": f"{type(error).__name__}: {error}", "summary": None}
    parameters = converted["function"].get("parameters", {})
    strict = converted["function"].get("strict")
    return {"ok": True, "error": None, "summary": summary(parameters), "strict": strict,
            "strict_problems": strict_problems(parameters) if strict else None,
            "parameters": parameters}


def _text(result: Any) -> str:
    """The text of a tool result as a LangChain tool returns it: a string or content blocks."""
    if isinstance(result, tuple):  # content and artifact
        result = result[0]
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in result)
    return str(getattr(result, "content", result))


def _strict_args(parameters: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a strict model sends: every one, null for those it does not mean."""
    return {name: None for name in parameters.get("properties", {})} | dict(given)


# --- langchain-mcp-adapters ----------------------------------------------------------------

async def langchain_mcp_adapters(command: list[str]) -> dict[str, Any]:
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langchain_mcp_adapters.tools import load_mcp_tools

    client = MultiServerMCPClient({SERVER: {"transport": "stdio", "command": command[0],
                                            "args": command[1:]}})
    report: dict[str, Any] = {"tools": {}, "calls": {}}
    # One session for the listing and the calls (get_tools() would start a server per call).
    async with client.session(SERVER) as session:
        # The server's own schemas, read with the mcp 1.x session beside the library.
        report["declared"] = {t.name: summary(t.inputSchema)
                              for t in (await session.list_tools()).tools}
        tools = await load_mcp_tools(session)
        for tool in tools:
            report["tools"][tool.name] = {
                "openai": _form(lambda t=tool: convert_to_openai_tool(t)),
                "openai_strict": _form(lambda t=tool: convert_to_openai_tool(t, strict=True)),
            }
        by_name = {t.name: t for t in tools}
        for name, given in CALLS.items():
            strict = report["tools"].get(name, {}).get("openai_strict", {})
            forms = {name: given,
                     f"{name} (strict)": _strict_args(strict.get("parameters") or {}, given)}
            for label, args in forms.items():
                try:
                    text = _text(await by_name[name].ainvoke(args))
                    report["calls"][label] = {"ok": True, "text": text}
                except Exception as error:
                    report["calls"][label] = {"ok": False, "error": repr(error)}
    return report


# --- mcp-use ---------------------------------------------------------------------------------

def _fake_model() -> Any:
    """A LangChain chat model that reaches no provider: it records the tools the agent binds
    (the caller converts them as ChatOpenAI.bind_tools does), asks for each call of CALLS in turn,
    records each tool message, then answers."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import Field

    class FakeChatModel(BaseChatModel):
        bound: list[Any] = Field(default_factory=list)
        tool_messages: list[Any] = Field(default_factory=list)

        @property
        def _llm_type(self) -> str:
            return "fake"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            self.bound[:] = list(tools)
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> ChatResult:
            done = [m for m in messages if isinstance(m, ToolMessage)]
            self.tool_messages[:] = done
            calls = list(CALLS.items())
            if len(done) < len(calls):
                name, args = calls[len(done)]
                message = AIMessage(content="", tool_calls=[
                    {"name": name, "args": dict(args), "id": f"call-{len(done)}"}])
            else:
                message = AIMessage(content="done")
            return ChatResult(generations=[ChatGeneration(message=message)])

    return FakeChatModel()


async def mcp_use(command: list[str]) -> dict[str, Any]:
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from mcp_use import MCPAgent, MCPClient
    from mcp_use.agents.adapters import OpenAIMCPAdapter

    client = MCPClient.from_dict({"mcpServers": {SERVER: {"command": command[0],
                                                          "args": command[1:]}}})
    model = _fake_model()
    agent = MCPAgent(llm=model, client=client, max_steps=10, memory_enabled=False)
    report: dict[str, Any] = {"tools": {}, "calls": {}}
    try:
        await agent.initialize()
        report["answer"] = await agent.run("Estimate, then decide.")
        # mcp-use's provider adapters (OpenAI here) hand the schema to the provider as it is.
        adapter = OpenAIMCPAdapter()
        adapter._record_telemetry = False
        direct = {t["function"]["name"]: t for t in await adapter.create_tools(client)}
        # What the agent bound to its model at each step: the LangChainAdapter's tools (the
        # server's MCP resources and prompts come as tools too; only its tools are checked).
        listed = {t.name for t in agent.adapter.tools}
        for tool in model.bound:
            if getattr(tool, "name", None) in listed:
                report["tools"][tool.name] = {
                    "openai": _form(lambda t=tool: convert_to_openai_tool(t)),
                    "openai_strict": _form(lambda t=tool: convert_to_openai_tool(t, strict=True)),
                    "openai_adapter": _form(lambda n=tool.name: direct[n]),
                }
        for message in model.tool_messages:
            report["calls"][message.name] = {"ok": message.status != "error",
                                             "text": _text(message.content)}
    finally:
        await client.close_all_sessions()
    return report


# --- main ------------------------------------------------------------------------------------

async def _timed(check: Any, command: list[str], seconds: dict[str, float]) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        return dict(await check(command))
    except Exception:
        return {"error": traceback.format_exc()}
    finally:
        seconds[check.__name__] = round(time.perf_counter() - start, 2)


async def main(command: list[str]) -> dict[str, Any]:
    from importlib.metadata import version

    names = ("mcp", "langchain-mcp-adapters", "mcp-use", "langchain-core", "langchain",
             "jsonschema-pydantic")
    seconds: dict[str, float] = {}
    # The two clients at once, each with its own server process.
    langchain, use = await asyncio.gather(_timed(langchain_mcp_adapters, command, seconds),
                                          _timed(mcp_use, command, seconds))
    return {"versions": {n: version(n) for n in names}, "seconds": seconds,
            "declared": langchain.pop("declared", None),
            "langchain-mcp-adapters": langchain, "mcp-use": use}


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: check_clients.py SERVER_COMMAND [ARGS...]")
    stdout, sys.stdout = sys.stdout, sys.stderr  # the libraries' prints and logs go to stderr
    result = asyncio.run(main(sys.argv[1:]))
    for client in result.values():  # the converted schemas themselves stay out of the report
        for forms in client.get("tools", {}).values() if isinstance(client, dict) else ():
            for form in forms.values():
                form.pop("parameters", None)
    json.dump(result, stdout)
    stdout.write("\n")
