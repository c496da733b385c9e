"""What would fit: the fewest devices on which a run fits, and when it does not fit, what binds
and the changes that would make it fit (each checked against the same layouts as the search,
:mod:`.layouts`).

The remedies, in the order given: more devices of the same type (the fewest that fit); a device
of the same vendor with more memory (the smallest on which the run fits at the same count, else
the largest at its own fewest devices, never one without the current device's BF16); LoRA of
rank 16 when every parameter is trained, on a 4-bit base (QLoRA) when 16-bit LoRA does not fit
or fits only with offload and QLoRA fits without; CPU offload when the user turned it off; 8-bit
Adam (6 bytes of state per parameter: fp32 master and two 8-bit moments; Dettmers et al. 2022);
the longest halved sequence that fits, down to 512 tokens; and leaving the knobs the user set to
the search. Each says whether it fits only with CPU offload. What binds is a knob the user set
when releasing the knobs fits; else the activations when at the most frugal layout they outweigh
everything else, else the model states. (The search itself sets ``host_memory`` when a layout
would fit the device but its offload not the host's CPU RAM: :mod:`.layout`.)
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..hardware.catalog import Accelerator, get_accelerator, list_accelerators
from ..hardware.host import cpu_ram
from ..hardware.peer_link import device_peer_link
from ..vocabulary import GPUS_PER_NODE, LAYOUT_KNOBS
from .layouts import Pins, any_fits, most_frugal
from .lora import QLORA_BITS, lora_params, quantized_weights
from .spec import ResolvedModel
from .states import Setup, device_bytes

__all__ = [
    "LORA_RANK_SUGGESTED",
    "Binding",
    "Remedy",
    "find_remedies",
    "min_gpu_count",
    "min_gpu_count_of",
]

LORA_RANK_SUGGESTED = 16
EIGHT_BIT_ADAM_BYTES = 6.0
"""8-bit Adam's state per parameter: fp32 master + two 8-bit moments (Dettmers et al. 2022)."""
MAX_DEVICES = 10_000_000
EXACT_COUNTS = 64
"""Device counts up to this are each tried for the fewest that fit; beyond, whole nodes."""
SHORTEST_SEQ_LEN = 512
"""The shortest sequence a remedy suggests."""

Binding = Literal["pinned", "model_states", "activations", "host_memory"]
"""Why nothing fits: a knob the user set, the model states, the activations alone, or the
host's CPU RAM (offload would fit the device but not the host)."""


class Remedy(BaseModel):
    """One change that would make a run that does not fit fit (each checked)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["more_devices", "larger_device", "lora", "offload", "optimizer_8bit",
                  "shorter_sequence", "release"] = Field(
        description="more_devices: gpu_count of this device type; larger_device: another "
                    "device of the same vendor, gpu_count of them; lora: LoRA of rank lora_rank; "
                    "offload: CPU offload; optimizer_8bit: 8-bit Adam; shorter_sequence: "
                    "seq_len tokens; release: leave the knobs named unset.")
    gpu_count: int | None = Field(default=None, description="Devices needed, when it says.")
    tp: int | None = Field(default=None, exclude_if=lambda v: v is None,
                           description="For more_devices: the tensor-parallel degree there.")
    pp: int | None = Field(default=None, exclude_if=lambda v: v is None,
                           description="For more_devices: the pipeline degree there.")
    gpu: str | None = Field(default=None, description="Catalog key, for larger_device.")
    accelerator: str | None = Field(default=None, description="Device name, for larger_device.")
    memory_gib: float | None = Field(default=None, description="Its memory, GiB.")
    lora_rank: int | None = Field(default=None, description="Rank, for lora.")
    weights_bits: int | None = Field(
        default=None, description="For lora: 4 on a 4-bit base (QLoRA), else 16.")
    seq_len: int | None = Field(default=None, description="Tokens, for shorter_sequence.")
    knobs: tuple[str, ...] = Field(default=(), description="Knobs to leave unset, for release.")
    needs_offload: bool = Field(default=False,
                                description="True when this change fits only with offload.")
    host_ram_unknown: bool = Field(
        default=False, exclude_if=lambda v: not v,
        description="With needs_offload on another device: its host's CPU RAM is unknown, so "
                    "whether it holds the offloaded states was not checked; left out otherwise.")


def min_gpu_count(pins: Pins, model: ResolvedModel, setup: Setup) -> tuple[int | None, bool]:
    """Fewest devices on which some layout fits, and whether it is counted in whole nodes.

    Every count up to EXACT_COUNTS is tried; beyond, whole nodes of 8, found by doubling and
    bisection (memory per device falls as devices are added). The answer does not depend on
    the count asked about, so it is computed once per model, pins and device (the plan search
    asks it of many counts of one device type).
    """
    return min_gpu_count_of(pins, model, at_count(setup.sizing(), 1))


def at_count(setup: Setup, count: int) -> Setup:
    """``setup`` on ``count`` devices, with the CPU RAM per device of the machines the catalog
    rents that many in, unless the user gave theirs (1 T4: 16 GiB; 2: 96 GiB each of a
    g4dn.12xlarge's 192 GiB)."""
    if setup.host_ram_given or setup.gpu is None or count == setup.gpu_count:
        return replace(setup, gpu_count=count)
    return replace(setup, gpu_count=count, host_capacity_bytes=_host_bytes(setup.gpu, count))


@lru_cache(maxsize=1024)
def _host_bytes(gpu: str, count: int) -> float | None:
    """CPU RAM per device, bytes, of the machines the catalog rents ``count`` ``gpu`` in."""
    acc = get_accelerator(gpu)
    ram = cpu_ram(acc.key, instance_ram=acc.host_ram(count))
    return None if ram is None else ram.bytes_per_device


@lru_cache(maxsize=512)
def min_gpu_count_of(pins: Pins, model: ResolvedModel,
                     setup: Setup) -> tuple[int | None, bool]:
    """:func:`min_gpu_count` for a setup whose count is already 1, cached."""
    def fits_on(n: int) -> bool:
        return any_fits(pins, model, at_count(setup, n))

    if fits_on(EXACT_COUNTS):
        return next(n for n in range(1, EXACT_COUNTS + 1) if fits_on(n)), False
    nodes = EXACT_COUNTS // GPUS_PER_NODE * 2
    while not fits_on(nodes * GPUS_PER_NODE):
        nodes *= 2
        if nodes * GPUS_PER_NODE > MAX_DEVICES:
            return None, True
    low, high = nodes // 2, nodes  # low does not fit, high does
    while high - low > 1:
        mid = (low + high) // 2
        if fits_on(mid * GPUS_PER_NODE):
            high = mid
        else:
            low = mid
    return high * GPUS_PER_NODE, True


def _with_offload(pins: Pins, model: ResolvedModel, setup: Setup) -> bool | None:
    """None when nothing fits; else whether fitting needs offload."""
    if pins.offload is not True and any_fits(replace(pins, offload=False), model, setup):
        return False
    if pins.offload is not False and any_fits(pins, model, setup):
        return True
    return None


def _on(setup: Setup, acc: Accelerator) -> Setup:
    """``setup`` on another device type: its memory and peer link, and its usual host's CPU RAM
    (the priced machine's where the catalog names one) unless the user gave theirs."""
    there = replace(setup, capacity_bytes=acc.memory_bytes, link=device_peer_link(acc),
                    offload_step_seconds=None, gpu=acc.key)  # fits decide remedies, not order
    if setup.host_ram_given:
        return there
    ram = cpu_ram(acc.key, instance_ram=acc.host_ram(setup.gpu_count))
    return replace(there, host_capacity_bytes=None if ram is None else ram.bytes_per_device)


def _larger_device(pins: Pins, model: ResolvedModel, setup: Setup,
                   gpu: str | None) -> Remedy | None:
    """A device of the same vendor with more memory: the smallest on which the run fits at the
    same count, else the largest, at its own fewest devices."""
    current = next((a for a in list_accelerators() if a.key == gpu), None)
    capacity = setup.capacity_bytes or 0
    bf16 = current is not None and current.peak_tflops.get("bf16") is not None
    larger = sorted((a for a in list_accelerators()
                     if a.memory_bytes is not None and a.memory_bytes > capacity
                     and (current is None or a.vendor == current.vendor)
                     and (not bf16 or a.peak_tflops.get("bf16") is not None)),
                    key=lambda a: a.memory_bytes or 0)
    for acc in larger:
        there = _on(setup, acc)
        offload = _with_offload(pins, model, there)
        if offload is not None:
            return Remedy(kind="larger_device", gpu=acc.key, accelerator=acc.name,
                          memory_gib=acc.memory_gib, gpu_count=setup.gpu_count,
                          needs_offload=offload,
                          host_ram_unknown=offload and there.host_capacity_bytes is None)
    if not larger:
        return None
    acc = larger[-1]
    there = _on(setup, acc)
    count, _ = min_gpu_count(pins, model, there)
    if count is None:
        return None
    offload = bool(_with_offload(pins, model, at_count(there, count)))
    return Remedy(kind="larger_device", gpu=acc.key, accelerator=acc.name,
                  memory_gib=acc.memory_gib, gpu_count=count, needs_offload=offload,
                  host_ram_unknown=offload and there.host_capacity_bytes is None)


def _lora_remedy(pins: Pins, model: ResolvedModel, setup: Setup) -> Remedy | None:
    """LoRA of rank 16 instead of training every parameter; QLoRA (a 4-bit base) when 16-bit
    LoRA does not fit, or fits only with offload and QLoRA fits without."""
    adapters = float(lora_params(model.shape, LORA_RANK_SUGGESTED))
    lora = replace(model, trainable=adapters, adapters=adapters)
    offload = _with_offload(pins, lora, setup)
    if offload is not False and (pins.tp or 1) == 1:
        quantized = quantized_weights(model.shape, model.total)
        qlora = _with_offload(pins, replace(lora, quantized=quantized, weights_bits=QLORA_BITS),
                              setup)
        if qlora is not None and (offload is None or not qlora):
            return Remedy(kind="lora", lora_rank=LORA_RANK_SUGGESTED, weights_bits=QLORA_BITS,
                          needs_offload=qlora)
    if offload is None:
        return None
    return Remedy(kind="lora", lora_rank=LORA_RANK_SUGGESTED, weights_bits=16,
                  needs_offload=offload)


def find_remedies(pins: Pins, model: ResolvedModel, setup: Setup, min_count: int | None,
                  min_plain: int | None, gpu: str | None) -> tuple[Binding, tuple[Remedy, ...]]:
    """What binds when nothing fits on ``setup``, and the changes that would fit (module
    docstring); ``min_count`` and ``min_plain`` are the fewest devices with and without
    offload, ``gpu`` the catalog key of the device."""
    remedies: list[Remedy] = []
    if min_count is not None:
        remedies.append(Remedy(kind="more_devices", gpu_count=min_count,
                               needs_offload=min_plain is None or min_plain > min_count))
    larger = _larger_device(pins, model, setup, gpu)
    if larger is not None:
        remedies.append(larger)
    if not model.frozen:
        lora = _lora_remedy(pins, model, setup)
        if lora is not None:
            remedies.append(lora)
    if pins.offload is False and any_fits(replace(pins, offload=None), model, setup):
        remedies.append(Remedy(kind="offload", needs_offload=True))
    if setup.optimizer_bytes > EIGHT_BIT_ADAM_BYTES:
        offload = _with_offload(pins, model, replace(setup, optimizer_bytes=EIGHT_BIT_ADAM_BYTES))
        if offload is not None:
            remedies.append(Remedy(kind="optimizer_8bit", needs_offload=offload))
    seq = setup.seq_len // 2
    while seq >= SHORTEST_SEQ_LEN:
        offload = _with_offload(pins, model, replace(setup, seq_len=seq))
        if offload is not None:
            remedies.append(Remedy(kind="shorter_sequence", seq_len=seq, needs_offload=offload))
            break
        seq //= 2
    pinned = tuple(k for k in LAYOUT_KNOBS if getattr(pins, k) is not None)
    released = Pins(ep=pins.ep, offload_weights=pins.offload_weights,
                    expert_parallel=pins.expert_parallel)
    if pinned and any_fits(released, model, setup):
        remedies.append(Remedy(kind="release", knobs=pinned,
                               needs_offload=bool(_with_offload(released, model, setup))))
        return "pinned", tuple(remedies)
    frugal = device_bytes(model, most_frugal(pins, model, setup), setup)
    binding: Binding = ("activations" if frugal.activations > frugal.total - frugal.activations
                        else "model_states")
    return binding, tuple(remedies)
