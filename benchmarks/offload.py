"""CPU offload's cost against the one published comparison we could read: DeepSpeed
ZeRO-Offload++ (github.com/microsoft/DeepSpeed, blogs/deepspeed-offloadpp/README.md, 2023).

    uv run python -m benchmarks.offload

The blog reports that Twin-Flow (part of the optimizer on the GPU) trains up to 6× faster than
full ZeRO-Offload for OPT-30B on one DGX-H100 (8 × H100 80GB) and 3× faster for OPT-13B on one
DGX-A100-40GB, in "small batch training". Twin-Flow at its best is a run without offload, so
those ratios are lower bounds on what full offload costs there. The blog gives no batch size;
the small-batch case here is one 2048-token sequence (OPT's context) per device, no gradient
accumulation, at an MFU of 0.4 without offload. The model (``compute_budget.skill.memory.
offload``) predicts the step with full offload over the step without, at its central bandwidths
and at its range. It is a consistency check, not a fit: nothing here was tuned to these cases.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from compute_budget.skill.hardware.catalog import get_accelerator
from compute_budget.skill.hardware.host import host_platform
from compute_budget.skill.memory.offload import offload_cost, offload_factor

SEQUENCE = 2048
"""OPT's context (Zhang et al. 2022), one sequence per device."""
MFU = 0.4
"""The run's MFU without offload (a well-tuned dense run)."""
DEVICES = 8


@dataclass(frozen=True)
class Case:
    name: str
    params: float
    gpu: str
    reported: float
    """The blog's speed-up of Twin-Flow over full offload: a lower bound on full offload's
    slowdown against none."""


CASES = (
    Case("OPT-13B on one DGX-A100-40GB", 13e9, "a100-40gb", 3.0),
    Case("OPT-30B on one DGX-H100", 30e9, "h100", 6.0),
)


def predicted(case: Case) -> tuple[float, tuple[float, float]]:
    """Full offload's step over the step without it: central and [fast, slow]."""
    acc = get_accelerator(case.gpu)
    platform = host_platform(acc.key)
    assert platform is not None
    cost = offload_cost(case.params / DEVICES, platform)
    tokens = SEQUENCE  # per device per step
    compute = 6 * case.params * tokens / (acc.peak(acc.default_precision) * 1e12 * MFU)
    return offload_factor(cost, compute)


def main() -> int:
    print("| case | reported (lower bound) | predicted | range |")
    print("|---|---|---|---|")
    for case in CASES:
        central, (fast, slow) = predicted(case)
        print(f"| {case.name} | ≥ {case.reported:.0f}× | {central:.1f}× | {fast:.1f}–{slow:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
