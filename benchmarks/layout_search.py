"""Speed of the layout search: one "will it fit?" answer, the fewest devices and the remedies.

Run with ``uv run python -m benchmarks.layout_search``. For each case it times the whole memory
answer (:func:`compute_budget.estimate_memory`: the search over the open knobs, the fewest
devices by bisection and, when nothing fits, the remedies) and one memory evaluation at a fixed
layout, in the same run, and reports the median of each and their ratio (how many fixed-layout
evaluations the whole answer costs). The target is the issue's: the whole search well under
50 ms on this machine; the ratio shows where the time goes independent of the machine.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compute_budget import MemorySpec, estimate_memory
from compute_budget.skill.memory.states import Layout, Setup, device_bytes

REPEATS = 15
TARGET_MS = 50.0
"""The whole search, worst case, must take less than this (issue 7)."""

CASES: dict[str, dict[str, Any]] = {
    "7B on 8 A100 (fits at ZeRO 1)": {"params": "7B", "gpu": "a100", "gpu_count": 8},
    "Llama-2-70B on 16 A100 (full fine-tune)": {"preset": "llama-2-70b", "gpu": "a100-80gb",
                                                "gpu_count": 16},
    "Llama-3-8B at 16k on 16 H100": {"preset": "llama-3-8b", "gpu": "h100", "gpu_count": 16,
                                     "seq_len": 16384},
    "Mixtral-8x7B on 8 H200": {"preset": "mixtral-8x7b", "gpu": "h200", "gpu_count": 8},
    "DeepSeek-V3 on 256 H100": {"preset": "deepseek-v3", "gpu": "h100", "gpu_count": 256},
    "70B pinned ZeRO 1 on 8 A100 (nothing fits)": {"preset": "llama-2-70b", "gpu": "a100-80gb",
                                                    "gpu_count": 8, "zero": 1,
                                                    "offload": False},
    "7T on 1 RTX 4090 (nothing fits)": {"params": "7T", "gpu": "rtx-4090", "gpu_count": 1},
}


@dataclass(frozen=True)
class Timing:
    """Median seconds of the whole answer and of one fixed-layout evaluation."""

    case: str
    search: float
    single: float
    fits: bool | None

    @property
    def ratio(self) -> float:
        """Whole answer / one evaluation."""
        return self.search / self.single


def _median(call: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure() -> list[Timing]:
    """Time every case."""
    out = []
    for name, fields in CASES.items():
        spec = MemorySpec(**fields)
        acc = spec.accelerator
        setup = Setup(gpu_count=spec.gpu_count, seq_len=spec.resolved_seq_len,
                      optimizer_bytes=12, stack="hf",
                      capacity_bytes=acc.memory_bytes if acc is not None else None)
        model = spec.model
        fits = estimate_memory(spec).fits
        out.append(Timing(
            case=name,
            search=_median(lambda spec=spec: estimate_memory(spec)),
            single=_median(lambda model=model, setup=setup: device_bytes(model, Layout(),
                                                                         setup)),
            fits=fits,
        ))
    return out


def render(timings: list[Timing]) -> str:
    """The table, with the target."""
    lines = ["| case | fits | whole answer | one evaluation | ratio | under target |",
             "|---|---|---|---|---|---|"]
    for t in timings:
        lines.append(f"| {t.case} | {t.fits} | {t.search * 1000:.1f} ms | "
                     f"{t.single * 1e6:.0f} µs | {t.ratio:,.0f}x | "
                     f"{'yes' if t.search * 1000 < TARGET_MS else '**no**'} |")
    return "\n".join(lines)


def main() -> int:
    """Print the table; exit 1 when a case misses the target."""
    timings = measure()
    print(f"# Layout search (target: under {TARGET_MS:g} ms each)\n")
    print(render(timings))
    return 0 if all(t.search * 1000 < TARGET_MS for t in timings) else 1


if __name__ == "__main__":
    raise SystemExit(main())
