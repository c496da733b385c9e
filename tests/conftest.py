"""Session-wide settings and the helpers every test file shares.

- Compiled templates are cached in a temporary directory, never in the home directory of
  whoever runs the tests (subprocesses inherit the setting).
- No test reaches the network: every connection or name lookup that is not the loopback is
  refused and fails the test that tried it (the Hub is served from a local endpoint).
- ``cli`` runs the command line in-process and returns (exit status, stdout, stderr).
"""

from __future__ import annotations

import contextlib
import io
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from compute_budget.prompts.render import CACHE_ENV, environment

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """How many workers ``-n auto`` (pyproject's addopts) starts: none for a run that selects
    slow or external tests, whose timings (the probe's measured step times, launches of real
    processes) must not share the cores with other tests; else xdist's own count (the cores)."""
    selected = str(config.getoption("markexpr") or "")
    for marker in ("slow", "external"):
        if marker in selected.replace(f"not {marker}", ""):
            return 0
    return None


@pytest.fixture(autouse=True, scope="session")
def _template_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    patch = pytest.MonkeyPatch()
    patch.setenv(CACHE_ENV, str(tmp_path_factory.mktemp("cache")))
    environment.cache_clear()
    yield
    patch.undo()
    environment.cache_clear()


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Refuse (and record) every connection or name lookup that is not the loopback; a test
    that tried one fails, even when the code under test caught the refusal."""
    refused: list[object] = []
    connect = socket.socket.connect
    getaddrinfo = socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            refused.append(address)
            raise OSError("network access in a test")
        connect(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in LOOPBACK and host is not None:
            refused.append(host)
            raise OSError("name lookup in a test")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield refused
    assert refused == [], f"a test tried to reach the network: {refused}"


Cli = Callable[..., tuple[int, str, str]]
"""What the ``cli`` fixture gives: the command line run in-process."""


def run_cli(*argv: str) -> tuple[int, str, str]:
    """``compute-budget argv`` in-process: (exit status, stdout, stderr)."""
    from compute_budget.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def cli() -> Cli:
    """:func:`run_cli`, as a fixture."""
    return run_cli
