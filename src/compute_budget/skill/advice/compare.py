"""Candidate runs side by side: each one's estimate and verdict, ranked by net gain per dollar, and
what running one costs the others (the opportunity cost the stage-3 skill asks about).

For each candidate (:mod:`.candidates`)::

    estimate          estimate_run(candidate)                  (the same as `estimate`)
    decision          decision_summary(estimate, gain, σ, baseline, value, budget)
                                                               (the same verdict as `decide`)
    gain_per_dollar   = predicted_gain / dollar_cost_with_failures     None when the price is
                                                                        unknown, never 0
    p_beats_baseline  = Φ((predicted_gain − baseline_to_beat) / σ)     normal belief (:mod:`.gain`);
                                                                        σ = 0 gives 0 or 1
    gpu_days          = gpu_count × wall_days                  nominal: no failure budget
    pool_share        = gpu_days / pool_gpu_days               None without a pool
    fits_horizon      = wall_days ≤ horizon_days               None without a horizon

Rank: net gain per dollar (the gain beyond the baseline to beat, as the verdict counts it),
highest first; candidates of unknown cost after those priced, and those whose net gain is not
above 0 (expected to lose to the baseline, whatever they cost) after those; ties (and the
order among unknown costs) by P(beats the baseline), highest first, then by the input order.
Before all of that, a candidate that cannot run as planned (``can_run`` False: its verdict's
memory check failed, in device memory or host RAM, or it takes longer than any plan survives,
``too_long``) ranks after every candidate that can, whatever its gain per dollar: a ratio is no
reason to fund a run that cannot happen.

Opportunity cost, with a pool of device-days: the *best set* is the set of candidates that
maximises the total predicted gain (the sum of the gross predicted gains, each in the user's
units) within ``pool_gpu_days``. A candidate can join it when its verdict is not no-go, its
predicted gain is above 0, its wall time fits the horizon (when one is given) and its device-days
fit the pool. Device-days of different device types count alike, and the pool is a total: when
the runs take place inside it is not planned. The set is exact: a 0/1 knapsack solved by dynamic
programming over the pool divided into :data:`POOL_UNITS` equal units (the resolution,
``pool_gpu_days / POOL_UNITS`` device-days); each candidate's device-days are rounded *up* to
whole units, so a chosen set never exceeds the pool, and a set is missed only when it fits with
less slack than one unit per member. Among equally good sets the one using fewest units wins.

For each candidate that could run inside the pool and the horizon, ``displaces`` lists the
members of the best set that no longer fit beside it (the best set of the others in what it
leaves of the pool, plus it), and ``gain_forgone`` = best-set gain − that set's gain (0 for a
member; negative for a candidate left out by its verdict whose gain would outweigh). Without a
pool, the opportunity cost is the dollars relative to the top-ranked candidate: ``usd_vs_top`` =
its cost with failures − the top one's (given with a pool too).

The dollar budget and the value per unit of gain apply to each run alone, through its verdict.
Everything returned is codes and numbers; the template words them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import InputError
from ..estimate import RunEstimate, estimate_run
from ..quantities import Gain, Number, PositiveNumber, UsdAmount, bounded_quantity, validated
from ..vocabulary import FiniteResult
from .candidates import MAX_CANDIDATES, MIN_CANDIDATES, Candidate, validate_candidates
from .decision import Decision, decision_summary
from .findings import Cause, Verdict

__all__ = [
    "POOL_UNITS",
    "CandidateResult",
    "CompareSpec",
    "Comparison",
    "PoolStatus",
    "best_set_in_pool",
    "compare_candidates",
]

POOL_UNITS = 20_000
"""The pool is divided into this many equal units for the knapsack (module docstring): a set of
k members is missed only when it fits with less than k units of slack (k/20 000 of the pool)."""

_POOL = bounded_quantity(1e-3, 1e12)
_HORIZON = bounded_quantity(1e-3, 1e5)
PoolGpuDays = Annotated[float, _POOL[0], _POOL[1]]
"""Device-days in [10⁻³, 10¹²]; accepts ``5000`` and ``"5K"``."""
HorizonDays = Annotated[float, _HORIZON[0], _HORIZON[1]]
"""Days in [10⁻³, 10⁵]."""

PoolStatus = Literal["chosen", "left_out", "no_go", "no_gain", "exceeds_pool",
                     "exceeds_horizon"]
"""chosen: in the best set; left_out: could join it but a better set has no room for it;
no_go: excluded by its verdict; no_gain: a predicted gain ≤ 0 adds nothing; exceeds_pool: needs
more device-days than the pool holds; exceeds_horizon: its wall time exceeds the horizon."""


class CompareSpec(BaseModel):
    """Candidates to compare and what they are weighed against."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    candidates: list[Candidate] = Field(
        min_length=MIN_CANDIDATES, max_length=MAX_CANDIDATES,
        description=f"{MIN_CANDIDATES} to {MAX_CANDIDATES} runs, each with a unique name. Each "
                    "a run spec with a predicted_gain (or metric_now and metric_expected) and "
                    "its gain_uncertainty (1σ), in the same units for all.",
    )
    baseline_to_beat: Gain = Field(
        default=0.0,
        description="Gain a candidate must beat (the cheapest alternative's), in the units of "
                    "the gains; 0 when only noise must be beaten.",
    )
    usd_per_unit_gain: UsdAmount | None = Field(
        default=None,
        description="Optional: US dollars one unit of net gain is worth. A run whose value is "
                    "below its cost with failure budget is no-go.",
    )
    budget_usd: UsdAmount | None = Field(
        default=None, description="Optional: budget cap in US dollars for each run.")
    pool_gpu_days: PoolGpuDays | None = Field(
        default=None,
        description="Optional: a shared pool of device-days (devices × days). The candidates "
                    "draw on it; with it, the best set and what each candidate displaces.",
    )
    horizon_days: HorizonDays | None = Field(
        default=None,
        description="Optional: the time window in days (the pool's); a candidate whose wall "
                    "time exceeds it cannot finish inside it.",
    )

    @field_validator("candidates", mode="before")
    @classmethod
    def _rows(cls, value: Any) -> list[Candidate]:
        return validate_candidates(value)

    @model_validator(mode="after")
    def _horizon_with_pool(self) -> CompareSpec:
        # The horizon is the pool's window: it decides who may join the best set of the pool,
        # and without a pool it would change no answer (each verdict stands alone).
        if self.horizon_days is not None and self.pool_gpu_days is None:
            raise InputError("horizon_days", self.horizon_days,
                             "only together with pool_gpu_days (the horizon is the pool's time "
                             "window); give both, or leave horizon_days out")
        return self


class CandidateResult(BaseModel):
    """One candidate: its numbers, its verdict, its rank and its opportunity cost."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="The candidate's name.")
    rank: int = Field(description="1 for the highest net gain per dollar (module docstring).")
    verdict: Verdict = Field(description="go, marginal or no-go, as `decide` gives it.")
    can_run: bool = Field(
        description="False when it does not fit in memory or takes longer than any plan "
                    "survives (too_long); such candidates rank after every one that can.")
    cause: Cause = Field(description="The cause code of the verdict (ok for go).")
    predicted_gain: float = Field(description="Predicted gain, user's units, higher is better.")
    gain_uncertainty: float = Field(description="1σ uncertainty of the gain, same units.")
    net_gain: float = Field(description="predicted_gain − baseline_to_beat, same units.")
    p_beats_baseline: float = Field(
        description="P(gain > baseline_to_beat) = Φ(net / σ), a probability in [0, 1].")
    dollar_cost_with_failures: float | None = Field(
        description="Cost with the failure budget in US dollars; None when the price is unknown.")
    gain_per_dollar: float | None = Field(
        description="predicted_gain / dollar_cost_with_failures, user's units per US dollar; "
                    "None when the cost is unknown.")
    net_gain_per_dollar: float | None = Field(
        description="net_gain / dollar_cost_with_failures (the verdict's figure), user's units "
                    "per US dollar; None when the cost is unknown.")
    gpu_count: int = Field(description="Devices the run uses.")
    wall_days: float = Field(description="Estimated wall-clock days (central MFU).")
    gpu_days: float = Field(description="gpu_count × wall_days, device-days (no failure budget).")
    pool_share: float | None = Field(
        description="gpu_days / pool_gpu_days, a fraction (above 1: more than the pool); None "
                    "without a pool.")
    fits_horizon: bool | None = Field(
        description="wall_days ≤ horizon_days; None without a horizon.")
    usd_vs_top: float | None = Field(
        description="dollar_cost_with_failures − the top-ranked candidate's, US dollars (0 for "
                    "the top one); None when either cost is unknown.")
    pool_status: PoolStatus | None = Field(
        description="Its place in the best set (PoolStatus codes); None without a pool.")
    displaces: list[str] | None = Field(
        description="Best-set members that no longer fit beside it, in rank order; None "
                    "without a pool or when it cannot run inside the pool and horizon.")
    gain_forgone: float | None = Field(
        description="Best-set gain − the best total gain with it running, user's units; None "
                    "as for displaces.")
    estimate: RunEstimate = Field(description="Its run estimate, as `estimate` gives it.")
    decision: Decision = Field(description="Its verdict in full, as `decide` gives it.")


class Comparison(FiniteResult):
    """The candidates ranked, with the best set when a pool of device-days is given."""

    model_config = ConfigDict(frozen=True)

    candidates: list[CandidateResult] = Field(description="The candidates in rank order.")
    top: str = Field(description="Name of the top-ranked candidate.")
    baseline_to_beat: float = Field(description="Gain a candidate must beat, user's units.")
    usd_per_unit_gain: float | None = Field(description="US dollars per unit of gain, if given.")
    budget_usd: float | None = Field(description="Budget cap per run in US dollars, if given.")
    pool_gpu_days: float | None = Field(description="Shared pool in device-days, if given.")
    horizon_days: float | None = Field(description="Time window in days, if given.")
    opportunity_basis: Literal["pool", "dollars"] = Field(
        description="pool: the best set within the pool; dollars: usd_vs_top only (no pool).")
    best_set: list[str] | None = Field(
        description="Names of the candidates that maximise the total predicted gain within the "
                    "pool, in rank order; None without a pool.")
    best_set_gain: float | None = Field(
        description="Sum of the best set's predicted gains, user's units; None without a pool.")
    best_set_gpu_days: float | None = Field(
        description="Device-days the best set uses; None without a pool.")
    pool_gpu_days_left: float | None = Field(
        description="pool_gpu_days − best_set_gpu_days, device-days; None without a pool.")
    pool_resolution_gpu_days: float | None = Field(
        description="Device-days of one knapsack unit (pool / POOL_UNITS); None without a pool.")


# --- the knapsack -------------------------------------------------------------------------


def _units(gpu_days: float, pool_gpu_days: float) -> int:
    """Device-days in whole pool units, rounded up (a hair of float error forgiven)."""
    return max(1, math.ceil(gpu_days * POOL_UNITS / pool_gpu_days - 1e-9))


def _pack(gains: Sequence[float], units: Sequence[int], items: Sequence[int],
          capacity: int) -> tuple[list[int], float]:
    """0/1 knapsack over ``items`` (indices into gains and units) within ``capacity`` units:
    the indices of the best set (fewest units among the best) and its total gain."""
    import numpy as np  # only with a pool: the server and the CLI start without it

    if capacity <= 0:
        return [], 0.0
    items = [i for i in items if units[i] <= capacity]
    best = np.zeros(capacity + 1)  # best[w]: the most gain within w units
    take = np.zeros((len(items), capacity + 1), dtype=bool)
    for row, i in enumerate(items):
        u = units[i]
        with_it = best[: capacity + 1 - u] + gains[i]
        better = with_it > best[u:]
        take[row, u:] = better
        best[u:] = np.where(better, with_it, best[u:])
    w = int(np.argmax(best))  # the first width reaching the maximum: the fewest units
    chosen: list[int] = []
    for row in reversed(range(len(items))):
        if take[row, w]:
            chosen.append(items[row])
            w -= units[items[row]]
    chosen.reverse()
    return chosen, math.fsum(gains[i] for i in chosen)


@validated
def best_set_in_pool(gains: list[Number], gpu_days: list[PositiveNumber],
                     pool_gpu_days: PoolGpuDays) -> tuple[list[int], float]:
    """The indices of the set with the largest total gain whose device-days fit the pool, and
    that total: a 0/1 knapsack, exact over the pool's :data:`POOL_UNITS` units (module
    docstring). Items with a gain ≤ 0 never join."""
    if len(gains) != len(gpu_days):
        raise InputError("gpu_days", len(gpu_days), f"one entry for each gain ({len(gains)})")
    units = [_units(d, pool_gpu_days) for d in gpu_days]
    items = [i for i, g in enumerate(gains) if g > 0]
    return _pack(gains, units, items, POOL_UNITS)


# --- the comparison -----------------------------------------------------------------------


_RUN_CHECKS = frozenset({"fits_in_memory", "finishes_in_time"})
"""The verdict's checks that say whether a run can happen at all (module docstring)."""


def _rank_key(row: tuple[int, CandidateResult]) -> tuple[bool, bool, bool, float, float, int]:
    index, r = row
    value = r.net_gain_per_dollar
    return (not r.can_run, r.net_gain <= 0, value is None, 0.0 if value is None else -value,
            -r.p_beats_baseline, index)


def _assess(spec: CompareSpec, candidate: Candidate) -> CandidateResult:
    estimate = estimate_run(candidate)
    decision = decision_summary(estimate, candidate.predicted_gain, candidate.gain_uncertainty,
                                spec.baseline_to_beat, metric_now=candidate.metric_now,
                                metric_expected=candidate.metric_expected,
                                higher_is_better=candidate.higher_is_better,
                                usd_per_unit_gain=spec.usd_per_unit_gain,
                                budget_usd=spec.budget_usd, kind=estimate.kind)
    cost_f = estimate.dollar_cost_with_failures
    gpu_days = candidate.gpu_count * estimate.wall_days
    p_beats = decision.p_beats_baseline
    assert p_beats is not None  # a candidate gives its σ
    return CandidateResult(
        name=candidate.name,
        rank=0,
        verdict=decision.verdict,
        can_run=not any(f.check in _RUN_CHECKS and f.passed is False for f in decision.findings),
        cause=decision.cause,
        predicted_gain=decision.predicted_gain,
        gain_uncertainty=candidate.gain_uncertainty,
        net_gain=decision.net_gain,
        p_beats_baseline=p_beats,
        dollar_cost_with_failures=cost_f,
        gain_per_dollar=None if not cost_f else decision.predicted_gain / cost_f,
        net_gain_per_dollar=decision.gain_per_dollar_with_failures,
        gpu_count=candidate.gpu_count,
        wall_days=estimate.wall_days,
        gpu_days=gpu_days,
        pool_share=None if spec.pool_gpu_days is None else gpu_days / spec.pool_gpu_days,
        fits_horizon=None if spec.horizon_days is None else estimate.wall_days <= spec.horizon_days,
        usd_vs_top=None,
        pool_status=None,
        displaces=None,
        gain_forgone=None,
        estimate=estimate,
        decision=decision,
    )


def _pool_status(r: CandidateResult, units: int) -> PoolStatus:
    if r.fits_horizon is False:
        return "exceeds_horizon"
    if units > POOL_UNITS:
        return "exceeds_pool"
    if r.verdict == "no-go":
        return "no_go"
    return "no_gain" if r.predicted_gain <= 0 else "left_out"


def _with_pool(results: list[CandidateResult], pool: float) -> tuple[
        list[CandidateResult], list[int], float]:
    gains = [r.predicted_gain for r in results]
    units = [_units(r.gpu_days, pool) for r in results]
    status = [_pool_status(r, u) for r, u in zip(results, units, strict=True)]
    eligible = [i for i, s in enumerate(status) if s == "left_out"]
    best, best_gain = _pack(gains, units, eligible, POOL_UNITS)
    out: list[CandidateResult] = []
    for i, r in enumerate(results):
        update: dict[str, Any] = {"pool_status": "chosen" if i in best else status[i]}
        if i in best:
            update |= {"displaces": [], "gain_forgone": 0.0}
        elif status[i] not in ("exceeds_horizon", "exceeds_pool"):
            others = [j for j in eligible if j != i]
            kept, kept_gain = _pack(gains, units, others, POOL_UNITS - units[i])
            update |= {"displaces": [results[j].name for j in best if j not in kept],
                       "gain_forgone": best_gain - (gains[i] + kept_gain)}
        out.append(r.model_copy(update=update))
    return out, best, best_gain


def compare_candidates(spec: CompareSpec) -> Comparison:
    """Estimate, judge and rank the candidates, and price what each one displaces (module
    docstring)."""
    assessed = [_assess(spec, c) for c in spec.candidates]
    ranked = [r for _, r in sorted(enumerate(assessed), key=_rank_key)]
    top_cost = ranked[0].dollar_cost_with_failures
    ranked = [r.model_copy(update={
        "rank": k + 1,
        "usd_vs_top": None if top_cost is None or r.dollar_cost_with_failures is None
        else r.dollar_cost_with_failures - top_cost,
    }) for k, r in enumerate(ranked)]
    pool = spec.pool_gpu_days
    best_names: list[str] | None = None
    best_gain = best_days = None
    if pool is not None:
        ranked, best, best_gain = _with_pool(ranked, pool)
        best_names = [ranked[i].name for i in sorted(best)]
        best_days = math.fsum(ranked[i].gpu_days for i in best)
    return Comparison(
        candidates=ranked,
        top=ranked[0].name,
        baseline_to_beat=spec.baseline_to_beat,
        usd_per_unit_gain=spec.usd_per_unit_gain,
        budget_usd=spec.budget_usd,
        pool_gpu_days=pool,
        horizon_days=spec.horizon_days,
        opportunity_basis="dollars" if pool is None else "pool",
        best_set=best_names,
        best_set_gain=best_gain,
        best_set_gpu_days=best_days,
        pool_gpu_days_left=None if pool is None or best_days is None else pool - best_days,
        pool_resolution_gpu_days=None if pool is None else pool / POOL_UNITS,
    )
