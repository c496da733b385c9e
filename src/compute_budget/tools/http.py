"""``compute-budget-mcp --http``: streamable HTTP on 127.0.0.1, with limits and an optional token.

What a request meets, outermost first:

- the socket is bound to 127.0.0.1 only;
- with a token set (``--token`` or ``COMPUTE_BUDGET_MCP_TOKEN``), no ``Authorization: Bearer
  <token>`` header → 401, before the body is read;
- a body larger than ``--max-body-bytes`` → 413: the declared ``Content-Length`` is checked
  first, then the body is counted as it arrives and never read past the limit (the SDK's
  ``RequestBodyLimitMiddleware``);
- a ``Host`` that is not loopback → 421, an ``Origin`` that is not loopback → 403 (the SDK's
  DNS-rebinding protection, on because the host is loopback);
- a ``config`` that names a file is refused unless the operator gave ``--config-dir DIR``, and
  then read only if it resolves inside DIR (:func:`config_policy_from_args`); an inline JSON
  object is always accepted;
- a session keeps its slot by making calls (any POST or DELETE), not by holding its GET event
  stream open: once it has made no call for ``--session-idle-timeout`` seconds (its bare
  ``initialize`` for ten), a new client that needs the slot takes it, and the session is
  ended, its ID answering 404 (:mod:`.session_leases`);
- a new session when its client (remote address) holds ``--max-sessions-per-client`` with
  none to give up → 429, while ``--max-sessions`` are open with none to give up → 503, each
  with ``Retry-After``;
- a session with no request in flight at all (an open GET stream counts as one here) for
  ``--session-idle-timeout`` seconds is ended (the SDK's ``StreamableHTTPSessionManager``).
  Clients that speak the sessionless 2026 protocol hold no session.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import hmac
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from mcp.server import MCPServer
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..skill.model.source import ConfigPolicy
from .duplicate_keys import DuplicateKeysMiddleware
from .session_leases import LeaseTable, SessionLeaseMiddleware

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_MAX_SESSIONS_PER_CLIENT",
    "DEFAULT_SESSION_IDLE_TIMEOUT_S",
    "HOST",
    "TOKEN_ENV",
    "BearerTokenMiddleware",
    "HttpLimits",
    "build_http_app",
    "config_policy_from_args",
    "limits_from_args",
    "serve",
]

logger = logging.getLogger("compute_budget.mcp.http")

HOST: Final = "127.0.0.1"
"""The only address the server binds; loopback also turns on the SDK's Host/Origin checks."""

TOKEN_ENV: Final = "COMPUTE_BUDGET_MCP_TOKEN"
"""Environment variable holding the bearer token (``--token`` wins when both are set)."""

DEFAULT_MAX_BODY_BYTES: Final = 1024 * 1024
"""1 MiB. The largest request the tools take is a few hundred bytes of JSON arguments; the SDK's
own default is 4 MiB."""

DEFAULT_MAX_SESSIONS: Final = 100
"""A local server answers one person's assistants: 100 open sessions is ample and bounds the
memory and tasks they hold (the SDK's default is 10,000)."""

DEFAULT_MAX_SESSIONS_PER_CLIENT: Final = 50
"""Half the default session cap: one address cannot hold every slot. Every ordinary client of a
server on 127.0.0.1 arrives from 127.0.0.1, so there it bounds them all together; 50 sessions at
once are still ample for one person's assistants."""

DEFAULT_SESSION_IDLE_TIMEOUT_S: Final = 300.0
"""Five minutes. A session that has made no call for this long gives its slot to a new client
that needs it (an open GET stream is not a call), and one with no request in flight at all is
ended; so sessions opened and left keep new clients out for this long at most (the SDK's
default is 30 minutes)."""


@dataclass(frozen=True)
class HttpLimits:
    """What ``--http`` enforces. The token is left out of ``repr`` so it never reaches a log."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """Largest request body accepted, in bytes; a larger one gets 413."""
    max_sessions: int = DEFAULT_MAX_SESSIONS
    """Most sessions open at once; a request that would open another, with no session's slot
    to take, gets 503."""
    max_sessions_per_client: int = DEFAULT_MAX_SESSIONS_PER_CLIENT
    """Most sessions one remote address may hold; past it, with none of its own to give up,
    429."""
    session_idle_timeout_s: float = DEFAULT_SESSION_IDLE_TIMEOUT_S
    """Seconds without a call after which a session's slot goes to a new client that needs it;
    a session with no request in flight at all (not even a GET stream) is then ended."""
    token: str | None = field(default=None, repr=False)
    """Bearer token every request must carry, or None for no token."""


def limits_from_args(args: argparse.Namespace, environ: Mapping[str, str]) -> HttpLimits:
    """The limits from parsed ``compute-budget-mcp`` arguments (``max_body_bytes``,
    ``max_sessions``, ``max_sessions_per_client``, ``session_idle_timeout``, ``token``; None
    means not given) and the environment. Raises ValueError naming the flag; a message never
    contains the token."""
    given = {"--max-body-bytes": args.max_body_bytes, "--max-sessions": args.max_sessions,
             "--max-sessions-per-client": args.max_sessions_per_client,
             "--session-idle-timeout": args.session_idle_timeout, "--token": args.token}
    if not args.http:
        flags = [flag for flag, value in given.items() if value is not None]
        if flags:
            raise ValueError(f"{', '.join(flags)}: only with --http")
        return HttpLimits()
    for flag in ("--max-body-bytes", "--max-sessions", "--max-sessions-per-client"):
        value = given[flag]
        if value is not None and value < 1:
            raise ValueError(f"{flag} must be a positive whole number, got {value!r}")
    timeout = args.session_idle_timeout
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"--session-idle-timeout must be a positive number of seconds, "
                         f"got {timeout!r}")
    token = args.token if args.token is not None else environ.get(TOKEN_ENV) or None
    source = "--token" if args.token is not None else TOKEN_ENV
    if token is not None and not re.fullmatch(r"[\x21-\x7e]+", token):
        raise ValueError(f"{source} must be one or more printable ASCII characters without "
                         f"spaces")
    return HttpLimits(
        max_body_bytes=args.max_body_bytes or DEFAULT_MAX_BODY_BYTES,
        max_sessions=args.max_sessions or DEFAULT_MAX_SESSIONS,
        max_sessions_per_client=args.max_sessions_per_client or DEFAULT_MAX_SESSIONS_PER_CLIENT,
        session_idle_timeout_s=timeout or DEFAULT_SESSION_IDLE_TIMEOUT_S,
        token=token,
    )


def config_policy_from_args(args: argparse.Namespace) -> ConfigPolicy:
    """Which config paths the server reads: over stdio any local path, over HTTP none; with
    ``--config-dir DIR`` only paths inside DIR; with ``--no-hub`` no model id is fetched.
    Raises ValueError naming the flag when DIR is not a directory."""
    hub = not getattr(args, "no_hub", False)
    if args.config_dir is None:
        return ConfigPolicy(allow_paths=not args.http, allow_hub=hub)
    directory = Path(args.config_dir).expanduser().resolve()
    if not directory.is_dir():
        raise ValueError(f"--config-dir must be an existing directory, got {args.config_dir!r}")
    return ConfigPolicy(allow_paths=True, config_dir=directory, allow_hub=hub)


class BearerTokenMiddleware:
    """Answer 401 to every HTTP request without ``Authorization: Bearer <token>``.

    Only the token's SHA-256 digest is kept; the presented credential is hashed too and the two
    digests are compared with ``hmac.compare_digest``, so the comparison takes the same time
    whatever the credential's length or content. Neither is ever logged.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._digest = hashlib.sha256(token.encode()).digest()

    def _authorized(self, authorization: str | None) -> bool:
        scheme, _, credentials = (authorization or "").partition(" ")
        presented = hashlib.sha256(credentials.strip().encode("latin-1")).digest()
        # Always compare, so a missing or malformed header takes as long as a wrong token.
        return hmac.compare_digest(presented, self._digest) and scheme.lower() == "bearer"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._authorized(Headers(scope=scope).get("authorization")):
            await self.app(scope, receive, send)
            return
        response = JSONResponse(
            {"error": "invalid_token",
             "error_description": "this server requires an Authorization: Bearer token"},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="compute-budget"'},
        )
        await response(scope, receive, send)


def build_http_app(server: MCPServer, limits: HttpLimits) -> ASGIApp:
    """The streamable HTTP app at ``/mcp`` with ``limits`` applied."""
    app: ASGIApp = server.streamable_http_app(
        host=HOST,
        max_request_body_size=limits.max_body_bytes,
        max_sessions=limits.max_sessions,
        session_idle_timeout=limits.session_idle_timeout_s,
    )
    table = LeaseTable(idle_timeout_s=limits.session_idle_timeout_s,
                       max_sessions=limits.max_sessions,
                       max_per_client=limits.max_sessions_per_client)
    app = SessionLeaseMiddleware(app, server.session_manager, table)
    app = DuplicateKeysMiddleware(app, limits.max_body_bytes)
    if limits.token is not None:
        app = BearerTokenMiddleware(app, limits.token)
    return app


def serve(server: MCPServer, port: int, log_level: str, limits: HttpLimits) -> None:
    """Serve ``server`` on 127.0.0.1:``port`` until interrupted. uvicorn's access log would go to
    stdout by default; every uvicorn log goes to stderr here."""
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    log_config = copy.deepcopy(LOGGING_CONFIG)
    for handler in log_config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    logger.info("HTTP limits: %r; bearer token %s", limits,
                "required" if limits.token is not None else "not set")
    config = uvicorn.Config(build_http_app(server, limits), host=HOST, port=port,
                            log_config=log_config, log_level=log_level.lower())
    uvicorn.Server(config).run()
