"""The device the probe runs on: which one, its name and memory, and its catalog entry."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any

from ..skill.hardware.catalog import Accelerator, list_accelerators
from ..skill.hardware.measured import ProbeDevice
from .backend import load
from .errors import ProbeError

__all__ = ["available_bytes", "describe_device", "match_accelerator", "resolve_device"]

TORCH_VENDORS = frozenset({"NVIDIA", "AMD"})
"""Catalog vendors whose devices torch drives as ``cuda`` (CUDA or ROCm)."""
MEMORY_TOLERANCE = 0.2
"""A catalog entry whose memory is this far (relatively) from the device's is a worse match."""


def resolve_device(device: str | None) -> Any:
    """``device`` as a torch device; None picks CUDA (or ROCm), then MPS, then the CPU."""
    torch = load("torch")
    if device is None:
        if torch.cuda.is_available():
            return torch.device("cuda", torch.cuda.current_device())
        mps = getattr(torch.backends, "mps", None)
        return torch.device("mps" if mps is not None and mps.is_available() else "cpu")
    try:
        chosen = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise ProbeError(f"device {device!r} is not a torch device (e.g. 'cuda', 'cuda:1', "
                         "'mps', 'cpu')") from None
    usable = {"cpu": lambda: True, "cuda": torch.cuda.is_available,
              "mps": torch.backends.mps.is_available}
    if chosen.type not in usable or not usable[chosen.type]():
        raise ProbeError(f"device {device!r} is not available to torch here (the probe runs on "
                         "cuda, mps or cpu)")
    if chosen.type == "cuda" and chosen.index is None:
        chosen = torch.device("cuda", torch.cuda.current_device())
    return chosen


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def match_accelerator(name: str, memory_bytes: int | None) -> Accelerator | None:
    """The catalog entry a torch device name names, or None.

    Every key, name and alias of an NVIDIA or AMD entry whose words all appear among the
    name's words matches ("NVIDIA H100 80GB HBM3" has ``h100`` and ``h100-80gb``); the entry
    whose memory is within :data:`MEMORY_TOLERANCE` of the device's wins, then the one matched
    by more words, then the closest memory (an A100-SXM4-40GB is the 40 GB entry)."""
    words = set(re.findall(r"[a-z0-9]+", name.lower()))
    best: tuple[tuple[bool, int, float], Accelerator] | None = None
    for acc in list_accelerators():
        if acc.vendor not in TORCH_VENDORS:
            continue
        matched = [len(label_words) for label in (acc.key, acc.name, *acc.aliases)
                   if (label_words := set(re.findall(r"[a-z0-9]+", label.lower())))
                   and label_words <= words]
        if not matched:
            continue
        distance = 0.0
        if memory_bytes is not None and acc.memory_bytes:
            distance = abs(acc.memory_bytes - memory_bytes) / acc.memory_bytes
        score = (distance <= MEMORY_TOLERANCE, max(matched), -distance)
        if best is None or score > best[0]:
            best = (score, acc)
    return None if best is None else best[1]


def describe_device(device: Any) -> tuple[ProbeDevice, Accelerator | None]:
    """What the probe result says of ``device``, and its catalog entry (None if unknown)."""
    torch = load("torch")
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        name = str(torch.cuda.get_device_name(device))
        memory: int | None = int(props.total_memory)
        kind = "rocm" if getattr(torch.version, "hip", None) else "cuda"
        acc = match_accelerator(name, memory)
    elif device.type == "mps":
        name = f"Apple {platform.machine()} (MPS)"
        recommended = getattr(torch.mps, "recommended_max_memory", None)
        memory = int(recommended()) if recommended is not None else None
        kind, acc = "mps", None
    else:
        name, memory, kind, acc = _cpu_name(), None, "cpu", None
    return ProbeDevice(kind=kind, name=name[:200], accelerator=None if acc is None else acc.key,
                       memory_bytes=memory or None), acc


def available_bytes(device: Any) -> int | None:
    """Bytes the probe could still allocate on ``device`` now, or None when unknown."""
    if device.type == "cuda":
        free, _total = load("torch").cuda.mem_get_info(device)
        return int(free)
    if device.type == "cpu":
        try:
            for line in Path("/proc/meminfo").read_text().splitlines():
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        try:
            return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    return None
