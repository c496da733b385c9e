"""The layouts a training step may take, and which of them fit: shared by the layout search
(:mod:`.layout`) and what would fit when nothing does (:mod:`.remedies`).

For every knob the user left unset (:class:`Pins` holds those set), the layouts take each value
the search tries: ZeRO 0 to 3, each recomputation, tensor-parallel degrees of 1, 2, 4 and 8 that
divide the device count, pipeline degrees that split the layers evenly (tried only once tensor
parallelism is at its largest degree), for a mixture of experts on the ``megatron`` stack
expert-parallel degrees of 1 and every divisor of the routed experts that divides the
data-parallel degree (its all-to-all of the tokens is not priced; the ``hf`` stack's tools do not
shard experts), optimizer offload (only with ZeRO ≥ 1) and, beyond it, weight offload (only at
ZeRO 3 with optimizer offload, the way DeepSpeed's ``offload_param`` and FSDP's parameter
offload work: :mod:`.states`), for a frozen base only (LoRA, QLoRA or frozen parameters: the
case of FSDP+QLoRA and Axolotl's layer offloading, where the streamed weights need no gradient
and no CPU optimizer step) and on a device with a host offload path
(not TPUs, Trainium or Gaudi: :mod:`..hardware.host`). Full training with its weights offloaded
as well (ZeRO-Infinity, about 16 bytes of CPU memory per parameter) is not tried: its copies
of every trained weight and gradient per micro-batch have no published timing here to be
priced against.
Offload's CPU-resident states must fit in the host's RAM (:attr:`.states.Setup.host_capacity_bytes`,
at :data:`.states.HOST_USABLE_FRACTION`): a level of offload that needs more is closed
(:func:`host_pins`), weight offload first. With a 4- or
8-bit frozen base (bitsandbytes) tensor parallelism is not tried at all. Tensor parallelism
stays within a node of 8 devices and divides the attention and key-value heads; sequence
parallelism goes with it unless the user turned it off (it splits the activations the
tensor-parallel ranks would otherwise share, at no extra communication; Korthikanti et al.
2022). The micro-batch is 1 unless given. Memory only falls as ZeRO, recomputation, tensor,
expert parallelism and offload rise, so when the most frugal layout does not fit, nothing
does. Weight offload needs no knob of its own: it is tried wherever optimizer offload is
(``offload`` open or set), after it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from types import MappingProxyType

from ..hardware.host import host_platform
from ..vocabulary import GPUS_PER_NODE, LAYOUT_KNOBS, RECOMPUTE_ORDER, Recompute, Stack
from .spec import ModelAndLayout, ResolvedModel
from .states import Layout, Setup, device_bytes, host_bytes

__all__ = [
    "TP_DEGREES",
    "Pins",
    "all_layouts",
    "any_fits",
    "ep_degrees",
    "fitting_groups",
    "frugal_key",
    "host_fits",
    "host_pins",
    "most_frugal",
    "pins_of",
    "searched_layouts",
]

TP_DEGREES = (1, 2, 4, 8)


@dataclass(frozen=True)
class Pins:
    """The knobs the user set (None: open)."""

    zero: int | None = None
    tp: int | None = None
    pp: int | None = None
    sp: bool | None = None
    ep: int | None = None
    recompute: Recompute | None = None
    micro_batch: int | None = None
    offload: bool | None = None
    offload_weights: bool | None = None
    """False when the device has no host offload path (TPU, Trainium, Gaudi): its weights are
    never streamed. Not a knob the user sets."""
    expert_parallel: bool = True
    """False on the ``hf`` stack, whose tools (FSDP, DeepSpeed ZeRO through the Trainer) do not
    shard the experts: the search keeps EP at 1 unless the user sets it. Not a knob the user
    sets."""


def pins_of(spec: ModelAndLayout, stack: Stack | None = None) -> Pins:
    """The knobs ``spec`` sets, whether its device can stream weights from the host, and
    whether the search may try expert parallelism on ``stack`` (default the spec's)."""
    acc = getattr(spec, "accelerator", None)
    stream = None if acc is None or host_platform(acc.key) is not None else False
    stack = stack or getattr(spec, "resolved_stack", None)
    return Pins(**{k: getattr(spec, k) for k in LAYOUT_KNOBS}, offload_weights=stream,
                expert_parallel=stack != "hf")


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


def _candidates(pins: Pins, model: ResolvedModel, gpu_count: int) -> dict[str, list[object]]:
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


def all_layouts(pins: Pins, model: ResolvedModel, gpu_count: int) -> Iterator[Layout]:
    """Every layout the search may choose, at every expert-parallel degree, smaller degrees
    first where the rest is the same."""
    return iter(_layouts(pins, model, gpu_count, every_ep=True))


def searched_layouts(pins: Pins, model: ResolvedModel, gpu_count: int) -> tuple[Layout, ...]:
    """The layouts the search ranks: :func:`all_layouts` at the largest expert-parallel degree
    only (:func:`ep_degrees`)."""
    return _layouts(pins, model, gpu_count)


@lru_cache(maxsize=1024)
def _layouts(pins: Pins, model: ResolvedModel, gpu_count: int,
             every_ep: bool = False) -> tuple[Layout, ...]:
    """The layouts, cached: they depend on the model and the count, not the device (a plan
    search asks for the same counts on every device type)."""
    c = _candidates(pins, model, gpu_count)
    mb = pins.micro_batch or 1
    top_tp = max(c["tp"]) if c["tp"] else 1  # type: ignore[type-var]
    stream = model.frozen and pins.offload_weights is not False
    out: list[Layout] = []
    for tp in c["tp"]:
        for pp in c["pp"]:
            assert isinstance(tp, int) and isinstance(pp, int)
            if pp > 1 and pins.pp is None and tp != top_tp:
                continue  # pipeline parallelism only once tensor parallelism is exhausted
            if gpu_count % (tp * pp):
                continue
            sp = pins.sp if pins.sp is not None else tp > 1
            degrees = ep_degrees(pins, model, gpu_count // (tp * pp))
            for ep in degrees if every_ep else degrees[-1:]:
                for zero in c["zero"]:
                    for offload, weights in _offloads(c["offload"], zero, stream):
                        out += [Layout(zero=zero, tp=tp, pp=pp, sp=sp,  # type: ignore[arg-type]
                                       ep=ep, recompute=recompute,  # type: ignore[arg-type]
                                       micro_batch=mb, offload=offload, offload_weights=weights)
                                for recompute in c["recompute"]]
    return tuple(out)


@lru_cache(maxsize=4096)
def ep_degrees(pins: Pins, model: ResolvedModel, dp: int) -> tuple[int, ...]:
    """Expert-parallel degrees the search tries at data-parallel degree ``dp``, smallest first:
    the user's (when it divides ``dp``), else 1 and, where the stack shards experts, every
    divisor of the routed experts that divides ``dp``. The layouts carry only the largest:
    memory and ZeRO-3's bytes never rise with the degree and its all-to-all is not priced, so
    the search tries the smaller ones only at the layout it chose, for the smallest that fits
    at the same cost (:func:`.layout.search_layout`)."""
    if pins.ep is not None:
        return (pins.ep,) if dp % pins.ep == 0 else ()
    experts = model.shape.experts if pins.expert_parallel else 0
    return (1, *(e for e in range(2, min(experts, dp) + 1) if experts % e == 0 and dp % e == 0))


def _offloads(values: list[object], zero: object, stream: bool) -> list[tuple[bool, bool]]:
    """(optimizer offload, weight offload) pairs tried at ZeRO stage ``zero``: offload needs
    ZeRO ≥ 1, weight offload ZeRO 3, optimizer offload and ``stream`` (a frozen base on a
    device with a host offload path)."""
    pairs = [(False, False)] if False in values else []
    if True in values and zero != 0:
        pairs.append((True, False))
        if zero == 3 and stream:
            pairs.append((True, True))
    return pairs


def host_fits(model: ResolvedModel, layout: Layout, setup: Setup) -> bool:
    """Whether ``layout``'s offloaded states fit in the host's usable CPU RAM (True without
    offload or without a known RAM size)."""
    limit = setup.host_usable_bytes
    return limit is None or not layout.offload or host_bytes(model, layout, setup) <= limit


@lru_cache(maxsize=4096)
def host_pins(pins: Pins, model: ResolvedModel, setup: Setup) -> Pins | None:
    """``pins`` with the offload levels whose CPU-resident states exceed the host's usable RAM
    closed: weight offload, then all offload when the user left it open; None when the offload
    the user set needs more RAM than there is. A level's CPU memory per device is the offloaded
    states over the devices whatever the layout (the gradients are partitioned on the host at
    ZeRO 1 as at 2: :func:`.states.host_bytes`), so one probe layout per level decides; the
    search still checks each layout it chooses (:func:`host_fits`)."""
    if setup.host_usable_bytes is None or pins.offload is False or pins.zero == 0:
        return pins
    probe = Layout(zero=3 if pins.zero is None else pins.zero, tp=pins.tp or 1, pp=pins.pp or 1,
                   ep=pins.ep or 1, offload=True)
    if (model.frozen and probe.zero == 3 and pins.offload_weights is not False
            and not host_fits(model, replace(probe, offload_weights=True), setup)):
        pins = replace(pins, offload_weights=False)
    if host_fits(model, probe, setup):
        return pins
    return None if pins.offload else replace(pins, offload=False, offload_weights=False)


FrugalKey = tuple[int, int, int]
"""A group of layouts: tensor degree, pipeline degree, ZeRO class (3, 2, or -1 below 2)."""


def any_fits(pins: Pins, model: ResolvedModel, setup: Setup) -> bool:
    """Whether some layout fits (only the most frugal ones need checking: :func:`_frugal`)."""
    return bool(fitting_groups(pins, model, setup))


def fitting_groups(pins: Pins, model: ResolvedModel, setup: Setup) -> frozenset[FrugalKey]:
    """The groups (:func:`frugal_key`) whose most frugal layout fits: no layout of another
    group can fit, so the search need not size them."""
    usable = setup.usable_bytes
    allowed = host_pins(pins, model, setup.sizing())
    if usable is None or allowed is None:
        return frozenset()
    least = _frugal_bytes(allowed, model, replace(setup.sizing(), capacity_bytes=None,
                                                  host_capacity_bytes=None, gpu=None))
    return frozenset(key for key, total in least.items() if total <= usable)


@lru_cache(maxsize=4096)
def _frugal_bytes(pins: Pins, model: ResolvedModel, setup: Setup) -> Mapping[FrugalKey, float]:
    """Bytes per device of each group's most frugal layout. They do not depend on the device's
    memory, so a plan search sizes them once for every device type (``setup`` comes without
    its capacity)."""
    frugal = _frugal(pins, model, setup.gpu_count)
    return MappingProxyType({key: device_bytes(model, layout, setup).total
                             for key, layout in frugal.items()})


def frugal_key(layout: Layout) -> FrugalKey:
    """The group whose most frugal member bounds ``layout``'s memory from below: its tensor and
    pipeline degrees, and ZeRO 3, ZeRO 2, or below 2 (where stage 1 holds no more than 0)."""
    return layout.tp, layout.pp, min(layout.zero, 3) if layout.zero >= 2 else -1


@lru_cache(maxsize=1024)
def _frugal(pins: Pins, model: ResolvedModel, gpu_count: int) -> Mapping[FrugalKey, Layout]:
    """Memory falls with recomputation, offload (weight offload below optimizer offload) and
    expert parallelism, and with ZeRO up to stage 2 (stage 3 adds the gathered layers), so for
    each (tp, pp) only the most frugal recomputation, offload and expert degree at ZeRO 2 and 3
    (or the stage the user set) can be the one that fits."""
    frugal: dict[FrugalKey, Layout] = {}
    for layout in _layouts(pins, model, gpu_count):
        key = frugal_key(layout)
        best = frugal.get(key)
        if best is None or _thrift(layout) > _thrift(best):
            frugal[key] = layout
    return MappingProxyType(frugal)  # cached: shared by every caller, so read-only


def _thrift(layout: Layout) -> tuple[int, bool, bool, int, int]:
    """How frugal a layout of one group is: memory never rises with any of these."""
    return (layout.zero, layout.offload, layout.offload_weights,
            RECOMPUTE_ORDER.index(layout.recompute), layout.ep)


def most_frugal(pins: Pins, model: ResolvedModel, setup: Setup) -> Layout:
    """The layout that needs the least device memory, whatever its offload needs of the host
    (a reply shows both)."""
    return min(searched_layouts(pins, model, setup.gpu_count),
               key=lambda lay: device_bytes(model, lay, setup).total)
