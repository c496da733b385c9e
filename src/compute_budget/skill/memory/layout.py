"""The layout search: the cheapest way to lay a training step out so that it fits.

For every knob the user left unset, the search tries its values; a knob the user set stays
fixed. Among the layouts that fit in the usable device memory it picks the one with the smallest
estimated slowdown, the product of one factor per knob (1.0 = no slowdown)::

    ZeRO 0, 1, 2        1.0    same communication volume as plain data parallelism
                               (Rajbhandari et al. 2020, Sec. 7.2.1)
    ZeRO 3              1.05   1.5x that volume (Sec. 7.2.2), mostly overlapped with compute
    recomputation       hardware / model FLOPs from the FLOP terms (:mod:`.flops`): selective
                        adds the attention scores' forward (a few %), full a forward pass of
                        every layer (about 4/3; Narayanan et al. 2021, eq. 3)
    tensor parallel t   1 + 8·(t−1)·h·R / (3·W)   four all-reduces of the s·b·h activations
                        per layer (Shoeybi et al. 2019, Sec. 3), ring all-reduce moving
                        2(t−1)/t of them, against 6·W/t FLOPs of the layer's W matmul weights;
                        R = 600 FLOPs per byte of intra-node bandwidth (an A100 at 125 TFLOP/s
                        achieved over about 230 GB/s of NVLink all-reduce bandwidth)
    pipeline p          1 + (p−1)/m, the 1F1B bubble (Narayanan et al. 2021, Sec. 2.2) with
                        m = 4·p micro-batches per step assumed; tried only once tensor
                        parallelism is at its largest degree
    offload             a last resort: tried only when nothing else fits (its slowdown depends
                        on the batch size and the CPU, so it is not given a number)

On the ``hf`` stack model parallelism (TP, then PP) comes after full recomputation: the
common Hugging Face fine-tuning tools shard with ZeRO/FSDP and save memory with gradient
checkpointing, and tensor parallelism there needs extra setup; with a 4- or 8-bit frozen base
(bitsandbytes) it is not tried at all. Tensor parallelism stays within a node of 8 devices and
divides the attention and key-value heads; sequence parallelism goes with it unless the user
turned it off (it splits the activations the tensor-parallel ranks would otherwise share, at no
extra communication; Korthikanti et al. 2022). The micro-batch is 1 unless given. Ties go to
the lower ZeRO stage, then the smaller degrees. Memory only falls as ZeRO, recomputation,
tensor parallelism and offload rise, so when the most frugal layout does not fit, nothing does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..hardware.catalog import list_accelerators
from ..model.flops import flops_per_token, hardware_flops_per_token, rule_of_thumb
from ..vocabulary import GPUS_PER_NODE, LAYOUT_KNOBS, RECOMPUTE_ORDER, Recompute
from .lora import lora_params
from .spec import ModelAndLayout, OnDevices, ResolvedModel
from .states import DeviceBytes, Layout, Setup, device_bytes

__all__ = [
    "Binding",
    "LayoutChoice",
    "Remedy",
    "Slowdown",
    "search_layout",
]

TP_DEGREES = (1, 2, 4, 8)
ZERO3_SLOWDOWN = 1.05
TP_FLOPS_PER_BYTE = 600.0
PP_MICROBATCHES_PER_STAGE = 4
LORA_RANK_SUGGESTED = 16
EIGHT_BIT_ADAM_BYTES = 6.0
"""8-bit Adam's state per parameter: fp32 master + two 8-bit moments (Dettmers et al. 2022)."""
MAX_DEVICES = 10_000_000
EXACT_COUNTS = 64
"""Device counts up to this are each tried for the fewest that fit; beyond, whole nodes."""
SHORTEST_SEQ_LEN = 512
"""The shortest sequence a remedy suggests."""

Binding = Literal["pinned", "model_states", "activations"]
"""Why nothing fits: a knob the user set, the model states, or the activations alone."""


class Slowdown(BaseModel):
    """Estimated slowdown of a layout against one that needs no memory savings (factors ≥ 1)."""

    model_config = ConfigDict(frozen=True)

    recompute: float = Field(description="Hardware / model FLOPs of the recomputation.")
    tensor_parallel: float = Field(description="Tensor-parallel communication, 1 + overhead.")
    pipeline: float = Field(description="Pipeline bubble, 1 + (p−1)/m.")
    zero: float = Field(description="ZeRO-3's extra communication.")
    offload: bool = Field(description="Optimizer offload (slowdown not estimated).")

    @property
    def total(self) -> float:
        """The product of the factors (offload not counted)."""
        return self.recompute * self.tensor_parallel * self.pipeline * self.zero


class Remedy(BaseModel):
    """One change that would make a run that does not fit fit (each checked)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["more_devices", "larger_device", "lora", "offload", "optimizer_8bit",
                  "shorter_sequence", "release"] = Field(
        description="more_devices: gpu_count of this device type; larger_device: another "
                    "device of the same vendor, gpu_count of them; lora: LoRA of rank lora_rank; "
                    "offload: optimizer offload; optimizer_8bit: 8-bit Adam; shorter_sequence: "
                    "seq_len tokens; release: leave the knobs named unset.")
    gpu_count: int | None = Field(default=None, description="Devices needed, when it says.")
    gpu: str | None = Field(default=None, description="Catalog key, for larger_device.")
    accelerator: str | None = Field(default=None, description="Device name, for larger_device.")
    memory_gib: float | None = Field(default=None, description="Its memory, GiB.")
    lora_rank: int | None = Field(default=None, description="Rank, for lora.")
    seq_len: int | None = Field(default=None, description="Tokens, for shorter_sequence.")
    knobs: tuple[str, ...] = Field(default=(), description="Knobs to leave unset, for release.")
    needs_offload: bool = Field(default=False,
                                description="True when this change fits only with offload.")


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
        description="The values tried for each open knob.")
    slowdown: Slowdown
    min_gpu_count: int | None = Field(
        description="Fewest devices of this type on which the run fits at its best layout "
                    "(the user's set knobs kept); None when no count does or memory is unknown.")
    min_gpu_count_without_offload: int | None = Field(
        description="The same without optimizer offload, when offload was open and the fewest "
                    "devices need it; else equal to min_gpu_count.")
    max_micro_batch: int | None = Field(
        description="The largest micro-batch that fits at the chosen layout (activations grow "
                    "linearly with it); None when it does not fit or memory is unknown.")
    min_gpu_count_in_nodes: bool = Field(
        description="True when the fewest devices were counted in whole nodes of 8 (above 64).")
    binding: Binding | None = Field(description="When nothing fits: what binds.")
    remedies: tuple[Remedy, ...] = Field(description="When nothing fits: changes that would fit.")


@dataclass(frozen=True)
class _Pins:
    """The knobs the user set (None: open)."""

    zero: int | None = None
    tp: int | None = None
    pp: int | None = None
    sp: bool | None = None
    ep: int | None = None
    recompute: Recompute | None = None
    micro_batch: int | None = None
    offload: bool | None = None


def _divisible_tp(model: ResolvedModel, gpu_count: int, pp: int) -> list[int]:
    shape = model.shape
    if model.weights_bits < 16:
        return [1]  # quantized frozen weights are not split across tensor-parallel ranks
    # a guessed shape's head count is no constraint: the real model's heads are unknown
    return [t for t in TP_DEGREES if t <= GPUS_PER_NODE and gpu_count % (t * pp) == 0
            and (shape.guessed or (shape.heads % t == 0 and shape.kv_heads % t == 0))]


def _pp_degrees(model: ResolvedModel, gpu_count: int, tp: int) -> list[int]:
    """Pipeline degrees that split the layers evenly (powers of 2 for a guessed shape)."""
    layers = model.shape.layers
    most = min(layers, gpu_count // tp)
    if model.shape.guessed:
        candidates = [2**k for k in range(1, most.bit_length())]
    else:
        candidates = [p for p in range(2, most + 1) if layers % p == 0]
    return [p for p in candidates if p <= most and (gpu_count // tp) % p == 0]


def _candidates(pins: _Pins, model: ResolvedModel, gpu_count: int) -> dict[str, list[object]]:
    """The values each knob may take: the user's, or those the search tries."""
    tps = [pins.tp] if pins.tp is not None else _divisible_tp(model, gpu_count, pins.pp or 1)
    top_tp = max(tps or [1])
    return {
        "zero": [pins.zero] if pins.zero is not None else [0, 1, 2, 3],
        "recompute": [pins.recompute] if pins.recompute is not None else list(RECOMPUTE_ORDER),
        "tp": list(tps),
        "pp": [pins.pp] if pins.pp is not None else [1, *_pp_degrees(model, gpu_count, top_tp)],
        "offload": [pins.offload] if pins.offload is not None else [False, True],
    }


def _layouts(pins: _Pins, model: ResolvedModel, gpu_count: int) -> Iterator[Layout]:
    """Every layout the search may choose, in no particular order."""
    c = _candidates(pins, model, gpu_count)
    ep, mb = pins.ep or 1, pins.micro_batch or 1
    top_tp = max(c["tp"]) if c["tp"] else 1  # type: ignore[type-var]
    for tp in c["tp"]:
        for pp in c["pp"]:
            assert isinstance(tp, int) and isinstance(pp, int)
            if pp > 1 and pins.pp is None and tp != top_tp:
                continue  # pipeline parallelism only once tensor parallelism is exhausted
            if gpu_count % (tp * pp) or (gpu_count // (tp * pp)) % ep:
                continue
            sp = pins.sp if pins.sp is not None else tp > 1
            for zero in c["zero"]:
                for offload in c["offload"]:
                    if offload and zero == 0:
                        continue
                    for recompute in c["recompute"]:
                        yield Layout(zero=zero, tp=tp, pp=pp, sp=sp, ep=ep,  # type: ignore[arg-type]
                                     recompute=recompute, micro_batch=mb,  # type: ignore[arg-type]
                                     offload=offload)  # type: ignore[arg-type]


def _tried(pins: _Pins, layouts: list[Layout]) -> dict[str, list[int | str | bool]]:
    """For each knob the user left open, the values the layouts actually tried take."""
    tried: dict[str, list[int | str | bool]] = {}
    for knob in ("zero", "recompute", "tp", "pp", "offload"):
        if getattr(pins, knob) is None:
            values = {getattr(lay, knob) for lay in layouts}
            order = RECOMPUTE_ORDER if knob == "recompute" else sorted(values)
            tried[knob] = [v for v in order if v in values]
    return tried


class _Costs:
    """Slowdown factors for one model and setup (the FLOP ratios computed once)."""

    def __init__(self, model: ResolvedModel, setup: Setup) -> None:
        shape = model.shape
        if model.architecture is not None:
            terms = flops_per_token(model.architecture, setup.seq_len)
        else:
            terms = rule_of_thumb(model.active, layers=shape.layers, hidden=shape.hidden,
                                  seq_len=setup.seq_len)
        self.recompute = {r: hardware_flops_per_token(terms, r).hardware_over_model
                          for r in RECOMPUTE_ORDER}
        per_layer = sum(i * o for (_, i, o), _n in shape.linear_layers()
                        if _n == shape.layers) or 12 * shape.hidden**2
        moe_share = 0.0
        if shape.moe_layers:
            moe_share = shape.experts_per_token * len(shape.mlp_projections(1)) * \
                shape.hidden * shape.expert_intermediate
        self.layer_weights = float(max(per_layer + moe_share, 1))
        self.hidden = shape.hidden
        self.stack = setup.stack

    def slowdown(self, layout: Layout) -> Slowdown:
        t, p = layout.tp, layout.pp
        tp = 1 + 8 * (t - 1) * self.hidden * TP_FLOPS_PER_BYTE / (3 * self.layer_weights)
        return Slowdown(
            recompute=self.recompute[layout.recompute],
            tensor_parallel=tp,
            pipeline=1 + (p - 1) / (PP_MICROBATCHES_PER_STAGE * p),
            zero=ZERO3_SLOWDOWN if layout.zero >= 3 else 1.0,
            offload=layout.offload,
        )

    def key(self, layout: Layout) -> tuple[float, ...]:
        model_parallel = self.stack == "hf" and (layout.tp > 1 or layout.pp > 1)
        return (float(layout.offload), float(model_parallel),
                round(self.slowdown(layout).total, 9), layout.zero, layout.tp, layout.pp,
                RECOMPUTE_ORDER.index(layout.recompute))


def _fits(model: ResolvedModel, layout: Layout, setup: Setup) -> bool:
    usable = setup.usable_bytes
    return usable is not None and device_bytes(model, layout, setup).total <= usable


def _any_fits(pins: _Pins, model: ResolvedModel, setup: Setup) -> bool:
    """Whether some layout fits. Memory falls with recomputation and offload, and with ZeRO up
    to stage 2 (stage 3 adds the gathered layers), so for each (tp, pp) only the most frugal
    recomputation and offload at ZeRO 2 and 3 (or the stage the user set) are checked."""
    frugal: dict[tuple[int, int, int], Layout] = {}
    for layout in _layouts(pins, model, setup.gpu_count):
        key = (layout.tp, layout.pp, min(layout.zero, 3) if layout.zero >= 2 else -1)
        best = frugal.get(key)
        rank = (layout.zero, layout.offload, RECOMPUTE_ORDER.index(layout.recompute))
        if best is None or rank > (best.zero, best.offload,
                                   RECOMPUTE_ORDER.index(best.recompute)):
            frugal[key] = layout
    return any(_fits(model, layout, setup) for layout in frugal.values())


def _most_frugal(pins: _Pins, model: ResolvedModel, setup: Setup) -> Layout:
    return min(_layouts(pins, model, setup.gpu_count),
               key=lambda lay: device_bytes(model, lay, setup).total)


def _min_gpu_count(pins: _Pins, model: ResolvedModel, setup: Setup) -> tuple[int | None, bool]:
    """Fewest devices on which some layout fits, and whether it is counted in whole nodes.

    Every count up to EXACT_COUNTS is tried; beyond, whole nodes of 8, found by doubling and
    bisection (memory per device falls as devices are added). The answer does not depend on
    the count asked about, so it is computed once per model, pins and device (the plan search
    asks it of many counts of one device type).
    """
    return _min_gpu_count_of(pins, model, replace(setup, gpu_count=1))


@lru_cache(maxsize=512)
def _min_gpu_count_of(pins: _Pins, model: ResolvedModel,
                      setup: Setup) -> tuple[int | None, bool]:
    def fits_on(n: int) -> bool:
        return _any_fits(pins, model, replace(setup, gpu_count=n))

    if fits_on(EXACT_COUNTS):
        return next(n for n in range(1, EXACT_COUNTS + 1) if fits_on(n)), False
    nodes = EXACT_COUNTS // GPUS_PER_NODE * 2
    while not fits_on(nodes * GPUS_PER_NODE):
        nodes *= 2
        if nodes * GPUS_PER_NODE > MAX_DEVICES:
            return None, True
    low, high = nodes // 2, nodes  # low does not fit, high does
    while high - low > 1:
        mid = (low + high) // 2
        if fits_on(mid * GPUS_PER_NODE):
            high = mid
        else:
            low = mid
    return high * GPUS_PER_NODE, True


def _with_offload(pins: _Pins, model: ResolvedModel, setup: Setup) -> bool | None:
    """None when nothing fits; else whether fitting needs offload."""
    if pins.offload is not True and _any_fits(replace(pins, offload=False), model, setup):
        return False
    if pins.offload is not False and _any_fits(pins, model, setup):
        return True
    return None


def _larger_device(pins: _Pins, model: ResolvedModel, setup: Setup,
                   gpu: str | None) -> Remedy | None:
    """A device of the same vendor with more memory: the smallest on which the run fits at the
    same count, else the largest, at its own fewest devices."""
    current = next((a for a in list_accelerators() if a.key == gpu), None)
    capacity = setup.capacity_bytes or 0
    larger = sorted((a for a in list_accelerators()
                     if a.memory_bytes is not None and a.memory_bytes > capacity
                     and (current is None or a.vendor == current.vendor)),
                    key=lambda a: a.memory_bytes or 0)
    for acc in larger:
        there = replace(setup, capacity_bytes=acc.memory_bytes)
        offload = _with_offload(pins, model, there)
        if offload is not None:
            return Remedy(kind="larger_device", gpu=acc.key, accelerator=acc.name,
                          memory_gib=acc.memory_gib, gpu_count=setup.gpu_count,
                          needs_offload=offload)
    if not larger:
        return None
    acc = larger[-1]
    there = replace(setup, capacity_bytes=acc.memory_bytes)
    count, _ = _min_gpu_count(pins, model, there)
    if count is None:
        return None
    return Remedy(kind="larger_device", gpu=acc.key, accelerator=acc.name,
                  memory_gib=acc.memory_gib, gpu_count=count,
                  needs_offload=bool(_with_offload(pins, model, replace(there, gpu_count=count))))


def _remedies(pins: _Pins, model: ResolvedModel, setup: Setup, min_count: int | None,
              min_plain: int | None, gpu: str | None) -> tuple[Binding, tuple[Remedy, ...]]:
    remedies: list[Remedy] = []
    if min_count is not None:
        remedies.append(Remedy(kind="more_devices", gpu_count=min_count,
                               needs_offload=min_plain is None or min_plain > min_count))
    larger = _larger_device(pins, model, setup, gpu)
    if larger is not None:
        remedies.append(larger)
    if model.lora_rank is None and model.trainable >= model.total:
        adapters = float(lora_params(model.shape, LORA_RANK_SUGGESTED))
        lora = replace(model, trainable=adapters, adapters=adapters)
        offload = _with_offload(pins, lora, setup)
        if offload is not None:
            remedies.append(Remedy(kind="lora", lora_rank=LORA_RANK_SUGGESTED,
                                   needs_offload=offload))
    if pins.offload is False and _any_fits(replace(pins, offload=None), model, setup):
        remedies.append(Remedy(kind="offload", needs_offload=True))
    if setup.optimizer_bytes > EIGHT_BIT_ADAM_BYTES:
        offload = _with_offload(pins, model, replace(setup, optimizer_bytes=EIGHT_BIT_ADAM_BYTES))
        if offload is not None:
            remedies.append(Remedy(kind="optimizer_8bit", needs_offload=offload))
    seq = setup.seq_len // 2
    while seq >= SHORTEST_SEQ_LEN:
        offload = _with_offload(pins, model, replace(setup, seq_len=seq))
        if offload is not None:
            remedies.append(Remedy(kind="shorter_sequence", seq_len=seq, needs_offload=offload))
            break
        seq //= 2
    pinned = tuple(k for k in LAYOUT_KNOBS if getattr(pins, k) is not None)
    if pinned and _any_fits(_Pins(ep=pins.ep), model, setup):
        remedies.append(Remedy(kind="release", knobs=pinned,
                               needs_offload=bool(_with_offload(_Pins(ep=pins.ep), model,
                                                                setup))))
        return "pinned", tuple(remedies)
    frugal = device_bytes(model, _most_frugal(pins, model, setup), setup)
    binding: Binding = ("activations" if frugal.activations > frugal.total - frugal.activations
                        else "model_states")
    return binding, tuple(remedies)


def pins_of(spec: ModelAndLayout) -> _Pins:
    """The knobs ``spec`` sets."""
    return _Pins(**{k: getattr(spec, k) for k in LAYOUT_KNOBS})


def search_layout(
    model: ResolvedModel, setup: Setup, spec: OnDevices
) -> tuple[Layout, DeviceBytes, LayoutChoice]:
    """The cheapest layout of ``model`` that fits (module docstring), its memory and how it was
    found. When nothing fits, the most frugal layout, with what binds and what would fit."""
    pins = pins_of(spec)
    costs = _Costs(model, setup)
    layouts = sorted(_layouts(pins, model, setup.gpu_count), key=costs.key)
    tried = _tried(pins, layouts)
    open_knobs = tuple(tried)
    if setup.usable_bytes is None or not open_knobs:
        layout = layouts[0] if layouts else Layout()
        memory = device_bytes(model, layout, setup)
        fits = None if setup.usable_bytes is None else memory.total <= setup.usable_bytes
        chosen: Literal["given", "search", "default"] = "given" if not open_knobs else "default"
        return layout, memory, _choice(chosen, fits, open_knobs, tried, costs.slowdown(layout),
                                       pins, model, setup, spec.gpu, layout)
    if _any_fits(pins, model, setup):
        for layout in layouts:
            memory = device_bytes(model, layout, setup)
            if memory.total <= setup.usable_bytes:
                return layout, memory, _choice("search", True, open_knobs, tried,
                                               costs.slowdown(layout), pins, model, setup,
                                               spec.gpu, layout)
    layout = _most_frugal(pins, model, setup)
    return layout, device_bytes(model, layout, setup), _choice(
        "search", False, open_knobs, tried, costs.slowdown(layout), pins, model, setup, spec.gpu,
        layout)


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
            slowdown: Slowdown, pins: _Pins, model: ResolvedModel, setup: Setup,
            gpu: str | None, layout: Layout) -> LayoutChoice:
    min_count, in_nodes = (None, False) if setup.usable_bytes is None else _min_gpu_count(
        pins, model, setup)
    min_plain = min_count
    if min_count is not None and pins.offload is None:
        min_plain, _ = _min_gpu_count(replace(pins, offload=False), model, setup)
    binding: Binding | None = None
    remedies: tuple[Remedy, ...] = ()
    if fits is False:
        binding, remedies = _remedies(pins, model, setup, min_count, min_plain, gpu)
    pinned = tuple(k for k in LAYOUT_KNOBS if getattr(pins, k) is not None)
    return LayoutChoice(chosen_by=chosen_by, fits=fits, open_knobs=open_knobs, pinned=pinned,
                        max_micro_batch=(_max_micro_batch(model, layout, setup) if fits
                                         else None),
                        tried=tried,
                        slowdown=slowdown, min_gpu_count=min_count,
                        min_gpu_count_without_offload=min_plain,
                        min_gpu_count_in_nodes=in_nodes, binding=binding,
                        remedies=remedies)

