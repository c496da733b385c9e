"""A key given twice in a tool's arguments is refused, not silently taken (issue 18).

A JSON object may repeat a key, and every JSON parser keeps only the last value: ``available:
{"h100": 8, "h100": 512}`` would plan on 512 devices without a word. The SDK parses a message
before any tool sees it, so the repetition is caught here, on the raw text of each message, at
both doors: over stdio (each line, :func:`serve_stdio`) and over streamable HTTP (each POST
body, :class:`DuplicateKeysMiddleware`). A ``tools/call`` whose arguments repeat a key gets the
paths of the repeated keys under :data:`MARKER` in its arguments, and the tool answers with an
error naming them (:func:`.toolkit` reads the marker before anything else). Other messages,
and text that is not JSON, pass unchanged: the SDK reports those itself.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MARKER", "DuplicateKeysMiddleware", "duplicated_paths", "mark_duplicates",
           "serve_stdio"]

MARKER = "_duplicate_keys"
"""The argument that carries the repeated keys' paths to the tool (never published)."""


class _Pairs(dict[str, Any]):
    """A parsed JSON object that remembers every key as given, repeats included."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.given = [key for key, _ in pairs]


def duplicated_paths(value: Any, path: str = "") -> Iterator[str]:
    """The paths (``available.h100``, ``points[2].loss``) of keys repeated in ``value``."""
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key in value.given:
            if key in seen:
                yield f"{path}.{key}" if path else key
            seen.add(key)
        for key, item in value.items():
            yield from duplicated_paths(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from duplicated_paths(item, f"{path}[{index}]")


def mark_duplicates(raw: str | bytes) -> str | None:
    """``raw`` (one JSON-RPC message or batch) with :data:`MARKER` added to the arguments of
    each ``tools/call`` that repeats a key; None when nothing repeats or it is not JSON."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if '"arguments"' not in text:
        return None
    try:
        message = json.loads(text, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return None
    changed = False
    for item in message if isinstance(message, list) else [message]:
        params = item.get("params") if isinstance(item, dict) else None
        arguments = params.get("arguments") if isinstance(params, dict) else None
        if item.get("method") != "tools/call" or not isinstance(arguments, dict):
            continue
        paths = list(dict.fromkeys(duplicated_paths(arguments)))
        if paths:
            arguments[MARKER] = paths
            changed = True
    return json.dumps(message, ensure_ascii=False) if changed else None


class DuplicateKeysMiddleware:
    """Marks repeated argument keys in each POST body (:func:`mark_duplicates`). The body is
    read only up to ``max_bytes``, and not at all when its declared length is larger: a longer
    one is passed on as it came, for the SDK's 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if scope["type"] != "http" or scope.get("method") != "POST" or \
                not declared.isdigit() or int(declared) > self.max_bytes:
            await self.app(scope, receive, send)  # a declared oversized body: the SDK's 413
            return
        messages: list[Message] = []
        size, more = 0, True
        while more and size <= self.max_bytes:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            more = bool(message.get("more_body"))
        marked = None if more else mark_duplicates(
            b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request"))
        if marked is not None:
            body = marked.encode()
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
            scope = dict(scope, headers=[*headers, (b"content-length", str(len(body)).encode())])
            messages = [{"type": "http.request", "body": body, "more_body": False}]
        replay = iter(messages)

        async def replayed() -> Message:
            for message in replay:
                return message
            return await receive()

        await self.app(scope, replayed, send)


async def _marked_lines(stdin: anyio.AsyncFile[str]) -> AsyncIterator[str]:
    """The process's stdin, line by line, repeated argument keys marked."""
    async for line in stdin:
        marked = mark_duplicates(line)
        yield line if marked is None else marked + "\n"


def _claim_stdin() -> anyio.AsyncFile[str]:
    """The wire's stdin on a private descriptor, fd 0 pointed at the null device (as the SDK
    does for its own stdin), so that nothing else reads the messages."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    stream = open(private, encoding="utf-8", errors="replace", closefd=True)  # noqa: SIM115
    return anyio.wrap_file(stream)


def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` over stdio as ``server.run("stdio")`` does, through the marking reader."""
    from mcp.server.stdio import stdio_server

    async def run() -> None:
        stdin: Any = _marked_lines(_claim_stdin())
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            lowlevel = server._lowlevel_server  # as the SDK's own run_stdio_async
            await lowlevel.run(read_stream, write_stream,
                               lowlevel.create_initialization_options())

    sys.stdout.flush()
    anyio.run(run)
