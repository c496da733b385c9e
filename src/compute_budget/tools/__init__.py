"""How assistants call compute-budget: the MCP server (tools, prompt, resources, completions)."""

from .server import TOOL_NAMES, build_server, main

__all__ = ["TOOL_NAMES", "build_server", "main"]
