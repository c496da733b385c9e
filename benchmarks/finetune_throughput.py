"""Wall time of QLoRA fine-tunes against Answer.AI's published timings.

    uv run python -m benchmarks.finetune_throughput

Source: Answer.AI, "Benchmarking QLoRA+FSDP" (github.com/AnswerDotAI/fsdp_qlora,
benchmarks_03_2024.md, February-March 2024): Llama-2 70B, QLoRA (rank 64 on every linear layer,
4-bit base), FSDP, gradient checkpointing, 1,024 dummy samples of 2,048 tokens (2.1M tokens).
The "Recommendations" table gives the time of the fastest settings found on each cloud machine
at an effective batch of 32 sequences; the dual-4090 case study gives one run with CPU offload
at batch 2 (no accumulation). The row on two A5000 with CPU *and activation* offload is left
out (activation offload is not modelled); "A6000 Ada" is the RTX 6000 Ada.

The calibration set behind the MFU prior holds pre-training runs whose reported hours include
restarts, evaluation and downtime; these are steady-state timings of short single-node runs on
dummy data, so the prior should be slow against them, and it is: the check is only that each
estimate is within :data:`FACTOR` of the measured time (its band is about 3x wide). The
measured times are printed beside the estimate's band so that a miss of the band's fast end is
seen. Nothing here was tuned to these rows.

Measured (2026-12-07): A100 40GB rows 0.97-1.26x of the published time, H100 1.25x, RTX A5000
0.94-1.00x, RTX 4090 1.84x and RTX 6000 Ada 0.65x (Ada devices have no published runs of their
own: their prior is borrowed). The PCIe rows moved when FSDP's gathers between PCIe cards were
counted as exposed (:mod:`.pcie_layouts`): A5000 from 0.86-0.93x, RTX 6000 Ada from
0.59-0.60x. Three of the nine published times are faster than the band's fast end, none slower
than its slow end. The RTX 6000 Ada ran at about 0.2 of its 364.2
TFLOP/s datasheet-derived BF16 peak (74 TFLOP/s of hardware FLOPs per device, against 99 on an
RTX 4090 of 165.2), so its estimates run fast: a 300 W card may not hold that peak. A team
fine-tuning on its own machine should measure one step (``compute-budget probe``) or pass its
past runs (``--calibration``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from compute_budget import RunSpec, estimate_run

SEQUENCE = 2048
SAMPLES = 1024
FACTOR = 2.0
"""How far the estimate may be from the published time, either way."""


@dataclass(frozen=True)
class Row:
    gpu: str
    count: int
    micro_batch: int
    seconds: float
    """Published time for the 1,024 samples."""
    sequences_per_step: int = 32
    """Effective batch in sequences (the table's 32; the case study's run accumulated nothing)."""


ROWS = (
    Row("rtx-4090", 2, 2, 4399, sequences_per_step=4),
    Row("a100-40gb", 2, 1, 3277),
    Row("a100-40gb", 4, 4, 1266),
    Row("a100-40gb", 8, 4, 672),
    Row("h100", 4, 8, 667),
    Row("rtx-a5000", 4, 1, 4829),
    Row("rtx-a5000", 8, 1, 2613),
    Row("rtx-6000-ada", 2, 2, 5867),
    Row("rtx-6000-ada", 4, 3, 2904),
)


def estimate(row: Row) -> tuple[float, tuple[float, float]]:
    """The estimate's wall time in seconds and its [fast, slow] range."""
    run = estimate_run(RunSpec(
        preset="llama-2-70b", lora_rank=64, weights_bits=4, gpu=row.gpu, gpu_count=row.count,
        seq_len=SEQUENCE, micro_batch=row.micro_batch, tokens=SAMPLES * SEQUENCE,
        batch_tokens=row.sequences_per_step * SEQUENCE, kind="fine-tune"))
    low, high = run.wall_hours_range
    return run.wall_hours * 3600, (low * 3600, high * 3600)


def main() -> int:
    print("| machine | published (s) | estimate (s) | estimate / published | band (s) |")
    print("|---|---|---|---|---|")
    failed = 0
    for row in ROWS:
        seconds, (fast, slow) = estimate(row)
        ratio = seconds / row.seconds
        ok = 1 / FACTOR <= ratio <= FACTOR
        failed += not ok
        where = "" if fast <= row.seconds <= slow else (
            " (faster than its fast end)" if row.seconds < fast else " (slower than its slow end)")
        print(f"| {row.count} x {row.gpu}, micro-batch {row.micro_batch} | {row.seconds:,.0f} "
              f"| {seconds:,.0f} | {ratio:.2f}{'' if ok else ' (missed)'} "
              f"| {fast:,.0f} - {slow:,.0f}{where} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
