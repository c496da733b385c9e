"""The cheapest plan under constraints: which devices, and how many, get this run done by the
deadline for the least money.

Every plan is a run estimate (:func:`~compute_budget.skill.estimate.estimate_run`) of the spec
on one accelerator type and one device count, with the defaults the ``estimate`` command uses,
so that estimating a plan's ``gpu`` and ``gpu_count`` gives the same wall days and dollars. The
counts searched are 1, 2, 4, then whole nodes of 8 (8, 16, 24, …) up to ``max_gpu_count`` (or
what ``available`` says of a type) and that count itself, each a multiple of the degrees the user
pinned (tp·pp·ep).

A plan is feasible when it fits in memory at some layout (unless ``must_fit`` is off), its
central wall time is within the deadline, its smallest global batch (one sequence per
data-parallel rank) is within ``max_batch_tokens`` (by default the compute-optimal batch of the
run, :mod:`.plan_spec`), and, with a budget, its cost *with the failure budget* is at most the
budget — the comparison under which :mod:`.decision`'s within_budget check allows a go. A type
without a price (none in the catalog, none given) has no known cost: its plans can be the
fastest but never the cheapest, and a budget cannot be checked on them, so with a budget they
are not feasible.

This module holds :func:`plan_run`, which ranks the types' answers, and what binds when nothing
is feasible; the result models are in :mod:`.plan_result`. The input model and its checks are in
:mod:`.plan_spec`; how the counts of one type are searched, in :mod:`.plan_search`. The time
model scales linearly in the devices (the MFU prior does not depend on the count), so the
fastest plan is the largest count within the batch cap, at about the same cost (report code
``linear_scaling``); without the cap it would be the largest count searched, whose global
batch (``Plan.min_global_batch_tokens``) can be far beyond what trains well. When the cheapest
plan rests on what the estimate does not model, the cheapest that does not is named beside it.
"""

from __future__ import annotations

import math

from ..estimate import RunEstimate
from .grid import CountGrid, count_for, modelled, price_at, slow_end_count
from .plan_result import (
    Binding,
    BindingCode,
    FrontierPoint,
    Plan,
    PlanNote,
    PlanReport,
    ReportNote,
    TypeFrontier,
    Win,
)
from .plan_search import TypeResult, TypeSearch, TypeStatus, min_global_batch_tokens, pick
from .plan_spec import BATCH_FIT_SOURCE, DEFAULT_MAX_GPU_COUNT, MAX_GPU_COUNT, PlanSpec

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


def _plan(e: RunEstimate, wins: list[Win], spec: PlanSpec) -> Plan:
    notes: list[PlanNote] = []
    slow = slow_end_count(e, spec.deadline_days, CountGrid(spec.count_step, MAX_GPU_COUNT))
    if e.dollar_cost is None:
        notes.append("unpriced")
    memory = e.memory
    if memory is not None:
        if memory.fits is None:
            notes.append("memory_unknown")
        elif not memory.fits and not spec.must_fit:
            notes.append("does_not_fit")
        elif memory.offload_needed:
            notes.append("offload")
        if e.pcie_cluster:
            notes.append("pcie_cluster")
    if e.price.network is not None:
        notes.append("instance_network")
    return Plan(
        gpu=e.accelerator_key, accelerator=e.accelerator, gpu_count=e.gpu_count,
        wall_days=e.wall_days, wall_days_range=e.wall_days_range, gpu_hours=e.gpu_hours,
        usd_per_gpu_hour=e.usd_per_gpu_hour, dollar_cost=e.dollar_cost,
        dollar_cost_with_failures=e.dollar_cost_with_failures,
        min_global_batch_tokens=min_global_batch_tokens(e),
        gpu_count_for_slow_end=slow,
        slow_end_cap=(spec.cap(e.accelerator_key) if slow is not None
                      and slow > spec.cap(e.accelerator_key) else None),
        slow_end_usd_per_gpu_hour=price_at(e, slow),
        wins=wins, notes=notes, estimate=e,
    )


def _cost_at(e: RunEstimate, count: int | None) -> float | None:
    """The cost with the failure budget of ``count`` devices at ``e``'s device-hours (the same
    MFU: linear scaling), at the price per device the catalog asks there; None when unknown."""
    cost, now = e.dollar_cost_with_failures, e.usd_per_gpu_hour
    if count is None or cost is None or now is None:
        return None
    then = price_at(e, count)
    return cost if then is None else cost * then / now


def _frontier(spec: PlanSpec, result: TypeResult) -> TypeFrontier:
    deadline, (max_batch, _) = spec.deadline_days, spec.batch_cap
    fast = min(result.points.values(), key=lambda e: e.wall_days, default=None)
    needed = None if fast is None or result.status != "misses_deadline" else count_for(
        fast.gpu_count, fast.wall_days, deadline, CountGrid(spec.count_step, MAX_GPU_COUNT))
    return TypeFrontier(
        gpu=result.acc.key, accelerator=result.acc.name, status=result.status,
        max_gpu_count=result.cap, min_gpu_count=result.min_gpu_count,
        min_gpu_count_rented=result.acc.rented_count(result.min_gpu_count),
        gpu_count_for_deadline=needed,
        deadline_cost_with_failures=None if fast is None else _cost_at(fast, needed),
        in_time_gpu_count=result.in_time if result.status == "over_budget" else None,
        cheapest_gpu_count=result.best,
        available=(spec.available or {}).get(result.acc.key),
        points=[FrontierPoint(
            gpu_count=n, wall_days=e.wall_days, gpu_hours=e.gpu_hours,
            dollar_cost_with_failures=e.dollar_cost_with_failures,
            fits=e.memory.fits if e.memory is not None else None,
            meets_deadline=e.wall_days <= deadline,
            min_global_batch_tokens=min_global_batch_tokens(e),
            within_batch_cap=min_global_batch_tokens(e) <= max_batch,
            feasible=result.feasible[n],
        ) for n, e in sorted(result.points.items())],
    )


def _cost(e: RunEstimate) -> float:
    return math.inf if e.dollar_cost_with_failures is None else e.dollar_cost_with_failures


def _stage(spec: PlanSpec, results: list[TypeResult]) -> list[Binding]:
    """The constraint at the furthest stage any type reached: budget (or an unknown cost) when
    some plan is in time within the batch cap, else the batch cap when some plan is in time,
    else the deadline when some plan fits, else memory."""
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
                "gpu_count": e.gpu_count, "budget_usd": budget, "nominal_cost": e.dollar_cost},
                plan=_plan(e, [], spec)))
        unpriced = [(r, e) for r, e in timely if e.dollar_cost_with_failures is None]
        if unpriced:
            r, e = min(unpriced, key=lambda pair: (pair[1].wall_days, pair[0].acc.key))
            out.append(Binding(code="unknown_cost", numbers={
                "gpu": r.acc.key, "gpu_count": e.gpu_count, "budget_usd": budget}))
    elif "over_batch_cap" in statuses:
        over = [(r, r.points[r.fewest_in_time]) for r in results
                if r.status == "over_batch_cap" and r.fewest_in_time is not None]
        r, e = min(over, key=lambda pair: (min_global_batch_tokens(pair[1]), pair[1].gpu_count,
                                           pair[0].acc.key))
        out.append(Binding(code="batch", numbers={
            "max_batch_tokens": spec.batch_cap[0],
            "min_global_batch_tokens": min_global_batch_tokens(e), "gpu": r.acc.key,
            "gpu_count": e.gpu_count}))
    elif "misses_deadline" in statuses:
        slow = [(r, r.points[r.top]) for r in results
                if r.status == "misses_deadline" and r.top is not None]
        r, e = min(slow, key=lambda pair: (pair[1].wall_days, pair[0].acc.key))
        out.append(Binding(code="deadline", numbers={
            "fastest_wall_days": e.wall_days, "gpu": r.acc.key, "gpu_count": e.gpu_count,
            "deadline_days": spec.deadline_days}, plan=_plan(e, [], spec)))
    elif "does_not_fit" in statuses:
        tight = [r for r in results if r.status == "does_not_fit"]
        r = min(tight, key=lambda t: (t.min_gpu_count is None, t.min_gpu_count or 0,
                                      t.acc.key))
        out.append(Binding(code="memory", numbers={
            "gpu_count_needed": r.min_gpu_count, "gpu": r.acc.key, "max_gpu_count": r.cap,
            "gpu_count_needed_rented": r.acc.rented_count(r.min_gpu_count)}))
    return out


def _bindings(spec: PlanSpec, results: list[TypeResult], search: TypeSearch) -> list[Binding]:
    """What keeps every plan out (nothing is feasible): the stage that binds on the devices
    allowed; when a type limited by ``available`` would work with max_gpu_count devices,
    availability with the count it needs, else, when more devices of such a type would be in
    time over the budget, that budget binding (with ``available``); and what the budget buys."""
    limited = [r for r in results if r.cap < spec.max_gpu_count]
    wider = [search.one_type(r.acc, spec.max_gpu_count) for r in limited]
    searched = [r for r in results if r.status != "no_count"]
    out = _stage(spec, searched or wider)
    needs = [(r, min(n for n, ok in w.feasible.items() if ok))
             for r, w in zip(limited, wider, strict=True) if w.best is not None]
    if needs:
        r, needed = min(needs, key=lambda pair: (pair[1], pair[0].acc.key))
        out.append(Binding(code="availability", numbers={
            "gpu": r.acc.key, "gpu_count_needed": needed, "available": r.cap,
            "gpu_count_needed_rented": r.acc.rented_count(needed)}))
    elif not any(b.code == "budget" for b in out):  # more devices: in time, over the budget?
        out.extend(b.model_copy(update={"numbers": {
            **b.numbers, "available": spec.cap(str(b.numbers["gpu"]))}})
            for b in _stage(spec, wider) if b.code == "budget")
    return [*out, *_budget_buys(spec, results, search)]


def _budget_buys(spec: PlanSpec, results: list[TypeResult],
                 search: TypeSearch) -> list[Binding]:
    """What the budget buys on the devices allowed, the deadline aside, among the counts
    estimated that fit within the batch cap, are priced and last no longer than a plan
    survives: the fastest within the budget (budget_buys), else the cheapest (ties: in time,
    then the fewest devices; else the fastest), over the budget at any deadline
    (budget_buys_nothing), among those with a price (unpriced_types: how many types such a count
    has without one). None without a budget or such a count. Cost does not fall with fewer
    devices (the search's rule), so a count not estimated is seldom a better answer."""
    budget, deadline = spec.budget_usd, spec.deadline_days
    usable = [(r, e) for r in results for e in r.points.values()
              if search.fits(e) and search.within_batch(e) and e.feasibility != "too_long"]
    sound = [(r, e) for r, e in usable if e.dollar_cost_with_failures is not None]
    if budget is None or not sound:
        return []
    unpriced = len({r.acc.key for r, e in usable if e.dollar_cost_with_failures is None})
    within = [(r, e) for r, e in sound if search.within_budget(e)]
    if within:
        r, e = pick(within, lambda pair: pair[1].wall_days,
                    lambda pair: (_cost(pair[1]), pair[1].gpu_count, pair[0].acc.key))
    else:
        r, e = pick(sound, lambda pair: _cost(pair[1]), lambda pair: (
            max(pair[1].wall_days, deadline), pair[1].gpu_count, pair[0].acc.key))
    return [Binding(code="budget_buys" if within else "budget_buys_nothing", numbers={
        "gpu": r.acc.key, "gpu_count": e.gpu_count, "wall_days": e.wall_days,
        "cost_with_failures": e.dollar_cost_with_failures, "budget_usd": budget,
        "unpriced_types": unpriced}, plan=_plan(e, [], spec))]


def _best(r: TypeResult) -> RunEstimate:
    return r.points[r.best or 0]


def _quickest(r: TypeResult) -> RunEstimate:
    return r.points[r.fastest or 0]


def _winners(feasible: list[TypeResult]) -> tuple[TypeResult | None, TypeResult | None,
                                                    dict[tuple[str, int], list[Win]]]:
    """The type of the cheapest plan (among those priced) and of the fastest, and what each
    (type, count) wins: its type's cheapest or fastest count, and the overall ones."""
    wins: dict[tuple[str, int], list[Win]] = {}

    def win(r: TypeResult, n: int, code: Win) -> None:
        wins.setdefault((r.acc.key, n), []).append(code)

    priced = [r for r in feasible if _best(r).dollar_cost_with_failures is not None]
    cheapest = (pick(priced, lambda r: _cost(_best(r)),
                     lambda r: (_best(r).gpu_count, _best(r).wall_days, r.acc.key))
                if priced else None)
    fastest = (pick(feasible, lambda r: _quickest(r).wall_days,
                    lambda r: (_cost(_quickest(r)), _quickest(r).gpu_count, r.acc.key))
               if feasible else None)
    for r in feasible:
        assert r.best is not None and r.fastest is not None
        if r is cheapest:
            win(r, r.best, "cheapest")
        if r is fastest:
            win(r, r.fastest, "fastest")
        win(r, r.best, "cheapest_on_type")
        win(r, r.fastest, "fastest_on_type")
    return cheapest, fastest, wins


def plan_run(spec: PlanSpec) -> PlanReport:
    """The cheapest plans that meet the deadline and the budget, the fastest, the frontier of
    each type and, when nothing is feasible, what binds (module docstring)."""
    search = TypeSearch(spec)
    max_batch, basis = spec.batch_cap
    results = [search.one_type(acc, spec.cap(acc.key)) for acc in spec.accelerators]
    feasible = [r for r in results if r.best is not None]
    cheapest, fastest, wins = _winners(feasible)

    def plan_of(r: TypeResult, n: int) -> Plan:
        return _plan(r.points[n], wins[(r.acc.key, n)], spec)

    by_cost = sorted(feasible, key=lambda r: (
        r is not cheapest, _cost(_best(r)), _best(r).wall_days, _best(r).gpu_count, r.acc.key))
    by_time = sorted(feasible, key=lambda r: (
        r is not fastest, _quickest(r).wall_days, _cost(_quickest(r)), _quickest(r).gpu_count,
        r.acc.key))
    bests = [plan_of(r, r.best or 0) for r in by_cost]
    sound = [p for p in bests if p.dollar_cost is not None and modelled(p.estimate, p.notes)]
    return PlanReport(
        feasible=bool(feasible), plans=bests[:spec.top],
        cheapest_modelled=sound[0] if cheapest and sound and sound[0] is not bests[0] else None,
        fastest=[plan_of(r, r.fastest or 0) for r in by_time[:spec.top]],
        frontier=[*(_frontier(spec, r) for r in results),
                  *(TypeFrontier(gpu=acc.key, accelerator=acc.name, status="no_peak",
                                 max_gpu_count=spec.cap(acc.key), min_gpu_count=None, points=[],
                                 available=(spec.available or {}).get(acc.key))
                    for acc in spec.requested if acc not in spec.accelerators)],
        binding=[] if feasible else _bindings(spec, results, search),
        unsearched=[(acc.key, acc.peak_precisions) for acc in spec.requested
                    if spec.gpus is not None and acc not in spec.accelerators],
        deadline_days=spec.deadline_days,
        budget_usd=spec.budget_usd,
        max_gpu_count=spec.max_gpu_count,
        must_fit=spec.must_fit,
        max_batch_tokens=max_batch,
        max_batch_tokens_basis=basis,
        max_batch_tokens_source=BATCH_FIT_SOURCE if basis == "default_formula" else None,
        compute_flops=spec.compute_flops,
        estimates_run=search.estimates,
        notes=["linear_scaling"],
    )
