"""Issue 18: a key given twice in a tool's arguments is refused at both doors, not silently
taken. ``available: {"h100": 8, "h100": 512}`` used to plan on 512 devices (every JSON parser
keeps the last value); the raw message is now read for repeats before the SDK parses it."""

from __future__ import annotations

import http.client
import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from compute_budget.tools.duplicate_keys import (
    MARKER,
    DuplicateKeysMiddleware,
    duplicated_paths,
    mark_duplicates,
)

from .test_transports import SERVER, running_http_server

pytestmark = pytest.mark.adversarial

PLAN = ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plan_run",'
        '"arguments":{"params":"7B","tokens":"100B","deadline_days":30,'
        '"available":{"h100":8,"h100":512}}}}')
WORDS = "available.h100: given more than once; give each key once"


def test_the_repeated_paths_are_found_at_any_depth() -> None:
    marked = mark_duplicates(PLAN)
    assert marked is not None
    assert json.loads(marked)["params"]["arguments"][MARKER] == ["available.h100"]
    nested = ('{"method":"tools/call","params":{"arguments":{"points":[{"loss":1,"loss":2}],'
              '"gpu":"a","gpu":"b"}}}')
    found = json.loads(mark_duplicates(nested) or "{}")["params"]["arguments"][MARKER]
    assert found == ["gpu", "points[0].loss"]
    batch = f"[{PLAN}, {PLAN.replace('plan_run', 'estimate_run_cost')}]"
    assert all(MARKER in m["params"]["arguments"] for m in json.loads(mark_duplicates(batch) or ""))


@pytest.mark.parametrize("raw", [
    PLAN.replace('"h100":512', '"H100":512'),  # another key (the plan itself refuses it)
    PLAN.replace('"tools/call"', '"tools/list"'),  # not a call
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","name":"y"}}',
    "not json at all, with \"arguments\"",
    '[' * 100_000 + ']' * 100_000 + '"arguments"',
])
def test_other_messages_pass_unchanged(raw: str) -> None:
    assert mark_duplicates(raw) is None


def test_the_paths_read_from_a_parsed_object() -> None:
    from compute_budget.tools.duplicate_keys import _Pairs

    value = json.loads('{"a":{"b":1,"b":2},"c":[{"d":1,"d":1}]}', object_pairs_hook=_Pairs)
    assert list(duplicated_paths(value)) == ["a.b", "c[0].d"]


def _asgi(body: bytes, limit: int) -> tuple[bytes, dict[bytes, bytes]]:
    """What an app behind the middleware reads of a POST of ``body`` in two chunks."""
    seen: dict[str, Any] = {}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        seen["body"], seen["headers"] = b"".join(chunks), dict(scope["headers"])

    half = len(body) // 2
    messages = iter([{"type": "http.request", "body": body[:half], "more_body": True},
                     {"type": "http.request", "body": body[half:], "more_body": False}])

    async def receive() -> Any:
        return next(messages)

    scope = {"type": "http", "method": "POST",
             "headers": [(b"content-length", str(len(body)).encode())]}
    anyio.run(DuplicateKeysMiddleware(app, limit), scope, receive, None)
    return seen["body"], seen["headers"]


def test_the_http_middleware_marks_the_body_and_its_length() -> None:
    body, headers = _asgi(PLAN.encode(), 1_000_000)
    assert MARKER in json.loads(body)["params"]["arguments"]
    assert headers[b"content-length"] == str(len(body)).encode()
    clean = PLAN.replace('"h100":512', '"a100":512').encode()
    assert _asgi(clean, 1_000_000)[0] == clean
    # past the limit the body is passed on as it came (the SDK answers 413)
    assert _asgi(PLAN.encode(), 10)[0] == PLAN.encode()


@pytest.mark.external
def test_stdio_refuses_the_repeat_and_keeps_serving() -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    good = PLAN.replace('"h100":512', '"a100":512').replace('"id":7', '"id":8')
    process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert process.stdin is not None and process.stdout is not None
    try:
        answers: dict[int, Any] = {}
        for line in [*map(json.dumps, lines), PLAN, good]:
            process.stdin.write(line + "\n")
            process.stdin.flush()
            if '"id"' in line:
                answer = json.loads(process.stdout.readline())
                answers[answer["id"]] = answer
    finally:
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()
    assert answers[7]["result"]["isError"] and WORDS in answers[7]["result"]["content"][0]["text"]
    assert not answers[8]["result"]["isError"]


@pytest.mark.external
def test_http_refuses_the_repeat(tmp_path: Path) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with running_http_server(tmp_path / "stderr.log") as url:
        connection = http.client.HTTPConnection(url.split("/")[2], timeout=30)

        def post(body: str, session: str | None = None) -> tuple[str | None, str]:
            extra = {} if session is None else {"mcp-session-id": session,
                                                "mcp-protocol-version": "2025-06-18"}
            connection.request("POST", "/mcp", body=body.encode(), headers={**headers, **extra})
            response = connection.getresponse()
            return response.getheader("mcp-session-id"), response.read().decode()

        session, _ = post(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}))
        post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), session)
        _, answer = post(PLAN, session)
        connection.close()
    assert WORDS in answer and '"isError":true' in answer.replace(" ", "")
