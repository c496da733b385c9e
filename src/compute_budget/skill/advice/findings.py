"""The checks behind a verdict: each a finding with the verdict it caps, a cause code, numbers.

The rule, from the stage-3 compute-budget skill, made explicit (σ the 1σ uncertainty, net the
gain over the baseline to beat; the probabilities assume a normal belief about the gain)::

    clears_uncertainty   gain > σ               else caps at marginal   (P(any gain) > 84%)
    beats_baseline       net − σ ≥ 0            else marginal            (P(beats) ≥ 84%)
                         net + σ < 0            no-go                    (P(beats) < 16%)
                         σ unknown (a scaling fit that cannot estimate it): both cap at
                         marginal, cause uncertainty_unknown
    fits_in_memory       some layout fits       else no-go
    finishes_in_time     ≤ a year of wall time  else no-go
    value_covers_cost    value of the net gain ≥ cost with the failure budget, else no-go;
                         an unknown cost caps at marginal
    within_budget        nominal cost ≤ budget  else no-go; cost with failures above it: marginal;
                         an unknown cost caps at marginal
    cost_known           with neither a value per unit nor a budget: an unknown cost (no price
                         for the device) caps at marginal, for the gain is weighed against
                         nothing; a known cost adds no finding
    benefit_named        informational: it caps nothing

The verdict is the strictest cap. Templates turn each cause code into a sentence.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from .gain import GainReading

__all__ = [
    "ONE_SIGMA",
    "Cause",
    "Check",
    "Costed",
    "Finding",
    "Verdict",
    "gain_findings",
    "money_findings",
    "run_findings",
    "strictest",
]

Verdict = Literal["go", "marginal", "no-go"]
_RANK: dict[Verdict, int] = {"go": 0, "marginal": 1, "no-go": 2}
ONE_SIGMA = 0.8413447460685429
"""Φ(1): a gain one σ above a threshold clears it with this probability."""

Check = Literal["clears_uncertainty", "beats_baseline", "fits_in_memory", "finishes_in_time",
                "value_covers_cost", "within_budget", "cost_known", "benefit_named"]
Cause = Literal["ok", "noise", "uncertainty_unknown", "below_baseline", "does_not_fit",
                "activations_do_not_fit", "host_memory_does_not_fit", "too_long",
                "value_below_cost", "unknown_cost", "over_budget", "over_budget_with_failures",
                "no_benefit"]


class Finding(BaseModel):
    """One check, whether it passed, the verdict it allows at most, why, and its numbers."""

    model_config = ConfigDict(frozen=True)

    check: Check
    passed: bool | None = Field(description="None when it could not be checked.")
    caps: Verdict = Field(description="The best verdict this finding allows.")
    cause: Cause = Field(description="Why, as a code the reply turns into a sentence.")
    numbers: dict[str, float | None] = Field(
        description="The figures compared (US dollars, days, the user's gain units).")


def strictest(findings: list[Finding]) -> Verdict:
    """The verdict: the strictest cap among the findings."""
    return max((f.caps for f in findings), key=_RANK.__getitem__, default="go")


def gain_findings(reading: GainReading) -> list[Finding]:
    """clears_uncertainty and beats_baseline."""
    gain, sigma, net = reading.gain, reading.gain_uncertainty, reading.net_gain
    numbers = {"gain": gain, "sigma": sigma, "baseline": reading.baseline_to_beat, "net": net}
    if sigma is None:
        return [Finding(check=check, passed=None, caps="marginal", cause="uncertainty_unknown",
                        numbers=numbers) for check in ("clears_uncertainty", "beats_baseline")]
    clears = gain > sigma
    if net - sigma >= 0:
        beats, cap, cause = True, "go", "ok"
    elif net + sigma < 0:
        beats, cap, cause = False, "no-go", "below_baseline"
    else:
        beats, cap, cause = False, "marginal", "noise"
    return [
        Finding(check="clears_uncertainty", passed=clears, caps="go" if clears else "marginal",
                cause="ok" if clears else "noise",
                numbers={**numbers, "p_positive": reading.p_positive}),
        Finding(check="beats_baseline", passed=beats, caps=cap, cause=cause,
                numbers={**numbers, "p_beats_baseline": reading.p_beats_baseline}),
    ]


class _Memory(Protocol):
    @property
    def fits(self) -> bool | None: ...

    @property
    def min_gpu_count(self) -> int | None: ...


@runtime_checkable
class Costed(Protocol):
    """Anything with a cost: a CostEstimate or a RunEstimate."""

    @property
    def dollar_cost(self) -> float | None: ...

    @property
    def dollar_cost_with_failures(self) -> float | None: ...

    @property
    def gpu_hours(self) -> float: ...


_CAUSE_OF_BINDING: dict[str | None, Cause] = {
    "activations": "activations_do_not_fit", "host_memory": "host_memory_does_not_fit"}


def run_findings(memory: _Memory | None, binding: str | None, feasibility: str,
                 wall_days: float | None, max_days: float,
                 host: tuple[float, float] | None = None) -> list[Finding]:
    """fits_in_memory and finishes_in_time (when the estimate carries them); ``host`` is the
    CPU RAM per device the offload would need and the host's usable, when that RAM binds."""
    out: list[Finding] = []
    if memory is not None and memory.fits is not None:
        cause: Cause = "ok" if memory.fits else _CAUSE_OF_BINDING.get(binding, "does_not_fit")
        numbers: dict[str, float | None] = {
            "min_gpu_count": None if memory.fits else memory.min_gpu_count}
        if cause == "host_memory_does_not_fit" and host is not None:
            numbers |= {"host_needed_bytes": host[0], "host_usable_bytes": host[1]}
        out.append(Finding(check="fits_in_memory", passed=memory.fits,
                           caps="go" if memory.fits else "no-go", cause=cause,
                           numbers=numbers))
    if wall_days is not None:
        on_time = feasibility != "too_long"
        out.append(Finding(check="finishes_in_time", passed=on_time,
                           caps="go" if on_time else "no-go",
                           cause="ok" if on_time else "too_long",
                           numbers={"wall_days": wall_days, "max_days": max_days}))
    return out


def money_findings(run: Costed, reading: GainReading, usd_per_unit_gain: float | None,
                   budget_usd: float | None) -> list[Finding]:
    """value_covers_cost (with a value per unit of gain), within_budget (with a budget), and
    cost_known (with neither, when the cost is unknown)."""
    out: list[Finding] = []
    cost, cost_f = run.dollar_cost, run.dollar_cost_with_failures
    if usd_per_unit_gain is not None:
        value = usd_per_unit_gain * reading.net_gain
        numbers = {"value": value, "cost_with_failures": cost_f, "net": reading.net_gain}
        if cost_f is None:
            out.append(Finding(check="value_covers_cost", passed=None, caps="marginal",
                               cause="unknown_cost", numbers=numbers))
        else:
            covered = value >= cost_f
            out.append(Finding(check="value_covers_cost", passed=covered,
                               caps="go" if covered else "no-go",
                               cause="ok" if covered else "value_below_cost", numbers=numbers))
    if budget_usd is not None:
        numbers = {"budget": budget_usd, "cost": cost, "cost_with_failures": cost_f}
        if cost is None or cost_f is None:
            out.append(Finding(check="within_budget", passed=None, caps="marginal",
                               cause="unknown_cost", numbers=numbers))
        elif cost > budget_usd:
            out.append(Finding(check="within_budget", passed=False, caps="no-go",
                               cause="over_budget", numbers=numbers))
        elif cost_f > budget_usd:
            out.append(Finding(check="within_budget", passed=False, caps="marginal",
                               cause="over_budget_with_failures", numbers=numbers))
        else:
            out.append(Finding(check="within_budget", passed=True, caps="go", cause="ok",
                               numbers=numbers))
    if not out and (cost is None or cost_f is None):
        out.append(Finding(check="cost_known", passed=False, caps="marginal",
                           cause="unknown_cost", numbers={"gpu_hours": run.gpu_hours}))
    return out
