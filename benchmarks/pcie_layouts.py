"""ZeRO-3 (FSDP) between PCIe cards, against Answer.AI's published timings.

    uv run python -m benchmarks.pcie_layouts

Source: Answer.AI, "Benchmarking QLoRA+FSDP" (github.com/AnswerDotAI/fsdp_qlora,
benchmarks_03_2024.md at 23fafdf, February-March 2024): Llama-2 7B, LoRA on a 16-bit base and
QLoRA on a 4-bit one, context 2,048, 1,024 dummy samples, gradient checkpointing, each machine
run with FSDP's full sharding and with its "ddp" strategy (no sharding), no NVLink:

- two RTX 4090 on full PCIe 4.0 x16 lanes: LoRA DDP batch 4 437 s, FSDP batch 6 481 s; QLoRA
  DDP batch 8 450 s, FSDP batch 10 466 s;
- two RTX 3090 on "an older motherboard and slow PCI lanes", power-limited to 280 W: LoRA DDP
  batch 4 881 s, FSDP batch 4 1,366 s and batch 6 1,199 s; QLoRA DDP batch 8 875 s, FSDP
  batch 4 998 s.

The same samples train either way, so the compute is the same and FSDP's extra time is what its
gathers cost. Three checks of :mod:`compute_budget.skill.memory.costs`:

1. On the 4090s, whose bus the catalog knows (18 GB/s through host memory), the modelled ZeRO-3
   factor is within :data:`TOLERANCE` of FSDP's time over DDP's.
2. On the 3090s FSDP loses the same time per micro-batch at batch 4 and 6 (LoRA): the gathers
   are exposed, not hidden behind the compute (a larger micro-batch would hide more of them),
   which is why ZeRO-3 between PCIe cards costs 1 + C, not max(1, C).
3. That time scales with the bytes gathered: LoRA's 16-bit base against QLoRA's 4-bit one at
   batch 4, within :data:`BYTES_TOLERANCE` of the modelled bytes' ratio (measured 3.94,
   modelled 3.39; were the time per micro-batch fixed, the ratio would be 1).

The 3090s' bus is not known (the author names slow lanes, not their width), so their factor is
not checked against a bandwidth.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from compute_budget import MemorySpec
from compute_budget.skill.hardware.catalog import get_accelerator
from compute_budget.skill.hardware.peer_link import device_peer_link
from compute_budget.skill.memory.costs import Costs, zero3_bytes
from compute_budget.skill.memory.spec import ResolvedModel
from compute_budget.skill.memory.states import Layout

SAMPLES = 1024
SEQUENCE = 2048
GPUS = 2
TOLERANCE = 0.05
BYTES_TOLERANCE = 0.20
"""Loose: the QLoRA pair compares FSDP at batch 4 with DDP at batch 8 (the only DDP run), which
the larger batch makes faster, and the modelled bytes gather the 16-bit embedding and LM head
twice per micro-batch, where FSDP's root unit gathers them once."""


@dataclass(frozen=True)
class Pair:
    """One machine's FSDP and DDP runs of the same samples."""

    gpu: str
    weights_bits: int
    ddp_seconds: float
    fsdp_batch: int
    fsdp_seconds: float

    @property
    def name(self) -> str:
        kind = "QLoRA" if self.weights_bits == 4 else "LoRA"
        return f"2 x {self.gpu}, {kind}, FSDP batch {self.fsdp_batch}"

    @property
    def measured(self) -> float:
        """FSDP's time over DDP's."""
        return self.fsdp_seconds / self.ddp_seconds

    @property
    def exposed_per_micro_batch(self) -> float:
        """FSDP's extra seconds per micro-batch on each device."""
        micro_batches = SAMPLES / GPUS / self.fsdp_batch
        return (self.fsdp_seconds - self.ddp_seconds) / micro_batches


RTX_4090 = (Pair("rtx-4090", 16, 437, 6, 481), Pair("rtx-4090", 4, 450, 10, 466))
RTX_3090_LORA = (Pair("rtx-3090", 16, 881, 4, 1366), Pair("rtx-3090", 16, 881, 6, 1199))
RTX_3090_QLORA = Pair("rtx-3090", 4, 875, 4, 998)


def model(weights_bits: int) -> ResolvedModel:
    """Llama-2 7B with fsdp_qlora's default adapters (rank 64 on every linear layer)."""
    return MemorySpec(preset="llama-2-7b", lora_rank=64, lora_targets="all-linear",
                      weights_bits=weights_bits, gpu_count=GPUS).model


def modelled(pair: Pair) -> float:
    """The ZeRO-3 factor the layout search prices for ``pair``'s FSDP run."""
    link = device_peer_link(get_accelerator(pair.gpu))
    costs = Costs(model(pair.weights_bits), SEQUENCE, "hf", GPUS, link)
    return costs.zero3(Layout(zero=3, recompute="full", micro_batch=pair.fsdp_batch))


def bytes_ratio() -> tuple[float, float]:
    """(measured, modelled) ratio of LoRA's to QLoRA's exposed gathers on the 3090s."""
    measured = RTX_3090_LORA[0].exposed_per_micro_batch / RTX_3090_QLORA.exposed_per_micro_batch
    return measured, zero3_bytes(model(16), GPUS) / zero3_bytes(model(4), GPUS)


def main() -> int:
    ok = True
    print("| machine | FSDP / DDP, published | modelled ZeRO-3 factor | modelled / published |")
    print("|---|---|---|---|")
    for pair in RTX_4090:
        ratio = modelled(pair) / pair.measured
        ok &= abs(ratio - 1) <= TOLERANCE
        print(f"| {pair.name} | {pair.measured:.3f} | {modelled(pair):.3f} | {ratio:.3f} |")
    print("\n| machine | FSDP's extra seconds per micro-batch |\n|---|---|")
    for pair in (*RTX_3090_LORA, RTX_3090_QLORA):
        print(f"| {pair.name} | {pair.exposed_per_micro_batch:.2f} |")
    first, second = (p.exposed_per_micro_batch for p in RTX_3090_LORA)
    ok &= abs(first / second - 1) <= TOLERANCE
    measured, expected = bytes_ratio()
    ok &= abs(measured / expected - 1) <= BYTES_TOLERANCE
    print(f"\nExposed at batch 4 and 6: {first:.2f} and {second:.2f} s (same within "
          f"{TOLERANCE:.0%}: {abs(first / second - 1) <= TOLERANCE}). LoRA over QLoRA: "
          f"{measured:.2f} measured, {expected:.2f} in gathered bytes.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
