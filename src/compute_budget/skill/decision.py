"""The verdict: is the predicted gain worth the cost? (step 4 of the procedure)

Gain, its uncertainty σ and the baseline to beat are in the user's own metric (accuracy points,
loss reduction, win rate …), higher meaning better. The rule, from the stage-3 compute-budget
skill, made explicit::

    go        gain − σ ≥ baseline  and  gain > σ      the gain clears its noise and the baseline
    no-go     gain + σ < baseline                      even an optimistic gain does not beat it
    marginal  anything else                            collect more small-scale data first

Other facts can only make the verdict stricter: a run that does not fit in device memory at its
layout is no-go; a dollar value per unit of gain makes it no-go when the value is below the cost
with the failure budget (marginal when the cost is unknown, so the comparison cannot be made); a
budget cap makes it no-go when the nominal cost exceeds it, marginal when only the cost with the
failure budget does.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from .errors import InputError

__all__ = ["Decision", "DecisionCheck", "DecisionInputs", "Verdict", "decision_summary"]

Verdict = Literal["go", "marginal", "no-go"]
_RANK: dict[Verdict, int] = {"go": 0, "marginal": 1, "no-go": 2}


class _Costed(Protocol):
    @property
    def dollar_cost(self) -> float | None: ...

    @property
    def dollar_cost_with_failures(self) -> float | None: ...

    @property
    def gpu_hours(self) -> float: ...


FiniteNumber = Annotated[float, Field(allow_inf_nan=False)]


class DecisionInputs(BaseModel):
    """What the verdict weighs the cost against (step 3): the gain, its noise, the baseline."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    predicted_gain: FiniteNumber = Field(
        description="Predicted improvement from the run, in the user's own metric (accuracy "
                    "points, loss reduction, win rate …); higher is better.",
    )
    gain_uncertainty: FiniteNumber = Field(
        ge=0,
        description="1σ uncertainty of the predicted gain, same units, ≥ 0 (from the spread of "
                    "small-scale runs or a scaling-fit interval).",
    )
    baseline_to_beat: FiniteNumber = Field(
        description="Gain the run must beat to be worth it, same units (what a cheaper option "
                    "or the current model gives; 0 when only noise must be beaten).",
    )
    usd_per_unit_gain: FiniteNumber | None = Field(
        default=None, ge=0,
        description="Optional: US dollars one unit of gain is worth; no-go when the gain's "
                    "value is below the cost with failure budget.",
    )
    budget_usd: FiniteNumber | None = Field(
        default=None, gt=0, description="Optional: budget cap in US dollars."
    )
    benefit: str | None = Field(
        default=None, max_length=500,
        description="Optional: the concrete benefit the gain is tied to (a publication, a "
                    "deployment, a contract).",
    )


class DecisionCheck(BaseModel):
    """One test the verdict applied, whether it passed, and what it compared."""

    model_config = ConfigDict(frozen=True)

    name: Literal["clears_uncertainty", "beats_baseline", "fits_in_memory", "finishes_in_time",
                  "value_covers_cost", "within_budget"]
    passed: bool | None = Field(description="None when it could not be checked (unknown cost).")
    detail: str = Field(description="The comparison, with numbers and units.")


class Decision(BaseModel):
    """The verdict on a run, its one-line reason and the figures behind it."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    reason: str = Field(description="One line: why this verdict.")
    predicted_gain: float = Field(description="Predicted gain, in the user's metric units.")
    gain_uncertainty: float = Field(description="1σ uncertainty of the gain, same units.")
    baseline_to_beat: float = Field(description="Gain the run must beat, same units.")
    dollar_cost: float | None = Field(description="Nominal cost in US dollars; None if unknown.")
    dollar_cost_with_failures: float | None = Field(
        description="Cost with the failure budget in US dollars; None if unknown."
    )
    gpu_hours: float = Field(description="Nominal device-hours.")
    gain_per_dollar: float | None = Field(
        description="Gain units per US dollar (nominal cost); None when the cost is unknown."
    )
    gain_per_dollar_with_failures: float | None = Field(
        description="Gain units per US dollar with the failure budget; None when unknown."
    )
    gain_per_gpu_hour: float = Field(description="Gain units per device-hour.")
    excess_over_baseline: float = Field(description="gain − baseline, in the user's units.")
    signal_to_noise: float | None = Field(description="gain / σ; None when σ is 0.")
    usd_per_unit_gain: float | None = Field(description="Dollar value of one unit of gain.")
    value_usd: float | None = Field(description="gain × value per unit, in US dollars.")
    budget_usd: float | None = Field(description="Budget cap in US dollars, if given.")
    benefit: str | None = Field(description="The concrete benefit the gain is tied to, if given.")
    checks: list[DecisionCheck]
    advice: str = Field(description="What to do next.")
    feasibility: Literal["ok", "does_not_fit", "too_long"] = Field(
        description="Whether the run can run at all: ok, does_not_fit (no layout fits the "
                    "devices), too_long (longer than a plan survives).")
    min_gpu_count: int | None = Field(
        description="When it does not fit: the fewest devices of this type it needs (with "
                    "optimizer offload if that helps); None when no count does or it fits.")
    min_gpu_count_without_offload: int | None = Field(
        description="The same without optimizer offload; None when no count does or it fits.")
    wall_days: float | None = Field(description="Estimated wall-clock days, when known.")


def _finite(value: object, field: str, *, non_negative: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(field, value, "a finite number")
    if non_negative and value < 0:
        raise InputError(field, value, "a finite number ≥ 0")
    return float(value)


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.0f}"


_ADVICE: dict[str, str] = {
    "noise": "collect more small-scale data to shrink the uncertainty before gambling the budget",
    "memory": "no layout fits these devices: use more or larger devices, LoRA, or a shorter "
              "sequence (the estimate's memory check names what would fit)",
    "activations": "shorten the sequence or the micro-batch: the activations alone exceed a "
                   "device at every layout tried",
    "time": "use many more devices, or a smaller model or fewer tokens, so that it finishes "
            "within months",
    "price": "give the price per GPU-hour so the cost can be weighed against the gain's value "
             "and the budget",
    "budget": "raise the budget or bring the cost under it (a shorter run, a smaller scale, "
              "cheaper hardware)",
    "value": "the gain is not worth its cost at this size",
}


def _advice(verdict: Verdict, causes: set[str]) -> str:
    if verdict == "go":
        return ("launch it with a kill criterion: an abort condition checked at fixed points of "
                "the run")
    steps = [_ADVICE[c] for c in ("activations", "memory", "time", "price", "noise", "budget",
                                  "value") if c in causes]
    tail = ("or price the cheaper alternatives" if verdict == "marginal" else
            "price the cheaper alternatives or spend the compute on a different idea")
    return "; ".join([*(steps or ["do not launch as specified"]), tail])


def decision_summary(
    estimate: _Costed,
    predicted_gain: float,
    gain_uncertainty: float,
    baseline_to_beat: float,
    *,
    usd_per_unit_gain: float | None = None,
    budget_usd: float | None = None,
    benefit: str | None = None,
) -> Decision:
    """Render a go / marginal / no-go verdict with a one-line reason (module docstring).

    ``estimate`` is anything with ``dollar_cost``, ``dollar_cost_with_failures`` and
    ``gpu_hours`` (a :class:`~compute_budget.skill.estimate.CostEstimate` or ``RunEstimate``).
    """
    gain = _finite(predicted_gain, "predicted_gain")
    sigma = _finite(gain_uncertainty, "gain_uncertainty", non_negative=True)
    baseline = _finite(baseline_to_beat, "baseline_to_beat")
    value_rate = None
    if usd_per_unit_gain is not None:
        value_rate = _finite(usd_per_unit_gain, "usd_per_unit_gain", non_negative=True)
    budget = None
    if budget_usd is not None:
        budget = _finite(budget_usd, "budget_usd", non_negative=True)
        if budget == 0:
            raise InputError("budget_usd", budget_usd, "a positive number of US dollars")
    benefit_text = benefit.strip() if isinstance(benefit, str) and benefit.strip() else None

    cost = estimate.dollar_cost
    cost_f = estimate.dollar_cost_with_failures
    checks: list[DecisionCheck] = []

    clears_noise = gain > sigma
    checks.append(DecisionCheck(
        name="clears_uncertainty", passed=clears_noise,
        detail=f"gain {gain:g} vs uncertainty ±{sigma:g}",
    ))
    beats = gain - sigma >= baseline
    checks.append(DecisionCheck(
        name="beats_baseline", passed=beats,
        detail=f"gain − σ = {gain - sigma:g} vs baseline {baseline:g} "
               f"(gain + σ = {gain + sigma:g})",
    ))

    if beats and clears_noise:
        verdict: Verdict = "go"
        reason = (f"the predicted gain {gain:g} ± {sigma:g} clears both its uncertainty and the "
                  f"baseline {baseline:g}")
    elif gain + sigma < baseline:
        verdict = "no-go"
        reason = (f"even the optimistic gain {gain + sigma:g} (gain + σ) is below the baseline "
                  f"{baseline:g}")
    else:
        verdict = "marginal"
        reason = (f"the gain {gain:g} ± {sigma:g} does not clearly beat the baseline {baseline:g} "
                  f"and its uncertainty")
    causes: set[str] = {"noise"} if verdict == "marginal" else set()

    def stricter(new: Verdict, why: str, cause: str) -> None:
        nonlocal verdict, reason
        if _RANK[new] > _RANK[verdict]:
            verdict, reason = new, why
            causes.clear()
            causes.add(cause)
        elif _RANK[new] == _RANK[verdict] and new != "go":
            reason = f"{reason}; {why}"
            causes.add(cause)

    feasibility = getattr(estimate, "feasibility", "ok")
    memory = getattr(estimate, "memory", None)
    no_fit = memory is not None and memory.fits is False
    min_devices = memory.min_gpu_count if memory is not None and no_fit else None
    min_plain = (memory.layout.min_gpu_count_without_offload
                 if memory is not None and no_fit else None)
    wall_days = getattr(estimate, "wall_days", None)
    if memory is not None:
        layout = (f"ZeRO {memory.zero}, TP {memory.tp}, PP {memory.pp}, recompute "
                  f"{memory.recompute}{', offload' if memory.offload else ''}")
        checks.append(DecisionCheck(
            name="fits_in_memory", passed=memory.fits,
            detail=(f"fits at {layout}" if memory.fits else
                    "does not fit at any layout tried" + (
                        f"; needs at least {min_devices} devices of this type"
                        if min_devices is not None else ""))))
        if memory.fits is False:
            stricter("no-go", "the run does not fit in device memory on these devices",
                     "activations" if memory.layout.binding == "activations" else "memory")
    if feasibility == "too_long" and wall_days is not None:
        limit = getattr(estimate, "max_plan_days", 365)
        checks.append(DecisionCheck(
            name="finishes_in_time", passed=False,
            detail=f"{wall_days / 365:,.1f} years of wall time vs a plan's {limit:g} days"))
        stricter("no-go", f"the run would take {wall_days / 365:,.1f} years: longer than any "
                          "plan survives", "time")

    value = None
    if value_rate is not None:
        value = gain * value_rate
        covered = None if cost_f is None else value >= cost_f
        checks.append(DecisionCheck(
            name="value_covers_cost", passed=covered,
            detail=f"value {_money(value)} vs cost with failure budget {_money(cost_f)}",
        ))
        if covered is False and cost_f is not None:
            stricter("no-go", f"the gain is worth {_money(value)}, less than the "
                              f"{_money(cost_f)} it costs with the failure budget", "value")
        elif covered is None:
            stricter("marginal", f"the gain's value {_money(value)} cannot be weighed against "
                                 "an unknown cost; give a price", "price")
    if budget is not None and (cost is None or cost_f is None):
        checks.append(DecisionCheck(
            name="within_budget", passed=None,
            detail=f"budget {_money(budget)} vs an unknown cost (no price)",
        ))
        stricter("marginal", f"the budget {_money(budget)} cannot be checked against an unknown "
                             "cost; give a price", "price")
    if budget is not None and cost is not None and cost_f is not None:
        checks.append(DecisionCheck(
            name="within_budget", passed=cost_f <= budget,
            detail=f"cost {_money(cost)} ({_money(cost_f)} with failures) vs budget "
                   f"{_money(budget)}",
        ))
        if cost > budget:
            stricter("no-go", f"the nominal cost {_money(cost)} exceeds the budget "
                              f"{_money(budget)}", "budget")
        elif cost_f > budget:
            stricter("marginal", f"the cost with failure budget {_money(cost_f)} exceeds the "
                                 f"budget {_money(budget)}", "budget")

    advice = _advice(verdict, causes)

    return Decision(
        verdict=verdict,
        reason=reason,
        predicted_gain=gain,
        gain_uncertainty=sigma,
        baseline_to_beat=baseline,
        dollar_cost=cost,
        dollar_cost_with_failures=cost_f,
        gpu_hours=estimate.gpu_hours,
        gain_per_dollar=None if not cost else gain / cost,
        gain_per_dollar_with_failures=None if not cost_f else gain / cost_f,
        gain_per_gpu_hour=gain / estimate.gpu_hours,
        excess_over_baseline=gain - baseline,
        signal_to_noise=None if sigma == 0 else gain / sigma,
        usd_per_unit_gain=value_rate,
        value_usd=value,
        budget_usd=budget,
        benefit=benefit_text,
        checks=checks,
        advice=advice,
        feasibility=feasibility,
        min_gpu_count=min_devices,
        min_gpu_count_without_offload=min_plain,
        wall_days=wall_days,
    )
