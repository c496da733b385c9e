"""Issue 19 item 4, the two clients that need ``mcp<2``: langchain-mcp-adapters and mcp-use.

They cannot share the project's venv (its server runs mcp 2.x), but MCP is a wire protocol: they
run in a venv of their own (``clients_v1/requirements.txt``, every package pinned), made once per
machine under the temporary directory and reused while the pins stay the same, and drive the
project's ``compute-budget-mcp`` as a stdio subprocess. ``clients_v1/check_clients.py`` lists
the tools through each library, converts them as the library hands them to a model, calls
``estimate_run_cost`` and ``render_verdict`` through the library's own tool wrapper (mcp-use
through its agent and a local fake chat model) and reports in JSON; no model provider is
reached.

Without uv or the package index the test skips, unless COMPUTE_BUDGET_REQUIRE_CLIENTS=1 (set by
``.ci/run``), where it fails."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.external

REQUIRED = os.environ.get("COMPUTE_BUDGET_REQUIRE_CLIENTS") == "1"
HERE = Path(__file__).parent / "clients_v1"
REQUIREMENTS = HERE / "requirements.txt"
SCRIPT = HERE / "check_clients.py"
TOOLS = {"estimate_run_cost", "render_verdict", "suggest_alternatives", "estimate_memory",
         "split_budget", "list_accelerators", "compare_candidates", "fit_scaling_law",
         "compute_optimal", "plan_run"}
# Nothing the libraries do may leave the machine: mcp-use's telemetry and LangSmith tracing off.
QUIET = {"MCP_USE_ANONYMIZED_TELEMETRY": "false", "LANGSMITH_TRACING": "false",
         "LANGCHAIN_TRACING_V2": "false", "UV_PYTHON_DOWNLOADS": "never"}


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"{reason} (COMPUTE_BUDGET_REQUIRE_CLIENTS=1)")
    pytest.skip(reason)


def _uv() -> list[str]:
    if found := shutil.which("uv"):
        return [found]
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv"]
    _unavailable("uv is not installed: the clients' venv cannot be made")
    raise AssertionError  # unreachable: _unavailable raises


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One maker of the venv at a time (two test runs on one machine)."""
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _venv() -> Path:
    """The clients' python: a venv keyed by the pins and this python's version, made once
    (``uv venv`` + ``uv pip install``) on this very interpreter, so nothing but the packages is
    fetched. A venv is complete once its marker file is written; an incomplete one is made anew."""
    key = hashlib.sha256(REQUIREMENTS.read_bytes() + sys.version.encode()).hexdigest()[:16]
    root = Path(tempfile.gettempdir()) / f"compute-budget-clients-v1-{key}"
    python, done = root / "bin" / "python", root / ".complete"
    with _locked(root.with_suffix(".lock")):
        if done.exists() and python.exists():
            return python
        shutil.rmtree(root, ignore_errors=True)
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | QUIET
        uv = _uv()
        for step in ([*uv, "venv", "--quiet", "--python", sys.executable, str(root)],
                     [*uv, "pip", "install", "--quiet", "--python", str(python),
                      "-r", str(REQUIREMENTS)]):
            made = subprocess.run(step, env=env, capture_output=True, text=True, timeout=900,
                                  check=False)
            if made.returncode:
                shutil.rmtree(root, ignore_errors=True)
                _unavailable(f"the clients' venv could not be made ({' '.join(step[-3:])}): "
                             f"{made.stderr.strip()[-600:]}")
        done.write_text(REQUIREMENTS.read_text())
    return python


def _server() -> str:
    """The project's own server command, beside this interpreter (the project venv)."""
    beside = Path(sys.executable).parent / "compute-budget-mcp"
    found = str(beside) if beside.exists() else shutil.which("compute-budget-mcp")
    assert found, "compute-budget-mcp is not installed in the project venv (uv sync)"
    return found


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    python = _venv()
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | QUIET
    ran = subprocess.run([str(python), str(SCRIPT), _server()], env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    result: dict[str, Any] = json.loads(ran.stdout)
    for client in ("langchain-mcp-adapters", "mcp-use"):
        assert "error" not in result[client], result[client]["error"]
    return result


def _forms(report: dict[str, Any], client: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(tool, form, the conversion) of every conversion, each asserted to have succeeded."""
    tools = report[client]["tools"]
    assert set(tools) == TOOLS, (client, sorted(tools))
    for tool, forms in tools.items():
        assert {"openai", "openai_strict"} <= set(forms), (client, tool)
        for form, converted in forms.items():
            assert converted["ok"], (client, tool, form, converted["error"])
            yield tool, form, converted


def _kept(summary: dict[str, Any]) -> dict[str, tuple[bool, Any]]:
    """Of each argument, what a model reads: whether it is described, and its choices."""
    return {path: (arg["described"], arg["enum"]) for path, arg in summary.items()}


def _strict_ok(converted: dict[str, Any], declared: dict[str, Any]) -> None:
    """A strict form OpenAI takes: every object closed with every property required, and every
    argument the server does not require accepting null (null is "not given")."""
    assert converted["strict"] is True and converted["strict_problems"] == []
    summary = converted["summary"]
    assert all(arg["required"] for arg in summary.values())
    assert all(summary[path]["nullable"] for path, arg in declared.items()
               if not arg["required"])


def test_the_server_declares_every_argument_described_with_its_choices(
        report: dict[str, Any]) -> None:
    declared = report["declared"]
    assert set(declared) == TOOLS
    for tool, arguments in declared.items():  # the keys of a list's objects may go without
        assert all(a["described"] for path, a in arguments.items() if "." not in path), tool
    choices = sum(1 for args in declared.values() for a in args.values() if a["enum"])
    assert choices >= 24  # detail on every tool, kind, precision, recompute, ...


def test_langchain_mcp_adapters_converts_every_tool_without_loss(report: dict[str, Any]) -> None:
    """``convert_to_openai_tool`` and its strict form, as ChatOpenAI.bind_tools sends them:
    every argument, description and choice kept (the schema is passed through whole)."""
    for tool, form, converted in _forms(report, "langchain-mcp-adapters"):
        declared = report["declared"][tool]
        assert _kept(converted["summary"]) == _kept(declared), (tool, form)
        if form == "openai_strict":
            _strict_ok(converted, declared)


def test_langchain_mcp_adapters_calls_through_its_tool_wrapper(report: dict[str, Any]) -> None:
    """``await tool.ainvoke(args)``, with the arguments as given and as a strict model sends
    them (every argument, null for those it does not mean): the markdown reply each time."""
    calls = report["langchain-mcp-adapters"]["calls"]
    for name, start in (("estimate_run_cost", "### Run estimate: 7B params"),
                        ("render_verdict", "### Verdict: **GO**")):
        for label in (name, f"{name} (strict)"):
            assert calls[label]["ok"], calls[label]
            assert calls[label]["text"].startswith(start), calls[label]["text"][:300]


def test_mcp_use_agent_converts_every_tool_as_its_library_allows(report: dict[str, Any]) -> None:
    """What MCPAgent binds to its chat model: every tool converts (strict included) with every
    argument, but its LangChainAdapter builds each tool's arguments model with
    jsonschema-pydantic 0.6 (``jsonschema_to_pydantic``), which reads an argument's
    ``description`` only beside its type and never reads ``enum`` (kreneskyp/jsonschema-pydantic
    issue 11). So every choice is dropped, and so is the description of every optional
    argument: ours sits inside the non-null branch of ``anyOf: [value, null]``.

    That is the library's, not a flaw of the schema: the description cannot move beside the
    anyOf, since Gemini refuses any other field beside any_of and google-genai's
    ``Schema.from_json_schema`` drops it when it unwraps a nullable anyOf
    (googleapis/python-genai issue 1992; tests/tools/test_clients.py checks it there); having it
    in both places costs ~7 KB over the 28 KB budget of tools/list. mcp-use's own provider
    adapters (``OpenAIMCPAdapter`` here) pass the schema through and keep everything."""
    for tool, form, converted in _forms(report, "mcp-use"):
        declared, summary = report["declared"][tool], converted["summary"]
        assert set(summary) == set(declared), (tool, form)  # no argument dropped
        if form == "openai_adapter":
            assert _kept(summary) == _kept(declared), tool
            continue
        if form == "openai_strict":
            _strict_ok(converted, declared)
        assert not any(arg["enum"] for arg in summary.values()), (tool, form)
        # Should the library start reading them this fails: then assert every one kept.
        assert ({path for path, arg in summary.items() if arg["described"]}
                == {path for path, arg in declared.items() if arg["top_described"]}), (tool, form)


def test_mcp_use_agent_calls_through_its_tool_wrapper(report: dict[str, Any]) -> None:
    """A local fake chat model asks MCPAgent for estimate_run_cost, then render_verdict; the
    agent runs each through mcp-use's LangChain tool and hands back our markdown reply."""
    result = report["mcp-use"]
    calls = result["calls"]
    assert set(calls) == {"estimate_run_cost", "render_verdict"}
    assert calls["estimate_run_cost"]["ok"], calls["estimate_run_cost"]
    assert calls["estimate_run_cost"]["text"].startswith("### Run estimate: 7B params")
    assert calls["render_verdict"]["ok"], calls["render_verdict"]
    assert calls["render_verdict"]["text"].startswith("### Verdict: **GO**")
    assert result["answer"] == "done"
