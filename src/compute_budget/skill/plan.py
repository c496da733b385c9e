"""The cheapest plan under constraints: which devices, and how many, get this run done by the
deadline for the least money.

Every plan is a run estimate (:func:`~compute_budget.skill.estimate.estimate_run`) of the spec
on one accelerator type and one device count, with the defaults the ``estimate`` command uses,
so that estimating a plan's ``gpu`` and ``gpu_count`` gives the same wall days and dollars. The
counts searched are 1, 2, 4, then whole nodes of 8 (8, 16, 24, …) up to ``max_gpu_count`` (or
what ``available`` says of a type), each a multiple of the degrees the user pinned (tp·pp·ep).

A plan is feasible when it fits in memory at some layout (unless ``must_fit`` is off), its
central wall time is within the deadline, and, with a budget, its cost *with the failure budget*
is at most the budget — the comparison under which :mod:`.decision`'s within_budget check
allows a go. A type without a price (none in the catalog, none given) has no known cost: its
plans can be the fastest but never the cheapest, and a budget cannot be checked on them, so with
a budget they are not feasible. A price (``usd_per_gpu_hour``), a peak (``peak_tflops``) or a
measured throughput (``achieved_tflops``) is a figure for one device type: the spec accepts them
only with a single type in ``gpus``; a given MFU applies to every type.

The search uses the shape of the estimate rather than trying every count. On one type, with
the model FLOPs, the peak and the MFU fixed, the device-hours are ``wall_hours · n = K · r(n)``,
where ``r(n) ≥ 1`` is the layout's recomputation slowdown (hardware / model FLOPs; 1 with a
given MFU), and the dollars are proportional to them. More devices leave more memory per
device, so as a rule the run fits from some count on, ``r(n)`` does not grow, the wall days
fall at least as ``1/n`` and the dollars fall or stay flat. So, per type:

1. estimate the largest count allowed: if it does not fit, or misses the deadline, no count
   does; ``K`` (its device-hours without recomputation) bounds the count from below,
   ``n ≥ K / deadline``;
2. find the fewest devices that fit and meet the deadline by bisection from that bound, probing
   first where the largest count's device-hours, the memory check's fewest devices or the last
   too-slow probe (``n ≥ wall_days·n_probe / deadline``) put it, then the count below it;
3. the cheapest plan on the type is the fewest devices from there on whose device-hours are
   down to the largest count's (or to ``K``): the memory check's fewest devices for that
   recomputation first, then galloping and bisection; the fastest is the largest count.

Estimates are cached per count, and each type's answer is the best of the counts estimated.
The rule has exceptions the search does not chase: optimizer offload, a last resort whose
slowdown the estimate does not count, can make a middle count cheaper than the largest, and
pinned layout knobs make the fit depend on divisibility. ``tests/skill/test_plan.py`` checks
the search against trying every count on subsets of the catalog. The time model scales linearly
in the devices (the MFU prior does not depend on the count), so the fastest plan is at the
largest count allowed at about the same cost: the report says so with the code
``linear_scaling``; with many devices the smallest global batch (one sequence per data-parallel
rank, ``Plan.min_global_batch_tokens``) can exceed what trains well.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from .architecture import Architecture
from .catalog import Accelerator, Precision, get_accelerator, list_accelerators
from .cost import DEFAULT_FAILURE_BUDGET, HOURS_PER_DAY, FailureBudget, Mfu
from .errors import InputError, describe_validation_error
from .estimate import MAX_PLAN_DAYS, RunEstimate, estimate_run
from .memory_estimate import estimate_memory
from .mfu import ModelFamily
from .model_spec import GPUS_PER_NODE, ModelAndLayout
from .quantities import Count, NotBool, Number, Price, TflopsPerDevice, TokenCount, UsdAmount
from .run_kind import RunKind
from .run_spec import RunSpec

__all__ = [
    "DEFAULT_MAX_GPU_COUNT",
    "Binding",
    "BindingCode",
    "FrontierPoint",
    "Plan",
    "PlanNote",
    "PlanReport",
    "PlanSpec",
    "ReportNote",
    "TypeFrontier",
    "TypeStatus",
    "Win",
    "plan_run",
]

DEFAULT_MAX_GPU_COUNT = 4096
"""Devices searched at most per type unless the user says otherwise."""
MAX_GPU_COUNT = 1_000_000
"""The largest max_gpu_count accepted (today's largest clusters have ~10⁵ devices)."""
SMALL_COUNTS = (1, 2, 4)
"""Counts below one node; above, whole nodes of GPUS_PER_NODE."""
TIE = 1e-9
"""Relative difference below which two costs or two wall times are equal (rounding noise)."""
ALMOST = 1 - 1e-9
"""Slack on a lower bound computed in floating point: a bound stays a bound."""
SINGLE_TYPE = ("Only with a single accelerator type in gpus: it is a figure for one device "
               "type.")
PLAN_FIELDS = frozenset({"deadline_days", "budget_usd", "gpus", "available", "max_gpu_count",
                         "must_fit", "top"})
"""PlanSpec fields that are constraints of the plan, not fields of the run."""

Win = Literal["cheapest", "fastest", "cheapest_on_type", "fastest_on_type"]
"""cheapest: the cheapest feasible plan with a known price (ties: fewer devices); fastest: the
fastest feasible plan (ties: cheaper); *_on_type: the same among the plans of its device type
(the cheapest on a type is the one with the fewest device-hours, priced or not)."""
PlanNote = Literal["unpriced", "offload", "does_not_fit", "memory_unknown"]
"""unpriced: no price for this type, cost unknown (never the cheapest); offload: it fits only
with the optimizer state in CPU memory (its slowdown is not in the wall time); does_not_fit:
no layout fits (must_fit off); memory_unknown: the device memory is unknown, fit not checked."""
TypeStatus = Literal["feasible", "no_peak", "no_count", "does_not_fit", "misses_deadline",
                     "over_budget", "unpriced_with_budget"]
"""Why a type has feasible plans or none: no_peak (no dense peak for the precision, not
searched), no_count (no allowed count is a multiple of the pinned degrees), does_not_fit (no
allowed count fits), misses_deadline (none finishes in time), over_budget (the cheapest that
finishes in time costs more than the budget), unpriced_with_budget (no price to check the
budget against)."""
BindingCode = Literal["memory", "deadline", "budget", "unknown_cost", "availability"]
"""What keeps every plan out, when nothing is feasible (see Binding)."""
ReportNote = Literal["linear_scaling"]
"""linear_scaling: wall time falls as 1/devices in the estimate (the MFU does not depend on the
count), so the fastest plan is at the largest count allowed."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


def _as_in_run(name: str, note: str | None = None) -> Any:
    """The run spec's default and description of the field ``name`` (its annotated type is
    written out beside it, the same as the run spec's), with ``note`` added."""
    info = RunSpec.model_fields[name]
    description = info.description if note is None else f"{info.description} {note}"
    if info.is_required():
        return Field(description=description)
    return Field(default=info.default, description=description)


AvailableCount = Annotated[int, Field(ge=1, le=10_000_000), NotBool]


class PlanSpec(ModelAndLayout):
    """The run to plan (as a run spec, without the devices) and the constraints on the plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The plan chooses the devices: the device fields of the model-and-layout definition are
    # not inputs here (pydantic drops an inherited field a subclass declares as a ClassVar).
    gpu: ClassVar[None] = None  # type: ignore[misc]
    gpu_count: ClassVar[int] = 1  # type: ignore[misc]

    # The run spec's own fields, with its types, defaults and descriptions.
    tokens: TokenCount = _as_in_run("tokens")
    precision: Precision | None = _as_in_run("precision")
    mfu: Mfu | None = _as_in_run("mfu")
    achieved_tflops: TflopsPerDevice | None = _as_in_run("achieved_tflops", SINGLE_TYPE)
    usd_per_gpu_hour: Price | None = _as_in_run("usd_per_gpu_hour", SINGLE_TYPE)
    peak_tflops: TflopsPerDevice | None = _as_in_run("peak_tflops", SINGLE_TYPE)
    family: ModelFamily | None = _as_in_run("family")
    failure_budget: FailureBudget = DEFAULT_FAILURE_BUDGET
    kind: RunKind | None = _as_in_run("kind")

    deadline_days: Number = Field(
        gt=0, le=MAX_PLAN_DAYS,
        description=f"Deadline in days of wall time, above 0 and at most {MAX_PLAN_DAYS:g}: a "
                    "plan's central wall-time estimate must be within it.")
    budget_usd: UsdAmount | None = Field(
        default=None,
        description="Optional budget cap in US dollars (e.g. '$400k'): a plan's cost with the "
                    "failure budget must be at most this (a go on within_budget).")
    gpus: list[str] | None = Field(
        default=None, min_length=1, max_length=100,
        description="Accelerator types to choose from (catalog names, e.g. ['h100', 'a100']). "
                    "Default: every type in the catalog with a dense peak for the precision.")
    available: dict[str, AvailableCount] | None = Field(
        default=None, max_length=100,
        description="Optional: most devices of a type you can get, e.g. {'h100': 64}. Types "
                    "not named are limited by max_gpu_count only.")
    max_gpu_count: Count = Field(
        default=DEFAULT_MAX_GPU_COUNT, ge=1, le=MAX_GPU_COUNT,
        description=f"Most devices of any type searched (default {DEFAULT_MAX_GPU_COUNT}). "
                    "Counts tried: 1, 2, 4, then whole nodes of 8.")
    must_fit: bool = Field(
        default=True,
        description="Only plans that fit in device memory at some layout (default true).")
    top: Count = Field(default=5, ge=1, le=50,
                       description="How many plans to list in plans and in fastest (1–50).")

    _probe: RunSpec | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _no_devices(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, instead in (("gpu", "gpus, the types to choose from"),
                                  ("gpu_count", "max_gpu_count or available, the most devices")):
                if name in data:
                    raise InputError(name, data[name],
                                     f"not in a plan (the plan chooses the devices); give "
                                     f"{instead}")
        return data

    @field_validator("gpus")
    @classmethod
    def _known_gpus(cls, names: list[str] | None) -> list[str] | None:
        if names is None:
            return None
        keys: list[str] = []
        for i, name in enumerate(names):
            key = get_accelerator(name, field=f"gpus[{i}]").key
            if key not in keys:
                keys.append(key)
        return keys

    @field_validator("available")
    @classmethod
    def _known_available(cls, counts: dict[str, int] | None) -> dict[str, int] | None:
        if counts is None:
            return None
        out: dict[str, int] = {}
        for name, count in counts.items():
            key = get_accelerator(name, field=f"available.{name}").key
            if key in out:
                raise InputError(f"available.{name}", count,
                                 f"each type once ({key} is named twice)")
            out[key] = count
        return out

    def _check_layout(self, arch: Architecture | None) -> None:
        """Overrides the run spec's device-count checks: a plan has no count of its own. The
        counts searched are multiples of the pinned tp·pp·ep, and the rest of the layout is
        checked by :meth:`_plan_consistent` on a run spec at the first count."""

    @model_validator(mode="after")
    def _plan_consistent(self) -> PlanSpec:
        for name in ("usd_per_gpu_hour", "peak_tflops", "achieved_tflops"):
            value = getattr(self, name)
            if value is not None and (self.gpus is None or len(self.gpus) != 1):
                raise InputError(name, value,
                                 "only with a single accelerator type in gpus (it is a figure "
                                 "for one device type)")
        if self.available is not None and self.gpus is not None:
            for key, count in self.available.items():
                if key not in self.gpus:
                    raise InputError(f"available.{key}", count,
                                     "a type in gpus (gpus limits the search to "
                                     f"{', '.join(self.gpus)})")
        accelerators = self.accelerators
        if not accelerators:
            what = self.precision or "bf16/fp16"
            raise InputError("precision" if self.precision else "gpus",
                             self.precision or self.gpus,
                             f"accelerators with a known dense {what} peak (or give "
                             "peak_tflops with a single type)")
        first = _Grid(self.count_step, self.max_gpu_count)
        if not len(first):
            raise InputError("max_gpu_count", self.max_gpu_count,
                             f"at least {first.node_step} devices: the pinned tp·pp·ep = "
                             f"{self.count_step} must divide the count")
        fields = {name: getattr(self, name) for name in self.model_fields_set
                  if name not in PLAN_FIELDS}
        try:  # the layout checks the run spec makes at a count, at the first count searched
            self._probe = RunSpec(**fields, gpu=accelerators[0].key, gpu_count=first.count(0))
        except ValidationError as exc:
            raise _cause(exc) from None
        return self

    @property
    def requested(self) -> tuple[Accelerator, ...]:
        """The types asked for: ``gpus``, or the whole catalog."""
        if self.gpus is None:
            return list_accelerators()
        return tuple(get_accelerator(key) for key in self.gpus)

    @property
    def accelerators(self) -> tuple[Accelerator, ...]:
        """The types searched: ``gpus`` (or the catalog) with a dense peak for the precision
        (any, when peak_tflops is given)."""
        return tuple(acc for acc in self.requested if self.peak_tflops is not None
                     or acc.peak_tflops.get(self.precision or acc.default_precision) is not None)

    @property
    def count_step(self) -> int:
        """Every count searched is a multiple of this: the pinned tp·pp·ep."""
        return (self.tp or 1) * (self.pp or 1) * (self.ep or 1)

    def cap(self, key: str) -> int:
        """Most devices of type ``key`` searched: max_gpu_count, or fewer when available says."""
        limit = (self.available or {}).get(key)
        return self.max_gpu_count if limit is None else min(limit, self.max_gpu_count)

    def run_spec(self, key: str, gpu_count: int) -> RunSpec:
        """The run spec of a plan: this spec on ``gpu_count`` devices of type ``key`` (the
        count a multiple of count_step)."""
        assert self._probe is not None  # set by the validator
        return self._probe.model_copy(update={"gpu": key, "gpu_count": gpu_count})


def _cause(exc: ValidationError) -> InputError:
    """The input error behind a run spec's validation error (it names the field)."""
    for err in exc.errors(include_url=False):
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, InputError):
            return cause
    return InputError("input", None, describe_validation_error(exc))


class FrontierPoint(_Frozen):
    """One (type, count) the search estimated."""

    gpu_count: int = Field(description="Devices.")
    wall_days: float = Field(description="Central wall-clock days.")
    gpu_hours: float = Field(description="Device-hours (central).")
    dollar_cost_with_failures: float | None = Field(
        description="US dollars with the failure budget; None when the price is unknown.")
    fits: bool | None = Field(description="Fits in device memory at some layout; None when "
                                          "the device memory is unknown.")
    meets_deadline: bool = Field(description="Central wall days within the deadline.")
    feasible: bool = Field(description="A plan: fits (or must_fit off), in time, within budget.")


class TypeFrontier(_Frozen):
    """What the search found on one accelerator type: its status and the points estimated."""

    gpu: str = Field(description="Catalog key.")
    accelerator: str = Field(description="Full name.")
    status: TypeStatus
    max_gpu_count: int = Field(description="Most devices of this type searched.")
    min_gpu_count: int | None = Field(
        description="When nothing fits: the fewest devices of this type the memory check says "
                    "it needs (may exceed max_gpu_count); else None.")
    points: list[FrontierPoint] = Field(
        description="The counts estimated, fewest first: cost against days for a plot.")


class Plan(_Frozen):
    """One feasible way to do the run: a device type, a count, and its estimate."""

    gpu: str = Field(description="Catalog key of the accelerator.")
    accelerator: str = Field(description="Full accelerator name.")
    gpu_count: int = Field(description="Devices.")
    wall_days: float = Field(description="Central wall-clock days.")
    wall_days_range: tuple[float, float] = Field(description="Wall days over the MFU band.")
    gpu_hours: float = Field(description="Device-hours, central.")
    usd_per_gpu_hour: float | None = Field(description="Price per device-hour; None if unknown.")
    dollar_cost: float | None = Field(description="US dollars without failures; None if unknown.")
    dollar_cost_with_failures: float | None = Field(
        description="US dollars × failure budget: what the budget is compared with.")
    min_global_batch_tokens: float = Field(
        description="Tokens per optimizer step with one sequence per data-parallel rank and no "
                    "gradient accumulation: the smallest batch this layout implies.")
    wins: list[Win] = Field(description="What this plan is best at (see Win).")
    notes: list[PlanNote] = Field(description="Things to check (see PlanNote).")
    estimate: RunEstimate = Field(
        description="The full run estimate: the same as `estimate` on this gpu and gpu_count.")


class Binding(_Frozen):
    """A constraint that keeps every plan out, with its numbers.

    memory: no allowed count of any type fits (gpu_count_needed: the fewest devices of the type
    needing the fewest, gpu; max_gpu_count). deadline: the fastest plan that fits is too slow
    (fastest_wall_days, gpu, gpu_count, deadline_days). budget: the cheapest plan in time costs
    more (cheapest_cost_with_failures, gpu, gpu_count, budget_usd). unknown_cost: plans in time
    exist only on types without a price (gpu, gpu_count, budget_usd). availability: a type
    would work with more devices than available (gpu, gpu_count_needed, available).
    """

    code: BindingCode
    numbers: dict[str, int | float | str | None]


class PlanReport(_Frozen):
    """The plans, cheapest first, the fastest, the frontier, and what binds when none works."""

    feasible: bool = Field(description="Whether some plan meets every constraint.")
    plans: list[Plan] = Field(
        description="The cheapest feasible plan of each type, cheapest first (priced before "
                    "unpriced), at most top.")
    fastest: list[Plan] = Field(
        description="The fastest feasible plan of each type, fastest first, at most top.")
    frontier: list[TypeFrontier] = Field(description="Every type considered, with its points.")
    binding: list[Binding] = Field(description="When nothing is feasible: what binds.")
    deadline_days: float
    budget_usd: float | None
    max_gpu_count: int
    must_fit: bool
    estimates_run: int = Field(description="Run estimates the search computed.")
    notes: list[ReportNote] = Field(description="Assumptions of every plan (see ReportNote).")


# --- the counts --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Grid:
    """Counts 1, 2, 4, then whole nodes, each a multiple of ``step``, up to ``cap``."""

    step: int
    cap: int
    small: tuple[int, ...] = field(init=False)
    node_step: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "small", tuple(
            c for c in SMALL_COUNTS if c % self.step == 0 and c <= self.cap))
        object.__setattr__(self, "node_step", math.lcm(GPUS_PER_NODE, self.step))

    def __len__(self) -> int:
        return len(self.small) + self.cap // self.node_step

    def count(self, index: int) -> int:
        """The index-th count."""
        if index < len(self.small):
            return self.small[index]
        return self.node_step * (index - len(self.small) + 1)

    def first_at_least(self, devices: float) -> int:
        """Index of the first count ≥ ``devices`` (len when none is)."""
        for i, c in enumerate(self.small):
            if c >= devices:
                return i
        nodes = max(1, math.ceil(devices / self.node_step)) if math.isfinite(devices) else 0
        return min(len(self), len(self.small) + nodes - 1) if nodes else len(self)


# --- one type ----------------------------------------------------------------------------


@dataclass
class _TypeResult:
    acc: Accelerator
    cap: int
    status: TypeStatus
    points: dict[int, RunEstimate]
    feasible: dict[int, bool]
    top: int | None = None
    """The largest count searched."""
    best: int | None = None
    """The cheapest feasible count (fewest device-hours; ties: fewer devices)."""
    fastest: int | None = None
    """The fastest feasible count."""
    in_time: int | None = None
    """The cheapest count that fits and meets the deadline, budget aside (for the binding)."""
    min_gpu_count: int | None = None
    """When nothing fits: the memory check's fewest devices."""


@dataclass
class _Search:
    spec: PlanSpec
    estimates: int = 0

    def fits(self, e: RunEstimate) -> bool:
        return not self.spec.must_fit or e.feasibility != "does_not_fit"

    def in_time(self, e: RunEstimate) -> bool:
        return self.fits(e) and e.wall_days <= self.spec.deadline_days

    def within_budget(self, e: RunEstimate) -> bool:
        budget = self.spec.budget_usd
        cost = e.dollar_cost_with_failures
        return budget is None or (cost is not None and cost <= budget)

    def one_type(self, acc: Accelerator, cap: int) -> _TypeResult:
        """The cheapest and fastest plans on ``acc`` with at most ``cap`` devices."""
        grid = _Grid(self.spec.count_step, cap)
        points: dict[int, RunEstimate] = {}
        result = _TypeResult(acc=acc, cap=cap, status="no_count", points=points, feasible={})
        if not len(grid):
            return result

        def at(index: int) -> RunEstimate:
            n = grid.count(index)
            if n not in points:
                self.estimates += 1
                points[n] = estimate_run(self.spec.run_spec(acc.key, n))
            return points[n]

        last = len(grid) - 1
        top = at(last)
        result.top = top.gpu_count
        deadline = self.spec.deadline_days
        if not self.fits(top):
            result.status = "does_not_fit"
            result.min_gpu_count = top.memory.min_gpu_count if top.memory is not None else None
        elif top.wall_days > deadline:
            result.status = "misses_deadline"
        else:
            first = self._fewest_in_time(grid, at, top)
            best = self._cheapest_level(grid, at, first, top)
            if not self.in_time(at(best)):  # the rule's exception: keep the fewest in time
                best = first
            result.in_time = grid.count(best)
            result.status = ("feasible" if self.within_budget(at(best))
                             else "unpriced_with_budget" if at(best).dollar_cost is None
                             else "over_budget")
        result.feasible = {n: self.in_time(e) and self.within_budget(e)
                           for n, e in points.items()}
        good = [n for n, ok in result.feasible.items() if ok]
        if good:
            result.status = "feasible"
            result.best = _pick(good, lambda n: points[n].gpu_hours,
                                lambda n: (n, points[n].wall_days))
            result.fastest = _pick(good, lambda n: points[n].wall_days,
                                   lambda n: (points[n].gpu_hours, n))
        return result

    def _fewest_in_time(self, grid: _Grid, at: Callable[[int], RunEstimate],
                        top: RunEstimate) -> int:
        """Index of the fewest devices that fit and meet the deadline (the largest does)."""
        deadline = self.spec.deadline_days
        last = len(grid) - 1
        # Below the floor device-days / deadline no count is fast enough; the largest count's
        # device-days / deadline is where it usually is (its layout recomputes the least).
        lo = min(grid.first_at_least(_floor_hours(top) / HOURS_PER_DAY / deadline * ALMOST),
                 last)
        guess = grid.first_at_least(top.wall_days * top.gpu_count / deadline * ALMOST)
        hint = top.memory.min_gpu_count if top.memory is not None else None
        if hint and self.spec.must_fit:
            guess = max(guess, grid.first_at_least(hint))

        def next_guess(i: int, e: RunEstimate, ok: bool) -> int | None:
            if ok:
                return i - 1  # a prediction is usually exact: confirm the count below fails
            if self.fits(e):  # too slow here: these device-days would be fast enough
                return grid.first_at_least(e.wall_days * e.gpu_count / deadline * ALMOST)
            if e.memory is not None and e.memory.min_gpu_count:
                return grid.first_at_least(e.memory.min_gpu_count)
            return None

        return _first(lo, last, lambda i: self.in_time(at(i)), at, guess, next_guess)

    def _cheapest_level(self, grid: _Grid, at: Callable[[int], RunEstimate], first: int,
                        top: RunEstimate) -> int:
        """Index of the fewest devices from ``first`` on whose device-hours are down to the
        largest count's (its layout recomputes the least) or to the floor (no recomputation):
        the memory check's fewest devices for that layout's recomputation is the first guess,
        then galloping and bisection."""
        target = top.gpu_hours * (1 + TIE)
        floor = _floor_hours(top) * (1 + TIE)
        if at(first).gpu_hours <= max(target, floor) or first == len(grid) - 1:
            return first
        last = len(grid) - 1
        spec = self.spec.run_spec(top.accelerator_key, top.gpu_count)
        hint = None
        if spec.recompute is None:
            self.estimates += 1
            hint = estimate_memory(spec.model_copy(
                update={"recompute": top.recompute})).min_gpu_count
        guess = max(first + 1, grid.first_at_least(hint)) if hint else first + 1
        step = [1]

        def next_guess(i: int, e: RunEstimate, ok: bool) -> int | None:
            if ok:
                return i - 1
            step[0] *= 2
            return i + step[0]

        return _first(first + 1, last, lambda i: at(i).gpu_hours <= target, at, guess,
                      next_guess)


def _first(lo: int, hi: int, holds: Callable[[int], bool], at: Callable[[int], RunEstimate],
           guess: int | None,
           next_guess: Callable[[int, RunEstimate, bool], int | None]) -> int:
    """The smallest index in [lo, hi] where ``holds`` (monotone: false, then true; true at
    hi): bisection that probes ``guess`` first, then what ``next_guess`` says after each probe
    (when it lies inside the bracket), else the middle."""
    while lo < hi:
        i = guess if guess is not None and lo <= guess < hi else (lo + hi) // 2
        ok = holds(i)
        if ok:
            hi = i
        else:
            lo = i + 1
        guess = next_guess(i, at(i), ok)
    return hi


def _floor_hours(e: RunEstimate) -> float:
    """The fewest device-hours any count of this type can take: without recomputation (a
    prior or measured MFU is divided by the recomputation slowdown; a given MFU is not)."""
    return e.gpu_hours if e.mfu_source == "user" else e.gpu_hours / e.recompute_slowdown


T = TypeVar("T")


def _pick(items: Iterable[T], value: Callable[[T], float],
          tie_break: Callable[[T], tuple[float | str, ...]]) -> T:
    """The item of least ``value``; values within TIE of the least are equal and broken by
    ``tie_break``."""
    pool = list(items)
    least = min(value(i) for i in pool)
    return min((i for i in pool if value(i) <= least * (1 + TIE)), key=tie_break)


# --- the report --------------------------------------------------------------------------


def _plan(e: RunEstimate, wins: list[Win], must_fit: bool) -> Plan:
    notes: list[PlanNote] = []
    if e.dollar_cost is None:
        notes.append("unpriced")
    memory = e.memory
    if memory is not None:
        if memory.fits is None:
            notes.append("memory_unknown")
        elif not memory.fits and not must_fit:
            notes.append("does_not_fit")
        elif memory.offload:
            notes.append("offload")
    data_parallel = memory.data_parallel if memory is not None else e.gpu_count
    micro_batch = memory.micro_batch if memory is not None else 1
    return Plan(
        gpu=e.accelerator_key, accelerator=e.accelerator, gpu_count=e.gpu_count,
        wall_days=e.wall_days, wall_days_range=e.wall_days_range, gpu_hours=e.gpu_hours,
        usd_per_gpu_hour=e.usd_per_gpu_hour, dollar_cost=e.dollar_cost,
        dollar_cost_with_failures=e.dollar_cost_with_failures,
        min_global_batch_tokens=float(data_parallel * micro_batch * e.seq_len),
        wins=wins, notes=notes, estimate=e,
    )


def _frontier(spec: PlanSpec, result: _TypeResult) -> TypeFrontier:
    deadline = spec.deadline_days
    return TypeFrontier(
        gpu=result.acc.key, accelerator=result.acc.name, status=result.status,
        max_gpu_count=result.cap, min_gpu_count=result.min_gpu_count,
        points=[FrontierPoint(
            gpu_count=n, wall_days=e.wall_days, gpu_hours=e.gpu_hours,
            dollar_cost_with_failures=e.dollar_cost_with_failures,
            fits=e.memory.fits if e.memory is not None else None,
            meets_deadline=e.wall_days <= deadline, feasible=result.feasible[n],
        ) for n, e in sorted(result.points.items())],
    )


def _cost(e: RunEstimate) -> float:
    return math.inf if e.dollar_cost_with_failures is None else e.dollar_cost_with_failures


def _stage(spec: PlanSpec, results: list[_TypeResult]) -> list[Binding]:
    """The constraint at the furthest stage any type reached: budget (or an unknown cost) when
    some plan is in time, else the deadline when some plan fits, else memory."""
    statuses = {r.status for r in results}
    budget = spec.budget_usd
    out: list[Binding] = []
    if statuses & {"over_budget", "unpriced_with_budget"}:
        timely = [(r, r.points[r.in_time]) for r in results if r.in_time is not None]
        priced = [(r, e) for r, e in timely if e.dollar_cost_with_failures is not None]
        if priced:
            r, e = min(priced, key=lambda pair: (_cost(pair[1]), pair[1].gpu_count,
                                                 pair[0].acc.key))
            out.append(Binding(code="budget", numbers={
                "cheapest_cost_with_failures": e.dollar_cost_with_failures, "gpu": r.acc.key,
                "gpu_count": e.gpu_count, "budget_usd": budget}))
        unpriced = [(r, e) for r, e in timely if e.dollar_cost_with_failures is None]
        if unpriced:
            r, e = min(unpriced, key=lambda pair: (pair[1].wall_days, pair[0].acc.key))
            out.append(Binding(code="unknown_cost", numbers={
                "gpu": r.acc.key, "gpu_count": e.gpu_count, "budget_usd": budget}))
    elif "misses_deadline" in statuses:
        slow = [(r, r.points[r.top]) for r in results
                if r.status == "misses_deadline" and r.top is not None]
        r, e = min(slow, key=lambda pair: (pair[1].wall_days, pair[0].acc.key))
        out.append(Binding(code="deadline", numbers={
            "fastest_wall_days": e.wall_days, "gpu": r.acc.key, "gpu_count": e.gpu_count,
            "deadline_days": spec.deadline_days}))
    elif "does_not_fit" in statuses:
        tight = [r for r in results if r.status == "does_not_fit"]
        r = min(tight, key=lambda t: (t.min_gpu_count is None, t.min_gpu_count or 0,
                                      t.acc.key))
        out.append(Binding(code="memory", numbers={
            "gpu_count_needed": r.min_gpu_count, "gpu": r.acc.key, "max_gpu_count": r.cap}))
    return out


def _bindings(spec: PlanSpec, results: list[_TypeResult], search: _Search) -> list[Binding]:
    """What keeps every plan out (nothing is feasible): the stage that binds on the devices
    allowed and, when a type limited by ``available`` would work with max_gpu_count devices,
    availability with the count it needs."""
    limited = [r for r in results if r.cap < spec.max_gpu_count]
    wider = [search.one_type(r.acc, spec.max_gpu_count) for r in limited]
    searched = [r for r in results if r.status != "no_count"]
    out = _stage(spec, searched or wider)
    needs = [(r, min(n for n, ok in w.feasible.items() if ok))
             for r, w in zip(limited, wider, strict=True) if w.best is not None]
    if needs:
        r, needed = min(needs, key=lambda pair: (pair[1], pair[0].acc.key))
        out.append(Binding(code="availability", numbers={
            "gpu": r.acc.key, "gpu_count_needed": needed, "available": r.cap}))
    return out


def plan_run(spec: PlanSpec) -> PlanReport:
    """The cheapest plans that meet the deadline and the budget, the fastest, the frontier of
    each type and, when nothing is feasible, what binds (module docstring)."""
    search = _Search(spec)
    results = [search.one_type(acc, spec.cap(acc.key)) for acc in spec.accelerators]
    feasible = [r for r in results if r.best is not None]

    wins: dict[tuple[str, int], list[Win]] = {}

    def win(r: _TypeResult, n: int, code: Win) -> None:
        wins.setdefault((r.acc.key, n), []).append(code)

    def best(r: _TypeResult) -> RunEstimate:
        return r.points[r.best or 0]

    def quickest(r: _TypeResult) -> RunEstimate:
        return r.points[r.fastest or 0]

    priced = [r for r in feasible if best(r).dollar_cost_with_failures is not None]
    cheapest = (_pick(priced, lambda r: _cost(best(r)),
                      lambda r: (best(r).gpu_count, best(r).wall_days, r.acc.key))
                if priced else None)
    fastest = (_pick(feasible, lambda r: quickest(r).wall_days,
                     lambda r: (_cost(quickest(r)), quickest(r).gpu_count, r.acc.key))
               if feasible else None)
    for r in feasible:
        assert r.best is not None and r.fastest is not None
        if r is cheapest:
            win(r, r.best, "cheapest")
        if r is fastest:
            win(r, r.fastest, "fastest")
        win(r, r.best, "cheapest_on_type")
        win(r, r.fastest, "fastest_on_type")

    def plan_of(r: _TypeResult, n: int) -> Plan:
        return _plan(r.points[n], wins[(r.acc.key, n)], spec.must_fit)

    by_cost = sorted(feasible, key=lambda r: (
        r is not cheapest, _cost(best(r)), best(r).wall_days, best(r).gpu_count, r.acc.key))
    by_time = sorted(feasible, key=lambda r: (
        r is not fastest, quickest(r).wall_days, _cost(quickest(r)), quickest(r).gpu_count,
        r.acc.key))
    return PlanReport(
        feasible=bool(feasible),
        plans=[plan_of(r, r.best or 0) for r in by_cost[:spec.top]],
        fastest=[plan_of(r, r.fastest or 0) for r in by_time[:spec.top]],
        frontier=[*(_frontier(spec, r) for r in results),
                  *(TypeFrontier(gpu=acc.key, accelerator=acc.name, status="no_peak",
                                 max_gpu_count=spec.cap(acc.key), min_gpu_count=None, points=[])
                    for acc in spec.requested if acc not in spec.accelerators)],
        binding=[] if feasible else _bindings(spec, results, search),
        deadline_days=spec.deadline_days,
        budget_usd=spec.budget_usd,
        max_gpu_count=spec.max_gpu_count,
        must_fit=spec.must_fit,
        estimates_run=search.estimates,
        notes=["linear_scaling"],
    )
