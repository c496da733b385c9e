"""What a plan search returns: the plans (:class:`Plan`), each type's frontier
(:class:`TypeFrontier`), what binds when nothing is feasible (:class:`Binding`) and the report
(:class:`PlanReport`). :mod:`.plan` computes them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..estimate_result import RunEstimate
from ..vocabulary import FiniteResult
from .plan_search import TypeStatus
from .plan_spec import BatchCapBasis

__all__ = [
    "Binding",
    "BindingCode",
    "FrontierPoint",
    "Plan",
    "PlanNote",
    "PlanReport",
    "ReportNote",
    "TypeFrontier",
    "Win",
]

Win = Literal["cheapest", "fastest", "cheapest_on_type", "fastest_on_type"]
"""cheapest: the cheapest feasible plan with a known price (ties: fewer devices); fastest: the
fastest feasible plan (ties: cheaper); *_on_type: the same among the plans of its device type
(the cheapest on a type is the one of fewest dollars, or of fewest device-hours unpriced)."""
PlanNote = Literal["unpriced", "offload", "does_not_fit", "memory_unknown", "pcie_cluster",
                   "instance_network"]
"""unpriced: no price for this type, cost unknown (never the cheapest); offload: it fits only
with the optimizer state in CPU memory (its host step is in the wall time unless the device's
host link is not modelled: estimate.memory.offload_gaps); does_not_fit:
no layout fits (must_fit off); memory_unknown: the device memory is unknown, fit not checked;
pcie_cluster: PCIe-only cards on more than one machine, whose network is not modelled (the
prior's runs had InfiniBand-class networks); instance_network: priced in machines whose network
carries traffic the time does not model (price.network)."""
BindingCode = Literal["memory", "deadline", "batch", "budget", "unknown_cost", "availability",
                      "budget_buys", "budget_buys_nothing"]
"""What keeps every plan out, when nothing is feasible, and what the budget alone allows (see
Binding)."""
ReportNote = Literal["linear_scaling"]
"""linear_scaling: wall time falls as 1/devices in the estimate (the MFU does not depend on the
count), so the fastest plan is at the largest count allowed within the batch cap."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


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
    min_global_batch_tokens: float = Field(
        description="Tokens per optimizer step with one sequence per data-parallel rank at this "
                    "count's layout (see Plan).")
    within_batch_cap: bool = Field(
        description="min_global_batch_tokens at most the report's max_batch_tokens.")
    feasible: bool = Field(description="A plan: fits (or must_fit off), in time, within the "
                                       "batch cap and the budget.")


class TypeFrontier(_Frozen):
    """What the search found on one accelerator type: its status and the points estimated."""

    gpu: str = Field(description="Catalog key.")
    accelerator: str = Field(description="Full name.")
    status: TypeStatus
    max_gpu_count: int = Field(description="Most devices of this type searched.")
    min_gpu_count: int | None = Field(
        description="When nothing fits: the fewest devices of this type the memory check says "
                    "it needs (may exceed max_gpu_count); else None.")
    min_gpu_count_rented: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The devices the catalog's machines or slices pay for to hold "
                    "min_gpu_count, when more; left out otherwise.")
    points: list[FrontierPoint] = Field(
        description="The counts estimated, fewest first: cost against days for a plot.")
    gpu_count_for_deadline: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="misses_deadline: the devices its fastest count scales to by the deadline.")
    deadline_cost_with_failures: float | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The cost with the failure budget of gpu_count_for_deadline devices at the "
                    "same MFU (the fastest count's device-hours at the price per device there); "
                    "left out when that count or the price is unknown.")
    in_time_gpu_count: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="over_budget: the cheapest count that fits in time within the batch cap, "
                    "whose cost is over the budget (in points); left out otherwise.")
    cheapest_gpu_count: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The cheapest feasible count (the fewest dollars, or device-hours without a "
                    "price; ties: fewer devices); left out when none is feasible.")
    available: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The devices of this type the spec's available names; left out when it "
                    "names none.")


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
    gpu_count_for_slow_end: int | None = Field(
        default=None,
        description="When the slow end of the MFU band misses the deadline: the devices that "
                    "would meet it even there (linear scaling, not re-estimated); None when "
                    "the plan meets it across the band.")
    slow_end_cap: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The most devices of this type the user can get (available or "
                    "max_gpu_count) when gpu_count_for_slow_end is above it; left out "
                    "otherwise.")
    slow_end_usd_per_gpu_hour: float | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="Their price per device when it is not this plan's (a machine rented whole "
                    "and filled otherwise); left out when it is the same.")
    wins: list[Win] = Field(description="What this plan is best at (see Win).")
    notes: list[PlanNote] = Field(description="Things to check (see PlanNote).")
    estimate: RunEstimate = Field(
        description="The full run estimate: the same as `estimate` on this gpu and gpu_count.")


class Binding(_Frozen):
    """A constraint that keeps every plan out, with its numbers.

    memory: no allowed count of any type fits (gpu_count_needed: the fewest devices of the type
    needing the fewest, gpu; max_gpu_count). deadline: the fastest plan that fits is too slow
    (fastest_wall_days, gpu, gpu_count, deadline_days). batch: the fewest devices that fit and
    finish in time need a global batch above the cap (max_batch_tokens; min_global_batch_tokens
    on gpu_count devices of gpu, the type where it is smallest). budget: the cheapest plan in
    time costs more (cheapest_cost_with_failures, gpu, gpu_count, budget_usd, nominal_cost).
    unknown_cost: plans in time on unpriced types (gpu, gpu_count, budget_usd). availability: a
    type would work with more devices than available (gpu, gpu_count_needed, available). memory
    and availability add gpu_count_needed_rented: the devices the catalog's machines or slices pay
    for to hold gpu_count_needed, when more (else None). A budget binding with ``available``
    (the devices of gpu the user can get) is the cheapest plan in time on more devices than
    that: the deadline and the budget bind together.

    With a budget, what it buys on the devices allowed, the deadline aside (gpu, gpu_count,
    wall_days, cost_with_failures, budget_usd; unpriced_types, the types left out for want of a
    price): budget_buys, the fastest plan estimated that
    fits within the batch cap and the budget (it misses the deadline); budget_buys_nothing,
    when none is within the budget, the cheapest such plan (ties: in time, then fastest), above
    the budget at any deadline."""

    code: BindingCode
    numbers: dict[str, int | float | str | None]
    plan: Plan | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The plan the binding names (budget, deadline, budget_buys, "
                    "budget_buys_nothing), not feasible; left out otherwise.")


class PlanReport(_Frozen, FiniteResult):
    """The plans, cheapest first, the fastest, the frontier, and what binds when none works."""

    feasible: bool = Field(description="Whether some plan meets every constraint.")
    plans: list[Plan] = Field(
        description="The cheapest feasible plan of each type, cheapest first (priced before "
                    "unpriced), at most top.")
    fastest: list[Plan] = Field(
        description="The fastest feasible plan of each type, fastest first, at most top.")
    cheapest_modelled: Plan | None = Field(default=None, exclude_if=lambda v: v is None,
                                           description=(
        "When the cheapest plan rests on what the estimate does not model (a borrowed MFU "
        "prior, notes pcie_cluster or instance_network): the cheapest priced plan that does "
        "not."))
    frontier: list[TypeFrontier] = Field(description="Every type considered, with its points.")
    binding: list[Binding] = Field(description="When nothing is feasible: what binds.")
    deadline_days: float
    budget_usd: float | None
    max_gpu_count: int
    must_fit: bool
    max_batch_tokens: float = Field(
        description="The batch cap used: most tokens per optimizer step a plan may need.")
    max_batch_tokens_basis: BatchCapBasis = Field(
        description="default_formula: B_opt = 0.2920·C^0.3271 of the run's compute (DeepSeek "
                    "LLM's fit); user: the spec's max_batch_tokens.")
    max_batch_tokens_source: str | None = Field(
        description="The fit behind the default cap; None when the user gave it.")
    compute_flops: float = Field(
        description="C = 6·N·D of the run (N active parameters, D tokens), FLOPs: the input "
                    "of the default cap.")
    unsearched: list[tuple[str, tuple[str, ...]]] = Field(
        default_factory=list,
        description="Types the user listed in gpus that have no dense peak for the precision, "
                    "each (catalog key, the precisions it has a peak at): not searched, and "
                    "said so.")
    estimates_run: int = Field(description="Run estimates the search computed.")
    notes: list[ReportNote] = Field(description="Assumptions of every plan (see ReportNote).")

    @property
    def your_types(self) -> list[TypeFrontier]:
        """The types ``available`` names that no listed plan uses: the devices the user can
        get, which the reply answers for (the spec refuses a type the plan cannot estimate,
        so each was searched)."""
        listed = {p.gpu for p in self.plans}
        return [t for t in self.frontier if t.available is not None and t.gpu not in listed]
