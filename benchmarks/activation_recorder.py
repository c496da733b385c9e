"""What autograd saves for the backward pass, recorded storage by storage.

The machinery of :mod:`.activation_memory` (its docstring gives the method): a
:class:`Recorder` whose ``pack`` hook keeps every distinct storage saved for backward (parameters
and buffers excluded), module hooks that label each storage with the module running, a walk of
the autograd graph naming the ops that saved each one, one measured forward pass
(:func:`measure_once`), and the split of a run's storages into one decoder layer's own, the
layer-shared and the non-layer ones (:func:`breakdown`). torch and transformers are imported
where they are used, so importing this module needs neither.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .activation_families import KERNEL_STANDIN

if TYPE_CHECKING:
    import torch

MICRO_BATCH = 1
SEED = 0


@dataclass
class SavedStorage:
    """One distinct storage that autograd saved for the backward pass."""

    ptr: int
    nbytes: int
    dtype: str
    shape: list[int]
    module: str
    order: int
    saves: int = 1
    shapes: list[list[int]] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)


@dataclass
class Recorder:
    """Collects saved storages through ``saved_tensors_hooks`` and module hooks."""

    excluded: set[int]
    storages: dict[int, SavedStorage] = field(default_factory=dict)
    module_stack: list[str] = field(default_factory=list)
    keep: list[Any] = field(default_factory=list)
    skipped_param_saves: int = 0

    def current_module(self) -> str:
        return self.module_stack[-1] if self.module_stack else "(root)"

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        # The detached alias keeps the same storage (so the graph walk still finds it) without
        # the tensor -> grad_fn -> saved tensor cycle that would leak every measured graph.
        packed = tensor.detach()
        storage = tensor.untyped_storage()
        ptr, nbytes = storage.data_ptr(), storage.nbytes()
        if ptr in self.excluded:
            self.skipped_param_saves += 1
            return packed
        if nbytes == 0:
            return packed
        shape = list(tensor.shape)
        module = self.current_module()
        record = self.storages.get(ptr)
        if record is None:
            record = SavedStorage(
                ptr=ptr,
                nbytes=nbytes,
                dtype=str(tensor.dtype).removeprefix("torch."),
                shape=shape,
                module=module,
                order=len(self.storages),
            )
            self.storages[ptr] = record
            self.keep.append(packed)  # hold the storage so its address cannot be reused
        else:
            record.saves += 1
            record.nbytes = max(record.nbytes, nbytes)
        if shape not in record.shapes:
            record.shapes.append(shape)
        if module not in record.modules:
            record.modules.append(module)
        return packed

    @staticmethod
    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        return tensor


@contextmanager
def module_labels(model: torch.nn.Module, recorder: Recorder) -> Iterator[None]:
    """Keep ``recorder.module_stack`` equal to the modules whose forward is running."""

    handles = []
    for name, module in model.named_modules():
        label = name or "(root)"

        def pre_hook(_module: Any, _args: Any, label: str = label) -> None:
            recorder.module_stack.append(label)

        def post_hook(_module: Any, _args: Any, _output: Any) -> None:
            recorder.module_stack.pop()

        handles.append(module.register_forward_pre_hook(pre_hook))
        handles.append(module.register_forward_hook(post_hook, always_call=True))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def label_ops(loss: torch.Tensor, recorder: Recorder) -> list[str]:
    """Walk the autograd graph from ``loss`` and name, per storage, the ops that saved it.

    Returns the names of all backward nodes met (to record, e.g., which SDPA kernel ran).
    """
    import torch

    seen: set[int] = set()
    node_names: list[str] = []
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = node.name()
        node_names.append(name)
        saved: list[tuple[str, Any]] = []
        for attr in dir(node):
            if attr.startswith("_saved_"):
                try:
                    saved.append((attr.removeprefix("_saved_"), getattr(node, attr)))
                except RuntimeError:
                    continue
        if hasattr(node, "saved_tensors"):
            with suppress(RuntimeError):
                saved.extend((f"saved_tensors[{i}]", t) for i, t in enumerate(node.saved_tensors))
        for slot, value in saved:
            values = value if isinstance(value, tuple | list) else (value,)
            for item in values:
                if isinstance(item, torch.Tensor):
                    record = recorder.storages.get(item.untyped_storage().data_ptr())
                    if record is not None:
                        op = f"{name}.{slot}"
                        if op not in record.ops:
                            record.ops.append(op)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return node_names


def register_kernel_standin() -> None:
    """Register :data:`KERNEL_STANDIN` with transformers' attention functions (see GPU_KERNEL).

    Its autograd function computes attention without keeping anything, then saves query, key,
    value, the output (laid out [batch, seq, heads, dim], as the GPU kernels write it) and an
    fp32 log-sum-exp of [batch, heads, seq]: the inputs of
    ``_scaled_dot_product_efficient_attention_backward`` in PyTorch's derivatives.yaml. Never
    run backward through it.
    """
    import torch
    from transformers import AttentionInterface

    class KernelStandIn(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, q: Any, k: Any, v: Any, scale: float) -> Any:
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                   scale=scale)
            out = out.transpose(1, 2).contiguous().transpose(1, 2)
            lse = q.new_empty(q.shape[:3], dtype=torch.float32)
            ctx.save_for_backward(q, k, v, out, lse)
            return out

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise NotImplementedError("a stand-in for measuring what is saved, never run back")

    def attention(module: Any, query: Any, key: Any, value: Any, attention_mask: Any,
                  dropout: float = 0.0, scaling: float | None = None, **kwargs: Any) -> Any:
        out = KernelStandIn.apply(query, key, value, scaling)
        return out.transpose(1, 2).contiguous(), None

    AttentionInterface.register(KERNEL_STANDIN, attention)


def excluded_storages(model: torch.nn.Module) -> set[int]:
    """Storage addresses of all parameters and buffers."""
    tensors = [*model.parameters(), *model.buffers()]
    return {t.untyped_storage().data_ptr() for t in tensors}


def measure_once(model: torch.nn.Module, seq_len: int) -> dict[str, Any]:
    """One training-mode forward with labels; the storages saved for backward."""
    import torch

    vocab = model.config.vocab_size
    generator = torch.Generator().manual_seed(SEED)
    input_ids = torch.randint(0, vocab, (MICRO_BATCH, seq_len), generator=generator)
    labels = input_ids.clone()
    recorder = Recorder(excluded=excluded_storages(model))
    start = time.perf_counter()
    with (
        module_labels(model, recorder),
        torch.autograd.graph.saved_tensors_hooks(recorder.pack, recorder.unpack),
    ):
        output = model(input_ids=input_ids, labels=labels, use_cache=False)
    seconds = time.perf_counter() - start
    node_names = label_ops(output.loss, recorder)
    storages = sorted(recorder.storages.values(), key=lambda r: r.order)
    result = {
        "total_bytes": sum(r.nbytes for r in storages),
        "storages": storages,
        "dropout_modules": {name for name, module in model.named_modules()
                            if isinstance(module, torch.nn.Dropout)},
        "node_names": sorted(set(node_names)),
        "skipped_param_saves": recorder.skipped_param_saves,
        "forward_seconds": round(seconds, 2),
        "loss": output.loss.detach().item(),
    }
    del output, recorder
    gc.collect()
    return result


def layer_list_prefix(model: torch.nn.Module, num_layers: int) -> str:
    """Qualified name of the ModuleList that holds the decoder layers, with a trailing dot."""
    import torch

    for name, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == num_layers:
            return f"{name}."
    raise RuntimeError("no ModuleList of decoder layers found")


def layer_of(module: str, prefix: str) -> int | None:
    """Index of the decoder layer a module belongs to, or None outside the layers."""
    match = re.match(re.escape(prefix) + r"(\d+)(?:\.|$)", module)
    return int(match.group(1)) if match else None


def relative_label(module: str, prefix: str) -> str:
    """Module name relative to its decoder layer, e.g. ``self_attn.q_proj``."""
    stripped = re.sub("^" + re.escape(prefix) + r"\d+\.?", "", module)
    return stripped or "(decoder layer)"


def describe(record: SavedStorage, prefix: str, tokens: int, hidden: int,
             dropout_modules: set[str]) -> dict[str, Any]:
    """A saved storage as a JSON row; ``cpu_dropout_mask`` marks a dropout's keep-mask saved in
    the activation dtype (CPU) where CUDA's native_dropout saves a bool."""
    return {
        "label": relative_label(record.module, prefix),
        "ops": record.ops,
        "dtype": record.dtype,
        "shape": record.shape,
        "other_shapes": [s for s in record.shapes if s != record.shape],
        "bytes": record.nbytes,
        "bytes_per_token": record.nbytes / tokens,
        "bytes_per_token_per_hidden": record.nbytes / tokens / hidden,
        "saves": record.saves,
        "modules": sorted({relative_label(m, prefix) for m in record.modules}),
        "cpu_dropout_mask": record.module in dropout_modules and record.dtype != "bool",
    }


def breakdown(run: dict[str, Any], layer: int, tokens: int, hidden: int) -> dict[str, Any]:
    """Split one run's storages into one layer's own, layer-shared and non-layer ones."""
    prefix = run["prefix"]
    own, shared, outside = [], [], []
    for record in run["storages"]:
        layers = {layer_of(m, prefix) for m in record.modules}
        row = describe(record, prefix, tokens, hidden, run["dropout_modules"])
        if layers == {layer}:
            own.append(row)
        elif len(layers - {None}) > 1:
            shared.append(row)
        elif layers == {None}:
            outside.append(row)
    return {
        "layer_index": layer,
        "layer_storages": own,
        "layer_total_bytes": sum(row["bytes"] for row in own),
        "cpu_dropout_mask_bytes": sum(row["bytes"] for row in own if row["cpu_dropout_mask"]),
        "shared_across_layers": shared,
        "non_layer_storages": outside,
        "non_layer_total_bytes": sum(row["bytes"] for row in outside),
    }
