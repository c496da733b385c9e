"""On a Linux CPU, keep freed memory in the process while the probe runs, as a GPU's caching
allocator does.

glibc's malloc gives large blocks back to the kernel when they are freed (``munmap``, or a
trim of the heap's top) and takes them again at the next step, so every step pays a page fault
per 4 KiB of each large tensor: in a virtual machine that doubled the step time of a 1B model
and measured the kernel, not the model. CUDA's caching allocator keeps its blocks, and so do
the allocators CPU training uses (jemalloc, tcmalloc). :func:`kept_freed_memory` sets
``M_MMAP_MAX`` to 0 (large blocks come from the heap) and ``M_TRIM_THRESHOLD`` to −1, which
glibc stores as the largest size (the heap is never trimmed; ``INT_MAX``, 2 GiB, still let a
1B model's step give back its activations), with ``mallopt``, and on exit restores glibc's
defaults and trims.
Elsewhere (another libc, another device) it does nothing.
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["kept_freed_memory"]

M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
DEFAULT_TRIM_THRESHOLD = 128 * 1024
DEFAULT_MMAP_MAX = 65536
NEVER = -1
"""``mallopt`` takes an int and glibc keeps the threshold as a ``size_t``: −1 is SIZE_MAX."""


def _glibc() -> Any:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


@contextmanager
def kept_freed_memory(device_type: str) -> Iterator[None]:
    """While the block runs on a glibc CPU, freed memory stays in the process (see the
    module)."""
    libc = _glibc() if device_type == "cpu" else None
    if libc is None:
        yield
        return
    libc.mallopt(M_MMAP_MAX, 0)
    libc.mallopt(M_TRIM_THRESHOLD, NEVER)
    try:
        yield
    finally:
        libc.mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
        libc.mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_THRESHOLD)
        libc.malloc_trim(0)
