"""Dated rental prices: one quote per offer, the price a run uses, and the instance it is rented in.

Every price quote has one kind: ``on-demand``, ``reserved`` or ``spot``. A device's default price
is its newest on-demand quote (the rule of :data:`PRICE_SOURCES`).

Some sellers rent a device only inside a machine of a fixed size: AWS's g4dn, g5 and g6
instances hold 1, 4 or 8 T4, A10G or L4 GPUs, and the one-GPU instance is cheapest per GPU
(g5.xlarge $1.006/h against g5.48xlarge's $16.288/h for 8, $2.036 each: the larger instances
carry more CPUs and RAM per GPU); DigitalOcean's MI300X and MI325X droplets hold 1 or 8. A run
on several devices that talk to each other must rent them in one machine, so its price is the
cheapest instance that holds them (:func:`rental`): the quotes of one seller and date
that name an ``instance`` are its sizes. A run larger than the
largest instance takes as many of the largest as it fills and the cheapest instance that holds the
rest (12 T4: a g4dn.metal of 8 and a g4dn.12xlarge of 4, $0.98 per T4 where two g4dn.metal were
$1.30); the network between them is not modelled. A run that fills
an instance only partly pays for all of it: the price per device used is the instance's over the
devices used (3 T4 in a g4dn.12xlarge of 4: $3.912/h over 3 = $1.304 per GPU-hour). Per-device
marketplaces (RunPod, Lambda's multi-GPU list) name no instance and price any count alike.

The instance also sets the host's CPU RAM, which CPU offload must fit in
(:meth:`..catalog.Accelerator.host_ram`): a g4dn.xlarge has 16 GiB for its T4.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["DEFAULT_PRICE_KIND", "PRICE_KINDS", "PRICE_SOURCES", "InstanceNetwork", "PriceKind",
           "PriceQuote", "PriceUsed", "Rental", "as_of_key", "rental",
           "source_label", "spanning"]

PriceKind = Literal["on-demand", "reserved", "spot"]
"""How a price is bought: ``on-demand`` (pay as you go, no commitment), ``reserved`` (a
commitment or a booked block of capacity) or ``spot`` (preemptible, can be taken back)."""
PRICE_KINDS: tuple[PriceKind, ...] = get_args(PriceKind)
InstanceNetwork = Literal["separate", "tp_spans"]
"""What crosses the network between the machines a run is priced in, which no estimate models:
``separate``, machines of one device each, so every byte between devices (the gradient
all-reduce at least) does; ``tp_spans``, the layout's tensor-parallel group is larger than a
machine, so its traffic, priced as on the devices' own link, does."""
DEFAULT_PRICE_KIND: PriceKind = "on-demand"
PRICE_SOURCES: tuple[str, ...] = (
    "runpod", "lambda", "aws", "digitalocean", "coreweave", "google-cloud")
"""The one rule that picks a device's default (on-demand) price: the first of these public
on-demand list prices that quotes the device. GPUs: RunPod's Secure Cloud list (one marketplace
for every GPU it rents, so that within it a faster GPU is not cheaper by accident), then Lambda's
on-demand list, then AWS EC2 on-demand (us-east-1 Linux, the instance that holds the run's
devices: module docstring), then DigitalOcean's, then CoreWeave's; TPUs: Google Cloud's
per-chip list (no other seller); AWS's own chips: AWS.
A device none of them quotes has no default: its price is unknown, never $0."""

_AS_OF = re.compile(r"^(\d{4})(?:-(0[1-9]|1[0-2])|-Q([1-4]))?$")


def as_of_key(as_of: str) -> tuple[int, int]:
    """A sortable (year, month) for an ``as_of`` date: ``'2026-11'`` → (2026, 11), a quarter
    counts as its last month (``'2026-Q1'`` → (2026, 3)), a bare year as month 0 (before any
    dated month of that year). ValueError for any other shape."""
    match = _AS_OF.match(as_of)
    if match is None:
        raise ValueError(f"as_of {as_of!r} is not YYYY, YYYY-MM or YYYY-Qn")
    year, month, quarter = match.groups()
    if month is not None:
        return int(year), int(month)
    if quarter is not None:
        return int(year), 3 * int(quarter)
    return int(year), 0


class PriceQuote(BaseModel):
    """One dated observation of a rental price, of one kind (on-demand, reserved or spot)."""

    model_config = ConfigDict(frozen=True)

    usd_per_gpu_hour: float = Field(gt=0, description="US dollars per device-hour.")
    kind: PriceKind = Field(
        description="How the price is bought: 'on-demand' (no commitment), 'reserved' (a "
                    "commitment or booked capacity) or 'spot' (preemptible).")
    offer: str = Field(description="The offer quoted: provider, instance or tier, range.")
    as_of: str = Field(description="When the price was observed: YYYY, YYYY-MM or YYYY-Qn.")
    source: str = Field(description="Where the price comes from.")
    family: str | None = Field(
        default=None,
        description="The public price list the quote belongs to, one of PRICE_SOURCES ('runpod', "
                    "'lambda', 'aws', 'digitalocean', 'coreweave', 'google-cloud'); None for an "
                    "observation outside the rule (an older survey, a reservation).")
    default: bool = Field(
        default=False,
        description="Whether this is the catalog's default price: the newest on-demand quote.")
    instance: str | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The machine the offer rents, where the seller rents the device only in "
                    "machines of fixed sizes (e.g. 'g5.48xlarge'); None for a per-device price.")
    gpus: int | None = Field(
        default=None, ge=1, exclude_if=lambda v: v is None,
        description="Devices in that machine; the quote is its price over them.")
    host_ram_gib: float | None = Field(
        default=None, gt=0, exclude_if=lambda v: v is None,
        description="That machine's CPU RAM, GiB, shared by its devices.")
    joins_up_to: int | None = Field(
        default=None, ge=1, exclude_if=lambda v: v is None,
        description="Whole machines of this instance join into one slice of up to this many "
                    "devices over the device's own links (TPU v4 and v5p cubes of 64 chips); "
                    "None: machines are joined by a network.")

    @field_validator("as_of")
    @classmethod
    def _dated(cls, value: str) -> str:
        as_of_key(value)
        return value

    @model_validator(mode="after")
    def _instance_has_size(self) -> PriceQuote:
        if (self.instance is None) != (self.gpus is None):
            raise ValueError(f"{self.offer}: an instance needs its device count (and a count "
                             "its instance)")
        if self.host_ram_gib is not None and self.instance is None:
            raise ValueError(f"{self.offer}: host RAM is an instance's")
        return self


class Rental(NamedTuple):
    """The machines that rent a run: ``machines`` of ``quote``'s, and one of ``extra``'s for the
    devices the last of them would leave empty (None when they fill it or it is per device);
    ``joined`` when the machines form one slice (:attr:`PriceQuote.joins_up_to`)."""

    quote: PriceQuote
    machines: int
    extra: PriceQuote | None = None
    joined: bool = False

    @property
    def paid(self) -> int:
        """Devices paid for."""
        return (self.machines * (self.quote.gpus or 1)
                + (0 if self.extra is None else self.extra.gpus or 1))


def _machine_usd(quote: PriceQuote) -> float:
    return quote.usd_per_gpu_hour * (quote.gpus or 1)


def rental(quotes: Sequence[PriceQuote], base: PriceQuote, gpu_count: int) -> Rental:
    """The machines that rent ``gpu_count`` devices: ``base`` itself unless it names an
    instance; else, among the instances of ``base``'s seller, kind and date, the one holding the
    run at the lowest price per hour, ties to the fewest devices paid; a run larger than the
    largest instance takes as many of the largest as it fills and the cheapest instance that
    holds the rest (module docstring)."""
    if base.instance is None:
        return Rental(base, gpu_count)
    sizes = [q for q in quotes if q.instance is not None and q.kind == base.kind
             and q.family == base.family and q.as_of == base.as_of]
    largest = max(q.gpus or 1 for q in sizes)
    if gpu_count <= largest:
        chosen = min((q for q in sizes if (q.gpus or 1) >= gpu_count),
                     key=lambda q: (_machine_usd(q), q.gpus or 1))
        return Rental(chosen, 1)
    full = min((q for q in sizes if (q.gpus or 1) == largest), key=_machine_usd)
    machines, rest = divmod(gpu_count, largest)
    if full.joins_up_to is not None and gpu_count <= full.joins_up_to:
        return Rental(full, machines + (rest > 0), joined=True)  # one slice of whole cubes
    if rest == 0:
        return Rental(full, machines)
    extra = min((q for q in sizes if (q.gpus or 1) >= rest),
                key=lambda q: (_machine_usd(q), q.gpus or 1))
    return Rental(full, machines + 1) if extra.gpus == largest else Rental(full, machines,
                                                                             extra)


class PriceUsed(BaseModel):
    """The price an estimate uses per device-hour, and where it comes from."""

    model_config = ConfigDict(frozen=True)

    usd_per_gpu_hour: float | None = Field(
        description="US dollars per device-hour used; None when unknown (no price given, none "
                    "in the catalog).")
    origin: Literal["user", "catalog"] | None = Field(
        description="user (given) or catalog (a dated quote); None when unknown.")
    kind: PriceKind | None = Field(
        description="The catalog quote's kind: on-demand, reserved or spot; None otherwise.")
    as_of: str | None = Field(description="When the catalog quote was observed.")
    reference: str | None = Field(description="The catalog quote's source, in full.")
    label: str | None = Field(description="Its source in a few words, for a short reply.")
    instance: str | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The machine the catalog prices the run in (e.g. 'g5.48xlarge'); left out "
                    "for a per-device price.")
    instance_gpus: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="Devices in that machine; left out without one.")
    paid_gpus: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="Devices paid for when the run fills its machines only partly (the price "
                    "per device used is theirs over the devices used); left out otherwise.")
    machines: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="How many of that machine, when more than one; left out otherwise.")
    extra_instance: str | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="A smaller machine beside them that holds the devices they leave over "
                    "(12 T4: a g4dn.metal of 8 and this g4dn.12xlarge of 4); left out otherwise.")
    extra_instance_gpus: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="Devices in that smaller machine; left out without one.")
    extra_instance_usd_per_hour: float | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="That smaller machine's price, US dollars per hour (its quote's seller, "
                    "kind and date are the main machine's); left out without one.")
    joined: bool | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="True when the machines form one slice over the device's own links (TPU "
                    "cubes); left out otherwise.")
    network: InstanceNetwork | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="When the run spans several of those machines and their network, not "
                    "modelled, carries what the time assumes a fabric does: separate (machines "
                    "of one device) or tp_spans (tensor parallelism across machines); left out "
                    "otherwise.")

    @classmethod
    def of(cls, given: float | None, rented: Rental | None, gpu_count: int = 1) -> PriceUsed:
        """The user's price when given, else the catalog's for ``gpu_count`` devices in the
        machines ``rented`` (None: unknown)."""
        if given is not None:
            return cls(usd_per_gpu_hour=given, origin="user", kind=None, as_of=None,
                       reference=None, label=None)
        if rented is None:
            return cls(usd_per_gpu_hour=None, origin=None, kind=None, as_of=None,
                       reference=None, label=None)
        quote, extra, paid = rented.quote, rented.extra, rented.paid
        hourly = rented.machines * _machine_usd(quote) + (0 if extra is None
                                                          else _machine_usd(extra))
        return cls(usd_per_gpu_hour=hourly / gpu_count, origin="catalog",
                   kind=quote.kind, as_of=quote.as_of, reference=quote.source,
                   label=source_label(quote.source), instance=quote.instance,
                   instance_gpus=quote.gpus, paid_gpus=paid if paid > gpu_count else None,
                   machines=rented.machines if quote.instance and rented.machines > 1 else None,
                   extra_instance=None if extra is None else extra.instance,
                   extra_instance_gpus=None if extra is None else extra.gpus,
                   extra_instance_usd_per_hour=None if extra is None else _machine_usd(extra),
                   joined=True if rented.joined and rented.machines > 1 else None)


def spanning(price: PriceUsed, gpu_count: int, tp: int) -> PriceUsed:
    """``price`` with its :data:`InstanceNetwork` code for a run of ``gpu_count`` devices at
    tensor-parallel degree ``tp``: set only when the run spans several machines priced whole."""
    n = price.instance_gpus
    if n is None or gpu_count <= n or price.joined:
        return price
    n = min(n, price.extra_instance_gpus or n)
    code: InstanceNetwork | None = "tp_spans" if tp > n else "separate" if n == 1 else None
    return price if code is None else price.model_copy(update={"network": code})


def source_label(source: str) -> str:
    """A source in a few words: what comes before its first comma, parenthesis or colon
    (``'runpod.io/pricing, Secure Cloud (…)'`` → ``'runpod.io/pricing'``)."""
    return re.split(r",| \(|: ", source, maxsplit=1)[0].strip()
