"""Fixtures for driving the MCP server: an in-memory client in both connection modes."""

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from mcp import Client
from mcp.server import MCPServer
from mcp_types import ElicitResult

from compute_budget.tools import build_server


@pytest.fixture(scope="session")
def server() -> MCPServer:
    return build_server()


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# Every tool test through `client` repeats in the legacy mode (the initialize handshake and the
# stream loop) with the slow set, which .ci/run runs too: the tools' answers do not depend on the
# connection mode, and the repeat cost the quick set seconds it does not have. test_server.py
# (the protocol's own checks) and the elicitation tests keep both modes in the quick set.
@pytest.fixture(params=["auto", pytest.param("legacy", marks=pytest.mark.slow)])
def client_mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def client(server: MCPServer, client_mode: str) -> AsyncIterator[Client]:
    """A client that does not support elicitation."""
    async with Client(server, mode=client_mode) as c:
        yield c


class Answers:
    """An elicitation callback that answers from a dict per question and records what it was
    asked."""

    def __init__(self, action: str = "accept", **content: Any) -> None:
        self.action = action
        self.content = content
        self.asked: list[tuple[str, list[str]]] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        fields = list(params.requested_schema["properties"])
        self.asked.append((params.message, fields))
        if self.action != "accept":
            return ElicitResult(action=self.action)
        return ElicitResult(action="accept", content={f: self.content[f] for f in fields})


@pytest.fixture
def answering_client(
    server: MCPServer, mode: str
) -> Callable[[Answers], Client]:
    def make(answers: Answers) -> Client:
        return Client(server, mode=mode, elicitation_callback=answers)

    return make
