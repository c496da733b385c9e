"""The verdict: is the predicted gain worth the cost? (step 4 of the procedure)

:func:`decision_summary` reads the gain one unambiguous way (:mod:`.gain`), runs the checks
(:mod:`.findings`: the verdict is the strictest cap among them), and says what to do next by the
cause and the stake (:data:`NextCode`), with kill criteria for a run worth launching
(:mod:`.kill_criteria`) and, apart from them, the dollars spent by their checkpoint day (a budget
line). A run from a model whose gain is lost in its noise tries a share of its tokens first, with
its own stop rule: go on only if the metric has moved by :func:`.kill_criteria.trial_gain`
by then (the share of the predicted gain a run on course for it has made). Value and gain per
dollar use the *net* gain over the baseline to beat. Every sentence a user reads is in the
verdict template, keyed by these codes.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..estimate import assumptions_of
from ..estimate_result import RunAssumptions, RunEstimate
from ..hardware.catalog import DeviceUnit
from ..quantities import Gain, Uncertainty, UsdAmount, validated
from ..scaling.result import ScalingFit
from ..vocabulary import DEFAULT_RUN_KIND, FiniteResult, RunKind, starts_from_a_model
from .findings import (
    ONE_SIGMA,
    Cause,
    Costed,
    Finding,
    Verdict,
    gain_findings,
    money_findings,
    run_findings,
    strictest,
)
from .gain import GainNote, GainReading, read_gain
from .kill_criteria import (
    GainBasis,
    KillCriterion,
    checkpoint_day,
    kill_criteria,
    spend_by,
    trial_gain,
)

__all__ = [
    "Decision",
    "DecisionInputs",
    "NextCode",
    "NextStep",
    "Verdict",
    "decision_summary",
]

PROXY_COST_SHARE = 0.25
"""A small-scale study run costs a quarter of the run (half the model on half the tokens)."""
FIRST_TOKENS_SHARE = 0.3
"""A run that starts from a model tries this share of its tokens first (as the alternatives)."""

NextCode = Literal["launch", "run_is_the_experiment", "small_study", "fewer_tokens_first",
                   "more_seeds", "no_expected_gain", "more_points", "measured_losses",
                   "fit_first", "shorten_sequence", "shorten", "give_price", "cut_cost",
                   "not_worth_it", "spend_elsewhere", "name_benefit", "alternatives"]


class DecisionInputs(BaseModel):
    """What the verdict weighs the cost against (step 3): the gain, its noise, the baseline."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    predicted_gain: Gain | None = Field(
        default=None,
        description="Predicted improvement (a delta) in the user's metric. Higher is "
                    "better (a loss reduction as a positive number); or give metric_now and "
                    "metric_expected.",
    )
    gain_uncertainty: Uncertainty | None = Field(
        default=None,
        description="1σ uncertainty of the gain, ≥ 0, same units. The spread of seeds or "
                    "small-scale runs, or a scaling fit's.",
    )
    baseline_to_beat: Gain = Field(
        default=0.0,
        description="Gain the cheapest alternative already gives, same units. More "
                    "prompting, a smaller run; 0 when only noise must be beaten.",
    )
    metric_now: Gain | None = Field(
        default=None, description="Instead of a delta: the metric today (e.g. 55.0).")
    metric_expected: Gain | None = Field(
        default=None, description="Instead of a delta: the metric expected after the run.")
    higher_is_better: bool = Field(
        default=True, description="False for a loss or a perplexity (with the metric pair).")
    usd_per_unit_gain: UsdAmount | None = Field(
        default=None,
        description="Optional: US dollars one unit of net gain is worth. E.g. 50000 or "
                    "'$50k'; no-go when that value is below the cost with failure budget.",
    )
    budget_usd: UsdAmount | None = Field(
        default=None, description="Optional: budget cap, US dollars. E.g. '$400k'.")
    benefit: str | None = Field(
        default=None, max_length=500,
        description="Optional: what the gain buys. A paper, a deployment, a contract.",
    )


class NextStep(BaseModel):
    """One thing to do next, as a code with its numbers."""

    model_config = ConfigDict(frozen=True)

    code: NextCode
    numbers: dict[str, float | None] = Field(default_factory=dict)


class Decision(FiniteResult):
    """The verdict on a run, the findings behind it, and what to do next."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    cause: Cause = Field(description="The cause of the strictest finding (ok for go).")
    kind: RunKind = Field(description="Kind of run the advice is for.")
    predicted_gain: float = Field(description="Gain used, user's metric, higher is better.")
    gain_uncertainty: float | None = Field(
        description="1σ uncertainty of the gain, same units; None when a scaling fit cannot "
                    "estimate it (cause uncertainty_unknown).")
    baseline_to_beat: float = Field(description="Gain the cheapest alternative gives.")
    net_gain: float = Field(description="predicted_gain − baseline_to_beat.")
    gain_source: Literal["delta", "metric"] = Field(
        description="How the gain was given: a delta, or the metric now and expected.")
    metric_now: float | None
    metric_expected: float | None
    higher_is_better: bool
    gain_notes: list[GainNote] = Field(description="Readings that look like mistakes.")
    p_beats_baseline: float | None = Field(
        description="P(gain > baseline) under the uncertainty; None when σ is unknown.")
    p_positive: float | None = Field(
        description="P(gain > 0) under the uncertainty; None when σ is unknown.")
    go_threshold: float = Field(description="P(beats the baseline) a go needs: Φ(1) ≈ 0.84.")
    no_go_threshold: float = Field(description="Below this P(beats the baseline) it is no-go.")
    dollar_cost: float | None = Field(description="Nominal cost in US dollars; None if unknown.")
    dollar_cost_with_failures: float | None = Field(
        description="Cost with the failure budget in US dollars; None if unknown.")
    gpu_hours: float = Field(description="Nominal device-hours.")
    gpu_count_in_time: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="too_long: the devices that would finish within max_plan_days, estimated "
                    "at that count (the estimate's gpu_count_in_time); left out otherwise.")
    device_unit: DeviceUnit = Field(
        default="GPU", description="What gpu_hours count: GPU-hours, or chip-hours (TPU, "
                                   "Trainium, Gaudi).")
    gain_per_dollar: float | None = Field(
        description="Net gain per US dollar (nominal cost); None when the cost is unknown.")
    gain_per_dollar_with_failures: float | None = Field(
        description="Net gain per US dollar with the failure budget; None when unknown.")
    gain_per_gpu_hour: float = Field(description="Net gain per device-hour.")
    signal_to_noise: float | None = Field(description="net gain / σ; None when σ is 0 or "
                                                      "unknown.")
    usd_per_unit_gain: float | None = Field(description="Dollar value of one unit of gain.")
    value_usd: float | None = Field(description="Net gain × value per unit, US dollars.")
    expected_net_value_usd: float | None = Field(
        description="value_usd − cost with failure budget, US dollars; None without a value "
                    "per unit or a known cost.")
    budget_usd: float | None = Field(description="Budget cap in US dollars, if given.")
    benefit: str | None = Field(description="What the gain buys, if given.")
    findings: list[Finding] = Field(description="The checks; the verdict is the strictest cap.")
    next_steps: list[NextStep] = Field(description="What to do next, most important first.")
    kill_criteria: list[KillCriterion] = Field(
        description="For go and marginal: when to stop the launched run.")
    checkpoint_day: float | None = Field(
        default=None, description="Day N of the kill criteria (a tenth of the planned time); "
                                  "None without kill criteria.")
    spend_by_checkpoint_usd: float | None = Field(
        default=None, description="A budget line, not a kill criterion: US dollars spent by "
                                  "day N at the planned rate; None without a price or kill "
                                  "criteria.")
    feasibility: Literal["ok", "does_not_fit", "too_long"] = Field(
        description="ok, does_not_fit (no layout fits the devices) or too_long (over a year).")
    min_gpu_count: int | None = Field(
        description="When it does not fit: the fewest devices of this type it needs (with "
                    "CPU offload if that helps).")
    min_gpu_count_without_offload: int | None = Field(
        description="The same without CPU offload.")
    min_gpu_count_rented: int | None = Field(
        default=None, exclude_if=lambda v: v is None,
        description="The devices the catalog's machines pay for to hold min_gpu_count, when "
                    "more; the next the same for min_gpu_count_without_offload.")
    min_gpu_count_without_offload_rented: int | None = Field(
        default=None, exclude_if=lambda v: v is None)
    wall_days: float | None = Field(description="Estimated wall-clock days, when known.")
    assumptions: RunAssumptions | None = Field(
        default=None,
        description="The run's sequence length, micro-batch, precision and layout, and whether "
                    "it fits only with CPU offload (with the way without); None for a bare cost.")
    gain_fit: ScalingFit | None = Field(
        default=None,
        description="When a scaling fit of small runs gave the gain: that fit (its "
                    "prediction, interval, extrapolation and the loss at 10% of the tokens).")


def _next_steps(verdict: Verdict, findings: list[Finding], basis: GainBasis,
                cost: float | None, cost_f: float | None, tokens: float | None,
                benefit: str | None, valued: bool, fit: ScalingFit | None) -> list[NextStep]:
    causes = {f.cause for f in findings if f.caps == verdict and f.cause != "ok"}
    steps: list[NextStep] = []
    if verdict == "go":
        steps.append(NextStep(code="launch"))
    if "uncertainty_unknown" in causes and fit is not None:
        steps.append(_measure_noise(fit))
    for code, step in (("does_not_fit", "fit_first"), ("host_memory_does_not_fit", "fit_first"),
                       ("activations_do_not_fit", "shorten_sequence"),
                       ("too_long", "shorten"), ("unknown_cost", "give_price"),
                       ("over_budget", "cut_cost"), ("over_budget_with_failures", "cut_cost"),
                       ("value_below_cost", "not_worth_it"),
                       ("below_baseline", "spend_elsewhere")):
        if code in causes and all(s.code != step for s in steps):
            steps.append(NextStep(code=step))
    if "noise" in causes:
        steps.append(_settle(basis, cost, cost_f, tokens))
    if benefit is None and not valued and verdict != "no-go":
        steps.append(NextStep(code="name_benefit"))
    if verdict != "go":
        steps.append(NextStep(code="alternatives"))
    return steps


def _measure_noise(fit: ScalingFit) -> NextStep:
    """What lets a fit estimate its uncertainty: more small runs (at least as many more as it
    lacks spare points, the first at its next run's compute), or losses as measured."""
    lacking = next((w for w in fit.warnings if w.code == "too_few_spare_points"), None)
    if lacking is None:  # exact_fit
        return NextStep(code="measured_losses", numbers={"points": fit.points_used})
    needed = lacking.numbers["needed"]
    more = None if not isinstance(needed, float | int) else needed - fit.points_used
    return NextStep(code="more_points", numbers={
        "points": fit.points_used, "more": more,
        "compute": None if fit.next_run is None else fit.next_run.compute})


def _settle(basis: GainBasis, cost: float | None, cost_f: float | None,
            tokens: float | None) -> NextStep:
    """What settles a gain lost in its noise: k repeats bring σ/√k under |net|; a run from a
    model tries a share of its tokens first, with its stop rule."""
    net, sigma = basis.predicted_gain - basis.baseline_to_beat, basis.gain_uncertainty
    assert sigma is not None  # a gain lost in its noise has a known σ
    k = math.inf if net == 0 else max(2, math.ceil((sigma / abs(net)) ** 2))
    runs = None if math.isinf(k) else float(k)
    if basis.kind == "ablation":
        # k seeds in all: this run and k − 1 more, priced like the alternatives (nominal)
        return NextStep(code="more_seeds", numbers={
            "seeds": runs, "extra_cost": None if runs is None or cost is None
            else (runs - 1) * cost})
    if starts_from_a_model(basis.kind):
        at_least = trial_gain(basis.predicted_gain, FIRST_TOKENS_SHARE)
        return NextStep(code="fewer_tokens_first", numbers={
            "token_share": FIRST_TOKENS_SHARE,
            "tokens": None if tokens is None else FIRST_TOKENS_SHARE * tokens,
            "cost_with_failures": None if cost_f is None else FIRST_TOKENS_SHARE * cost_f,
            "gain_at_least": at_least, "level": basis.level(at_least)})
    if net <= 0:  # smaller runs' certainty cannot lift an expected gain to the baseline
        return NextStep(code="no_expected_gain")
    study = None if cost_f is None or runs is None else runs * PROXY_COST_SHARE * cost_f
    if study is None or cost_f is None or study >= cost_f:
        return NextStep(code="run_is_the_experiment",
                        numbers={"runs": runs, "study_cost": study, "at_stake": cost_f})
    return NextStep(code="small_study",
                    numbers={"runs": runs, "study_cost": study, "at_stake": cost_f})


def _fewest(memory: Any) -> dict[str, int | None]:
    """The fewest devices of a run that does not fit, with and without offload, and what their
    machines rent (``memory``: its memory check; None when it fits)."""
    layout = getattr(memory, "layout", None)
    return {f"min_gpu_count{k}": getattr(layout, f"min_gpu_count{k}", None)
            for k in ("", "_without_offload", "_rented", "_without_offload_rented")}


@validated
def decision_summary(
    estimate: Costed,
    predicted_gain: Gain | None,
    gain_uncertainty: Uncertainty | None,
    baseline_to_beat: Gain | None = 0.0,
    *,
    metric_now: Gain | None = None,
    metric_expected: Gain | None = None,
    higher_is_better: bool = True,
    usd_per_unit_gain: UsdAmount | None = None,
    budget_usd: UsdAmount | None = None,
    benefit: str | None = None,
    kind: RunKind | None = None,
    fit: ScalingFit | None = None,
) -> Decision:
    """Render a go / marginal / no-go verdict (module docstring).

    ``estimate`` is anything with ``dollar_cost``, ``dollar_cost_with_failures`` and
    ``gpu_hours`` (a :class:`~..hardware.cost.CostEstimate` or ``RunEstimate``; the latter also
    brings its memory check, its feasibility and the kill criteria). The numbers are checked
    against the types :class:`DecisionInputs` uses.
    """
    reading = read_gain(predicted_gain, gain_uncertainty, baseline_to_beat,
                        metric_now=metric_now, metric_expected=metric_expected,
                        higher_is_better=higher_is_better, uncertainty_known=fit is None)
    benefit_text = benefit.strip() if isinstance(benefit, str) and benefit.strip() else None
    run_kind = kind or getattr(estimate, "kind", None) or DEFAULT_RUN_KIND
    memory = getattr(estimate, "memory", None)
    findings = _findings(estimate, memory, reading, usd_per_unit_gain, budget_usd, benefit_text)
    verdict = strictest(findings)
    cause: Cause = "ok" if verdict == "go" else next(
        f.cause for f in findings if f.caps == verdict)
    cost, cost_f = estimate.dollar_cost, estimate.dollar_cost_with_failures
    basis = _basis(reading, run_kind, fit)
    kills: list[KillCriterion] = []
    day = spent = None
    if verdict != "no-go" and hasattr(estimate, "tokens") and hasattr(estimate,
                                                                     "wall_days_range"):
        kills = kill_criteria(estimate, basis, fit)  # type: ignore[arg-type]
        day = checkpoint_day(estimate)  # type: ignore[arg-type]
        spent = spend_by(estimate, day)  # type: ignore[arg-type]
    no_fit = memory is not None and memory.fits is False
    return Decision(
        verdict=verdict, cause=cause, kind=run_kind,
        **_gain_fields(reading), **_money_fields(estimate, reading, usd_per_unit_gain),
        budget_usd=budget_usd, benefit=benefit_text, findings=findings,
        next_steps=_next_steps(verdict, findings, basis, cost, cost_f,
                               getattr(estimate, "tokens", None), benefit_text,
                               usd_per_unit_gain is not None, fit),
        kill_criteria=kills, checkpoint_day=day, spend_by_checkpoint_usd=spent,
        feasibility=getattr(estimate, "feasibility", "ok"),
        **_fewest(memory if no_fit else None),
        wall_days=getattr(estimate, "wall_days", None),
        device_unit=getattr(estimate, "device_unit", "GPU"),
        gpu_count_in_time=getattr(estimate, "gpu_count_in_time", None),
        assumptions=assumptions_of(estimate) if isinstance(estimate, RunEstimate) else None,
        gain_fit=fit,
    )


def _basis(reading: GainReading, kind: RunKind, fit: ScalingFit | None) -> GainBasis:
    """The gain as the kill criteria and the trial read it: where the run starts from (the
    metric now, or the fit's baseline loss) and which way the metric improves."""
    start, rises = None, True
    if fit is not None:
        start, rises = fit.baseline_loss, fit.higher_is_better
    elif reading.source == "metric":
        start, rises = reading.metric_now, reading.higher_is_better
    return GainBasis(predicted_gain=reading.gain, gain_uncertainty=reading.gain_uncertainty,
                     baseline_to_beat=reading.baseline_to_beat, start=start, rises=rises,
                     kind=kind)


def _findings(estimate: Costed, memory: Any, reading: GainReading,
              usd_per_unit_gain: float | None, budget_usd: float | None,
              benefit: str | None) -> list[Finding]:
    """Every check of the module docstring, in order."""
    binding = memory.layout.binding if memory is not None else None
    host = None
    if memory is not None and memory.layout.host_needed_bytes is not None and memory.host_ram:
        ram = memory.host_ram
        host = (memory.layout.host_needed_bytes, ram.usable_fraction * ram.bytes_per_device)
    return [*gain_findings(reading),
            *run_findings(memory, binding, getattr(estimate, "feasibility", "ok"),
                          getattr(estimate, "wall_days", None),
                          getattr(estimate, "max_plan_days", 365.0), host),
            *money_findings(estimate, reading, usd_per_unit_gain, budget_usd),
            Finding(check="benefit_named", passed=benefit is not None, caps="go",
                    cause="ok" if benefit else "no_benefit", numbers={})]


def _gain_fields(reading: GainReading) -> dict[str, Any]:
    """The gain as the verdict read it, and its probabilities."""
    sigma = reading.gain_uncertainty
    return dict(
        predicted_gain=reading.gain, gain_uncertainty=sigma,
        baseline_to_beat=reading.baseline_to_beat, net_gain=reading.net_gain,
        gain_source=reading.source, metric_now=reading.metric_now,
        metric_expected=reading.metric_expected, higher_is_better=reading.higher_is_better,
        gain_notes=reading.notes, p_beats_baseline=reading.p_beats_baseline,
        p_positive=reading.p_positive, go_threshold=ONE_SIGMA, no_go_threshold=1 - ONE_SIGMA,
        signal_to_noise=None if not sigma else reading.net_gain / sigma,
    )


def _money_fields(estimate: Costed, reading: GainReading,
                  usd_per_unit_gain: float | None) -> dict[str, Any]:
    """The cost, the net gain per dollar and per device-hour, and the value of the gain."""
    cost, cost_f, net = estimate.dollar_cost, estimate.dollar_cost_with_failures, reading.net_gain
    value = None if usd_per_unit_gain is None else usd_per_unit_gain * net
    return dict(
        dollar_cost=cost, dollar_cost_with_failures=cost_f, gpu_hours=estimate.gpu_hours,
        gain_per_dollar=None if not cost else net / cost,
        gain_per_dollar_with_failures=None if not cost_f else net / cost_f,
        gain_per_gpu_hour=net / estimate.gpu_hours,
        usd_per_unit_gain=usd_per_unit_gain, value_usd=value,
        expected_net_value_usd=None if value is None or cost_f is None else value - cost_f,
    )
