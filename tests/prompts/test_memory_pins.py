"""A memory reply renders with any one layout knob pinned. Pinning tp made the hf stack's
sentence read ``tried.tp``, which a pinned knob leaves out: estimate_memory with qwen3-14b on
8 × A100-40GB and tp=1 failed with "Error executing tool" over MCP and a traceback on the CLI
(review helper-56, finding 1)."""

from __future__ import annotations

from typing import Any

import pytest

from compute_budget import MemorySpec, estimate_memory
from compute_budget.prompts import render_memory
from compute_budget.tools.relay import relay

PINS: list[dict[str, Any]] = [
    {"tp": 1}, {"tp": 2}, {"pp": 1}, {"pp": 2}, {"zero": 3}, {"recompute": "none"},
    {"recompute": "full"}, {"offload": False}, {"micro_batch": 2}, {"tp": 1, "zero": 3},
    {"tp": 2, "pp": 2, "zero": 1, "recompute": "selective"}, {"stack": "megatron", "tp": 1},
]


@pytest.mark.parametrize("pins", PINS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_every_pinned_knob_renders(pins: dict[str, Any]) -> None:
    memory = estimate_memory(MemorySpec(preset="qwen3-14b", gpu="a100-40gb", gpu_count=8, **pins))
    text = render_memory(memory)
    for knob in pins.keys() - {"stack"}:
        assert knob not in memory.layout.tried  # a pinned knob is not searched
    assert "kept as you set" in text
    told = relay("estimate_memory", memory)
    assert told is not None and told["headline"]
