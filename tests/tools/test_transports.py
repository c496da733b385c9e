"""The server over real transports: a stdio subprocess, streamable HTTP, and an external client
(the MCP Inspector CLI, run with npx)."""

import contextlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from compute_budget.tools import TOOL_NAMES

from .test_server import VALID_CALLS

SERVER = [sys.executable, "-m", "compute_budget.tools"]
INSPECTOR = ["npx", "-y", "@modelcontextprotocol/inspector@2.12.0", "--cli"]
RUN = {"params": "7B", "tokens": "100B", "gpu": "h100", "gpu_count": 8}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


@pytest.mark.external
@pytest.mark.anyio
async def test_stdio_subprocess() -> None:
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:], env=dict(os.environ))
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == set(TOOL_NAMES)
        bad = await client.call_tool("estimate_run_cost", {**RUN, "gpu": "h1000"})
        assert bad.is_error and "gpu:" in _text(bad)
        good = await client.call_tool("estimate_run_cost", RUN)
        assert not good.is_error
        assert good.structured_content["accelerator"] == "H100 SXM"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_http_server(log: Path, *flags: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """A ``compute-budget-mcp --http`` subprocess with ``flags``; its stderr goes to ``log``
    (a file, so a chatty log cannot fill a pipe and stall the server). Yields the /mcp URL."""
    port = _free_port()
    with log.open("wb") as stderr:
        process = subprocess.Popen([*SERVER, "--http", "--port", str(port), *flags],
                                   stdout=subprocess.PIPE, stderr=stderr,
                                   env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(log.read_text()) from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            out, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            out, _ = process.communicate()
        assert out == b"", "the HTTP server wrote to stdout; logs belong on stderr"


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    with running_http_server(tmp_path / "stderr.log") as url:
        yield url


@pytest.mark.external
@pytest.mark.anyio
async def test_streamable_http(http_server: str) -> None:
    async with Client(http_server) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == set(TOOL_NAMES)
        result = await client.call_tool("estimate_run_cost", RUN)
        assert not result.is_error


@pytest.mark.external
def test_http_rejects_foreign_host_header(http_server: str) -> None:
    # DNS-rebinding protection: a page on evil.example that resolves to 127.0.0.1 must not
    # reach the server.
    host = http_server.split("/")[2]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}

    def post(extra: dict[str, str]) -> int:
        connection = http.client.HTTPConnection(host, timeout=10)
        try:
            connection.request("POST", "/mcp", body=body, headers={**headers, **extra})
            return connection.getresponse().status
        finally:
            connection.close()

    assert post({"Host": "evil.example"}) in (400, 403, 421)
    assert post({"Host": host, "Origin": "http://evil.example"}) == 403


# --- the MCP Inspector CLI: a real external client ------------------------------------------

def _inspector(*args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([*INSPECTOR, *SERVER, *args], capture_output=True, text=True,
                          timeout=180, check=False)
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"inspector printed no JSON: {done.stdout!r} {done.stderr!r}") \
            from None


needs_npx = pytest.mark.skipif(
    shutil.which("npx") is None and not os.environ.get("COMPUTE_BUDGET_REQUIRE_INSPECTOR"),
    reason="npx is not installed (CI sets COMPUTE_BUDGET_REQUIRE_INSPECTOR and has it)",
)


INSPECTED = ("estimate_run_cost", "compare_candidates", "plan_run")
"""Tools called through the Inspector (render_verdict and estimate_memory are in FIT_CASES):
plain arguments, a list of objects and a list of names. Each launch costs seconds; the
in-memory client calls every tool."""


def _tool_args(arguments: dict[str, Any]) -> list[str]:
    return ["--tool-arg", *(f"{k}={v if isinstance(v, str) else json.dumps(v)}"
                            for k, v in arguments.items())]


@pytest.mark.external
@needs_npx
def test_inspector_lists_tools() -> None:
    code, data = _inspector("--method", "tools/list")
    assert code == 0
    # issue 19: the Inspector's schema portability check finds nothing (it printed "0 errors,
    # 236 warnings" while the output schemas declared untyped keys)
    strict = subprocess.run([*INSPECTOR, *SERVER, "--method", "tools/list", "--strict"],
                            capture_output=True, text=True, timeout=180, check=False)
    assert strict.returncode == 0 and "Schema portability" not in strict.stderr, strict.stderr
    assert {t["name"] for t in data["tools"]} == set(TOOL_NAMES)
    for tool in data["tools"]:
        assert tool["annotations"]["readOnlyHint"] is True
        assert "outputSchema" in tool


@pytest.mark.external
@needs_npx
@pytest.mark.parametrize("name", INSPECTED)
def test_inspector_calls_tools(name: str) -> None:
    arguments, model = VALID_CALLS[name]
    code, data = _inspector("--method", "tools/call", "--tool-name", name,
                            *_tool_args({**arguments, "detail": "full"}))
    assert code == 0, data
    assert not data.get("isError")
    model.model_validate(data["structuredContent"])
    assert data["content"][0]["text"].startswith("### ")


@pytest.mark.external
@needs_npx
def test_inspector_sees_bad_input_as_tool_error() -> None:
    code, data = _inspector("--method", "tools/call", "--tool-name", "estimate_run_cost",
                            *_tool_args({**RUN, "mfu": 2}))
    assert code != 0
    assert data["isError"] is True
    assert "mfu:" in data["content"][0]["text"]


@pytest.mark.external
@needs_npx
def test_inspector_gets_prompt_and_reads_resource() -> None:
    code, data = _inspector("--method", "prompts/get", "--prompt-name", "prevalidate_run",
                            "--prompt-args", "description=a 7B model on 1T tokens")
    assert code == 0
    assert "a 7B model on 1T tokens" in data["messages"][0]["content"]["text"]
    code, data = _inspector("--method", "resources/read", "--uri", "compute-budget://catalog")
    assert code == 0
    assert "H100 SXM" in data["contents"][0]["text"]


# Issue 7's cases through a real external client: one call each answers "will it fit?".
FIT_CASES = [
    ("render_verdict", {"preset": "llama-2-70b", "gpu": "a100-80gb", "gpu_count": 16,
                        "seq_len": 4096, "tokens": "1B", "predicted_gain": 5,
                        "gain_uncertainty": 1, "baseline_to_beat": 0},
     lambda d: d["verdict"] == "go"),
    ("estimate_memory", {"preset": "llama-2-70b", "gpu": "a100-80gb", "gpu_count": 8,
                         "lora_rank": 16},
     lambda d: d["fits"] is True and d["lora_rank"] == 16),
    ("estimate_run_cost", {"params": "7T", "tokens": "1T", "gpu": "rtx-4090", "gpu_count": 1},
     lambda d: d["feasibility"] == "does_not_fit" and d["memory"]["layout"]["remedies"]),
]


@pytest.mark.external
@needs_npx
@pytest.mark.parametrize(("name", "arguments", "check"), FIT_CASES)
def test_inspector_answers_will_it_fit_in_one_call(name: str, arguments: dict[str, Any],
                                                   check: Any) -> None:
    code, data = _inspector("--method", "tools/call", "--tool-name", name,
                            *_tool_args(arguments))
    assert code == 0, data
    assert check(data["structuredContent"]), data["content"][0]["text"][:500]
    if name == "estimate_run_cost":
        assert data["content"][0]["text"].startswith("**This run cannot run")
