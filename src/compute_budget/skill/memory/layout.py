"""The layout search: the cheapest way to lay a training step out so that it fits.

For every knob the user left unset, the search tries its values; a knob the user set stays
fixed. Among the layouts that fit in the usable device memory (and whose offload fits the host's
CPU RAM: :func:`.layouts.host_fits`) it picks the one with the smallest
estimated slowdown, the product of one factor per knob (:mod:`.costs`).

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

from ..hardware.catalog import get_accelerator
from ..hardware.peer_link import PeerLink
from ..vocabulary import LAYOUT_KNOBS, RECOMPUTE_ORDER, Stack
from .costs import ZERO3_SLOWDOWN, Costs, Slowdown, costs
from .layouts import (
    Pins,
    ep_degrees,
    fitting_groups,
    frugal_key,
    host_fits,
    most_frugal,
    pins_of,
    searched_layouts,
)
from .remedies import (
    LORA_RANK_SUGGESTED,
    Binding,
    Remedy,
    at_count,
    find_remedies,
    min_gpu_count,
)
from .spec import OnDevices, ResolvedModel
from .states import DeviceBytes, Layout, Setup, device_bytes

__all__ = [
    "LORA_RANK_SUGGESTED",
    "LayoutChoice",
    "Slowdown",
    "search_layout",
]

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
    min_gpu_count_rented: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The devices the catalog's default machines pay for to hold min_gpu_count, "
                    "when more (20 TPU v5p rent a slice of 32); left out otherwise.")
    min_gpu_count_without_offload_rented: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The same for min_gpu_count_without_offload; left out otherwise.")
    max_micro_batch: int | None = Field(
        description="The largest micro-batch that fits at the chosen layout (activations grow "
                    "linearly with it); None when it does not fit or memory is unknown.")
    min_gpu_count_in_nodes: bool = Field(
        description="True when the fewest devices were counted in whole nodes of 8 (above 64).")
    binding: Binding | None = Field(description="When nothing fits: what binds.")
    offload_priced: bool = Field(
        default=False, exclude_if=lambda v: not v,
        description="True between PCIe cards, where optimizer offload competes on cost (its "
                    "host step over a micro-batch's compute) instead of coming last; left out "
                    "otherwise.")
    micro_batch_raised: bool = Field(
        default=False, exclude_if=lambda v: not v,
        description="True when the search raised the micro-batch to the largest that fits "
                    "because ZeRO-3's gathers cost more than the compute hides (left out "
                    "otherwise).")
    host_needed_bytes: float | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="When the host's RAM binds: the CPU memory per device the cheapest layout "
                    "that fits the device would offload to; left out otherwise.")
    remedies: tuple[Remedy, ...] = Field(description="When nothing fits: changes that would fit.")


def _tried(pins: Pins, layouts: tuple[Layout, ...], model: ResolvedModel, gpu_count: int
           ) -> dict[str, list[int | str | bool]]:
    """For each knob the user left open, the values the layouts actually tried take (expert
    parallelism for a mixture of experts only: every degree :func:`.layouts.ep_degrees` names
    at the layouts' data-parallel degrees)."""
    tried: dict[str, list[int | str | bool]] = {}
    for knob in ("zero", "recompute", "tp", "pp", "ep", "offload"):
        if getattr(pins, knob) is None and (knob != "ep" or (model.shape.experts > 0
                                                              and pins.expert_parallel)):
            values = ({e for dp in {gpu_count // (lay.tp * lay.pp) for lay in layouts}
                       for e in ep_degrees(pins, model, dp)} if knob == "ep"
                      else {getattr(lay, knob) for lay in layouts})
            order = RECOMPUTE_ORDER if knob == "recompute" else sorted(values)
            tried[knob] = [v for v in order if v in values]
    if "offload" in tried and any(lay.offload_weights for lay in layouts):
        tried["offload"].append("weights")
    return tried


@lru_cache(maxsize=1024)
def _ordered(pins: Pins, model: ResolvedModel, gpu_count: int, seq_len: int,
             stack: Stack, link: PeerLink) -> tuple[Layout, ...]:
    """The layouts the search ranks (:func:`.layouts.searched_layouts`), cheapest first
    (:meth:`.costs.Costs.key`); cached, so read-only."""
    return tuple(sorted(searched_layouts(pins, model, gpu_count),
                        key=costs(model, seq_len, stack, gpu_count, link).key))


def search_layout(
    model: ResolvedModel, setup: Setup, spec: OnDevices
) -> tuple[Layout, DeviceBytes, LayoutChoice]:
    """The cheapest layout of ``model`` that fits (module docstring), its memory and how it was
    found. When nothing fits, the most frugal layout, with what binds and what would fit."""
    pins = pins_of(spec, setup.stack)
    factors = costs(model, setup.seq_len, setup.stack, setup.gpu_count, setup.link,
                    setup.offload_step_seconds)
    layouts = _ordered(pins, model, setup.gpu_count, setup.seq_len, setup.stack,
                       setup.link)
    tried = _tried(pins, layouts, model, setup.gpu_count)
    open_knobs = tuple(tried)
    if setup.usable_bytes is None or not open_knobs:
        layout = layouts[0] if layouts else Layout()
        layout, memory = (_fewest_experts(layout, pins, model, setup)
                          or (layout, device_bytes(model, layout, setup)))
        fits = None if setup.usable_bytes is None else (
            memory.total <= setup.usable_bytes and host_fits(model, layout, setup))
        chosen: Literal["given", "search", "default"] = "given" if not open_knobs else "default"
        host_needed = (memory.host if fits is False and setup.usable_bytes is not None
                       and memory.total <= setup.usable_bytes else None)
        return layout, memory, _choice(chosen, fits, open_knobs, tried, factors.slowdown(layout),
                                       pins, model, setup, spec.gpu, layout, host_needed)
    found = _cheapest_fit(layouts, pins, model, setup)
    if found is not None and setup.offload_step_seconds is not None and not found[0].offload:
        found = _offload_if_cheaper(found, layouts, pins, model, setup, factors)
    if found is not None:
        layout, memory = found
        raised = _amortised(layout, pins, model, setup, factors)
        if raised is not None:
            layout, memory = raised, device_bytes(model, raised, setup)
        choice = _choice("search", True, open_knobs, tried, factors.slowdown(layout), pins,
                         model, setup, spec.gpu, layout)
        return layout, memory, (choice if raised is None else
                                choice.model_copy(update={"micro_batch_raised": True}))
    layout = most_frugal(pins, model, setup)
    unlimited = (None if setup.host_capacity_bytes is None else
                 _cheapest_fit(layouts, pins, model, replace(setup, host_capacity_bytes=None)))
    return layout, device_bytes(model, layout, setup), _choice(
        "search", False, open_knobs, tried, factors.slowdown(layout), pins, model, setup, spec.gpu,
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
            return _fewest_experts(layout, pins, model, setup) or (layout, memory)
    return None


def _fewest_experts(layout: Layout, pins: Pins, model: ResolvedModel,
                    setup: Setup) -> tuple[Layout, DeviceBytes] | None:
    """``layout`` at the smallest expert-parallel degree below its own that fits at the same
    cost, when the search left the degree open: the layouts carry only the largest degree
    (:func:`.layouts.ep_degrees`), and no smaller one costs less or needs less memory. Without
    device memory to fit, the smallest at the same cost. None when no smaller degree does."""
    if layout.ep == 1 or pins.ep is not None:
        return None
    usable = setup.usable_bytes
    rank = costs(model, setup.seq_len, setup.stack, setup.gpu_count, setup.link).key
    dp = setup.gpu_count // (layout.tp * layout.pp)
    for ep in ep_degrees(pins, model, dp)[:-1]:
        smaller = replace(layout, ep=ep)
        if rank(smaller) != rank(layout):
            continue
        memory = device_bytes(model, smaller, setup)
        if usable is None or (memory.total <= usable and host_fits(model, smaller, setup)):
            return smaller, memory
    return None


def _offload_if_cheaper(found: tuple[Layout, DeviceBytes], layouts: tuple[Layout, ...],
                        pins: Pins, model: ResolvedModel, setup: Setup,
                        factors: Costs) -> tuple[Layout, DeviceBytes]:
    """Between PCIe cards, the cheapest layout with the optimizer offloaded instead of
    ``found`` (which fits without) when its host step costs less than the communication it
    saves (:meth:`.costs.Costs.priced`; offload is otherwise a last resort)."""
    offloaded = _cheapest_fit(tuple(lay for lay in layouts
                                    if lay.offload and not lay.offload_weights),
                              pins, model, setup)
    if offloaded is None or factors.priced(offloaded[0]) >= factors.priced(found[0]):
        return found
    return offloaded


def _amortised(layout: Layout, pins: Pins, model: ResolvedModel, setup: Setup,
               factors: Costs) -> Layout | None:
    """``layout`` at the largest micro-batch that fits, when the user set none and ZeRO-3's
    gathers cost more than the compute hides (between PCIe cards, or a small micro-batch): they
    repeat every micro-batch, so more tokens per micro-batch spend less of the step on them.
    None when that does not apply or no larger micro-batch fits."""
    if pins.micro_batch is not None or factors.zero3(layout) <= ZERO3_SLOWDOWN:
        return None
    largest = _max_micro_batch(model, layout, setup)
    if largest is None or largest <= layout.micro_batch:
        return None
    return replace(layout, micro_batch=largest)


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


def _at_fewest(remedy: Remedy, pins: Pins, model: ResolvedModel, setup: Setup) -> Remedy:
    """A more_devices remedy with the tensor and pipeline degrees of the cheapest layout that
    fits on its count (2 x RTX 4090 at ZeRO 0 and TP 2 need 32 of them at PP 16)."""
    if remedy.kind != "more_devices" or remedy.gpu_count is None:
        return remedy
    count = remedy.gpu_count
    layouts = _ordered(pins, model, count, setup.seq_len, setup.stack, setup.link)
    found = _cheapest_fit(layouts, pins, model, at_count(setup, count))
    return remedy if found is None else remedy.model_copy(
        update={"tp": found[0].tp, "pp": found[0].pp})


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
        remedies = tuple(_at_fewest(r, pins, model, setup) for r in remedies)
        if host_needed is not None:
            binding = "host_memory"
    pinned = tuple(k for k in LAYOUT_KNOBS if getattr(pins, k) is not None)
    acc = None if gpu is None else get_accelerator(gpu)
    return LayoutChoice(chosen_by=chosen_by, fits=fits, open_knobs=open_knobs, pinned=pinned,
                        max_micro_batch=(_max_micro_batch(model, layout, setup) if fits
                                         else None),
                        tried=tried,
                        slowdown=slowdown, min_gpu_count=min_count,
                        min_gpu_count_without_offload=min_plain,
                        min_gpu_count_rented=None if acc is None else acc.rented_count(min_count),
                        min_gpu_count_without_offload_rented=(
                            None if acc is None else acc.rented_count(min_plain)),
                        min_gpu_count_in_nodes=in_nodes, binding=binding,
                        remedies=remedies,
                        offload_priced=setup.offload_step_seconds is not None
                        and "offload" in open_knobs,
                        host_needed_bytes=host_needed if binding == "host_memory" else None)
