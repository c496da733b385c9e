"""Sessions cannot lock out new clients (issue 18, item 4): the call lease and the per-client cap
of ``compute_budget.tools.session_leases``, as accounting with a fake clock, then the issue's
probes replayed at a small scale against a real ``--http`` server on 127.0.0.1.

The probes were: 100 legacy-handshake sessions that keep their event stream open locked out
every new client indefinitely (503 at 40 s with a 5 s idle timeout), and 100 bare
``initialize`` calls gave 503 for up to 5 minutes."""

import http.client
import json
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client

from compute_budget.tools.session_leases import HANDSHAKE_GRACE_S, LeaseTable

from .test_http import HEADERS, INITIALIZE
from .test_transports import RUN, running_http_server as _running

pytestmark = pytest.mark.adversarial

VERSION = "2025-06-18"  # the handshake version INITIALIZE offers
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# --- the accounting ---------------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _table(clock: Clock, *, sessions: int = 5, per_client: int = 2,
           idle: float = 60.0) -> LeaseTable:
    return LeaseTable(idle_timeout_s=idle, max_sessions=sessions, max_per_client=per_client,
                      clock=clock)


def _open(table: LeaseTable, session_id: str, client: str, *, call: bool = True) -> None:
    """What the middleware does for a session that opens (and, with ``call``, then calls)."""
    table.opened(session_id, client)
    if call:
        table.call_started(session_id)
        table.call_ended(session_id)


def test_the_per_client_cap_refuses_one_address_and_admits_another() -> None:
    clock = Clock()
    table = _table(clock)
    _open(table, "a1", "10.0.0.1")
    _open(table, "a2", "10.0.0.1")
    refused = table.admit("10.0.0.1", open_sessions=2)
    assert refused.refusal == 429 and refused.end == ()
    assert "holds 2, the most one client may hold (--max-sessions-per-client)" in refused.message
    assert "no call for 60 s" in refused.message
    assert refused.retry_after_s == 60
    assert table.admit("10.0.0.2", open_sessions=2).refusal is None

    table.opening("10.0.0.1", +1)  # a session being opened counts before the SDK answers
    assert table.held_by("10.0.0.1") == 3
    table.opening("10.0.0.1", -1)
    table.keep_only(["a2"])  # a1 was deleted: its slot is free again
    assert table.admit("10.0.0.1", open_sessions=1).refusal is None


def test_a_stream_alone_renews_nothing_and_the_longest_lapsed_slot_is_taken() -> None:
    clock = Clock()
    table = _table(clock, sessions=3, per_client=3, idle=60.0)
    _open(table, "old", "c")            # called at t=0
    clock.now += 10
    _open(table, "newer", "c")          # called at t=10
    _open(table, "busy", "c")
    table.call_started("busy")          # a call in flight: never lapses
    clock.now += 49
    full = table.admit("d", open_sessions=3)
    assert full.refusal == 503 and full.retry_after_s == 1
    assert "3 are open, the most this server holds (--max-sessions)" in full.message
    clock.now += 1.5                    # 'old' lapsed (an open GET stream would not matter)
    assert table.admit("d", open_sessions=3).end == ("old",)
    clock.now += 10                     # both lapsed: the longest lapsed goes first
    assert table.admit("d", open_sessions=3).end == ("old",)
    clock.now += 1000
    table.call_ended("busy")            # its call ended: renewed for the idle timeout from now
    table.forget(["old", "newer"])
    assert table.admit("d", open_sessions=1).refusal is None
    clock.now += 59
    assert table.admit("d", open_sessions=3).refusal == 503
    clock.now += 2
    assert table.admit("d", open_sessions=3).end == ("busy",)


def test_a_bare_initialize_holds_its_slot_for_the_handshake_grace_only() -> None:
    clock = Clock()
    table = _table(clock, sessions=2, per_client=2, idle=300.0)
    _open(table, "bare", "c", call=False)
    _open(table, "talks", "c")
    clock.now += HANDSHAKE_GRACE_S - 0.5
    assert table.admit("c", open_sessions=2).refusal == 429
    clock.now += 1
    assert table.admit("c", open_sessions=2).end == ("bare",)  # the per-client slot it held
    # The grace never exceeds the idle timeout.
    assert _table(clock, idle=2.0).handshake_grace_s == 2.0


def test_at_the_per_client_cap_only_the_clients_own_lapsed_session_is_taken() -> None:
    clock = Clock()
    table = _table(clock, sessions=10, per_client=1, idle=60.0)
    _open(table, "theirs", "other")
    _open(table, "mine", "me")
    clock.now += 61
    assert table.admit("me", open_sessions=2).end == ("mine",)
    assert table.admit("third", open_sessions=2).end == ()  # room: nobody is ended


# --- over HTTP --------------------------------------------------------------------------------

def _connection(url: str, source: str | None = None) -> http.client.HTTPConnection:
    host, _, port = url.split("/")[2].partition(":")
    return http.client.HTTPConnection(host, int(port), timeout=10,
                                      source_address=(source, 0) if source else None)


def _post(url: str, message: Mapping[str, object], session: str | None = None,
          source: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """POST one JSON-RPC message; the status, the headers (lower-case names) and the body."""
    headers = {**HEADERS, **({"mcp-session-id": session, "mcp-protocol-version": VERSION}
                             if session else {})}
    connection = _connection(url, source)
    try:
        connection.request("POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


def _initialize(url: str, source: str | None = None) -> tuple[int, str | None]:
    status, headers, _ = _post(url, INITIALIZE, source=source)
    return status, headers.get("mcp-session-id")


@contextmanager
def _holding_streams(url: str, count: int) -> Iterator[list[tuple[str, http.client.HTTPResponse]]]:
    """``count`` legacy-handshake sessions (initialize, notifications/initialized, then a GET
    event stream kept open and never read), as the issue's probe opened them."""
    with ExitStack() as stack:
        held = []
        for _ in range(count):
            status, session = _initialize(url)
            assert status == 200 and session
            assert _post(url, INITIALIZED, session)[0] == 202
            connection = _connection(url)
            stack.callback(connection.close)
            connection.request("GET", "/mcp", headers={
                "Accept": "text/event-stream", "mcp-session-id": session,
                "mcp-protocol-version": VERSION})
            stream = connection.getresponse()
            assert stream.status == 200
            held.append((session, stream))
        yield held


async def _wait_for_a_slot(url: str, limit: float) -> tuple[float, int]:
    """Initialize until the server admits a new client; the seconds it took and the refusals."""
    started, refusals = time.monotonic(), 0
    with anyio.fail_after(limit):
        while (await anyio.to_thread.run_sync(_initialize, url))[0] == 503:
            refusals += 1
            await anyio.sleep(0.1)
    return time.monotonic() - started, refusals


@pytest.mark.external
@pytest.mark.anyio
async def test_sessions_holding_their_event_streams_give_way_within_the_idle_timeout(
        tmp_path: Path) -> None:
    """The first probe: every slot held by a session with an open event stream and no call."""
    idle = 1.0
    with (_running(tmp_path / "stderr.log", "--max-sessions", "5",
                   "--session-idle-timeout", str(idle)) as url,
          _holding_streams(url, 5) as held):
        status, headers, body = await anyio.to_thread.run_sync(_post, url, INITIALIZE)
        assert status == 503 and 1 <= int(headers["retry-after"]) <= 2
        assert "(--max-sessions)" in json.loads(body)["error"]["message"]

        waited, refusals = await _wait_for_a_slot(url, limit=idle + 3)
        assert refusals and waited < idle + 1.5
        # The longest-lapsed session was ended: its stream closed, its ID answers 404.
        session, stream = held[0]
        with anyio.fail_after(5):
            await anyio.to_thread.run_sync(stream.read)
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert (await anyio.to_thread.run_sync(_post, url, ping, session))[0] == 404
        # The other four were opened a little later; they give way in turn.
        for _ in range(4):
            assert (await _wait_for_a_slot(url, limit=idle + 1))[0] < idle


@pytest.mark.external
@pytest.mark.anyio
async def test_bare_initializes_give_way_within_the_idle_timeout(tmp_path: Path) -> None:
    """The second probe: every slot taken by an ``initialize`` never followed by anything."""
    idle = 1.0
    with _running(tmp_path / "stderr.log", "--max-sessions", "5",
                  "--session-idle-timeout", str(idle)) as url:
        for _ in range(5):
            assert (await anyio.to_thread.run_sync(_initialize, url))[0] == 200
        waited, refusals = await _wait_for_a_slot(url, limit=idle + 3)
        assert refusals and waited < idle + 1.5


@pytest.mark.external
@pytest.mark.anyio
async def test_the_per_client_cap_refuses_one_address_while_another_gets_in(
        tmp_path: Path) -> None:
    with _running(tmp_path / "stderr.log", "--max-sessions-per-client", "2") as url:
        for _ in range(2):
            assert (await anyio.to_thread.run_sync(_initialize, url))[0] == 200
        status, headers, body = await anyio.to_thread.run_sync(_post, url, INITIALIZE)
        assert status == 429 and int(headers["retry-after"]) <= 10  # the handshake grace
        error = json.loads(body)
        assert error["id"] is None and error["error"]["message"].startswith(
            "Too many open sessions from this client: it holds 2, the most one client may hold "
            "(--max-sessions-per-client).")
        # Another loopback address is another client.
        assert (await anyio.to_thread.run_sync(_initialize, url, "127.0.0.2"))[0] == 200


@pytest.mark.external
@pytest.mark.anyio
async def test_a_session_that_calls_keeps_its_slot_under_pressure(tmp_path: Path) -> None:
    """A connected client (event stream open) that calls more often than the idle timeout
    survives while newcomers keep asking for its slot; a silent one keeps its session too,
    past the timeout, as long as nobody needs the slot."""
    idle = 0.6
    with _running(tmp_path / "stderr.log", "--max-sessions", "2",
                  "--session-idle-timeout", str(idle)) as url:
        async with Client(url, mode="legacy") as active, Client(url, mode="legacy") as silent:
            await anyio.sleep(idle * 1.5)
            assert not (await silent.call_tool("estimate_run_cost", RUN)).is_error
            admitted = 0
            with anyio.fail_after(15):
                for _ in range(8):  # 4 idle timeouts of pressure
                    await active.list_tools()
                    status, _ = await anyio.to_thread.run_sync(_initialize, url)
                    admitted += status == 200
                    await anyio.sleep(idle / 2)
            assert admitted  # newcomers got in, through the silent session's slot
            assert not (await active.call_tool("estimate_run_cost", RUN)).is_error
