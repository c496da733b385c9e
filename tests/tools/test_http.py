"""``compute-budget-mcp --http`` in the open: the body limit, 50 concurrent sessions, the session
cap with its idle timeout, and the bearer token, each against a real server subprocess on
127.0.0.1 (see ``compute_budget.tools.http``). The call lease and the per-client cap have their
own tests in ``test_sessions.py``."""

import http.client
import json
import socket
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from compute_budget.tools.http import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    DEFAULT_SESSION_IDLE_TIMEOUT_S,
    TOKEN_ENV,
    HttpLimits,
)
from compute_budget.tools.server import main

from .test_transports import RUN, running_http_server as _running

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test_http", "version": "0"}}}
TOKEN = "s3cret-token-for-tests"




def _post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, str | None]:
    """POST ``body`` to the server; the status and the session ID it answered with."""
    connection = http.client.HTTPConnection(url.split("/")[2], timeout=10)
    try:
        connection.request("POST", "/mcp", body=body, headers={**HEADERS, **(headers or {})})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("mcp-session-id")
    finally:
        connection.close()


def _initialize(url: str, headers: dict[str, str] | None = None) -> tuple[int, str | None]:
    return _post(url, json.dumps(INITIALIZE).encode(), headers)


def _raw_status(url: str, request: bytes) -> int:
    """Send ``request`` bytes as they are and read the status line of the answer."""
    host, _, port = url.split("/")[2].partition(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(request)
        status_line = s.makefile("rb").readline()
    return int(status_line.split()[1])


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``--http`` with no other flag: the defaults."""
    with _running(tmp_path_factory.mktemp("http") / "stderr.log") as url:
        yield url


# --- the command line -----------------------------------------------------------------------

def test_defaults_and_flags() -> None:
    assert HttpLimits() == HttpLimits(1024 * 1024, 100, 50, 300.0, None)
    assert (DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_CLIENT,
            DEFAULT_SESSION_IDLE_TIMEOUT_S) == (1024 * 1024, 100, 50, 300.0)
    assert TOKEN not in repr(HttpLimits(token=TOKEN))


@pytest.mark.parametrize(("argv", "message"), [
    (["--max-sessions", "5"], "--max-sessions: only with --http"),
    (["--max-sessions-per-client", "5"], "--max-sessions-per-client: only with --http"),
    (["--http", "--max-sessions-per-client", "0"],
     "--max-sessions-per-client must be a positive whole number, got 0"),
    (["--token", TOKEN], "--token: only with --http"),
    (["--http", "--max-sessions", "0"], "--max-sessions must be a positive whole number, got 0"),
    (["--http", "--max-body-bytes", "-1"], "--max-body-bytes must be a positive whole number"),
    (["--http", "--session-idle-timeout", "inf"], "--session-idle-timeout must be a positive"),
    (["--http", "--token", f"{TOKEN} with spaces"], "--token must be one or more printable"),
    (["--http", "--token", ""], "--token must be one or more printable"),
])
def test_bad_flags_are_refused_by_name(argv: list[str], message: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert TOKEN not in err


# --- request bodies -------------------------------------------------------------------------

@pytest.mark.external
def test_body_under_the_limit_is_served(default_server: str) -> None:
    body = json.dumps(INITIALIZE).encode()
    padded = body[:-1] + b" " * (DEFAULT_MAX_BODY_BYTES - len(body)) + b"}"
    assert len(padded) == DEFAULT_MAX_BODY_BYTES
    status, session = _post(default_server, padded)
    assert status == 200 and session
    # End the session, so the fifty below find their client's fifty slots free.
    connection = http.client.HTTPConnection(default_server.split("/")[2], timeout=10)
    connection.request("DELETE", "/mcp", headers={
        **HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"})
    assert connection.getresponse().status == 200
    connection.close()


@pytest.mark.external
def test_declared_oversized_body_is_refused_before_it_is_sent(default_server: str) -> None:
    # Only the headers go out: the server must answer from Content-Length, not wait for 2 MiB.
    head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
            f"Content-Length: {2 * DEFAULT_MAX_BODY_BYTES}\r\n\r\n")
    assert _raw_status(default_server, head.encode()) == 413


@pytest.mark.external
def test_streamed_oversized_body_is_refused_at_the_limit(default_server: str) -> None:
    # Chunked, no Content-Length, and the body never ends: the server answers once the limit is
    # crossed, having read no further.
    head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = 64 * 1024
    count = DEFAULT_MAX_BODY_BYTES // chunk + 1
    body = (f"{chunk:x}\r\n".encode() + b" " * chunk + b"\r\n") * count
    assert _raw_status(default_server, head.encode() + body) == 413


# --- many clients at once ---------------------------------------------------------------------

@pytest.mark.external
@pytest.mark.anyio
async def test_fifty_concurrent_sessions_get_their_own_answers(default_server: str) -> None:
    clients = 50
    connected = 0
    all_connected = anyio.Event()
    answers: dict[int, dict[str, Any]] = {}

    async def one(i: int) -> None:
        nonlocal connected
        async with Client(default_server, mode="legacy") as client:  # a session each
            connected += 1
            if connected == clients:
                all_connected.set()
            await all_connected.wait()  # all 50 sessions are open at once
            result = await client.call_tool("estimate_run_cost",
                                            {**RUN, "tokens": f"{i + 1}B", "gpu_count": i + 1})
            assert not result.is_error
            answers[i] = result.structured_content

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for i in range(clients):
                tg.start_soon(one, i)
    for i, answer in answers.items():
        assert (answer["tokens"], answer["gpu_count"]) == ((i + 1) * 1e9, i + 1)
    assert len(answers) == clients
    flops = [answers[i]["flops"] for i in range(clients)]
    assert flops == sorted(set(flops))  # more tokens, more FLOPs: fifty different answers


# --- the session cap and the idle timeout ---------------------------------------------------

@pytest.mark.external
@pytest.mark.anyio
async def test_idle_sessions_expire_and_a_new_client_gets_in(tmp_path: Path) -> None:
    """A session with no call goes; a connected client that calls stays. Until issue 18 an open
    GET stream alone kept a session alive, and this test had the connected client only hold its
    stream; now only calls do (an event stream held without calls could lock every slot), so
    the connected client calls, as often as an assistant at work, while the other idles out."""
    timeout = 0.5
    with _running(tmp_path / "stderr.log", "--max-sessions", "2",
                  "--session-idle-timeout", str(timeout)) as url:
        async with Client(url, mode="legacy") as busy:  # holds a GET stream, and calls
            status, idle = await anyio.to_thread.run_sync(_initialize, url)
            assert status == 200 and idle
            assert (await anyio.to_thread.run_sync(_initialize, url))[0] == 503  # the cap

            # The raw session makes no call; within the timeout (plus slack) room frees up.
            started = time.monotonic()
            with anyio.fail_after(10 * timeout):
                while (status := (await anyio.to_thread.run_sync(_initialize, url))[0]) == 503:
                    await busy.list_tools()
                    await anyio.sleep(0.1)
            assert status == 200
            assert time.monotonic() - started > timeout / 2
            expired = partial(_post, url, b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}',
                              {"mcp-session-id": idle, "mcp-protocol-version": "2025-06-18"})
            assert (await anyio.to_thread.run_sync(expired))[0] == 404

            # The client that kept calling outlived the timeout and still works.
            result = await busy.call_tool("estimate_run_cost", RUN)
            assert not result.is_error


# --- the bearer token -------------------------------------------------------------------------

@pytest.mark.external
@pytest.mark.anyio
async def test_token_is_required_and_never_logged(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    with _running(log, "--log-level", "DEBUG", env={TOKEN_ENV: TOKEN}) as url:
        for authorization in (None, "Bearer", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}",
                              f"Basic {TOKEN}", TOKEN):
            headers = {"Authorization": authorization} if authorization else {}
            status, session = await anyio.to_thread.run_sync(_initialize, url, headers)
            assert (status, session) == (401, None), authorization

        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http_client,
                    Client(streamable_http_client(url, http_client=http_client)) as client):
            result = await client.call_tool("estimate_run_cost", RUN)
            assert not result.is_error
    text = log.read_text()
    assert "401" in text  # the DEBUG log did record the refusals
    assert TOKEN not in text
