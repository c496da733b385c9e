"""The layout search: the cheapest way to lay a training step out so that it fits.

For every knob the user left unset, the search tries its values; a knob the user set stays
fixed. Among the layouts that fit in the usable device memory (and whose offload fits the host's
CPU RAM: :func:`.layouts.host_fits`) it picks the one with the smallest
estimated slowdown, the product of one factor per knob (1.0 = no slowdown)::

    ZeRO 0, 1, 2        1.0    same communication volume as plain data parallelism
                               (Rajbhandari et al. 2020, Sec. 7.2.1)
    ZeRO 3              1.05   1.5x that volume (Sec. 7.2.2), mostly overlapped with compute
    recomputation       hardware / model FLOPs from the FLOP terms (:mod:`.flops`): selective
                        adds the attention scores' forward (a few %), full a forward pass of
                        every layer (about 4/3; Narayanan et al. 2021, eq. 3; about 1.5 for
                        LoRA or a frozen base, whose model FLOPs are 4·N)
    tensor parallel t   1 + 8·(t−1)·h·R / (3·W)   four all-reduces of the s·b·h activations
                        per layer (Shoeybi et al. 2019, Sec. 3), ring all-reduce moving
                        2(t−1)/t of them, against 6·W/t FLOPs of the layer's W matmul weights;
                        R = 600 FLOPs per byte of intra-node bandwidth (an A100 at 125 TFLOP/s
                        achieved over about 230 GB/s of NVLink all-reduce bandwidth)
    pipeline p          1 + (p−1)/m, the 1F1B bubble (Narayanan et al. 2021, Sec. 2.2) with
                        m = 4·p micro-batches per step assumed; tried only once tensor
                        parallelism is at its largest degree
    offload             a last resort: tried only when nothing else fits, optimizer offload
                        before weight offload (a frozen base only); its host work per
                        optimizer step and its weight copies per micro-batch are
                        :mod:`.offload`'s, and what they cost in time depends on the compute
                        per step, so the run estimate prices them

On the ``hf`` stack model parallelism (TP, then PP) comes after full recomputation: the
common Hugging Face fine-tuning tools shard with ZeRO/FSDP and save memory with gradient
checkpointing, and tensor parallelism there needs extra setup. Ties go to the lower ZeRO stage,
then the smaller degrees. The layouts tried, and which of them fit, are in :mod:`.layouts`; when
nothing fits, the fewest devices, what binds and what would fit are in :mod:`.remedies`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..model.flops import flops_per_token, hardware_flops_per_token, rule_of_thumb, trained_share
from ..vocabulary import LAYOUT_KNOBS, RECOMPUTE_ORDER, Stack
from .layouts import Pins, all_layouts, fitting_groups, frugal_key, host_fits, most_frugal, pins_of
from .remedies import LORA_RANK_SUGGESTED, Binding, Remedy, find_remedies, min_gpu_count
from .spec import OnDevices, ResolvedModel
from .states import DeviceBytes, Layout, Setup, device_bytes

__all__ = [
    "LORA_RANK_SUGGESTED",
    "LayoutChoice",
    "Slowdown",
    "search_layout",
]

ZERO3_SLOWDOWN = 1.05
TP_FLOPS_PER_BYTE = 600.0
PP_MICROBATCHES_PER_STAGE = 4


class Slowdown(BaseModel):
    """Estimated slowdown of a layout against one that needs no memory savings (factors ≥ 1)."""

    model_config = ConfigDict(frozen=True)

    recompute: float = Field(description="Hardware / model FLOPs of the recomputation.")
    tensor_parallel: float = Field(description="Tensor-parallel communication, 1 + overhead.")
    pipeline: float = Field(description="Pipeline bubble, 1 + (p−1)/m.")
    zero: float = Field(description="ZeRO-3's extra communication.")
    offload: bool = Field(description="Optimizer offload (slowdown not estimated).")
    offload_weights: bool = Field(
        default=False, description="Weight offload as well (slowdown not estimated).")

    @property
    def total(self) -> float:
        """The product of the factors (offload not counted)."""
        return self.recompute * self.tensor_parallel * self.pipeline * self.zero


class LayoutChoice(BaseModel):
    """The layout answered for, how it was found, what it costs, and what else was tried."""

    model_config = ConfigDict(frozen=True)

    chosen_by: Literal["given", "search", "default"] = Field(
        description="given: the user set every knob; search: the cheapest fitting layout among "
                    "the knobs left open (or the most frugal one, when nothing fits); default: "
                    "no device memory to search against, the knobs' defaults.")
    fits: bool | None = Field(description="Whether it fits; None when device memory is unknown.")
    open_knobs: tuple[str, ...] = Field(description="Knobs the search varied.")
    pinned: tuple[str, ...] = Field(description="Knobs the user set, kept as set.")
    tried: dict[str, list[int | str | bool]] = Field(
        description="The values tried for each open knob; offload also lists \"weights\" when "
                    "weight offload was tried.")
    slowdown: Slowdown
    min_gpu_count: int | None = Field(
        description="Fewest devices of this type on which the run fits at its best layout "
                    "(the user's set knobs kept); None when no count does or memory is unknown.")
    min_gpu_count_without_offload: int | None = Field(
        description="The same without CPU offload, when offload was open and the fewest "
                    "devices need it; else equal to min_gpu_count.")
    max_micro_batch: int | None = Field(
        description="The largest micro-batch that fits at the chosen layout (activations grow "
                    "linearly with it); None when it does not fit or memory is unknown.")
    min_gpu_count_in_nodes: bool = Field(
        description="True when the fewest devices were counted in whole nodes of 8 (above 64).")
    binding: Binding | None = Field(description="When nothing fits: what binds.")
    host_needed_bytes: float | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="When the host's RAM binds: the CPU memory per device the cheapest layout "
                    "that fits the device would offload to; left out otherwise.")
    remedies: tuple[Remedy, ...] = Field(description="When nothing fits: changes that would fit.")


def _tried(pins: Pins, layouts: tuple[Layout, ...]) -> dict[str, list[int | str | bool]]:
    """For each knob the user left open, the values the layouts actually tried take."""
    tried: dict[str, list[int | str | bool]] = {}
    for knob in ("zero", "recompute", "tp", "pp", "offload"):
        if getattr(pins, knob) is None:
            values = {getattr(lay, knob) for lay in layouts}
            order = RECOMPUTE_ORDER if knob == "recompute" else sorted(values)
            tried[knob] = [v for v in order if v in values]
    if "offload" in tried and any(lay.offload_weights for lay in layouts):
        tried["offload"].append("weights")
    return tried


class _Costs:
    """Slowdown factors for one model and setup (the FLOP ratios computed once)."""

    def __init__(self, model: ResolvedModel, seq_len: int, stack: Stack) -> None:
        shape = model.shape
        if model.architecture is not None:
            terms = flops_per_token(model.architecture, seq_len)
        else:
            terms = rule_of_thumb(model.active, layers=shape.layers, hidden=shape.hidden,
                                  seq_len=seq_len)
        share = trained_share(model.active, model.total, model.trainable, model.adapters)
        self.recompute = {r: hardware_flops_per_token(terms, r, share).hardware_over_model
                          for r in RECOMPUTE_ORDER}
        per_layer = sum(i * o for (_, i, o), _n in shape.linear_layers()
                        if _n == shape.layers) or 12 * shape.hidden**2
        moe_share = 0.0
        if shape.moe_layers:
            moe_share = shape.experts_per_token * len(shape.mlp_projections(1)) * \
                shape.hidden * shape.expert_intermediate
        self.layer_weights = float(max(per_layer + moe_share, 1))
        self.hidden = shape.hidden
        self.stack = stack
    def _factors(self, layout: Layout) -> tuple[float, float, float, float]:
        """recompute, tensor-parallel, pipeline and ZeRO-3 factors of ``layout``."""
        t, p = layout.tp, layout.pp
        return (self.recompute[layout.recompute],
                1 + 8 * (t - 1) * self.hidden * TP_FLOPS_PER_BYTE / (3 * self.layer_weights),
                1 + (p - 1) / (PP_MICROBATCHES_PER_STAGE * p),
                ZERO3_SLOWDOWN if layout.zero >= 3 else 1.0)

    def slowdown(self, layout: Layout) -> Slowdown:
        recompute, tp, pipeline, zero = self._factors(layout)
        return Slowdown(recompute=recompute, tensor_parallel=tp, pipeline=pipeline, zero=zero,
                        offload=layout.offload, offload_weights=layout.offload_weights)

    def key(self, layout: Layout) -> tuple[float, ...]:
        """The search's order: no offload, no model parallelism on the hf stack, the least
        slowdown (the factors' product, as :attr:`Slowdown.total`, without building one: the
        search ranks thousands of layouts), then the fewest knobs turned."""
        model_parallel = self.stack == "hf" and (layout.tp > 1 or layout.pp > 1)
        recompute, tp, pipeline, zero = self._factors(layout)
        return (float(layout.offload) + float(layout.offload_weights), float(model_parallel),
                round(recompute * tp * pipeline * zero, 9), layout.zero, layout.tp, layout.pp,
                RECOMPUTE_ORDER.index(layout.recompute))


@lru_cache(maxsize=256)
def _costs(model: ResolvedModel, seq_len: int, stack: Stack) -> _Costs:
    """The slowdown factors of ``model`` at ``seq_len`` on ``stack``: they do not depend on the
    device, so a plan search computes them once for every device type."""
    return _Costs(model, seq_len, stack)


@lru_cache(maxsize=1024)
def _ordered(pins: Pins, model: ResolvedModel, gpu_count: int, seq_len: int,
             stack: Stack) -> tuple[Layout, ...]:
    """Every layout the search may choose, cheapest first (:meth:`_Costs.key`); cached, so
    read-only."""
    return tuple(sorted(all_layouts(pins, model, gpu_count),
                        key=_costs(model, seq_len, stack).key))


def search_layout(
    model: ResolvedModel, setup: Setup, spec: OnDevices
) -> tuple[Layout, DeviceBytes, LayoutChoice]:
    """The cheapest layout of ``model`` that fits (module docstring), its memory and how it was
    found. When nothing fits, the most frugal layout, with what binds and what would fit."""
    pins = pins_of(spec)
    costs = _costs(model, setup.seq_len, setup.stack)
    layouts = _ordered(pins, model, setup.gpu_count, setup.seq_len, setup.stack)
    tried = _tried(pins, layouts)
    open_knobs = tuple(tried)
    if setup.usable_bytes is None or not open_knobs:
        layout = layouts[0] if layouts else Layout()
        memory = device_bytes(model, layout, setup)
        fits = None if setup.usable_bytes is None else (
            memory.total <= setup.usable_bytes and host_fits(model, layout, setup))
        chosen: Literal["given", "search", "default"] = "given" if not open_knobs else "default"
        host_needed = (memory.host if fits is False and setup.usable_bytes is not None
                       and memory.total <= setup.usable_bytes else None)
        return layout, memory, _choice(chosen, fits, open_knobs, tried, costs.slowdown(layout),
                                       pins, model, setup, spec.gpu, layout, host_needed)
    found = _cheapest_fit(layouts, pins, model, setup)
    if found is not None:
        layout, memory = found
        return layout, memory, _choice("search", True, open_knobs, tried,
                                       costs.slowdown(layout), pins, model, setup, spec.gpu,
                                       layout)
    layout = most_frugal(pins, model, setup)
    unlimited = (None if setup.host_capacity_bytes is None else
                 _cheapest_fit(layouts, pins, model, replace(setup, host_capacity_bytes=None)))
    return layout, device_bytes(model, layout, setup), _choice(
        "search", False, open_knobs, tried, costs.slowdown(layout), pins, model, setup, spec.gpu,
        layout, None if unlimited is None else unlimited[1].host)


def _cheapest_fit(layouts: tuple[Layout, ...], pins: Pins, model: ResolvedModel,
                  setup: Setup) -> tuple[Layout, DeviceBytes] | None:
    """The first of ``layouts`` (cheapest first) that fits the device and the host's RAM."""
    groups = fitting_groups(pins, model, setup)
    usable = setup.usable_bytes
    if not groups or usable is None:
        return None
    for layout in layouts:
        if frugal_key(layout) not in groups:
            continue  # its group's most frugal layout does not fit, so neither does it
        memory = device_bytes(model, layout, setup)
        if memory.total <= usable and host_fits(model, layout, setup):
            return layout, memory
    return None


def _max_micro_batch(model: ResolvedModel, layout: Layout, setup: Setup) -> int | None:
    """The largest micro-batch that fits at ``layout``: activations are linear in it."""
    usable = setup.usable_bytes
    if usable is None:
        return None
    one = device_bytes(model, replace(layout, micro_batch=1), setup).total
    per = device_bytes(model, replace(layout, micro_batch=2), setup).total - one
    if one > usable:
        return None
    return 1 + int((usable - one) // per) if per > 0 else None


def _choice(chosen_by: Literal["given", "search", "default"], fits: bool | None,
            open_knobs: tuple[str, ...], tried: dict[str, list[int | str | bool]],
            slowdown: Slowdown, pins: Pins, model: ResolvedModel, setup: Setup,
            gpu: str | None, layout: Layout, host_needed: float | None = None) -> LayoutChoice:
    min_count, in_nodes = (None, False) if setup.usable_bytes is None else min_gpu_count(
        pins, model, setup)
    min_plain = min_count
    if min_count is not None and pins.offload is None:
        min_plain, _ = min_gpu_count(replace(pins, offload=False), model, setup)
    binding: Binding | None = None
    remedies: tuple[Remedy, ...] = ()
    if fits is False:
        binding, remedies = find_remedies(pins, model, setup, min_count, min_plain, gpu)
        if host_needed is not None:
            binding = "host_memory"
    pinned = tuple(k for k in LAYOUT_KNOBS if getattr(pins, k) is not None)
    return LayoutChoice(chosen_by=chosen_by, fits=fits, open_knobs=open_knobs, pinned=pinned,
                        max_micro_batch=(_max_micro_batch(model, layout, setup) if fits
                                         else None),
                        tried=tried,
                        slowdown=slowdown, min_gpu_count=min_count,
                        min_gpu_count_without_offload=min_plain,
                        min_gpu_count_in_nodes=in_nodes, binding=binding,
                        remedies=remedies,
                        host_needed_bytes=host_needed if binding == "host_memory" else None)
