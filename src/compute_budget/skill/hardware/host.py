"""The host side of a device: the link to CPU memory and the CPU memory bandwidth behind it.

Optimizer offload (ZeRO-Offload, Ren et al. 2021) moves gradients and updated weights over the
device's host link every optimizer step and runs the optimizer on the host CPU, whose speed is
set by the host's memory bandwidth. Neither is a figure of the accelerator's datasheet, so they
are kept here, per accelerator key, with the platform each generation usually ships in:

- **host link**, one direction, theoretical: PCIe x16 at 15.75 GB/s (Gen3), 31.5 GB/s (Gen4),
  63 GB/s (Gen5) (PCI-SIG base specifications 3.0/4.0/5.0: 8/16/32 GT/s per lane, 128b/130b);
  NVLink-C2C at 450 GB/s (900 GB/s both ways; NVIDIA GH200 and GB200 datasheets).
- **host memory bandwidth**, theoretical, shared by the devices of a host: two sockets of
  6-channel DDR4-2666 for PCIe Gen3 servers (2 × 128 GB/s, e.g. DGX-2's Xeon Platinum 8168);
  two AMD EPYC 7742 with 8-channel DDR4-3200 for PCIe Gen4 (2 × 204.8 GB/s; NVIDIA DGX A100
  user guide); two Xeon Platinum 8480C with 8-channel DDR5-4800 for PCIe Gen5 (2 × 307.2 GB/s;
  NVIDIA DGX H100 user guide); one Grace CPU's LPDDR5X, up to 500 GB/s, per Grace (NVIDIA Grace
  CPU datasheet), shared by one GPU in GH200 and two in GB200. Eight devices per PCIe server.
  GeForce and RTX workstation cards (RTX 3090, 4090, 5090, A5000, A6000, 6000 Ada) usually sit
  in a desktop instead: one CPU with two channels of DDR5-5600 (2 × 44.8 GB/s: 5,600 MT/s × 8
  bytes, JEDEC DDR5), shared by two cards.

- **host memory capacity** (CPU RAM) per device, what offload's CPU-resident states must fit
  in: the same servers' system memory over their GPUs: DGX-2 1.5 TiB for 16 V100 (96 GiB each;
  NVIDIA DGX-2 datasheet), DGX A100 1 TiB for 8 A100 40GB (128 GiB; the 320 GB model) and
  2 TiB for 8 A100 80GB (256 GiB; the 640 GB model; DGX A100 user guide), DGX H100 2 TiB for
  8 (256 GiB; DGX H100 user guide); GH200's Grace up to 480 GB of LPDDR5X for one GPU,
  GB200's for two (240 GB each; GH200 and GB200 datasheets); a desktop's two DIMMs of 48 GiB,
  one per channel (the configuration that runs at DDR5-5600), for two cards (48 GiB each).
  Cloud machines often give less per device. Where the catalog prices a device in a cloud
  machine whose RAM it lists (AWS's g4dn, g5 and g6 instances for the T4, A10G and L4: 16 GiB
  in the one-GPU ``xlarge``, 192 GiB in the 4-GPU ``12xlarge``, 384 or 768 GiB in the 8-GPU
  ones; Lambda's and DigitalOcean's instances; :mod:`.prices`), that machine's RAM over the
  devices used is the default, so that a run is not priced on one machine and fitted on
  another. RunPod's pods list 41 GB per RTX 4090 and 125 GB per H100 SXM
  (github.com/Malaeu/nanoGPT-RH, docs/runpod_specs.md, 2026-01-01), not kept here. The reply
  says where the default comes from, and a user who knows theirs gives it.

Devices that train without a CUDA-style host offload path (TPUs, Trainium, Gaudi) have no host
platform here: offload's host step is not estimated for them. Their hosts' CPU RAM is still what
offload must fit in (:func:`cpu_ram`), where a public source gives it: Google's TPU pages list
the RAM of a TPU VM, 48 GB a v5e chip (cloud.google.com/tpu/docs/v5e, VM types: 48, 192 and
384 GB for the 1-, 4- and 8-chip ct5lp-hightpu VMs; the host's 512 GiB of DRAM is not all the
VM's), 1536 GiB for 8 v6e chips (/tpu/docs/v6e: "DRAM
per host 1536 GiB", "Chips per host 8") and 448 GB of RAM for 4 v5p chips, half of it usable
with NUMA binding (/tpu/docs/v5p-training, "VM, host and slice properties", read in its zh-CN
version); Trainium2 is priced in AWS's trn2.48xlarge, whose RAM the catalog lists. No figure
was found for TPU v3, v4 and TPU7x or for Gaudi: their hosts' RAM is unknown, and offload on
them is not checked against it. A user who knows their host gives its RAM and bandwidth.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["HOST_LINK_GBS", "CpuRam", "HostLink", "HostPlatform", "cpu_ram", "host_platform"]

HostLink = Literal["pcie3", "pcie4", "pcie5", "nvlink-c2c"]
"""The link between a device and its host's memory."""

HOST_LINK_GBS: dict[HostLink, float] = {
    "pcie3": 15.75, "pcie4": 31.5, "pcie5": 63.0, "nvlink-c2c": 450.0}
"""One direction, theoretical, GB/s (module docstring)."""

_HOST_MEMORY_GBS: dict[HostLink, tuple[float, int]] = {
    "pcie3": (256.0, 8), "pcie4": (409.6, 8), "pcie5": (614.4, 8), "nvlink-c2c": (500.0, 1)}
"""Host memory bandwidth (GB/s, theoretical) and the devices sharing it, by platform."""
_PLATFORM: dict[HostLink, str] = {
    "pcie3": "2 Xeon sockets, 6 channels of DDR4-2666 each (DGX-2 class)",
    "pcie4": "DGX A100: 2 × EPYC 7742, 8 channels of DDR4-3200 each",
    "pcie5": "DGX H100: 2 × Xeon Platinum 8480C, 8 channels of DDR5-4800 each",
    "nvlink-c2c": "one Grace CPU's LPDDR5X (NVIDIA Grace datasheet)",
}
"""The server each default host bandwidth is taken from (module docstring)."""

_LINKS: dict[HostLink, tuple[str, ...]] = {
    "pcie3": ("v100", "t4"),
    "pcie4": ("a100-40gb", "a100-80gb", "a100-pcie", "a800", "a10g", "a10", "l4", "l40s",
              "mi250", "mi250-gcd", "mi250x", "mi250x-gcd", "rtx-4090", "rtx-3090", "rtx-a5000",
              "rtx-a6000", "rtx-6000-ada"),
    "pcie5": ("h100-sxm", "h100-pcie", "h100-nvl", "h800", "h20", "h200", "b200", "b300",
              "mi300x", "mi325x", "mi350x", "mi355x", "rtx-5090"),
    "nvlink-c2c": ("gh200", "gb200", "gb300"),
}
GIB = 2**30
_RAM_GIB: dict[HostLink, tuple[float, str]] = {
    "pcie3": (96.0, "DGX-2: 1.5 TiB for 16 GPUs"),
    "pcie4": (128.0, "DGX A100: 1 TiB for 8 GPUs"),
    "pcie5": (256.0, "DGX H100: 2 TiB for 8 GPUs"),
    "nvlink-c2c": (480e9 / GIB, "GH200: 480 GB of LPDDR5X per Grace CPU"),
}
"""CPU RAM per device, GiB, and the system it is taken from (module docstring)."""
_RAM_BY_KEY: dict[str, tuple[float, str]] = {
    key: (256.0, "DGX A100 640GB: 2 TiB for 8 GPUs") for key in ("a100-80gb", "a800")}
"""80 GB A100s: the DGX A100 that carries them has twice the 40 GB model's RAM."""
_SHARED_GRACE_RAM = (240e9 / GIB, "GB200: 480 GB of LPDDR5X per Grace CPU, for 2 GPUs")
_DESKTOP_RAM = (48.0, "a desktop's 2 × 48 GiB DIMMs, shared by 2 cards")
_OWN_HOST = ("v100", "a100-40gb", "a100-80gb", "h100-sxm", "h200", "gh200", "gb200", "gb300",
             "rtx-3090", "rtx-4090", "rtx-5090", "rtx-a5000", "rtx-a6000", "rtx-6000-ada")
"""Devices the default RAM's system carries (the DGX of their generation, a desktop); others
borrow it, and the RAM's source says so."""
_HOST_RAM_WITHOUT_LINK: dict[str, tuple[float, int, str]] = {
    "tpu-v5e": (384e9 / GIB, 8, "a TPU v5e VM: 384 GB of RAM for 8 chips, 48 GB a chip in the "
                                "1- and 4-chip VMs too (cloud.google.com/tpu/docs/v5e)"),
    "tpu-v5p": (448e9 / GIB, 4, "a TPU v5p host: 448 GB of RAM for 4 chips, half of it with NUMA "
                                "binding (cloud.google.com/tpu/docs/v5p-training)"),
    "tpu-v6e": (1536.0, 8, "a TPU v6e host: 1536 GiB of DRAM for 8 chips "
                           "(cloud.google.com/tpu/docs/v6e)"),
}
"""Devices without a host offload path whose host's RAM is sourced: GiB per host, the chips
sharing it and the source (module docstring)."""
_LINK_NAMES = {"pcie3": "PCIe Gen3", "pcie4": "PCIe Gen4", "pcie5": "PCIe Gen5"}
_SHARED_GRACE = ("gb200", "gb300")
"""Grace–Blackwell: two GPUs per Grace CPU."""
_DESKTOP = ("rtx-3090", "rtx-4090", "rtx-5090", "rtx-a5000", "rtx-a6000", "rtx-6000-ada")
"""Cards that usually sit in a desktop (module docstring)."""
_DESKTOP_MEMORY_GBS = (89.6, 2)
_DESKTOP_PLATFORM = "a desktop: one CPU, 2 channels of DDR5-5600"


class HostPlatform(BaseModel):
    """A device's host link and the host memory bandwidth one device can count on."""

    model_config = ConfigDict(frozen=True)

    link: HostLink = Field(description="Device-to-host link (module docstring).")
    link_gbs: float = Field(description="Host link bandwidth, one direction, theoretical, GB/s.")
    memory_gbs: float = Field(
        description="Host memory bandwidth per device, theoretical, GB/s: the host's shared by "
                    "the devices on it.")
    devices_per_host: int = Field(description="Devices sharing one host's memory bandwidth.")
    memory_origin: Literal["default", "user"] = Field(
        description="default: the platform usual for this device's generation; user: given.")
    platform: str | None = Field(
        description="With the default: the server it is taken from; None when given.")
    ram_bytes: float = Field(description="CPU RAM per device, bytes: the host's over its devices.")
    ram_origin: Literal["default", "instance", "user"] = Field(
        description="default: the platform usual for this device's generation; instance: the "
                    "cloud machine the catalog prices the run in; user: given.")
    ram_source: str | None = Field(
        description="With the default: the system it is taken from; None when given.")


def host_platform(key: str, memory_gbs: float | None = None, ram_gib: float | None = None,
                  instance_ram: tuple[float, str] | None = None) -> HostPlatform | None:
    """The host platform of accelerator ``key``; ``memory_gbs`` (host memory bandwidth per
    device, GB/s) and ``ram_gib`` (CPU RAM per device, GiB) replace the defaults;
    ``instance_ram`` (GiB per device and the machine) is the RAM of the cloud machine the
    catalog prices the run in, which replaces the platform's default RAM. None for devices
    without a host offload path."""
    link = next((lk for lk, keys in _LINKS.items() if key in keys), None)
    if link is None:
        return None
    node_gbs, devices = _DESKTOP_MEMORY_GBS if key in _DESKTOP else _HOST_MEMORY_GBS[link]
    if key in _SHARED_GRACE:
        devices = 2
    per_device = node_gbs / devices
    platform = _DESKTOP_PLATFORM if key in _DESKTOP else _PLATFORM[link]
    ram, source = (_DESKTOP_RAM if key in _DESKTOP else _SHARED_GRACE_RAM if key in _SHARED_GRACE
                   else _RAM_BY_KEY.get(key, _RAM_GIB[link]))
    if key not in _OWN_HOST and link in _LINK_NAMES:
        source = f"{source}, taken for every {_LINK_NAMES[link]} device"  # L40S: no DGX of its own
    ram, source = instance_ram or (ram, source)
    return HostPlatform(
        link=link, link_gbs=HOST_LINK_GBS[link], devices_per_host=devices,
        memory_gbs=per_device if memory_gbs is None else memory_gbs,
        memory_origin="default" if memory_gbs is None else "user",
        platform=platform if memory_gbs is None else None,
        ram_bytes=(ram if ram_gib is None else ram_gib) * GIB,
        ram_origin="user" if ram_gib is not None else "instance" if instance_ram else "default",
        ram_source=source if ram_gib is None else None)


class CpuRam(NamedTuple):
    """The CPU RAM per device that offload's states must fit in, and where the figure comes
    from."""

    bytes_per_device: float
    origin: Literal["default", "instance", "user"]
    source: str | None
    """With the default or the instance: the system it is taken from; None when given."""
    devices_per_host: int | None
    """Devices sharing that host; None when not known here (the priced machine's then)."""


def cpu_ram(key: str, ram_gib: float | None = None,
            instance_ram: tuple[float, str] | None = None) -> CpuRam | None:
    """The CPU RAM per device of accelerator ``key``'s host: ``ram_gib`` (the user's) when
    given, else the priced machine's (``instance_ram``), else the usual host's; None when none
    is known (a device without a host offload path and no sourced host: module docstring)."""
    platform = host_platform(key, ram_gib=ram_gib, instance_ram=instance_ram)
    if platform is not None:
        return CpuRam(platform.ram_bytes, platform.ram_origin, platform.ram_source,
                      platform.devices_per_host)
    if ram_gib is not None:
        return CpuRam(ram_gib * GIB, "user", None, None)
    if instance_ram is not None:
        return CpuRam(instance_ram[0] * GIB, "instance", instance_ram[1], None)
    known = _HOST_RAM_WITHOUT_LINK.get(key)
    if known is None:
        return None
    host_gib, chips, source = known
    return CpuRam(host_gib / chips * GIB, "default", source, chips)
