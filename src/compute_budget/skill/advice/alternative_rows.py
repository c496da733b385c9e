"""The rows of the alternatives, one builder per kind (:mod:`.alternatives` says when each is
offered and how it is counted; :mod:`.alternative_models` what each row carries)."""

from __future__ import annotations

import math
import re

from ..errors import ComputeBudgetError
from ..estimate import estimate_run
from ..estimate_result import Feasibility, RunEstimate
from ..hardware.catalog import Accelerator, PriceQuote, list_accelerators
from ..hardware.prices import rental
from ..memory.lora import QLORA_BITS
from ..model.families import known_preset, larger_in_family, smaller_in_family
from ..model.param_count import counts_of
from ..model.presets import PRESETS
from ..run_spec import RunSpec
from ..vocabulary import RunKind
from .alternative_models import (
    LORA_RANK,
    Alternative,
    AlternativeDetail,
    AlternativeKind,
    DifferentIdeaDetail,
    FillMachineDetail,
    LoraDetail,
    MoreSeedsDetail,
    OtherHardwareDetail,
    SeedsRule,
    SmallerBaseDetail,
)

__all__ = [
    "MAX_SEEDS",
    "SEEDS_TO_HALVE",
    "different_idea_row",
    "fill_machine_row",
    "from_estimate",
    "hardware_rows",
    "is_on_demand",
    "lora_row",
    "measured_as_mfu",
    "more_seeds_row",
    "on_demand_quote",
    "same_model",
    "seeds_needed",
    "smaller_base_row",
    "teacher_of",
]

SEEDS_TO_HALVE = 4
"""Runs whose mean halves the run-to-run noise: σ/√4 = σ/2."""
MAX_SEEDS = 10_000
"""More runs than this are not a plan: the gain is too small against its noise."""
_ON_DEMAND = re.compile(r"on[- ]demand", re.IGNORECASE)


def measured_as_mfu(spec: RunSpec, original: RunEstimate) -> dict[str, object]:
    """A probe measured this model on this device: a row with another model, device or
    fine-tuning carries the measured MFU over as a given one, not the measurement itself."""
    return {} if spec.probe is None else {"probe": None, "mfu": original.mfu}


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


def from_estimate(kind: AlternativeKind, run_kind: RunKind, alt: RunEstimate,
                  original: RunEstimate, *, feasibility: Feasibility | None = None,
                  detail: AlternativeDetail | None = None) -> Alternative:
    """A row from the alternative run's own estimate, with its saving against the original."""
    saving = ratio = None
    if alt.dollar_cost is not None and original.dollar_cost is not None:
        saving = original.dollar_cost - alt.dollar_cost
        ratio = alt.dollar_cost / original.dollar_cost
    elif alt.accelerator_key == original.accelerator_key:
        ratio = alt.gpu_hours / original.gpu_hours
    return Alternative(
        kind=kind, run_kind=run_kind, estimate=alt, feasibility=feasibility or alt.feasibility,
        params=alt.params, tokens=alt.tokens, accelerator=alt.accelerator, flops=alt.flops,
        wall_days=alt.wall_days, gpu_hours=alt.gpu_hours, dollar_cost=alt.dollar_cost,
        dollar_cost_with_failures=alt.dollar_cost_with_failures, saving_usd=saving,
        cost_ratio=ratio, detail=detail)


def same_model(alt: RunEstimate, original: RunEstimate) -> Feasibility:
    """The same model on the same devices needs the original's memory: it fits when it does."""
    return "does_not_fit" if original.feasibility == "does_not_fit" else alt.feasibility


def _on_other_devices(spec: RunSpec,
                      original: RunEstimate) -> list[tuple[RunEstimate, PriceQuote]]:
    """Every other device with a peak for the precision and an on-demand quote, estimated at
    that quote, that fits at some layout."""
    out = []
    for acc in list_accelerators():
        if acc.key == original.accelerator_key or acc.peak_tflops.get(original.precision) is None:
            continue
        quote = on_demand_quote(acc)
        if quote is None:  # prices of one kind only: no reservation beside on-demand quotes
            continue
        # A throughput measured on one device says nothing absolute about another: carry its
        # MFU over instead, like a user's MFU. Past runs adjust each device's own prior.
        candidate = estimate_run(spec.model_copy(update={  # at the default, on-demand price
            "gpu": acc.key, "usd_per_gpu_hour": None, "price_kind": None, "peak_tflops": None,
            "precision": original.precision, "achieved_tflops": None,
            "mfu": None if original.mfu_used.origin in ("prior", "own_runs")
            else original.mfu, "probe": None}), in_time=False)
        if candidate.feasibility != "does_not_fit":  # the quote of the machine priced
            out.append((candidate, rental(acc.prices, quote, spec.gpu_count).quote))
    return out


def hardware_rows(spec: RunSpec, original: RunEstimate) -> list[Alternative]:
    """The cheapest device and the fastest that costs no more, at on-demand prices."""
    candidates = _on_other_devices(spec, original)
    if not candidates:
        return []

    def dollars(pair: tuple[RunEstimate, PriceQuote]) -> float:
        cost = pair[0].dollar_cost
        return cost if cost is not None else float("inf")

    picked = [min(candidates, key=dollars)]
    affordable = [c for c in candidates
                  if original.dollar_cost is None or dollars(c) <= original.dollar_cost]
    if affordable:
        fastest = min(affordable, key=lambda c: c[0].wall_hours)
        if fastest[0].accelerator_key != picked[0][0].accelerator_key:
            picked.append(fastest)
    on_demand = (is_on_demand(original.price.kind)
                 if original.price.origin == "catalog" and original.price.kind else None)
    rows = []
    for candidate, quote in picked:
        uncalibrated = candidate.mfu_used.prior.uncalibrated
        saving_range = None
        if original.dollar_cost is not None and candidate.dollar_cost_range is not None:
            low = original.dollar_cost - candidate.dollar_cost_range[1]
            high = original.dollar_cost - candidate.dollar_cost_range[0]
            saving_range = (min(low, 0.0) if uncalibrated else low, high)
        rows.append(from_estimate("other_hardware", spec.resolved_kind, candidate, original,
                                  detail=OtherHardwareDetail(
                                      price_quote=quote, original_price_on_demand=on_demand,
                                      uncalibrated=uncalibrated,
                                      saving_usd_range=saving_range)))
    return rows


def fill_machine_row(spec: RunSpec, original: RunEstimate) -> Alternative | None:
    """The same run on every device its machines are paid for, when they are paid for more than
    it uses (:attr:`..hardware.prices.PriceUsed.paid_gpus`): estimated at that count as the
    original is (its MFU prior for the count, its layout and memory check, its price), and
    offered only when it fits and costs less, or no more and finishes sooner."""
    paid = original.price.paid_gpus
    if paid is None or paid % spec.count_step or original.dollar_cost is None:
        return None
    try:
        full = estimate_run(spec.model_copy(update={"gpu_count": paid}), in_time=False)
    except (ComputeBudgetError, ValueError):  # a count the user's settings do not allow
        return None
    cost = full.dollar_cost
    if full.feasibility == "does_not_fit" or cost is None or cost > original.dollar_cost or (
            cost == original.dollar_cost and full.wall_hours >= original.wall_hours):
        return None
    return from_estimate("fill_machine", spec.resolved_kind, full, original,
                         detail=FillMachineDetail(gpu_count_used=original.gpu_count,
                                                  paid_gpus=paid))


def _needs_qlora(lora: RunEstimate) -> bool:
    """Whether a LoRA run does not fit, or fits only by streaming its weights from CPU memory."""
    return lora.feasibility == "does_not_fit" or (
        lora.memory is not None and lora.memory.offload_weights)


def lora_row(spec: RunSpec, original: RunEstimate) -> Alternative | None:
    """LoRA instead of a full fine-tune; QLoRA when 16-bit LoRA does not fit, or fits only with
    its weights streamed from CPU memory and QLoRA fits without."""
    if spec.model.frozen:
        return None  # already LoRA or adapters
    if spec.model.shape.hidden < LORA_RANK:
        return None
    lora_fields = {"lora_rank": LORA_RANK, "lora_targets": "all-linear",
                   "trainable_params": None, "weights_bits": None,
                   **measured_as_mfu(spec, original)}
    bits = 16
    # on the original's stack: a full fine-tune across nodes defaults to megatron (TP before
    # recomputation) and LoRA to hf (recomputation first), which would compare layouts, not LoRA
    lora = estimate_run(spec.model_copy(update={**lora_fields, "stack": spec.resolved_stack}),
                        in_time=False)
    if _needs_qlora(lora) and (spec.tp or 1) == 1:
        qlora = estimate_run(spec.model_copy(update={**lora_fields,
                                                     "weights_bits": QLORA_BITS}), in_time=False)
        if lora.feasibility == "does_not_fit" or not _needs_qlora(qlora):
            bits, lora = QLORA_BITS, qlora
    return from_estimate("lora", spec.resolved_kind, lora, original,
                         detail=LoraDetail(lora_rank=LORA_RANK, weights_bits=bits))


def smaller_base_row(spec: RunSpec, original: RunEstimate) -> Alternative | None:
    """The same tokens from the next smaller model of the same family, when one exists."""
    preset = known_preset(spec.architecture)
    smaller = None if preset is None else smaller_in_family(preset)
    if smaller is None:
        return None
    fields = spec.model_dump(include=set(RunSpec.model_fields),
                             exclude={"config", "model_id", "params", "active_params", "tp",
                                      "pp", "ep", "sp", "probe"})  # parallelism: searched anew
    fields |= {"preset": smaller, **measured_as_mfu(spec, original)}
    if spec.trainable_params is not None:  # the same share of adapters
        share = spec.trainable_params / spec.model.total
        fields["trainable_params"] = share * counts_of(PRESETS[smaller]).total
    try:
        small = estimate_run(RunSpec.model_validate(fields), in_time=False)
    except ValueError:  # a setting of the user's that the smaller model does not allow
        return None
    return from_estimate("smaller_base", spec.resolved_kind, small, original,
                         detail=SmallerBaseDetail(base_preset=smaller))


def teacher_of(spec: RunSpec, teacher_params: float | None,
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


def more_seeds_row(original: RunEstimate, gain: float | None,
                   sigma: float | None) -> Alternative:
    """k runs of the ablation, so that the noise of their mean falls under the gain."""
    runs, rule = seeds_needed(gain, sigma)
    detail = MoreSeedsDetail(
        runs=runs, seeds_rule=rule, predicted_gain=gain, gain_uncertainty=sigma,
        uncertainty_after=None if runs is None or sigma is None else sigma / math.sqrt(runs))

    def times(value: float | None) -> float | None:
        return None if value is None or runs is None else runs * value

    dollars = times(original.dollar_cost)
    return Alternative(
        kind="more_seeds", run_kind="ablation", params=original.params, tokens=original.tokens,
        accelerator=original.accelerator, detail=detail,
        estimate=None if runs is None else original,
        feasibility=None if runs is None else original.feasibility,
        flops=times(original.flops), wall_days=times(original.wall_days),
        gpu_hours=times(original.gpu_hours), dollar_cost=dollars,
        dollar_cost_with_failures=times(original.dollar_cost_with_failures),
        saving_usd=(None if dollars is None or original.dollar_cost is None
                    else original.dollar_cost - dollars),
        cost_ratio=None if runs is None else float(runs))


def different_idea_row(original: RunEstimate, reference: Alternative) -> Alternative:
    """The opportunity cost, counted in runs of the reference row."""
    ref = reference.estimate
    assert ref is not None  # the reference row is always estimated
    budget = original.dollar_cost_with_failures
    ref_budget = ref.dollar_cost_with_failures
    affordable = (original.gpu_hours_with_failures / ref.gpu_hours_with_failures
                  if budget is None or not ref_budget else budget / ref_budget)
    return Alternative(
        kind="different_idea", run_kind=reference.run_kind, estimate=None, feasibility=None,
        params=None, tokens=None, accelerator=None, flops=None, wall_days=None,
        gpu_hours=None, dollar_cost=None, dollar_cost_with_failures=None, saving_usd=None,
        cost_ratio=None,
        detail=DifferentIdeaDetail(runs_affordable=affordable, runs_of=reference.kind))
