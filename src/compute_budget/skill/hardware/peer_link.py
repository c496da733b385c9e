"""How a device reaches the other devices of its node: what tensor parallelism and ZeRO-3 move
their bytes over.

The layout costs (:mod:`..memory.costs`) are written in FLOPs per byte of peer bandwidth, R =
the FLOP/s a device achieves in a training step over the NCCL all-reduce bus bandwidth
(``busbw`` of nccl-tests' ``all_reduce_perf``, which all-gathers and reduce-scatters reach too)
between the devices of a node:

- **scale-up fabric** (NVLink with NVSwitch on SXM boards and Grace superchips, AMD's Infinity
  Fabric on MI-series OAM modules, TPU ICI, Trainium's NeuronLink, Gaudi's on-chip RoCE): R =
  600, an A100 at 125 TFLOP/s achieved (0.4 of its 312 TFLOP/s peak) over the 230 GB/s of
  all-reduce bus bandwidth eight A100 SXM reach (232.54 GB/s, github.com/NVIDIA/nccl-tests
  issue 175). Faster devices carry faster links (eight H100 SXM about 480 GB/s with NVLink
  SHARP, nccl-tests issue 212: R ≈ 820), so the A100's R serves every fabric.
- **PCIe only** (L4, T4, A10, A10G, L40S, the PCIe A100 and H100 parts, GeForce and RTX
  workstation cards): the devices reach each other over PCIe, through the CPU's root complex or
  a PCIe switch, at a bus bandwidth measured in nccl-tests (:data:`PCIE_BUS_GBS`). R = 0.4 of
  the device's dense BF16 peak over it: an RTX 4090 at 66 TFLOP/s over 18 GB/s is R ≈ 3,700,
  six times an A100's, so tensor parallelism and ZeRO-3 cost six times as much there. An
  NVLink bridge joins some of these cards in pairs (RTX 3090, A5000, A6000, A100 PCIe, H100
  PCIe and NVL): tensor parallelism of 2 over a bridge runs at fabric speed; the bridge is not
  assumed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .catalog import Accelerator

__all__ = ["FABRIC", "FABRIC_FLOPS_PER_BYTE", "PCIE_BUS_GBS", "PeerLink", "device_peer_link",
           "peer_link"]

FABRIC_FLOPS_PER_BYTE = 600.0
"""R on a scale-up fabric: an A100 at 125 TFLOP/s over ~230 GB/s of NVLink all-reduce bus
bandwidth (module docstring)."""
ACHIEVED_SHARE = 125.0 / 312.0
"""The share of its dense peak a device achieves in a step: the A100 anchor of R's fabric value."""
_FABRIC_BUS_GBS = 230.0
READ = "2026-12-07"
"""When the bandwidth figures below were read from their sources."""

PcieKind = Literal["pcie3", "pcie4", "pcie5", "pcie4-host", "pcie5-host"]
PCIE_BUS_GBS: dict[PcieKind, tuple[float, str]] = {
    "pcie3": (11.0, "PCIe Gen3: Gen4's figure halved with the link rate; no measurement found"),
    "pcie4": (22.0, "4 x RTX 4090 on PCIe Gen4 with peer-to-peer on, "
                    "github.com/NVIDIA/nccl/issues/1603"),
    "pcie5": (37.6, "8 x RTX PRO 6000 Blackwell on PCIe Gen5, two sockets, peer-to-peer on, "
                    "github.com/voipmonitor/rtx6kpro, hardware/pcie-bandwidth.md"),
    "pcie4-host": (18.0, "4 x RTX 4090 on PCIe Gen4 through host memory, "
                         "github.com/NVIDIA/nccl/issues/1603"),
    "pcie5-host": (28.0, "8 x RTX 5090 on PCIe Gen5, github.com/NVIDIA/nccl/issues/1639"),
}
"""NCCL all-reduce bus bandwidth between the devices of one PCIe node, GB/s (nccl-tests'
``all_reduce_perf`` at its largest sizes), with its source. ``-host``: GeForce cards, whose
driver turns peer-to-peer transfers off, so every byte goes through host memory. Four-device
figures where no eight-device one was found: eight devices on one root complex get less, so
these err fast."""
_PCIE: dict[PcieKind, tuple[str, ...]] = {
    "pcie3": ("t4",),
    "pcie4": ("a10g", "a10", "l4", "l40s", "a100-pcie", "rtx-a5000", "rtx-a6000",
              "rtx-6000-ada"),
    "pcie5": ("h100-pcie", "h100-nvl"),
    "pcie4-host": ("rtx-3090", "rtx-4090"),
    "pcie5-host": ("rtx-5090",),
}
"""PCIe-only devices by the bus their peers share."""
_BRIDGED = ("rtx-3090", "rtx-a5000", "rtx-a6000", "a100-pcie", "h100-pcie", "h100-nvl")
"""PCIe cards an NVLink bridge can join in pairs (module docstring)."""


class PeerLink(BaseModel):
    """The link between the devices of a node, and R, the FLOPs per byte of it."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["fabric", "pcie"] = Field(
        description="fabric: NVLink/NVSwitch or another scale-up fabric; pcie: PCIe only.")
    bus_gbs: float = Field(description="NCCL all-reduce bus bandwidth per device, GB/s.")
    flops_per_byte: float = Field(
        description="R: the FLOP/s a device achieves in a step over bus_gbs (module docstring).")
    source: str = Field(description="Where bus_gbs comes from.")
    as_of: str = Field(default=READ, description="When that source was read.")
    nvlink_bridge: bool = Field(
        default=False, description="Whether an NVLink bridge can join these cards in pairs "
                                   "(not assumed: tensor parallelism of 2 over one is faster).")


FABRIC = PeerLink(kind="fabric", bus_gbs=_FABRIC_BUS_GBS, flops_per_byte=FABRIC_FLOPS_PER_BYTE,
                  source="8 x A100 SXM, github.com/NVIDIA/nccl-tests/issues/175")
"""NVLink's (or another scale-up fabric's) link: the A100 anchor."""


def peer_link(key: str | None, peak_tflops: float | None) -> PeerLink:
    """The peer link of accelerator ``key`` (dense BF16 or FP16 peak ``peak_tflops``): a
    scale-up fabric unless the device is PCIe only. An unknown peak (the A10G's) takes the A100
    anchor's 312 TFLOP/s, more than an A10-class card reaches, so its R errs high."""
    kind = next((k for k, keys in _PCIE.items() if key in keys), None)
    if kind is None:
        return FABRIC
    bus, source = PCIE_BUS_GBS[kind]
    achieved = ACHIEVED_SHARE * (312.0 if peak_tflops is None else peak_tflops) * 1e12
    return PeerLink(kind="pcie", bus_gbs=bus, flops_per_byte=achieved / (bus * 1e9),
                    source=source, nvlink_bridge=key in _BRIDGED)


def device_peer_link(acc: Accelerator | None) -> PeerLink:
    """:func:`peer_link` of a catalog device (its BF16 peak, else FP16); NVLink's when none is
    named."""
    if acc is None:
        return peer_link(None, None)
    return peer_link(acc.key, acc.peak_tflops.get("bf16") or acc.peak_tflops.get("fp16"))
