"""The accelerator catalog: dense peaks, memory, bandwidth and dated prices, each with its source.

The data lives in ``data/accelerators.json`` inside the package, compiled from public datasheets
and dated price observations. Peaks are the *dense* figures: NVIDIA datasheets since Ampere print
tensor throughput with 2:4 sparsity, which is twice what dense training can use. A figure that no
source gives is ``None`` (unknown), never 0.

Every price quote has one kind: ``on-demand``, ``reserved`` or ``spot``. A device's default price
is its newest on-demand quote; :meth:`Accelerator.price` picks the newest quote of a chosen kind,
so that one comparison never mixes kinds, and where the seller rents the device only in machines
of fixed sizes, the machine that holds the run (:mod:`.prices`).
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib import resources
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    field_validator,
    model_validator,
)

from ..errors import InputError, UnknownAcceleratorError
from ..vocabulary import FiniteResult, normalize_name
from .prices import (
    DEFAULT_PRICE_KIND,
    PRICE_KINDS,
    PRICE_SOURCES,
    PriceKind,
    PriceQuote,
    PriceUsed,
    as_of_key,
    rental,
    source_label,
)

__all__ = [
    "DEFAULT_PRICE_KIND",
    "GPU_DESCRIPTION",
    "PRICE_KINDS",
    "PRICE_SOURCES",
    "Accelerator",
    "AcceleratorKey",
    "Catalog",
    "CatalogQuery",
    "DeviceUnit",
    "PeakTflops",
    "Precision",
    "PriceKind",
    "PriceQuote",
    "PriceUsed",
    "as_of_key",
    "find_accelerators",
    "get_accelerator",
    "list_accelerators",
    "load_catalog",
    "source_label",
]

Precision = Literal["bf16", "fp16", "fp8"]
DeviceUnit = Literal["GPU", "chip"]
GIB = 2**30


class PeakTflops(BaseModel):
    """Dense peak tensor throughput per device, in TFLOP/s (10¹² FLOP/s), by precision."""

    model_config = ConfigDict(frozen=True)

    bf16: float | None = Field(description="Dense BF16 tensor peak in TFLOP/s; None if unknown.")
    fp16: float | None = Field(description="Dense FP16 tensor peak in TFLOP/s; None if unknown.")
    fp8: float | None = Field(description="Dense FP8 tensor peak in TFLOP/s; None if unknown.")

    def get(self, precision: Precision) -> float | None:
        """The dense peak for ``precision`` in TFLOP/s, or None when no source gives it."""
        value: float | None = getattr(self, precision)
        return value


class Accelerator(BaseModel):
    """One accelerator (GPU, TPU chip, Gaudi) as software sees it: one device."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(description="Short name accepted as the GPU name, e.g. 'h100-sxm'.")
    name: str = Field(description="Full name, e.g. 'H100 SXM'.")
    vendor: str
    generation: str = Field(description="Architecture generation, e.g. 'ampere', 'hopper'.")
    device_unit: DeviceUnit = Field(
        default="GPU", description="What one device is called in device-hours: 'GPU', or 'chip' "
                                   "for TPU, Trainium and Gaudi (their vendors price chip-hours).")
    aliases: tuple[str, ...] = Field(description="Other names accepted for this device.")
    peak_tflops: PeakTflops
    memory_gib: float | None = Field(description="Device memory in GiB (2³⁰ bytes), as the vendor "
                                                 "lists it (nominal).")
    usable_memory_gib: float | None = Field(
        default=None,
        description="Memory a program can allocate, in GiB, where it is less than the nominal "
                    "memory: GDDR cards with ECC on (on by default in data centres) keep 1/16 of "
                    "it for the check bits; None when all of the nominal memory is usable.")
    usable_memory_source: str | None = Field(
        default=None, description="Where the usable memory comes from; None when it is unset.")
    memory_bandwidth_tbs: float | None = Field(description="Memory bandwidth in TB/s.")
    spec_source: str = Field(description="Where the peaks, memory and bandwidth come from.")
    spec_as_of: str = Field(
        description="When the spec source was published or read: YYYY, YYYY-MM or YYYY-Qn.")
    board_power_w: float | None = Field(
        default=None,
        description="Board power per device in watts: the datasheet's maximum (TDP / peak board "
                    "power), an upper bound on the draw; None when no source gives it.")
    board_power_source: str | None = Field(
        default=None, description="Where the board power comes from; None when it is unknown.")
    prices: tuple[PriceQuote, ...] = Field(
        description="Dated price observations, each of one kind (on-demand, reserved, spot).")

    @field_validator("spec_as_of")
    @classmethod
    def _spec_dated(cls, value: str) -> str:
        as_of_key(value)
        return value

    @model_validator(mode="after")
    def _usable_memory_is_sourced(self) -> Accelerator:
        if (self.usable_memory_gib is None) != (self.usable_memory_source is None):
            raise ValueError(f"{self.key}: a usable memory needs its source (and a source a value)")
        if self.usable_memory_gib is not None and (
                self.memory_gib is None or not 0 < self.usable_memory_gib <= self.memory_gib):
            raise ValueError(f"{self.key}: the usable memory must be positive and at most the "
                             "nominal memory")
        return self

    @model_validator(mode="after")
    def _default_is_newest_on_demand(self) -> Accelerator:
        defaults = [q for q in self.prices if q.default]
        on_demand = [q for q in self.prices if q.kind == DEFAULT_PRICE_KIND]
        if len(defaults) != (1 if on_demand else 0):
            raise ValueError(f"{self.key}: exactly one default price when an on-demand quote "
                             f"exists (none otherwise), found {len(defaults)}")
        if defaults and defaults[0] is not self._newest(DEFAULT_PRICE_KIND):
            raise ValueError(f"{self.key}: the default price must be the newest on-demand quote")
        return self

    def _newest(self, kind: PriceKind) -> PriceQuote | None:
        """The newest quote of ``kind`` (the first listed among equally dated ones)."""
        best: PriceQuote | None = None
        for quote in self.prices:
            if quote.kind == kind and (best is None
                                       or as_of_key(quote.as_of) > as_of_key(best.as_of)):
                best = quote
        return best

    @property
    def price_kinds(self) -> tuple[PriceKind, ...]:
        """The kinds of price the catalog has a quote of for this device, in PRICE_KINDS order."""
        return tuple(k for k in PRICE_KINDS if any(q.kind == k for q in self.prices))

    @property
    def memory_bytes(self) -> float | None:
        """Memory a program can allocate, in bytes: the usable memory where the catalog gives it
        (GDDR with ECC on), else the nominal memory; None when unknown. Every fit check uses it."""
        gib = self.usable_memory_gib if self.usable_memory_gib is not None else self.memory_gib
        return None if gib is None else gib * GIB

    @computed_field  # type: ignore[prop-decorator]
    @property
    def default_price(self) -> PriceQuote | None:
        """The catalog's default price: the newest on-demand quote, or None when there is none."""
        for quote in self.prices:
            if quote.default:
                return quote
        return None

    def price(self, given: float | None, kind: str | None = None,
              gpu_count: int = 1) -> PriceUsed:
        """The price a plan of ``gpu_count`` devices uses: ``given`` (yours) when set; else the
        newest catalog quote of ``kind``; else, with no kind chosen, the default (newest
        on-demand) quote or unknown. A quote of a fixed-size machine becomes the machine that
        holds the run (:func:`.prices.rental`).

        A ``kind`` that is not a price kind, or that this device has no quote of, raises
        :class:`InputError` on ``price_kind`` listing the kinds it has."""
        if kind is not None and kind not in PRICE_KINDS:
            raise InputError("price_kind", kind, f"one of {', '.join(PRICE_KINDS)}")
        chosen = self.default_price if kind is None else self._newest(kind)
        if given is not None or chosen is None:
            if given is None and kind is not None:
                has = self.price_kinds
                allowed = (f"one of the kinds the catalog quotes for {self.name}: "
                           f"{', '.join(has)}" if has
                           else f"none: the catalog has no price for {self.name}; give "
                                "usd_per_gpu_hour yourself")
                raise InputError("price_kind", kind, allowed)
            return PriceUsed.of(given, None)
        return PriceUsed.of(None, rental(self.prices, chosen, gpu_count), gpu_count)

    def host_ram(self, gpu_count: int) -> tuple[float, str] | None:
        """CPU RAM per device used, GiB, of the machines the default price rents ``gpu_count``
        devices in (a machine filled only partly shares its RAM among fewer devices; of two
        sizes, the one with less per device), and those machines; None when the price names no
        machine or its RAM."""
        base = self.default_price
        if base is None or base.instance is None:
            return None
        rented = rental(self.prices, base, gpu_count)
        quote, extra, machines = rented.quote, rented.extra, rented.machines
        if quote.host_ram_gib is None or quote.gpus is None:
            return None
        each = f"{machines} × {quote.instance}" if machines > 1 else quote.instance
        gpus = f"{quote.gpus} device{'s' if quote.gpus > 1 else ''}{' each' * (machines > 1)}"
        if extra is not None and extra.host_ram_gib is not None and extra.gpus is not None:
            rest = gpu_count - machines * quote.gpus
            per_device = min(quote.host_ram_gib / quote.gpus, extra.host_ram_gib / rest)
            return (per_device, f"{each}: {quote.host_ram_gib:g} GiB for {gpus}, and "
                                f"{extra.instance}: {extra.host_ram_gib:g} GiB for {rest} "
                                "used, the instances priced")
        used = f", {gpu_count} used" if rented.paid > gpu_count else ""
        return (quote.host_ram_gib * machines / gpu_count,
                f"{each}: {quote.host_ram_gib:g} GiB for {gpus}{used}, the instance priced")

    def rented_count(self, gpu_count: int | None) -> int | None:
        """The devices the default price's machines pay for to hold ``gpu_count`` (20 TPU v5p:
        a v5p-64 of 32; 2 T4: a g4dn.12xlarge of 4), when more; None when they are as many, the
        price is per device, there is none, or the count is None (unknown)."""
        base = self.default_price
        if gpu_count is None or base is None or base.instance is None:
            return None
        paid = rental(self.prices, base, gpu_count).paid
        return paid if paid > gpu_count else None

    @property
    def peak_precisions(self) -> tuple[Precision, ...]:
        """The precisions the catalog has a dense peak at, BF16 first, then FP16, then FP8."""
        return tuple(p for p in ("bf16", "fp16", "fp8") if self.peak_tflops.get(p) is not None)

    @property
    def default_precision(self) -> Precision:
        """BF16 where the device has it, else FP16 (V100), else FP8."""
        return next(iter(self.peak_precisions), "bf16")

    def peak(self, precision: Precision) -> float:
        """Dense peak in TFLOP/s for ``precision``; InputError when the catalog does not know it."""
        value = self.peak_tflops.get(precision)
        if value is None:
            known = self.peak_precisions
            if known:
                allowed = (
                    f"the {precision} peak of {self.name} is unknown or unsupported; "
                    f"known: {', '.join(known)} (or give peak_tflops yourself)"
                )
            else:
                allowed = (
                    f"no published dense tensor peak is known for {self.name}; give "
                    "peak_tflops (its dense TFLOP/s) yourself"
                )
            raise InputError("precision" if known else "gpu", precision if known else self.key,
                             allowed)
        return value


class Catalog(FiniteResult):
    """All accelerators the package knows, with the date the catalog was compiled."""

    model_config = ConfigDict(frozen=True)

    compiled: str = Field(description="Date the catalog was compiled (YYYY-MM-DD).")
    notes: str
    accelerators: tuple[Accelerator, ...]


@cache
def load_catalog() -> Catalog:
    """Load the packaged catalog (cached)."""
    text = resources.files("compute_budget.skill").joinpath("data/accelerators.json").read_text(
        encoding="utf-8"
    )
    return Catalog.model_validate(json.loads(text))


@cache
def _index() -> dict[str, Accelerator]:
    index: dict[str, Accelerator] = {}
    for acc in load_catalog().accelerators:
        for label in (acc.key, acc.name, *acc.aliases):
            index.setdefault(normalize_name(label), acc)
    return index


def list_accelerators() -> tuple[Accelerator, ...]:
    """Every accelerator in the catalog, in catalog order."""
    return load_catalog().accelerators


def get_accelerator(name: str, field: str = "gpu") -> Accelerator:
    """Look an accelerator up by key, full name or alias, ignoring case, spaces and punctuation.

    An unknown name raises :class:`UnknownAcceleratorError` with the closest catalog names.
    """
    if not isinstance(name, str) or not name.strip():
        raise InputError(field, name, "an accelerator name such as 'h100' or 'a100-80gb'")
    index = _index()
    found = index.get(normalize_name(name))
    if found is not None:
        return found
    wanted = normalize_name(name)
    close = difflib.get_close_matches(wanted, list(index), n=6, cutoff=0.5)
    suggestions: list[str] = []
    for label in close:
        key = index[label].key
        if key not in suggestions:
            suggestions.append(key)
    raise UnknownAcceleratorError(field, name, suggestions[:3])


def _catalog_key(name: str) -> str:
    return get_accelerator(name).key


AcceleratorKey = Annotated[str, AfterValidator(_catalog_key)]
"""An accelerator name, alias or key, validated against the catalog and stored as its key."""
GPU_DESCRIPTION = "Catalog accelerator, e.g. 'h100' or 'tpu-v5p'."
"""The description of every spec's ``gpu`` field."""


class CatalogQuery(BaseModel):
    """Which accelerators to list: all, or those a part of a name matches."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str | None = Field(
        default=None, max_length=100,
        description="Part of a device name, key, alias, vendor or generation (e.g. 'h100', "
                    "'AMD', 'hopper'); omit for the whole catalog.",
    )


def find_accelerators(spec: CatalogQuery) -> Catalog:
    """The catalog, or the devices whose key, name, vendor, generation or an alias contains
    ``spec.query`` (ignoring case, spaces and punctuation)."""
    catalog = load_catalog()
    if not spec.query:
        return catalog
    wanted = normalize_name(spec.query)
    chosen = tuple(a for a in catalog.accelerators
                   if any(wanted in normalize_name(label)
                          for label in (a.key, a.name, a.vendor, a.generation, *a.aliases)))
    if not chosen:
        raise InputError("query", spec.query,
                         "part of a catalog device's name, key, alias, vendor or generation "
                         "(matches none); leave it out for the whole catalog")
    return Catalog(compiled=catalog.compiled, notes=catalog.notes, accelerators=chosen)
