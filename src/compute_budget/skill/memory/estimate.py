"""The memory answer: "will it fit?", at the cheapest layout that does, in one call.

:func:`estimate_memory` resolves the model once, searches the layout knobs the user left open
(:mod:`.layout`), and reports the memory per device at the chosen layout with the fewest devices
of this type the run needs. The run estimate carries the same result as its memory check.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..hardware.catalog import GIB, Accelerator
from ..hardware.host import CpuRam, HostPlatform, cpu_ram, host_platform
from ..hardware.measured import ProbeResult
from ..hardware.peer_link import PeerLink, device_peer_link
from ..model.shape import ModelShape
from ..vocabulary import GPUS_PER_NODE, LONG_CONTEXT, FiniteResult, Recompute, Stack
from .activations import logits_bytes_per_element, probe_scale
from .layout import LayoutChoice, search_layout
from .lora import LoraTargets
from .offload import OffloadCost, offload_cost
from .optimizers import OptimizerInfo, resolve_optimizer
from .spec import OnDevices
from .states import HOST_USABLE_FRACTION, USABLE_FRACTION, DeviceBytes, Layout, Setup

__all__ = ["HostRam", "MeasuredMemoryUse", "MemoryBreakdown", "MemoryEstimate", "MemoryNote",
           "MemorySpec", "OffloadGap", "estimate_memory"]

MemoryNote = Literal["too_tight", "sp_without_tp", "shape_guessed", "shape_given",
                     "eager_attention_default", "host_ram_unknown", "context_parallel_unmodelled"]
"""too_tight: within the reserved share of device memory; sp_without_tp: sequence parallelism
has no effect at tp 1; shape_guessed / shape_given: no config, the activations follow a guessed
or given shape; eager_attention_default: flash_attention was not given and transformers' default
attention for this family is eager (Gemma 2), so the hf stack counts its s×s scores (worded in
the activations line); host_ram_unknown: the layout offloads to CPU memory and the host's CPU
RAM is unknown (a device without a sourced host, TPU v4 or Gaudi: :func:`..hardware.host.cpu_ram`;
host_ram_gib not given), so whether it holds the offloaded states was not checked;
context_parallel_unmodelled: a long sequence's activations lay the run out (LONG_CONTEXT)."""

OffloadGap = Literal["host_ram_unknown", "host_step_not_estimated"]
"""What an answer with CPU offload leaves unchecked: host_ram_unknown, the host's CPU RAM is
unknown, so the offloaded states were not checked against it; host_step_not_estimated, the
device has no modelled host link (TPU, Trainium, Gaudi), so its host step is not in the time."""


class MemorySpec(OnDevices):
    """What to size: the model, how it is fine-tuned, the devices and the layout knobs."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class MemoryBreakdown(BaseModel):
    """Bytes per device by component."""

    model_config = ConfigDict(frozen=True)

    weights: float = Field(description="Weights (16-bit, or 4/8-bit frozen base), bytes.")
    gradients: float = Field(description="16-bit gradients, bytes per device.")
    optimizer: float = Field(description="Optimizer state on the device, bytes.")
    activations: float = Field(
        description="Stored activations, bytes per device (the loss's fp32 logits included)."
    )
    overhead: float | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="With a probe: its measured temporaries and allocator reserve at this "
                    "layout's share of the model states, bytes; left out otherwise.")
    total: float = Field(description="weights + gradients + optimizer + activations "
                                     "(+ overhead), bytes.")


class MeasuredMemoryUse(BaseModel):
    """What a probe changed in the memory answer."""

    model_config = ConfigDict(frozen=True)

    device: str = Field(description="The device the probe ran on.")
    measured_at: str = Field(description="The probe's date, YYYY-MM-DD.")
    measured_bytes_per_token_per_layer: float = Field(
        description="Activation bytes one decoder layer kept per token, measured.")
    formula_bytes_per_token_per_layer: float = Field(
        description="The same by the formula, at the probe's context and recomputation.")
    activation_scale: float = Field(
        description="measured / formula: the factor on every layout's layer activations.")
    applied: bool = Field(
        description="False on the megatron stack: the probe measured transformers, so the "
                    "formula's activations stand (the overhead is added still).")
    overhead_bytes: float = Field(
        description="Measured overhead on the probe's one device holding every model state.")


class HostRam(BaseModel):
    """The CPU RAM per device that offload's states must fit in."""

    model_config = ConfigDict(frozen=True)

    bytes_per_device: float = Field(description="CPU RAM per device, bytes.")
    usable_fraction: float = Field(description="Share of it offload may fill.")
    usable_bytes: float = Field(description="That share, bytes: what offload is checked against.")
    origin: Literal["default", "instance", "user"] = Field(
        description="default: the usual host of the device's generation; instance: the cloud "
                    "machine the catalog prices the run in; user: host_ram_gib.")
    source: str | None = Field(
        description="With the default or the instance: the system it is taken from.")
    devices_per_node: int = Field(
        description="Devices of this run sharing one host: the gpu_count, at most the usual "
                    "host's (8 in a server, 2 in a desktop, 1 or 2 per Grace CPU, 4 or 8 TPU "
                    "chips) or the priced machine's.")


class MemoryEstimate(FiniteResult):
    """Memory per device at the layout answered for, and whether it fits the named device."""

    model_config = ConfigDict(frozen=True)

    per_gpu_bytes: MemoryBreakdown
    fits: bool | None = Field(description="Whether the total fits the device; None if unknown.")
    accelerator: str | None = Field(description="Full accelerator name, if one was named.")
    gpu_memory_bytes: float | None = Field(
        description="Device memory a program can allocate, bytes, if known (ECC's share out).")
    ecc_nominal_bytes: float | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The nominal memory when ECC keeps part of it (GDDR cards); left out "
                    "otherwise.")
    headroom_bytes: float | None = Field(description="Device memory minus total, in bytes.")
    spare_bytes: float | None = Field(
        description="Usable memory (usable_fraction of the device) minus total, in bytes: what "
                    "is left before the reserve for the runtime.")
    host_bytes: float = Field(
        description="CPU memory per device for offloaded gradients and optimizer state, and the "
                    "weights with offload_weights, bytes (0 without offload).")
    host_bytes_per_node: float = Field(
        description="The same for the devices of one node (node_devices of them), bytes.")
    node_devices: int = Field(
        default=GPUS_PER_NODE, description="Devices per node: host_ram.devices_per_node; without "
        "a host offload path, the priced machine's (16 Trainium2) or 8, at most the devices.")
    host_ram: HostRam | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The CPU RAM offload was checked against; None when it is unknown "
                    "(note host_ram_unknown with offload).")
    peer_link: PeerLink | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="For two or more PCIe-only devices: the bus their tensor-parallel and "
                    "ZeRO-3 traffic shares, which prices those layouts; None (left out) on "
                    "NVLink or another scale-up fabric, or on one device.")
    offload_cost: OffloadCost | None = Field(
        default=None,
        description="With offload: the host work of one optimizer step per device (link and "
                    "CPU), and the weights streamed per micro-batch with offload_weights; None "
                    "without offload or for a device without a host offload path.")
    zero3_gathered_bytes: float = Field(
        description="Part of the weights: the full layers ZeRO-3 gathers at once, bytes.")
    dequantized_bytes: float = Field(
        default=0.0, exclude_if=lambda v: not v,
        description="Part of the weights: a 4- or 8-bit base's largest matrix dequantized to 16 "
                    "bits for its matmul, bytes (0 at 16 bits: left out).")
    params: float = Field(description="Total parameters N of the base model.")
    trainable_params: float = Field(description="Parameters with gradients and optimizer state.")
    lora_params: float = Field(description="LoRA adapter parameters added (0 without LoRA).")
    lora_rank: int | None = Field(description="LoRA rank, when LoRA.")
    lora_targets: LoraTargets | None = Field(description="Layers LoRA adapts, when LoRA.")
    weights_bits: int = Field(description="Storage bits of the frozen base weights (16, 8, 4).")
    gpu_count: int
    zero: int = Field(description="ZeRO stage of the layout answered for.")
    tp: int = Field(description="Tensor-parallel degree.")
    pp: int = Field(description="Pipeline-parallel degree.")
    sp: bool = Field(description="Sequence parallelism.")
    ep: int = Field(description="Expert-parallel degree.")
    recompute: Recompute = Field(description="Activation recomputation.")
    micro_batch: int = Field(description="Micro-batch size in sequences.")
    offload: bool = Field(description="Optimizer state offloaded to CPU memory.")
    offload_weights: bool = Field(
        default=False, exclude_if=lambda v: not v,
        description="The frozen weights too, streamed in per layer (ZeRO 3; tried after "
                    "optimizer offload, for a frozen base on a device with a host offload path); "
                    "left out when false.")
    data_parallel: int = Field(description="Data-parallel degree N_d = devices / (TP·PP).")
    min_gpu_count: int | None = Field(
        description="Fewest devices of this type on which the run fits at its best layout; "
                    "None when device memory is unknown or no count fits.")
    stack: Stack = Field(description="Training stack whose activations are counted.")
    layout: LayoutChoice = Field(description="How the layout was chosen, and what it costs.")
    optimizer: OptimizerInfo
    shape: ModelShape
    seq_len: int = Field(description="Sequence length in tokens.")
    flash_attention: bool = Field(
        description="Whether the attention counted keeps no s×s scores; false: eager, as asked "
                    "or by the family's default (note eager_attention_default).")
    logits_bytes_per_element: float = Field(
        description="Bytes the loss keeps per logit (s·b·V/t of them): 10 on the hf stack (fp32 "
                    "log-softmax, bf16 logits, fp32 gradient; 12 with soft-capped logits), 4 on "
                    "megatron.")
    logits_bytes: float = Field(
        description="Part of the activations: the fp32 logits kept for the loss, bytes per "
                    "device; 0 when the vocabulary is unknown."
    )
    usable_fraction: float = Field(
        description="Share of device memory counted as usable for fits; the rest is left for "
                    "the CUDA context, communication buffers and fragmentation."
    )
    activations_in_flight: int = Field(
        description="Micro-batches whose activations the first pipeline stage holds at once."
    )
    measured: MeasuredMemoryUse | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="With a probe: the measured activations and overhead used; left out "
                    "otherwise.")
    notes: list[MemoryNote] = Field(description="Codes for things to check (see MemoryNote).")

    @property
    def offload_needed(self) -> bool:
        """The search chose offload because no layout fits these devices without it (not set
        by the user, not chosen for speed)."""
        return self.offload and "offload" in self.layout.open_knobs and not self.offload_by_choice

    @property
    def offload_gaps(self) -> list[OffloadGap]:
        """What this answer's offload leaves unchecked (OffloadGap); empty without offload or
        without a named device."""
        if not self.offload or self.accelerator is None:
            return []
        gaps: list[OffloadGap] = []
        if self.host_ram is None:
            gaps.append("host_ram_unknown")
        if self.offload_cost is None:
            gaps.append("host_step_not_estimated")
        return gaps

    @property
    def offload_by_choice(self) -> bool:
        """Offload chosen for speed, not need: between PCIe cards its host step costs less
        than the communication of a layout that fits without it on these devices."""
        plain = self.layout.min_gpu_count_without_offload
        return (self.offload and self.layout.offload_priced and plain is not None
                and plain <= self.gpu_count)


def _notes(spec: OnDevices, layout: Layout, memory: DeviceBytes, on_device: bool | None,
           headroom: float | None, ram_unknown: bool) -> list[MemoryNote]:
    """The codes of things to check (MemoryNote)."""
    notes: list[MemoryNote] = []
    if spec.resolved_attention == "eager_default":
        notes.append("eager_attention_default")
    if on_device is False and headroom is not None and headroom >= 0:
        notes.append("too_tight")
    if layout.sp and layout.tp == 1:
        notes.append("sp_without_tp")
    if spec.model.architecture is None:
        notes.append("shape_guessed" if spec.model.shape.guessed else "shape_given")
    if ram_unknown:
        notes.append("host_ram_unknown")
    bound = layout.recompute != "none" or on_device is False or memory.activation_led
    if bound and spec.resolved_seq_len >= LONG_CONTEXT:
        notes.append("context_parallel_unmodelled")
    return notes


def _offload_cost(host: HostPlatform | None, layout: Layout, trainable_per_device: float,
                  memory: DeviceBytes) -> OffloadCost | None:
    """The host work of ``layout``'s offload per device; None without offload or for a device
    without a host offload path."""
    if host is None or not layout.offload:
        return None
    return offload_cost(trainable_per_device, host, memory.streamed)


def _host(spec: OnDevices, acc: Accelerator | None
          ) -> tuple[HostPlatform | None, CpuRam | None]:
    """The host of ``spec``'s devices (None without a host offload path) and its CPU RAM per
    device (None when unknown): the user's bandwidth and RAM where given, else the priced
    machine's RAM where the catalog names one, else the usual host's."""
    if acc is None:
        return None, None
    instance = acc.host_ram(spec.gpu_count)
    return (host_platform(acc.key, getattr(spec, "host_memory_gbs", None), spec.host_ram_gib,
                          instance),
            cpu_ram(acc.key, spec.host_ram_gib, instance))


def _node_devices(acc: Accelerator | None, ram: CpuRam | None, gpu_count: int) -> int:
    """Devices per node: those sharing the host RAM's host; else those of the machine the
    default price rents (16 Trainium2 in a trn2.48xlarge), else GPUS_PER_NODE; at most all."""
    if ram is not None and ram.devices_per_host is not None:
        return min(gpu_count, ram.devices_per_host)
    quote = None if acc is None else acc.default_price
    return min(gpu_count, quote.gpus if quote is not None and quote.gpus else GPUS_PER_NODE)


def _host_ram(ram: CpuRam | None, node: int) -> HostRam | None:
    """The CPU RAM the offload is checked against; None when unknown."""
    return None if ram is None else HostRam(
        bytes_per_device=ram.bytes_per_device, usable_fraction=HOST_USABLE_FRACTION,
        usable_bytes=HOST_USABLE_FRACTION * ram.bytes_per_device,
        origin=ram.origin, source=ram.source, devices_per_node=node)


def estimate_memory(spec: OnDevices, *, fabric: bool = False) -> MemoryEstimate:
    """Memory per device for ``spec`` at the cheapest layout that fits (module docstring).
    ``fabric``: cost the layouts as if the devices were joined by NVLink, as the published runs
    behind the MFU prior were (:func:`..estimate.model_parallel_at_scale`)."""
    model = spec.model
    acc = spec.accelerator
    link = device_peer_link(None if fabric else acc)
    pcie = link.kind == "pcie" and spec.gpu_count > 1
    capacity = acc.memory_bytes if acc is not None else None
    opt = resolve_optimizer(spec.optimizer or "adamw")
    host, ram = _host(spec, acc)
    setup = _setup(spec, opt.bytes_per_param, capacity, host, ram, link, pcie)
    host_ram = _host_ram(ram, node := _node_devices(acc, ram, spec.gpu_count))
    setup, measured = _probed(setup, model.shape, getattr(spec, "probe", None))
    layout, memory, choice = search_layout(model, setup, spec)
    total = memory.total
    on_device = None if capacity is None else total <= USABLE_FRACTION * capacity
    fits = on_device and choice.host_needed_bytes is None
    headroom = None if capacity is None else capacity - total
    notes = _notes(spec, layout, memory, on_device, headroom,
                   layout.offload and host_ram is None and acc is not None)
    return MemoryEstimate(
        per_gpu_bytes=MemoryBreakdown(
            weights=memory.weights, gradients=memory.gradients, optimizer=memory.optimizer,
            activations=memory.activations, total=total,
            overhead=memory.overhead if measured is not None else None,
        ),
        fits=fits,
        accelerator=acc.name if acc is not None else None,
        gpu_memory_bytes=capacity,
        ecc_nominal_bytes=_ecc_nominal(acc),
        headroom_bytes=headroom,
        spare_bytes=None if capacity is None else USABLE_FRACTION * capacity - total,
        host_bytes=memory.host,
        host_bytes_per_node=memory.host * node, node_devices=node,
        host_ram=host_ram,
        peer_link=link if pcie else None,
        offload_cost=_offload_cost(host, layout, model.trainable / spec.gpu_count, memory),
        zero3_gathered_bytes=memory.gathered,
        dequantized_bytes=memory.dequantized,
        params=model.total, trainable_params=model.trainable, lora_params=model.adapters,
        lora_rank=model.lora_rank, lora_targets=model.lora_targets,
        weights_bits=model.weights_bits, gpu_count=spec.gpu_count,
        zero=layout.zero, tp=layout.tp, pp=layout.pp, sp=layout.sp, ep=layout.ep,
        recompute=layout.recompute, micro_batch=layout.micro_batch, offload=layout.offload,
        offload_weights=layout.offload_weights,
        data_parallel=spec.gpu_count // (layout.tp * layout.pp),
        min_gpu_count=choice.min_gpu_count,
        stack=setup.stack,
        layout=choice,
        optimizer=opt,
        shape=model.shape,
        seq_len=setup.seq_len, flash_attention=setup.flash_attention,
        logits_bytes=memory.logits,
        logits_bytes_per_element=logits_bytes_per_element(model.shape, setup.stack),
        usable_fraction=USABLE_FRACTION, activations_in_flight=layout.pp,
        notes=notes,
        measured=measured,
    )


def _ecc_nominal(acc: Accelerator | None) -> float | None:
    """The nominal memory of a device whose ECC keeps part of it, bytes; else None."""
    if acc is None or not acc.memory_gib or acc.usable_memory_gib is None:
        return None
    return acc.memory_gib * GIB


def _setup(spec: OnDevices, optimizer_bytes: float, capacity: float | None,
           host: HostPlatform | None, ram: CpuRam | None, link: PeerLink, pcie: bool) -> Setup:
    """What stays fixed while the layout search varies the knobs; between two or more PCIe
    cards (``pcie``) with a host path, the host step optimizer offload would add, so that it
    competes on cost with the communication it saves."""
    step = None
    if pcie and host is not None:
        step = offload_cost(spec.model.trainable / spec.gpu_count, host).seconds_per_step
    return Setup(gpu_count=spec.gpu_count, seq_len=spec.resolved_seq_len,
                 optimizer_bytes=optimizer_bytes, stack=spec.resolved_stack,
                 flash_attention=spec.resolved_attention == "flash", capacity_bytes=capacity,
                 host_capacity_bytes=None if ram is None else ram.bytes_per_device,
                 host_ram_given=spec.host_ram_gib is not None, link=link,
                 offload_step_seconds=step,
                 gpu=None if spec.accelerator is None else spec.accelerator.key)


def _probed(setup: Setup, shape: ModelShape, probe: ProbeResult | None
            ) -> tuple[Setup, MeasuredMemoryUse | None]:
    """``setup`` with a probe's measured activations (as a factor on the formula's layers) and
    overhead; unchanged without one."""
    if probe is None:
        return setup, None
    formula, scale = probe_scale(shape, probe)
    measured = probe.memory.activation_bytes_per_token_per_layer
    applied = setup.stack == "hf"  # what the probe ran: transformers
    use = MeasuredMemoryUse(
        device=probe.device.name, measured_at=probe.measured_at.date().isoformat(),
        measured_bytes_per_token_per_layer=measured, formula_bytes_per_token_per_layer=formula,
        activation_scale=scale, applied=applied, overhead_bytes=probe.memory.overhead_bytes)
    return replace(setup, activation_scale=scale if applied else 1.0,
                   overhead_bytes=probe.memory.overhead_bytes,
                   states_bytes=probe.memory.model_states_bytes), use
