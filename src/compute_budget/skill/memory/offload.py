"""What CPU offload costs in time: the host work of one optimizer step, the weights streamed in
per micro-batch with weight offload, and how much of it the device's compute hides.

ZeRO-Offload (Ren et al. 2021, "ZeRO-Offload: Democratizing Billion-Scale Model Training",
Sec. 4) keeps the fp32 weights, the optimizer state and the optimizer step on the host. Each
optimizer step, for the Ψ trainable parameters a device owns (its share of the data-parallel
partition: trainable / devices):

- over the host link, the 16-bit gradients go down and the updated 16-bit weights come back:
  4·Ψ bytes (2 + 2);
- the CPU's Adam reads the fp32 weight, momentum and variance and the 16-bit gradient and writes
  the first three and the 16-bit weight: 28·Ψ bytes of host memory traffic (14 read, 14
  written), a memory-bound loop (Ren et al. 2021, Sec. 5.1: CPU-Adam vectorised with SIMD).

Bandwidths are the host platform's (:mod:`..hardware.host`) at an achieved fraction: the link at
35–85% of its theoretical rate (two devices often share one switch uplink; a dedicated x16 link
moves about 85% of its rate), host memory at 25–60%, 33% central (a roofline floor: a
multi-threaded streaming loop over two sockets rarely passes 60%; the central value is checked
against DeepSpeed's published ZeRO-Offload++ ratios in ``benchmarks/offload.py``). The
step's overlap sets how much of this work shows in the step time (:func:`offload_factor`):

- fast end: the gradient copies overlap the backward pass and the one-step delayed parameter
  update (Ren et al. 2021, Sec. 5.2) overlaps the CPU step with the next step's compute, so only
  work beyond the compute shows;
- central: the gradient copies overlap the backward pass; the CPU step and the weights' copy back
  wait for it (ZeRO-Offload's default schedule, Sec. 4.1);
- slow end: nothing overlaps, at the low ends of the bandwidths.

The optimizer step runs once per global batch, so gradient accumulation amortises it: the
larger the batch per device, the smaller the share.

Weight offload (ZeRO-Infinity's ``offload_param``, FSDP's parameter offload, Axolotl's layer
offloading; :mod:`.states`) streams each device's weight shard in over the host link for the
forward pass and again for the backward pass (recomputation reruns a layer's forward inside its
backward, while its weights are on the device): 2 × the shard's bytes every micro-batch, which
accumulation does not amortise. The copies are prefetched on their own stream a layer ahead, so
at the fast and central ends a micro-batch takes the longer of its compute and its copies; at the
slow end they add up. On one RTX 4090 a 70B model's 4-bit base streams about 80 GB per
micro-batch, 3-7 s over PCIe 4, against about half a minute of compute for 4,096 tokens; a short
sequence on a fast device is where the copies show. Answer.AI measured the hidden case (fsdp_qlora's
benchmarks_03_2024.md): QLoRA of Yi 34B on two RTX 4090 with full x16 PCIe 4 lanes ran 0.5%
faster with CPU offload at batch 4 than without it at batch 2, and reported offload "many times
slower" on a cloud machine with slower host memory: the two ends of the range. This is a model
of bytes moved, not a measurement: a run that depends on offload should measure its step time
before it commits.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..hardware.host import HostLink, HostPlatform

__all__ = ["LINK_BYTES_PER_PARAM", "OPTIMIZER_HOST_BYTES_PER_PARAM",
           "WEIGHT_COPIES_PER_MICRO_BATCH", "OffloadCost", "offload_cost", "offload_factor"]

LINK_BYTES_PER_PARAM = 4.0
"""16-bit gradients down and 16-bit weights up, bytes per offloaded parameter per step."""
GRADIENT_LINK_BYTES = 2.0
"""Of which the gradients (overlapped with the backward pass at the central and fast ends)."""
WEIGHT_COPIES_PER_MICRO_BATCH = 2
"""With weight offload: the shard comes in for the forward pass and again for the backward."""
OPTIMIZER_HOST_BYTES_PER_PARAM = 28.0
"""Host memory traffic of one Adam step per parameter (module docstring)."""
LINK_EFFICIENCY = (0.35, 0.6, 0.85)
"""Achieved share of the host link's theoretical rate: slow end, central, fast end."""
HOST_MEMORY_EFFICIENCY = (0.25, 0.33, 0.6)
"""Achieved share of the host memory bandwidth by the CPU optimizer step. The central value
puts full offload's small-batch slowdown at DeepSpeed's reported ZeRO-Offload++ ratios (×3 for
OPT-13B on a DGX-A100-40GB, ×6 for OPT-30B on a DGX-H100: ``benchmarks/offload.py``); 0.4
fell short of both. Two cases from one source, fitted in-sample: a range, not a measurement."""
Range = tuple[float, float]


class OffloadCost(BaseModel):
    """The host work of one optimizer step, per device."""

    model_config = ConfigDict(frozen=True)

    params_per_device: float = Field(description="Trainable parameters whose gradients and "
                                                 "optimizer state one device offloads.")
    link: HostLink = Field(description="Device-to-host link.")
    link_gbs: float = Field(description="Host link bandwidth, one direction, theoretical, GB/s.")
    host_memory_gbs: float = Field(description="Host memory bandwidth per device, GB/s.")
    host_memory_origin: str = Field(description="default or user (see HostPlatform).")
    host_platform: str | None = Field(
        default=None, description="With the default bandwidth: the server it is taken from.")
    link_bytes: float = Field(description="Bytes over the host link per step per device.")
    cpu_bytes: float = Field(description="Host memory traffic of the CPU optimizer step, bytes.")
    seconds_per_step: float = Field(
        description="Host work per optimizer step that waits for nothing else, seconds: the CPU "
                    "step and the weights' copy back, at the central bandwidths.")
    seconds_per_step_range: Range = Field(
        description="[fast end, slow end] of all the host work per step, seconds (module "
                    "docstring).")
    streamed_bytes: float = Field(
        default=0.0, exclude_if=lambda v: not v,
        description="With weight offload: bytes of weights each device copies in from CPU "
                    "memory per micro-batch (its shard, forward and backward); left out "
                    "without weight offload.")
    streamed_seconds_range: Range = Field(
        default=(0.0, 0.0), exclude_if=lambda v: not any(v),
        description="[fast end, slow end] of the time those copies take per micro-batch, "
                    "seconds (the central at the central link efficiency is between).")


def _seconds(nbytes: float, gbs: float, efficiency: float) -> float:
    return nbytes / (gbs * 1e9 * efficiency)


def offload_cost(params_per_device: float, platform: HostPlatform,
                 weight_shard_bytes: float = 0.0) -> OffloadCost:
    """The host work of one optimizer step for ``params_per_device`` offloaded parameters, and
    with weight offload the copies of each device's ``weight_shard_bytes`` per micro-batch."""
    streamed_bytes = WEIGHT_COPIES_PER_MICRO_BATCH * weight_shard_bytes
    link_bytes = LINK_BYTES_PER_PARAM * params_per_device
    cpu_bytes = OPTIMIZER_HOST_BYTES_PER_PARAM * params_per_device
    slow, central, fast = 0, 1, 2

    def work(end: int, link_share: float) -> float:
        return (_seconds(cpu_bytes, platform.memory_gbs, HOST_MEMORY_EFFICIENCY[end])
                + _seconds(link_bytes * link_share, platform.link_gbs, LINK_EFFICIENCY[end]))

    weights_share = 1 - GRADIENT_LINK_BYTES / LINK_BYTES_PER_PARAM
    return OffloadCost(
        params_per_device=params_per_device, link=platform.link, link_gbs=platform.link_gbs,
        host_memory_gbs=platform.memory_gbs, host_memory_origin=platform.memory_origin,
        host_platform=platform.platform,
        link_bytes=link_bytes, cpu_bytes=cpu_bytes,
        seconds_per_step=work(central, weights_share),
        seconds_per_step_range=(work(fast, 1.0), work(slow, 1.0)),
        streamed_bytes=streamed_bytes,
        streamed_seconds_range=(_seconds(streamed_bytes, platform.link_gbs, LINK_EFFICIENCY[fast]),
                                _seconds(streamed_bytes, platform.link_gbs,
                                         LINK_EFFICIENCY[slow])))


def offload_factor(cost: OffloadCost, compute_seconds: float,
                   micro_batches: float = 1.0) -> tuple[float, Range]:
    """The step time with offload over the step time without, given the device's compute time
    per optimizer step and the micro-batches each device runs in it: the central factor and its
    [fast, slow] range (module docstring)."""
    fast, slow = cost.seconds_per_step_range
    each = compute_seconds / micro_batches
    central_copy = _seconds(cost.streamed_bytes, cost.link_gbs, LINK_EFFICIENCY[1])
    fast_copy, slow_copy = cost.streamed_seconds_range
    streamed = micro_batches * max(each, central_copy)  # prefetched: the longer of the two
    central = (streamed + cost.seconds_per_step) / compute_seconds
    low = max(micro_batches * max(each, fast_copy), fast) / compute_seconds
    high = (compute_seconds + micro_batches * slow_copy + slow) / compute_seconds
    return central, (low, max(high, central))
