"""Peak memory of one training step, by phase (forward, backward, optimizer step).

Two meters with one interface (:class:`Meter`): ``start()`` before the step, ``phase(name)``
around each phase, ``live()`` for the bytes held now, ``weight_copy_bytes()`` for the
low-precision copies of the weights alive now.

- :class:`TensorMeter` (CPU and MPS, which keep no peak): a ``TorchDispatchMode`` that sees
  every tensor an operator returns and counts the live storages, each once (keyed by
  ``untyped_storage().data_ptr()``, at ``nbytes()``), until a weak reference says the storage
  is gone. The tensors that exist before the step (weights, buffers, gradients, optimizer
  states) are registered at ``start()``. Workspaces an operator allocates and frees inside
  itself are not seen: the tensor peak is a lower bound of the process's.
- :class:`AllocatorMeter` (CUDA and ROCm): the caching allocator's own figures. A phase's peak
  is ``max_memory_allocated`` after ``reset_peak_memory_stats`` at its start; the allocator's
  reserve (:meth:`Meter.reserve`) is what it held beyond the step's highest peak
  (``max_memory_reserved`` − that peak, its cache emptied before the step): fragmentation and
  the blocks it keeps, which the device must hold too. A tensor meter runs beside it for the
  weight copies only.

Weight copies: under bf16 autocast every matrix multiply casts its fp32 weight to bf16 (an
``aten._to_copy`` of a parameter), and the copy is kept for the backward pass. It is autocast's
work copy of the parameters, the same size at any batch and context, so the probe counts it as
framework overhead, not as activations (which grow with the tokens).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from .backend import load

__all__ = ["AllocatorMeter", "Meter", "TensorMeter", "meter_for", "state_tensors",
           "storage_bytes"]

torch: Any = load("torch")
_dispatch: Any = load("torch.utils._python_dispatch")
_pytree: Any = load("torch.utils._pytree")
_TO_COPY = torch.ops.aten._to_copy.default


def state_tensors(model: Any, optimizer: Any) -> Iterator[Any]:
    """The model states: weights, buffers, gradients and the optimizer's state tensors."""
    yield from model.parameters()
    yield from model.buffers()
    yield from (p.grad for p in model.parameters() if p.grad is not None)
    for state in optimizer.state.values():
        yield from (v for v in state.values() if isinstance(v, torch.Tensor))


def storage_bytes(tensors: Iterable[Any]) -> int:
    """Bytes of the distinct storages behind ``tensors`` (a view counts once)."""
    seen: dict[int, int] = {}
    for tensor in tensors:
        storage = tensor.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    seen.pop(0, None)
    return sum(seen.values())


class Meter:
    """Bytes live now, and the peak of each phase of a step."""

    method = "tensor_tracking"

    def __init__(self) -> None:
        self.peaks: dict[str, int] = {}

    def start(self, existing: Iterable[Any], weights: Iterable[Any]) -> None:
        """Begin counting; ``existing`` are the tensors alive before the step, ``weights``
        the parameters whose copies :meth:`weight_copy_bytes` counts."""
        raise NotImplementedError

    def stop(self) -> None:
        """End counting."""

    def live(self) -> int:
        raise NotImplementedError

    def weight_copy_bytes(self) -> int:
        raise NotImplementedError

    def reserve(self) -> int:
        """Bytes the allocator held beyond the step's highest peak (0: none seen)."""
        return 0

    def _begin_phase(self) -> None:
        raise NotImplementedError

    def _phase_peak(self) -> int:
        raise NotImplementedError

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Record the peak bytes while the block runs as ``peaks[name]``."""
        self._begin_phase()
        yield
        self.peaks[name] = self._phase_peak()


class TensorMeter(Meter):
    """Live tensor storages counted through a ``TorchDispatchMode`` (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._live: dict[int, tuple[int, Any]] = {}
        self._weights: set[int] = set()
        self._copies: set[int] = set()
        self._current = 0
        self._peak = 0
        self._mode: Any = None

    def _add(self, tensor: Any, copy: bool = False) -> None:
        if not isinstance(tensor, torch.Tensor) or tensor.device.type == "meta":
            return
        storage = tensor.untyped_storage()
        ptr = storage.data_ptr()
        if ptr == 0 or ptr in self._live:
            return
        nbytes = storage.nbytes()
        ref = weakref.ref(storage, partial(self._free, ptr))
        self._live[ptr] = (nbytes, ref)
        if copy:
            self._copies.add(ptr)
        self._current += nbytes
        self._peak = max(self._peak, self._current)

    def _free(self, ptr: int, ref: Any) -> None:
        entry = self._live.get(ptr)
        if entry is not None and entry[1] is ref:
            del self._live[ptr]
            self._copies.discard(ptr)
            self._current -= entry[0]

    def _is_weight(self, value: Any) -> bool:
        return (isinstance(value, torch.Tensor)
                and value.untyped_storage().data_ptr() in self._weights)

    def start(self, existing: Iterable[Any], weights: Iterable[Any]) -> None:
        for tensor in existing:
            self._add(tensor)
        self._weights = {w.untyped_storage().data_ptr() for w in weights}
        meter = self

        class Mode(_dispatch.TorchDispatchMode):  # type: ignore[misc]
            def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                out = func(*args, **(kwargs or {}))
                copy = func is _TO_COPY and bool(args) and meter._is_weight(args[0])
                for leaf in _pytree.tree_leaves(out):
                    meter._add(leaf, copy)
                return out

        self._mode = Mode()
        self._mode.__enter__()

    def stop(self) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None

    def live(self) -> int:
        return self._current

    def weight_copy_bytes(self) -> int:
        return sum(self._live[p][0] for p in self._copies if p in self._live)

    def _begin_phase(self) -> None:
        self._peak = self._current

    def _phase_peak(self) -> int:
        return self._peak


class AllocatorMeter(Meter):
    """The CUDA (or ROCm) caching allocator's figures for one device."""

    method = "allocator"

    def __init__(self, device: Any) -> None:
        super().__init__()
        self.device = device
        self._reserved = 0
        self._tensors = TensorMeter()

    def start(self, existing: Iterable[Any], weights: Iterable[Any]) -> None:
        torch.cuda.synchronize(self.device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(self.device)
        self._reserved = 0
        self._tensors.start(existing, weights)

    def stop(self) -> None:
        self._tensors.stop()

    def live(self) -> int:
        return int(torch.cuda.memory_allocated(self.device))

    def weight_copy_bytes(self) -> int:
        return self._tensors.weight_copy_bytes()

    def reserve(self) -> int:
        highest = max(self.peaks.values(), default=0)
        return max(0, self._reserved - highest)

    def _begin_phase(self) -> None:
        torch.cuda.synchronize(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)

    def _phase_peak(self) -> int:
        torch.cuda.synchronize(self.device)
        self._reserved = max(self._reserved, int(torch.cuda.max_memory_reserved(self.device)))
        return int(torch.cuda.max_memory_allocated(self.device))


def meter_for(device: Any) -> Meter:
    """The allocator's meter on CUDA and ROCm, tensor tracking elsewhere (CPU, MPS)."""
    if device.type == "cuda":
        return AllocatorMeter(device)
    return TensorMeter()
