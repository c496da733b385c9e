"""Latency: how fast the CLI starts and how much the MCP layer adds over the library.

Run with ``uv run python -m benchmarks.latency``. Machines here are shared and noisy, so every
target is a ratio measured in one run, not an absolute time:

- CLI start-up: ``import compute_budget.cli`` (without ``mcp``) against a bare interpreter and
  against importing the MCP server; the CLI must stay well below the server.
- One estimate through the in-memory MCP client against the same estimate as a library call.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from compute_budget import RunSpec, estimate_run
from compute_budget.prompts import render_estimate

RUNS = 7
CALLS = 40
ARGUMENTS = {"params": "7B", "tokens": "1T", "gpu": "h100", "gpu_count": 64}

CLI_VS_SERVER_TARGET = 0.8
"""The CLI's import must take at most this share of the MCP server's (it must not import mcp)."""
MCP_OVERHEAD_TARGET = 20.0
"""An in-process MCP call may cost at most this many library calls (validation, schema, JSON)."""


@dataclass(frozen=True)
class Latency:
    """Median timings in seconds and the ratios the targets apply to."""

    bare_python: float
    cli_import: float
    server_import: float
    cli_imports_mcp: bool
    library_call: float
    mcp_call: float

    @property
    def cli_vs_server(self) -> float:
        """CLI start-up over MCP-server start-up, both net of the bare interpreter."""
        return (self.cli_import - self.bare_python) / (self.server_import - self.bare_python)

    @property
    def mcp_overhead(self) -> float:
        """In-process MCP call time over library call time."""
        return self.mcp_call / self.library_call


def _median_process_time(code: str) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _library_call() -> None:
    render_estimate(estimate_run(RunSpec.model_validate(ARGUMENTS)))


async def _mcp_calls() -> float:
    from mcp import Client

    from compute_budget.tools import build_server

    times = []
    async with Client(build_server(), mode="auto") as client:
        for _ in range(CALLS):
            start = time.perf_counter()
            result = await client.call_tool("estimate_run_cost", ARGUMENTS)
            times.append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError("the benchmark call failed")
    return statistics.median(times)


def measure() -> Latency:
    """Time everything once, in this process and in fresh interpreters."""
    library = []
    for _ in range(CALLS):
        start = time.perf_counter()
        _library_call()
        library.append(time.perf_counter() - start)
    imports_mcp = subprocess.run(
        [sys.executable, "-c", "import sys, compute_budget.cli; print('mcp' in sys.modules)"],
        check=True, capture_output=True, text=True,
    ).stdout.strip() == "True"
    return Latency(
        bare_python=_median_process_time("pass"),
        cli_import=_median_process_time("import compute_budget.cli"),
        server_import=_median_process_time("import compute_budget.tools.server"),
        cli_imports_mcp=imports_mcp,
        library_call=statistics.median(library),
        mcp_call=asyncio.run(_mcp_calls()),
    )


def render(result: Latency) -> str:
    """The timings and the targets as a markdown table."""
    def ok(passed: bool) -> str:
        return "yes" if passed else "**no**"

    rows = [
        ("bare interpreter start", f"{result.bare_python * 1000:.0f} ms", "", ""),
        ("`import compute_budget.cli`", f"{result.cli_import * 1000:.0f} ms", "", ""),
        ("`import compute_budget.tools.server`", f"{result.server_import * 1000:.0f} ms", "",
         ""),
        ("CLI / server start-up (net of the interpreter)", f"{result.cli_vs_server:.2f}",
         f"≤ {CLI_VS_SERVER_TARGET}", ok(result.cli_vs_server <= CLI_VS_SERVER_TARGET)),
        ("CLI imports mcp", str(result.cli_imports_mcp), "False", ok(not result.cli_imports_mcp)),
        ("library estimate + markdown", f"{result.library_call * 1000:.2f} ms", "", ""),
        ("same over in-process MCP", f"{result.mcp_call * 1000:.2f} ms", "", ""),
        ("MCP / library", f"{result.mcp_overhead:.1f}x", f"≤ {MCP_OVERHEAD_TARGET:g}x",
         ok(result.mcp_overhead <= MCP_OVERHEAD_TARGET)),
    ]
    lines = ["| measure | value | target | met |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def main() -> int:
    """Print the table; exit 1 when a target is missed."""
    result = measure()
    print("# Latency\n")
    print(render(result))
    met = (result.cli_vs_server <= CLI_VS_SERVER_TARGET and not result.cli_imports_mcp
           and result.mcp_overhead <= MCP_OVERHEAD_TARGET)
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
