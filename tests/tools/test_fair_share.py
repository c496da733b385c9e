"""Issue 18 item 4: heavy tools run off the event loop, one at a time across every client, so a
burst of them queues instead of starving a cheap call (benchmarks/fair_share.py measures it)."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from compute_budget.tools import toolkit

pytestmark = [pytest.mark.anyio, pytest.mark.adversarial]


async def test_heavy_calls_leave_the_loop_and_queue() -> None:
    loop_thread = threading.get_ident()
    active, most, threads = [0], [0], set()
    lock = threading.Lock()

    def heavy(_: object) -> int:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        threads.add(threading.get_ident())
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        return 1

    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(toolkit._compute, "plan_run", {}, heavy, None)
    assert most[0] == toolkit.HEAVY_AT_ONCE == 1
    assert loop_thread not in threads


async def test_a_cheap_call_stays_on_the_loop() -> None:
    seen: list[int] = []
    await toolkit._compute("estimate_run_cost", {}, lambda _: seen.append(
        threading.get_ident()), None)
    assert seen == [threading.get_ident()]


def test_the_heavy_tools_are_tools() -> None:
    from compute_budget.tools.tool_specs import TOOL_NAMES

    assert set(TOOL_NAMES) >= toolkit.HEAVY_TOOLS
