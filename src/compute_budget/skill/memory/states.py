"""Memory per device at one layout: weights, gradients, optimizer state and activations.

Model states (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion
Parameter Models", Sec. 3 and Table 1), for Ψ parameters held by one model-parallel rank,
mixed precision and K bytes of optimizer state per trainable parameter::

    weights     2·Ψ                       16-bit copy used in forward and backward (a frozen
                                          base at 4 or 8 bits: see :mod:`.lora`)
    gradients   2·Ψ_trainable             16-bit gradients
    optimizer   K·Ψ_trainable             e.g. AdamW: fp32 master + momentum + variance, K = 12

ZeRO shards these over the *data-parallel* degree N_d = devices / (TP·PP), not over all devices:
stage 1 shards the optimizer state, stage 2 also the gradients, stage 3 also the weights.
Optimizer offload (Ren et al. 2021, "ZeRO-Offload", Sec. 4) keeps the gradients, the optimizer
state and the optimizer step in CPU memory; the 16-bit weights and the activations stay on the
device. ZeRO stage 3 gathers each layer's full weights for its forward and backward pass and
prefetches the next: two layers' weights (÷ TP, at their stored bits: a 4-bit frozen base is
gathered at 4 bits) come on top of the shards, and so do the 16-bit embedding and LM head, which
FSDP's root unit gathers for the forward pass and keeps gathered through the backward (PyTorch's
FSDP does not reshard the root after forward, ``_runtime_utils._post_forward_reshard``). A 4- or
8-bit frozen base is dequantized one matrix at a time for each matmul, forward and backward
(bitsandbytes' ``MatMul4Bit`` and ``MatMul8bitLt``): the largest linear weight in 16 bits (÷ TP)
is held beside the rest. Weight offload goes one step further, at ZeRO 3 with optimizer offload
(Rajbhandari et al. 2021, "ZeRO-Infinity", Sec. 5: DeepSpeed's ``offload_param``; FSDP's
``CPUOffload(offload_params=True)``; Axolotl's layer offloading of a frozen LoRA base): the
weight shards live in CPU memory too and each layer streams in for its forward and backward
pass, so the device holds only the gathered units: the current layer, the prefetched next and
the root unit.
Expert parallelism e shards the routed experts e ways; ZeRO then shards them over the N_d / e
ranks that hold the same experts (DeepSpeed-MoE, Rajbhandari et al. 2022).

Activations: :mod:`.activations`. The layout search over these knobs: :mod:`.layout`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from ..hardware.peer_link import FABRIC, PeerLink
from ..vocabulary import Recompute, Stack
from .activations import activation_bytes
from .lora import BITS_PER_WEIGHT
from .spec import ResolvedModel

__all__ = [
    "GRADIENT_BYTES",
    "HOST_GRADIENT_BYTES",
    "HOST_USABLE_FRACTION",
    "USABLE_FRACTION",
    "WEIGHT_BYTES",
    "DeviceBytes",
    "Layout",
    "Setup",
    "device_bytes",
    "host_bytes",
    "model_state_bytes",
]

WEIGHT_BYTES = 2.0
"""16-bit (BF16/FP16) weights used in forward and backward (mixed precision)."""
GRADIENT_BYTES = 2.0
"""16-bit gradients (mixed precision)."""
USABLE_FRACTION = 0.90
"""Share of device memory a run may fill and still count as fitting: the CUDA context, NCCL
buffers and allocator fragmentation take the rest (a few GiB on an 80 GB device)."""
HOST_GRADIENT_BYTES = 4.0
"""Offloaded gradients live on the host in fp32, in the rank's optimizer partition (ZeRO 1 as
ZeRO 2): DeepSpeed's CPU Adam steps fp32 gradient partitions (``stage_1_and_2``'s
``single_partition_of_fp32_groups``), and DeepSpeed's own estimators count 16 bytes of CPU
memory per parameter with optimizer offload (fp32 weights, gradients and two Adam moments) and
18 with the 16-bit weights offloaded too (``estimate_zero2_model_states_mem_needs``,
``estimate_zero3_model_states_mem_needs``; ``benchmarks/host_memory.py``)."""
HOST_USABLE_FRACTION = 0.90
"""Share of a device's CPU RAM that offload may fill: the operating system, the training
processes themselves (a few GiB each for PyTorch and the CUDA libraries), data-loader workers
and pinned staging buffers take the rest. Loading a checkpoint can briefly need more (each
rank reading its shards); not counted."""


@dataclass(frozen=True)
class Layout:
    """How one training step is laid out on the devices."""

    zero: int = 0
    tp: int = 1
    pp: int = 1
    sp: bool = False
    ep: int = 1
    recompute: Recompute = "none"
    micro_batch: int = 1
    offload: bool = False
    offload_weights: bool = False
    """The weight shards in CPU memory too, streamed in per layer (ZeRO 3 with offload only)."""


@dataclass(frozen=True)
class Setup:
    """What stays fixed while the layout varies: devices, sequence, optimizer, stack."""

    gpu_count: int
    seq_len: int
    optimizer_bytes: float
    stack: Stack
    flash_attention: bool = True
    capacity_bytes: float | None = None
    """Device memory in bytes; None when unknown (no fit can be judged)."""
    activation_scale: float = 1.0
    """A probe's measured activations over the formula's (1 without a probe)."""
    overhead_bytes: float = 0.0
    """A probe's measured overhead on one device holding every model state (0 without)."""
    states_bytes: float = 0.0
    """The model states that probe held, bytes: the overhead scales with a layout's share."""
    host_capacity_bytes: float | None = None
    """CPU RAM per device, bytes, that offload must fit in; None: not checked (unknown)."""
    host_ram_given: bool = False
    """Whether the user gave that RAM (else the device's usual host's: another device type
    brings its own)."""
    gpu: str | None = None
    """Catalog key of the devices, whose priced machines' CPU RAM per device changes with the
    count (one T4 rents a g4dn.xlarge of 16 GiB, two a g4dn.12xlarge of 192 GiB for four):
    :func:`.remedies.at_count`; None when the device is not in the catalog."""
    offload_step_seconds: float | None = None
    """Between PCIe cards: the host work of one optimizer step per device with the optimizer
    offloaded, which then competes on cost (:meth:`.costs.Costs.offload`); None: offload is a
    last resort."""
    link: PeerLink = FABRIC
    """The devices' peer link, over which TP and ZeRO-3 communicate
    (:mod:`..hardware.peer_link`); NVLink's unless the device is PCIe only."""

    def sizing(self) -> Setup:
        """This setup without what only prices a layout (the peer link, offload's host step):
        what fits does not depend on them, so the caches of fits share one across device types
        and counts."""
        if self.link is FABRIC and self.offload_step_seconds is None:
            return self
        return _sizing(self)

    @property
    def usable_bytes(self) -> float | None:
        """The share of device memory a run may fill."""
        return None if self.capacity_bytes is None else USABLE_FRACTION * self.capacity_bytes

    @property
    def host_usable_bytes(self) -> float | None:
        """The share of CPU RAM per device that offload may fill."""
        return (None if self.host_capacity_bytes is None
                else HOST_USABLE_FRACTION * self.host_capacity_bytes)


@lru_cache(maxsize=1024)
def _sizing(setup: Setup) -> Setup:
    """:meth:`Setup.sizing`, cached: the searches ask it thousands of times."""
    return replace(setup, link=FABRIC, offload_step_seconds=None)


ZERO3_GATHERED_LAYERS = 2
"""Layers whose full weights ZeRO-3 holds at once: the current one and the prefetched next
(DeepSpeed's stage3_prefetch_bucket_size and FSDP's forward prefetch)."""


class DeviceBytes(NamedTuple):
    """Bytes per device by component."""

    weights: float
    """Weight shards plus, at ZeRO 3, the gathered layers."""
    gradients: float
    optimizer: float
    activations: float
    logits: float
    """Part of the activations: the logits kept for the loss."""
    gathered: float
    """Part of the weights: the full layers ZeRO-3 gathers (0 below stage 3); with weight
    offload, all of the weights on the device."""
    host: float
    """Bytes per device kept in CPU memory instead (offloaded gradients and optimizer state, and
    with weight offload the weight shards)."""
    overhead: float = 0.0
    """A probe's measured temporaries and allocator reserve, at this layout's share."""
    streamed: float = 0.0
    """With weight offload: the device's weight shard, in CPU memory, copied in for each
    forward and each backward pass (0 without)."""
    dequantized: float = 0.0
    """Part of the weights: a 4- or 8-bit base's largest matrix dequantized to 16 bits."""

    @property
    def total(self) -> float:
        """weights + gradients + optimizer + activations + measured overhead."""
        return (self.weights + self.gradients + self.optimizer + self.activations
                + self.overhead)

    @property
    def activation_led(self) -> bool:
        """Whether the activations take more than the model states."""
        return self.activations > self.weights + self.gradients + self.optimizer


def model_state_bytes(
    params: float,
    trainable_params: float,
    optimizer_bytes: float,
    zero: int,
    data_parallel: int,
    *,
    weight_bytes: float = WEIGHT_BYTES,
    offload: bool = False,
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes per device under ZeRO stage ``zero``.

    ``params`` is what one model-parallel rank holds (Ψ / (TP·PP)). Rajbhandari et al. 2020,
    Sec. 5 and Table 1: stage 1 divides the optimizer state by N_d, stage 2 also the gradients,
    stage 3 also the weights. With ``offload`` the gradients and the optimizer state live in CPU
    memory (see :func:`host_bytes`).
    """
    weights = weight_bytes * params
    gradients = 0.0 if offload else GRADIENT_BYTES * trainable_params
    optimizer = 0.0 if offload else optimizer_bytes * trainable_params
    if zero >= 1:
        optimizer /= data_parallel
    if zero >= 2:
        gradients /= data_parallel
    if zero >= 3:
        weights /= data_parallel
    return weights, gradients, optimizer


def _layer_weight_bytes(model: ResolvedModel, layout: Layout) -> float:
    """Bytes of the largest decoder layer's weights on one tensor-parallel rank (its local
    experts only, with expert parallelism), at their stored bits."""
    return _largest_layer_bytes(model, layout.ep) / layout.tp


@lru_cache(maxsize=1024)
def _largest_layer_bytes(model: ResolvedModel, ep: int) -> float:
    """:func:`_layer_weight_bytes` before tensor parallelism, cached: the search sizes thousands
    of layouts of one model."""
    shape = model.shape
    attention = sum(i * o for _, i, o in shape.attention_projections())
    dense = attention + sum(i * o for _, i, o in shape.mlp_projections(shape.intermediate))
    largest = float(dense if shape.dense_layers else 0)
    if shape.moe_layers:
        expert = sum(i * o for _, i, o in shape.mlp_projections(shape.expert_intermediate))
        shared = sum(i * o for _, i, o in shape.mlp_projections(shape.shared_intermediate))
        moe = (attention + shape.experts / ep * expert + shape.shared_experts * shared)
        largest = max(largest, moe)
    stored = BITS_PER_WEIGHT[model.weights_bits] / 8 if model.quantized else WEIGHT_BYTES
    return stored * largest


def _dequantized_bytes(model: ResolvedModel, layout: Layout) -> float:
    """The largest linear weight in 16 bits, which a quantized base dequantizes for a matmul
    (0 at 16 bits; module docstring)."""
    if not model.quantized:
        return 0.0
    largest = max(d_in * d_out for (_, d_in, d_out), _n in model.shape.linear_layers())
    return WEIGHT_BYTES * largest / layout.tp


def _root_bytes(model: ResolvedModel, layout: Layout) -> float:
    """The 16-bit embedding and LM head (and position table), ÷ TP: FSDP's root unit, which
    stays gathered from the forward pass to the end of the backward."""
    counts = model.counts
    if counts is not None:
        root = counts.embedding + counts.position_embedding + counts.lm_head
    else:  # a given or guessed shape: assume an untied head, as Llama's
        root = 2 * (model.shape.vocab or 0) * model.shape.hidden
    return WEIGHT_BYTES * root / layout.tp


def _gathered_bytes(model: ResolvedModel, layout: Layout, setup: Setup) -> float:
    """The full weights ZeRO-3 holds at once on a device: the current layer, the prefetched next
    and the root unit (module docstring); 0 below stage 3 or when nothing is sharded, unless the
    weights are offloaded."""
    sharded = layout.zero >= 3 and setup.gpu_count // (layout.tp * layout.pp) > 1
    if not (sharded or layout.offload_weights):
        return 0.0
    return (ZERO3_GATHERED_LAYERS * _layer_weight_bytes(model, layout)
            + _root_bytes(model, layout))


def _states(model: ResolvedModel, layout: Layout, setup: Setup) -> tuple[float, float, float]:
    """Model states per device, the routed experts sharded by expert parallelism."""
    mp = layout.tp * layout.pp
    dp = max(1, setup.gpu_count // mp)
    quant = BITS_PER_WEIGHT[model.weights_bits] / 8
    experts = model.experts
    dense = model.total - experts
    # Bytes of the frozen or trained weights: quantized linear weights (experts first), the rest
    # in 16 bits, and the LoRA adapters beside them.
    quantized_experts = min(experts, model.quantized)
    quantized_dense = model.quantized - quantized_experts
    expert_bytes = quant * quantized_experts + WEIGHT_BYTES * (experts - quantized_experts)
    dense_bytes = (quant * quantized_dense + WEIGHT_BYTES * (dense - quantized_dense)
                   + WEIGHT_BYTES * model.adapters)
    full = model.trainable >= model.total and not model.adapters
    trainable_experts = experts if full else 0.0
    trainable_dense = model.trainable - trainable_experts
    k = setup.optimizer_bytes
    d = model_state_bytes(dense_bytes / mp, trainable_dense / mp, k, layout.zero, dp,
                          weight_bytes=1.0, offload=layout.offload)
    e = model_state_bytes(expert_bytes / (mp * layout.ep), trainable_experts / (mp * layout.ep),
                          k, layout.zero, max(1, dp // layout.ep), weight_bytes=1.0,
                          offload=layout.offload)
    return d[0] + e[0], d[1] + e[1], d[2] + e[2]


def host_bytes(model: ResolvedModel, layout: Layout, setup: Setup) -> float:
    """CPU memory per device that offload takes: its partition of the gradients (in fp32,
    :data:`HOST_GRADIENT_BYTES`) and of the optimizer state, and with weight offload its shard
    of the weights (0 without offload)."""
    if not layout.offload:
        return 0.0
    kept = Layout(zero=max(layout.zero, 2), tp=layout.tp, pp=layout.pp, sp=layout.sp,
                  ep=layout.ep, recompute=layout.recompute, micro_batch=layout.micro_batch)
    weights, gradients, optimizer = _states(model, kept, setup)
    return (gradients * HOST_GRADIENT_BYTES / GRADIENT_BYTES + optimizer
            + (weights if layout.offload_weights else 0.0))


def device_bytes(model: ResolvedModel, layout: Layout, setup: Setup) -> DeviceBytes:
    """Memory per device of ``model`` at ``layout``: model states plus activations."""
    weights, gradients, optimizer = _states(model, layout, setup)
    streamed = weights if layout.offload_weights else 0.0
    if layout.offload_weights:
        weights = 0.0  # in CPU memory: only the gathered units are on the device
    gathered = _gathered_bytes(model, layout, setup)
    dequantized = _dequantized_bytes(model, layout)
    activations, logits = activation_bytes(
        model.shape, stack=setup.stack, seq_len=setup.seq_len, micro_batch=layout.micro_batch,
        tp=layout.tp, pp=layout.pp, sp=layout.sp, recompute=layout.recompute,
        flash_attention=setup.flash_attention, scale=setup.activation_scale,
    )
    states = weights + gradients + optimizer
    overhead = (setup.overhead_bytes * min(1.0, states / setup.states_bytes)
                if setup.states_bytes > 0 else setup.overhead_bytes)
    return DeviceBytes(weights + gathered + dequantized, gradients, optimizer, activations,
                       logits, gathered, host_bytes(model, layout, setup), overhead, streamed,
                       dequantized)
