"""Call leases for ``--http`` sessions: a session keeps its slot by making calls, not by holding
an event stream open.

The SDK's idle timeout counts an open GET stream as a request in flight, so a client that opens
sessions, keeps their streams open and never calls holds every slot for good. Here each session
holds a *lease*:

- the request that opens a session grants a short one, :data:`HANDSHAKE_GRACE_S` (or the idle
  timeout if shorter): a client that speaks to its session sends ``notifications/initialized`` at
  once, a bare ``initialize`` never does;
- every later POST or DELETE to the session (a tool call, a list, a ping, a notification)
  renews it for the idle timeout, counted from when the request ends; while one is in flight the
  lease cannot lapse;
- a GET (the event stream) renews nothing.

A lapsed lease ends nothing by itself: a connected client that pauses longer than the idle
timeout keeps its session while there is room (the SDK's client does not start a new session
when its old one answers 404). When a new session would pass the session cap, or its client's
cap, the session whose lease lapsed longest ago, of that client for the per-client cap, is ended
(its event stream closed, its ID answering 404) and the newcomer takes its slot. Only when no
lease has lapsed is the newcomer refused: 429 at the per-client cap, 503 at the session cap,
each with ``Retry-After`` and a JSON-RPC error naming the limit. So sessions that do not call
keep new clients out for the idle timeout at most, and bare ``initialize`` calls for the grace.

A client is its remote address. A server bound to 127.0.0.1 sees every ordinary local client
as 127.0.0.1, so there the per-client cap bounds all of them together.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Literal

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import INTERNAL_ERROR
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HANDSHAKE_GRACE_S", "Admission", "LeaseTable", "SessionLeaseMiddleware"]

logger = logging.getLogger("compute_budget.mcp.http")

HANDSHAKE_GRACE_S: Final = 10.0
"""Seconds the opening ``initialize`` holds a slot before the session's first other request.
SDK clients send ``notifications/initialized`` within milliseconds."""

_CALLS: Final = frozenset({"POST", "DELETE"})


@dataclass
class _Lease:
    client: str
    expires: float
    """Monotonic time at which the lease lapses unless renewed."""
    in_flight: int = 0
    """Calls (POST, DELETE) being served; the lease cannot lapse meanwhile."""


@dataclass(frozen=True)
class Admission:
    """What to do with a request that would open a session."""

    end: tuple[str, ...] = ()
    """Sessions whose lapsed leases give their slots to the newcomer, to be ended first."""
    refusal: Literal[429, 503] | None = None
    """The HTTP status to refuse with, or None to let the SDK open the session."""
    message: str = ""
    retry_after_s: int = 0


class LeaseTable:
    """The leases and the admission rule, without I/O (``clock`` is injectable for tests)."""

    def __init__(self, *, idle_timeout_s: float, max_sessions: int, max_per_client: int,
                 handshake_grace_s: float = HANDSHAKE_GRACE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_timeout_s = idle_timeout_s
        self.max_sessions = max_sessions
        self.max_per_client = max_per_client
        self.handshake_grace_s = min(handshake_grace_s, idle_timeout_s)
        self._clock = clock
        self._leases: dict[str, _Lease] = {}
        self._opening: Counter[str] = Counter()

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._leases

    def held_by(self, client: str) -> int:
        """Sessions ``client`` holds, counting those it is opening."""
        return sum(lease.client == client for lease in self._leases.values()) \
            + self._opening[client]

    def opening(self, client: str, delta: int) -> None:
        """Count (+1) or uncount (-1) a session ``client`` is opening."""
        self._opening[client] += delta
        if self._opening[client] <= 0:
            del self._opening[client]

    def opened(self, session_id: str, client: str) -> None:
        """The SDK opened ``session_id`` for ``client``: grant the handshake lease."""
        self._leases[session_id] = _Lease(client, self._clock() + self.handshake_grace_s)

    def call_started(self, session_id: str) -> None:
        lease = self._leases.get(session_id)
        if lease is not None:
            lease.in_flight += 1

    def call_ended(self, session_id: str) -> None:
        """Renew the lease for the idle timeout from now."""
        lease = self._leases.get(session_id)
        if lease is not None:
            lease.in_flight -= 1
            lease.expires = max(lease.expires, self._clock() + self.idle_timeout_s)

    def forget(self, session_ids: Iterable[str]) -> None:
        for session_id in session_ids:
            self._leases.pop(session_id, None)

    def keep_only(self, live: Iterable[str]) -> None:
        """Forget sessions the SDK no longer holds (deleted, timed out, crashed)."""
        live = set(live)
        self.forget([sid for sid in self._leases if sid not in live])

    def _lapsed(self, client: str | None) -> list[tuple[float, str]]:
        now = self._clock()
        return sorted((lease.expires, sid) for sid, lease in self._leases.items()
                      if not lease.in_flight and lease.expires <= now
                      and (client is None or lease.client == client))

    def _retry_after(self, client: str | None) -> int:
        """Whole seconds until the first lease (of ``client``) could lapse, at least 1."""
        now = self._clock()
        waits = [lease.expires - now for lease in self._leases.values()
                 if not lease.in_flight and (client is None or lease.client == client)]
        return max(1, math.ceil(min(waits, default=self.idle_timeout_s)))

    def admit(self, client: str, open_sessions: int) -> Admission:
        """The rule for a request from ``client`` that would open a session while the SDK holds
        ``open_sessions``: room, or the slot of the longest-lapsed lease, or a refusal."""
        end: list[str] = []
        if self.held_by(client) >= self.max_per_client:
            own = self._lapsed(client)
            if not own:
                wait = self._retry_after(client)
                return Admission(refusal=429, retry_after_s=wait, message=(
                    f"Too many open sessions from this client: it holds "
                    f"{self.max_per_client}, the most one client may hold "
                    f"(--max-sessions-per-client). {self._rule()} Retry in {wait} s."))
            end.append(own[0][1])
        if open_sessions - len(end) >= self.max_sessions:
            lapsed = [sid for _, sid in self._lapsed(None) if sid not in end]
            if not lapsed:
                wait = self._retry_after(None)
                return Admission(refusal=503, retry_after_s=wait, message=(
                    f"Too many open sessions: {self.max_sessions} are open, the most this "
                    f"server holds (--max-sessions). {self._rule()} Retry in {wait} s."))
            end.append(lapsed[0])
        return Admission(end=tuple(end))

    def _rule(self) -> str:
        return (f"A session that makes no call for {self.idle_timeout_s:g} s (an open event "
                f"stream is not a call) gives its slot to a new client.")


class SessionLeaseMiddleware:
    """Keep :class:`LeaseTable` for the sessions of ``manager`` and apply its admission rule to
    every request that would open one (see the module's docstring)."""

    def __init__(self, app: ASGIApp, manager: StreamableHTTPSessionManager,
                 table: LeaseTable) -> None:
        self.app = app
        self.table = table
        self._manager = manager
        self._admitting = anyio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            version = headers.get("mcp-protocol-version")
            if version is None or version in HANDSHAKE_PROTOCOL_VERSIONS:
                await self._open(scope, receive, send)
            else:  # the sessionless 2026 protocol: no session to hold
                await self.app(scope, receive, send)
        elif scope["method"] in _CALLS and session_id in self.table:
            self.table.call_started(session_id)
            try:
                await self.app(scope, receive, send)
            finally:
                self.table.call_ended(session_id)
        else:
            await self.app(scope, receive, send)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope["client"][0] if scope.get("client") else "unknown"
        async with self._admitting:
            sessions = self._manager._server_instances
            self.table.keep_only(sessions)
            admission = self.table.admit(client, len(sessions))
            for session_id in admission.end:
                logger.info("Ending session %s: no call for %g s and its slot is needed",
                            session_id, self.table.idle_timeout_s)
                transport = sessions.get(session_id)
                if transport is not None:
                    await self._manager._discard_session(session_id, transport)
            self.table.forget(admission.end)
            if admission.refusal is None:
                self.table.opening(client, +1)
        if admission.refusal is not None:
            logger.warning("Refusing a new session from %s with %d: %s", client,
                           admission.refusal, admission.message)
            await _refusal(admission)(scope, receive, send)
            return

        opening = True

        async def note_session(message: Message) -> None:
            nonlocal opening
            if message["type"] == "http.response.start" and message["status"] < 400:
                session_id = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                if session_id is not None:
                    self.table.opened(session_id, client)
                    self.table.opening(client, -1)
                    opening = False
            await send(message)

        try:
            await self.app(scope, receive, note_session)
        finally:
            if opening:
                self.table.opening(client, -1)


def _refusal(admission: Admission) -> JSONResponse:
    """A JSON-RPC error body (no request id, as the SDK's own 503) with ``Retry-After``."""
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None,
         "error": {"code": INTERNAL_ERROR, "message": admission.message}},
        status_code=admission.refusal or 503,
        headers={"Retry-After": str(admission.retry_after_s)},
    )
