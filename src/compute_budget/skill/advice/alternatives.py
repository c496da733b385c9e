"""Cheaper alternatives to a run, each with its own full estimate (step 5 of the procedure).

Which alternatives make sense depends on the kind of run (``spec.resolved_kind``)::

    pretrain             smaller_scale, shorter_run, distillation (only from a larger model
                         that exists), other_hardware, different_idea
    continued-pretrain   fewer_tokens, lora (unless the run is LoRA already), smaller_base
    fine-tune            (only where the family has a smaller model), other_hardware,
                         different_idea; nothing from scratch
    ablation             smaller_scale, more_seeds, other_hardware, different_idea

The kinds:

- ``smaller_scale``: half the parameters on half the tokens from scratch, so the same tokens per
  parameter at a quarter of the FLOPs; the gap being tested is usually visible at that scale.
- ``shorter_run``: the same model on 30% of the tokens first (30B before 100B).
- ``fewer_tokens``: a run that starts from a model trains on 30% of its tokens first, and stops
  unless the eval metric has moved by at least 30% of the predicted gain by then. Learning
  curves flatten (the gain is concave in the tokens), so a run that will reach its gain has
  made at least that share of it by that share of its tokens.
- ``lora``: LoRA of rank 16 on every linear layer of the decoder instead of a full fine-tune
  (the rank the layout search suggests; the rank matters little once every layer is adapted,
  Dettmers et al. 2023, "QLoRA", Sec. 4), or QLoRA (the frozen base in 4 bits) when 16-bit LoRA
  does not fit. Its own estimate carries the memory it needs.
- ``smaller_base``: the same tokens from the next smaller model of the same family
  (:mod:`.families`); only when the model is known by preset or checkpoint name.
- ``distillation``: train the same model from an existing larger teacher on a tenth of the
  tokens. Per token this costs the student's FLOPs plus the teacher's forward pass,
  2 FLOPs per active teacher parameter. The teacher is ``teacher_params`` when given, else the
  next larger model of the same family; with neither there is no row. A tenth is conservative
  against Muralidharan et al. 2024 ("Compact Language Models via Pruning and Knowledge
  Distillation", Minitron), who used up to 40x fewer tokens than training from scratch.
- ``more_seeds``: an ablation measures a difference with run-to-run noise σ; the mean of k
  runs has σ/√k. k is the fewest runs with σ/√k < gain, the verdict's test that a gain clears
  its uncertainty: k = ⌊(σ / gain)²⌋ + 1. Without the gain and σ, k = 4 (it halves σ). Priced
  as k runs of the ablation; when σ is evaluation noise, k times the eval examples does the
  same at no training cost.
- ``other_hardware``: the same FLOPs on the catalog's cheapest device and the fastest one that
  costs no more, each priced at its on-demand quote (one kind of price: devices without one are
  left out), at its own MFU prior (or the user's MFU carried over). A device whose prior is
  borrowed from another generation is uncalibrated: its saving range reaches down to no saving.
- ``different_idea``: the opportunity cost: what the same money buys elsewhere.

Alternatives that cannot run say so: ``feasibility`` is each row's own memory check, or the
original's for the same model on the same devices.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..estimate import Feasibility, RunEstimate, estimate_run
from ..hardware.catalog import Accelerator, PriceQuote, list_accelerators
from ..memory.layout import LORA_RANK_SUGGESTED
from ..model.families import known_preset, larger_in_family, smaller_in_family
from ..model.param_count import counts_of
from ..model.presets import PRESETS
from ..quantities import Gain, Number, ParamCount, Uncertainty, validated
from ..run_spec import RunSpec
from ..vocabulary import RunKind, starts_from_a_model

__all__ = [
    "DISTILL_TOKEN_FRACTION",
    "LORA_RANK",
    "MAX_SEEDS",
    "SEEDS_TO_HALVE",
    "SHORTER_RUN_FRACTION",
    "SMALLER_SCALE_FACTOR",
    "Alternative",
    "AlternativeKind",
    "AlternativesOptions",
    "AlternativesReport",
    "SeedsRule",
    "is_on_demand",
    "on_demand_quote",
    "seeds_needed",
    "suggest_alternatives",
]

AlternativeKind = Literal[
    "smaller_scale", "shorter_run", "distillation", "other_hardware", "different_idea",
    "more_seeds", "lora", "fewer_tokens", "smaller_base",
]
SeedsRule = Literal["clears_gain", "halves_uncertainty", "gain_not_positive", "out_of_reach"]
"""How more_seeds counted its runs: the fewest that bring σ/√k under the gain; 4, which halve σ
(the gain or σ is missing); none (a gain ≤ 0 never clears its noise); none (over MAX_SEEDS)."""

SMALLER_SCALE_FACTOR = 4.0
"""FLOPs divisor of the smaller-scale run: params / 2 and tokens / 2."""
SHORTER_RUN_FRACTION = 0.3
"""Share of the tokens the shorter run (and the fewer-tokens run) trains on first."""
DISTILL_TOKEN_FRACTION = 0.1
"""Share of the tokens a distillation run needs (conservative against Minitron's 40x)."""
TEACHER_FORWARD_FLOPS_PER_PARAM = 2.0
"""A forward pass costs 2 FLOPs per parameter per token (Kaplan et al. 2020)."""
LORA_RANK = LORA_RANK_SUGGESTED
"""Rank of the LoRA alternative (on every linear layer of the decoder)."""
QLORA_WEIGHTS_BITS = 4
"""Storage of the frozen base in the QLoRA alternative (NF4, Dettmers et al. 2023)."""
SEEDS_TO_HALVE = 4
"""Runs whose mean halves the run-to-run noise: σ/√4 = σ/2."""
MAX_SEEDS = 10_000
"""More runs than this are not a plan: the gain is too small against its noise."""
UNCALIBRATED_SCOPES = ("nearest", "pooled")
"""MFU prior scopes borrowed from other hardware (no published runs on this generation)."""
_ON_DEMAND = re.compile(r"on[- ]demand", re.IGNORECASE)

TokenShare = Annotated[Number, Field(ge=1e-4, le=1)]
"""A share of the original run's tokens, in [10⁻⁴, 1]."""


class Alternative(BaseModel):
    """One cheaper way to get the answer, with its own estimate and its saving.

    The fields after ``cost_ratio`` belong to some kinds only and are None for the others.
    """

    model_config = ConfigDict(frozen=True)

    kind: AlternativeKind
    run_kind: RunKind = Field(description="Kind of the run this is an alternative to.")
    estimate: RunEstimate | None = Field(
        description="Full estimate of the alternative run (more_seeds: of each of its runs, the "
                    "totals below are runs × it); None for different_idea."
    )
    feasibility: Feasibility | None = Field(
        default=None,
        description="ok, does_not_fit or too_long: the row's own memory check, or the "
                    "original's for the same model on the same devices; None for different_idea.",
    )
    params: float | None = Field(description="Parameters of the alternative run.")
    tokens: float | None = Field(description="Training tokens of the alternative run (each run).")
    accelerator: str | None = Field(description="Device of the alternative run.")
    flops: float | None = Field(description="Model FLOPs of the alternative, all runs.")
    wall_days: float | None = Field(
        description="Wall-clock days (more_seeds: the runs one after another on the devices)."
    )
    gpu_hours: float | None = Field(description="Device-hours.")
    dollar_cost: float | None = Field(description="US dollars; None when the price is unknown.")
    dollar_cost_with_failures: float | None = Field(description="US dollars × failure budget.")
    saving_usd: float | None = Field(
        description="Original minus alternative cost in US dollars (negative when it costs "
                    "more); None when either is unknown."
    )
    cost_ratio: float | None = Field(
        description="Alternative cost / original cost (dollars, or device-hours on the same "
                    "device when prices are unknown); None when not comparable."
    )
    token_fraction: float | None = Field(
        default=None,
        description="shorter_run, fewer_tokens, distillation: share of the original tokens.",
    )
    teacher_params: float | None = Field(
        default=None, description="distillation: teacher parameters."
    )
    teacher_active_params: float | None = Field(
        default=None,
        description="distillation: teacher parameters active per token (its forward pass).",
    )
    teacher_preset: str | None = Field(
        default=None, description="distillation: the teacher's preset, when it is one."
    )
    teacher_name: str | None = Field(
        default=None, description="distillation: the teacher's name, when it is a preset."
    )
    base_preset: str | None = Field(
        default=None, description="smaller_base: the preset of the smaller model."
    )
    lora_rank: int | None = Field(default=None, description="lora: the LoRA rank.")
    weights_bits: int | None = Field(
        default=None, description="lora: storage bits of the frozen base (16 LoRA, 4 QLoRA)."
    )
    runs: int | None = Field(
        default=None, description="more_seeds: runs (seeds) priced; None when none suffice."
    )
    seeds_rule: SeedsRule | None = Field(
        default=None, description="more_seeds: how the runs were counted (see SeedsRule)."
    )
    predicted_gain: float | None = Field(
        default=None, description="more_seeds, fewer_tokens: the predicted gain given."
    )
    gain_uncertainty: float | None = Field(
        default=None, description="more_seeds, fewer_tokens: its 1σ uncertainty given."
    )
    uncertainty_after: float | None = Field(
        default=None, description="more_seeds: σ/√runs, the uncertainty of the mean."
    )
    stop_if_gain_below: float | None = Field(
        default=None,
        description="fewer_tokens: stop unless the eval metric has moved by at least this "
                    "much at the end of the shorter run (token_fraction × predicted_gain, "
                    "user's units); None without a positive predicted_gain.",
    )
    price_quote: PriceQuote | None = Field(
        default=None, description="other_hardware: the on-demand quote the device is priced at."
    )
    original_price_on_demand: bool | None = Field(
        default=None,
        description="other_hardware: whether the original's price is a catalog on-demand quote "
                    "(False: another kind, e.g. a reservation; None: the user's own price or "
                    "no price).",
    )
    uncalibrated: bool | None = Field(
        default=None,
        description="other_hardware: the device's MFU prior is borrowed from another "
                    "generation (no published runs on it).",
    )
    saving_usd_range: tuple[float, float] | None = Field(
        default=None,
        description="other_hardware: saving [low, high] in US dollars over the device's MFU "
                    "band against the original's nominal cost; low ≤ 0 when uncalibrated.",
    )
    runs_affordable: float | None = Field(
        default=None,
        description="different_idea: how many runs of kind runs_of the original budget buys.",
    )
    runs_of: AlternativeKind | None = Field(
        default=None,
        description="different_idea: the run runs_affordable counts (smaller_scale or "
                    "fewer_tokens).",
    )


class AlternativesOptions(BaseModel):
    """Optional knobs of the alternatives (defaults documented in the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    teacher_params: ParamCount | None = Field(
        default=None,
        description="Parameters of a larger model to distil from. Pre-training "
                    "only; default: the next larger model of the same family, if any.",
    )
    distill_token_fraction: TokenShare = Field(
        default=DISTILL_TOKEN_FRACTION,
        description="Share of the original tokens a distillation run trains on, in (0, 1].",
    )
    shorter_run_fraction: TokenShare = Field(
        default=SHORTER_RUN_FRACTION,
        description="Share of the original tokens the shorter (or fewer-tokens) run trains on "
                    "first, in (0, 1].",
    )
    predicted_gain: Gain | None = Field(
        default=None,
        description="Optional: predicted improvement from the run, in the user's own metric "
                    "(accuracy points, loss reduction, win rate …); higher is better. Sets the "
                    "stop rule of a fewer-tokens run and, with gain_uncertainty, the seeds an "
                    "ablation needs.",
    )
    gain_uncertainty: Uncertainty | None = Field(
        default=None,
        description="Optional: 1σ uncertainty of the predicted gain, same units, ≥ 0 (from "
                    "the spread of seeds or small-scale runs, or a scaling-fit interval).",
    )


class AlternativesReport(BaseModel):
    """The original estimate and its cheaper alternatives."""

    model_config = ConfigDict(frozen=True)

    kind: RunKind = Field(description="Kind of run the alternatives are for.")
    original: RunEstimate
    alternatives: list[Alternative]


# --- numbers ------------------------------------------------------------------------------

def seeds_needed(predicted_gain: float | None,
                 gain_uncertainty: float | None) -> tuple[int | None, SeedsRule]:
    """Runs whose mean brings the noise under the gain: the fewest k with σ/√k < gain.

    σ/√k < g  ⇔  k > (σ/g)²  ⇔  k = ⌊(σ/g)²⌋ + 1. Without both numbers, 4 runs (σ/2).
    """
    if predicted_gain is None or gain_uncertainty is None:
        return SEEDS_TO_HALVE, "halves_uncertainty"
    if predicted_gain <= 0:
        return None, "gain_not_positive"
    root = gain_uncertainty / predicted_gain
    if root >= math.sqrt(MAX_SEEDS):  # compared before squaring: (σ/g)² may overflow
        return None, "out_of_reach"
    return math.floor(root**2) + 1, "clears_gain"


def is_on_demand(kind: str) -> bool:
    """Whether a price quote's kind text says it is an on-demand price."""
    return _ON_DEMAND.search(kind) is not None


def on_demand_quote(acc: Accelerator) -> PriceQuote | None:
    """The device's on-demand price: its default quote when that is on-demand, else its first
    on-demand quote; None when it has none."""
    quotes = [q for q in acc.prices if is_on_demand(q.kind)]
    defaults = [q for q in quotes if q.default]
    chosen = defaults or quotes
    return chosen[0] if chosen else None


# --- rows ---------------------------------------------------------------------------------

def _from_estimate(
    kind: AlternativeKind,
    run_kind: RunKind,
    alt: RunEstimate,
    original: RunEstimate,
    *,
    feasibility: Feasibility | None = None,
    **extra: object,
) -> Alternative:
    saving = None
    ratio = None
    if alt.dollar_cost is not None and original.dollar_cost is not None:
        saving = original.dollar_cost - alt.dollar_cost
        ratio = alt.dollar_cost / original.dollar_cost
    elif alt.accelerator_key == original.accelerator_key:
        ratio = alt.gpu_hours / original.gpu_hours
    return Alternative.model_validate({
        "kind": kind,
        "run_kind": run_kind,
        "estimate": alt,
        "feasibility": feasibility or alt.feasibility,
        "params": alt.params,
        "tokens": alt.tokens,
        "accelerator": alt.accelerator,
        "flops": alt.flops,
        "wall_days": alt.wall_days,
        "gpu_hours": alt.gpu_hours,
        "dollar_cost": alt.dollar_cost,
        "dollar_cost_with_failures": alt.dollar_cost_with_failures,
        "saving_usd": saving,
        "cost_ratio": ratio,
        **extra,
    })


def _same_model(alt: RunEstimate, original: RunEstimate) -> Feasibility:
    """The same model on the same devices needs the original's memory: it fits when it does."""
    return "does_not_fit" if original.feasibility == "does_not_fit" else alt.feasibility


def _hardware_alternatives(spec: RunSpec, original: RunEstimate) -> list[Alternative]:
    """The cheapest device and the fastest that costs no more, at on-demand prices."""
    precision = original.precision
    candidates: list[tuple[RunEstimate, PriceQuote]] = []
    for acc in list_accelerators():
        if acc.key == original.accelerator_key or acc.peak_tflops.get(precision) is None:
            continue
        quote = on_demand_quote(acc)
        if quote is None:  # prices of one kind only: no reservation beside on-demand quotes
            continue
        moved = spec.model_copy(update={
            "gpu": acc.key,
            "usd_per_gpu_hour": quote.usd_per_gpu_hour,
            "peak_tflops": None,
            "precision": precision,
            # A throughput measured on one device says nothing absolute about another: carry
            # its MFU over instead, like a user's MFU.
            "achieved_tflops": None,
            "mfu": None if original.mfu_source == "prior" else original.mfu,
        })
        candidate = estimate_run(moved)
        if candidate.feasibility != "does_not_fit":  # it must fit the device at some layout
            candidates.append((candidate, quote))
    if not candidates:
        return []

    def dollars(pair: tuple[RunEstimate, PriceQuote]) -> float:
        cost = pair[0].dollar_cost
        return cost if cost is not None else float("inf")

    cheapest = min(candidates, key=dollars)
    picked = [cheapest]
    affordable = [c for c in candidates
                  if original.dollar_cost is None or dollars(c) <= original.dollar_cost]
    if affordable:
        fastest = min(affordable, key=lambda c: c[0].wall_hours)
        if fastest[0].accelerator_key != cheapest[0].accelerator_key:
            picked.append(fastest)
    on_demand = (is_on_demand(original.price_kind)
                 if original.price_source == "catalog" and original.price_kind else None)
    rows = []
    for candidate, quote in picked:
        uncalibrated = candidate.mfu_prior.scope in UNCALIBRATED_SCOPES
        saving_range = None
        if original.dollar_cost is not None and candidate.dollar_cost_range is not None:
            low = original.dollar_cost - candidate.dollar_cost_range[1]
            high = original.dollar_cost - candidate.dollar_cost_range[0]
            saving_range = (min(low, 0.0) if uncalibrated else low, high)
        rows.append(_from_estimate(
            "other_hardware", spec.resolved_kind, candidate, original, price_quote=quote,
            original_price_on_demand=on_demand, uncalibrated=uncalibrated,
            saving_usd_range=saving_range))
    return rows


def _lora(spec: RunSpec, original: RunEstimate) -> Alternative | None:
    """LoRA instead of a full fine-tune; QLoRA when 16-bit LoRA does not fit."""
    if spec.lora_rank is not None or spec.model.trainable < spec.model.total:
        return None  # already LoRA or adapters
    if spec.model.shape.hidden < LORA_RANK:
        return None
    lora_fields = {"lora_rank": LORA_RANK, "lora_targets": "all-linear",
                   "trainable_params": None, "weights_bits": None}
    bits = 16
    lora = estimate_run(spec.model_copy(update=lora_fields))
    if lora.feasibility == "does_not_fit" and (spec.tp or 1) == 1:
        bits = QLORA_WEIGHTS_BITS
        lora = estimate_run(spec.model_copy(update={**lora_fields, "weights_bits": bits}))
    return _from_estimate("lora", spec.resolved_kind, lora, original, lora_rank=LORA_RANK,
                          weights_bits=bits)


def _smaller_base(spec: RunSpec, original: RunEstimate) -> Alternative | None:
    """The same tokens from the next smaller model of the same family, when one exists."""
    preset = known_preset(spec.architecture)
    smaller = None if preset is None else smaller_in_family(preset)
    if smaller is None:
        return None
    fields = spec.model_dump(exclude={"config", "model_id", "params", "active_params", "tp",
                                      "pp", "ep", "sp"})  # parallelism: searched anew
    fields["preset"] = smaller
    if spec.trainable_params is not None:  # the same share of adapters
        share = spec.trainable_params / spec.model.total
        fields["trainable_params"] = share * counts_of(PRESETS[smaller]).total
    try:
        small = estimate_run(RunSpec.model_validate(fields))
    except ValueError:  # a setting of the user's that the smaller model does not allow
        return None
    return _from_estimate("smaller_base", spec.resolved_kind, small, original,
                          base_preset=smaller)


def _teacher(spec: RunSpec, teacher_params: float | None,
             ) -> tuple[float, float, str | None] | None:
    """(total, active, preset) of the model to distil from, or None when none is known."""
    if teacher_params is not None:
        return teacher_params, teacher_params, None
    preset = known_preset(spec.architecture)
    larger = None if preset is None else larger_in_family(preset)
    if larger is None:
        return None
    counts = counts_of(PRESETS[larger])
    return float(counts.total), float(counts.active), larger


def _more_seeds(original: RunEstimate, gain: float | None,
                sigma: float | None) -> Alternative:
    """k runs of the ablation, so that the noise of their mean falls under the gain."""
    runs, rule = seeds_needed(gain, sigma)
    common = {
        "kind": "more_seeds", "run_kind": "ablation", "runs": runs, "seeds_rule": rule,
        "predicted_gain": gain, "gain_uncertainty": sigma,
        "uncertainty_after": (None if runs is None or sigma is None
                              else sigma / math.sqrt(runs)),
        "params": original.params, "tokens": original.tokens,
        "accelerator": original.accelerator,
    }
    if runs is None:
        return Alternative.model_validate({
            **common, "estimate": None, "feasibility": None, "flops": None, "wall_days": None,
            "gpu_hours": None, "dollar_cost": None, "dollar_cost_with_failures": None,
            "saving_usd": None, "cost_ratio": None})

    def times(value: float | None) -> float | None:
        return None if value is None else runs * value

    dollars = times(original.dollar_cost)
    return Alternative.model_validate({
        **common, "estimate": original, "feasibility": original.feasibility,
        "flops": runs * original.flops, "wall_days": runs * original.wall_days,
        "gpu_hours": runs * original.gpu_hours, "dollar_cost": dollars,
        "dollar_cost_with_failures": times(original.dollar_cost_with_failures),
        "saving_usd": (None if dollars is None or original.dollar_cost is None
                       else original.dollar_cost - dollars),
        "cost_ratio": float(runs)})


def _different_idea(original: RunEstimate, reference: Alternative) -> Alternative:
    """The opportunity cost, counted in runs of the reference row."""
    ref = reference.estimate
    assert ref is not None  # the reference row is always estimated
    budget = original.dollar_cost_with_failures
    ref_budget = ref.dollar_cost_with_failures
    return Alternative(
        kind="different_idea", run_kind=reference.run_kind, estimate=None, params=None, tokens=None,
        accelerator=None, flops=None, wall_days=None, gpu_hours=None, dollar_cost=None,
        dollar_cost_with_failures=None, saving_usd=None, cost_ratio=None,
        runs_affordable=(original.gpu_hours_with_failures / ref.gpu_hours_with_failures
                         if budget is None or not ref_budget else budget / ref_budget),
        runs_of=reference.kind,
    )


# --- the report ---------------------------------------------------------------------------

@validated
def suggest_alternatives(
    spec: RunSpec,
    *,
    teacher_params: ParamCount | None = None,
    distill_token_fraction: TokenShare = DISTILL_TOKEN_FRACTION,
    shorter_run_fraction: TokenShare = SHORTER_RUN_FRACTION,
    predicted_gain: Gain | None = None,
    gain_uncertainty: Uncertainty | None = None,
) -> AlternativesReport:
    """The original estimate and the alternatives that fit its kind, each fully estimated.

    ``teacher_params`` is the size of an existing model to distil from (pre-training only;
    default: the next larger model of the same family, else no distillation). The fractions are
    the shares of the original tokens the runs train on. ``predicted_gain`` and
    ``gain_uncertainty`` (the user's metric, 1σ) set the fewer-tokens stop rule and the seeds an
    ablation needs.
    """
    teacher, gain, sigma = teacher_params, predicted_gain, gain_uncertainty
    kind = spec.resolved_kind
    original = estimate_run(spec)
    # The derived runs keep the original's recomputation (and so its hardware FLOPs per model
    # FLOP), so that their savings compare like with like.
    derived = spec.model_copy(update={"recompute": original.recompute})

    shorter = estimate_run(
        derived.model_copy(update={"tokens": spec.tokens * shorter_run_fraction}),
        check_memory=False)
    alternatives: list[Alternative] = []
    if starts_from_a_model(kind):
        fewer = _from_estimate(
            "fewer_tokens", kind, shorter, original, feasibility=_same_model(shorter, original),
            token_fraction=shorter_run_fraction, predicted_gain=gain, gain_uncertainty=sigma,
            stop_if_gain_below=(shorter_run_fraction * gain
                                if gain is not None and gain > 0 else None))
        reference = fewer
        alternatives.append(fewer)
        for row in (_lora(spec, original), _smaller_base(spec, original)):
            if row is not None:
                alternatives.append(row)
    else:
        # Half the model on half the tokens. With an architecture, its per-token FLOPs are
        # scaled with the parameters (the attention term only approximately).
        half = SMALLER_SCALE_FACTOR ** 0.5
        smaller = estimate_run(derived.model_copy(update={
            "config": None,
            "model_id": None,
            "preset": None,
            "params": original.params / half,
            "active_params": (None if original.active_params is None
                              else original.active_params / half),
            "trainable_params": (None if spec.trainable_params is None
                                 else spec.trainable_params / half),
            "tokens": spec.tokens / half,
        }), flops_per_token=original.flops_per_token / half, flops_method="scaled")
        reference = _from_estimate("smaller_scale", kind, smaller, original)
        alternatives.append(reference)
        if kind == "ablation":
            alternatives.append(_more_seeds(original, gain, sigma))
        else:
            alternatives.append(_from_estimate(
                "shorter_run", kind, shorter, original, feasibility=_same_model(shorter, original),
                token_fraction=shorter_run_fraction))
            found = _teacher(spec, teacher)
            # Distilling into a model means training all of it: no alternative to an adapter.
            if found is not None and spec.trainable_params is None:
                total, active, preset = found
                distilled = estimate_run(
                    derived.model_copy(update={"tokens": spec.tokens * distill_token_fraction}),
                    flops_per_token=(original.flops_per_token
                                     + TEACHER_FORWARD_FLOPS_PER_PARAM * active),
                    flops_method="distillation",
                    check_memory=False,
                )
                alternatives.append(_from_estimate(
                    "distillation", kind, distilled, original,
                    feasibility=_same_model(distilled, original),
                    token_fraction=distill_token_fraction, teacher_params=total,
                    teacher_active_params=active, teacher_preset=preset,
                    teacher_name=None if preset is None else PRESETS[preset].name))
    alternatives.extend(_hardware_alternatives(spec, original))
    alternatives.append(_different_idea(original, reference))
    return AlternativesReport(kind=kind, original=original, alternatives=alternatives)
