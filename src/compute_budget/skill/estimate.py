"""The run estimate: FLOPs, time, GPU-hours and dollars of a run spec, with the MFU band as the
range, the memory check at the cheapest layout that fits, and every assumption's source.

In named steps (:func:`estimate_run`):

1. **token FLOPs** (:func:`token_flops`): counted in the convention the MFU prior was
   calibrated on (:mod:`.model.flops`): 6·N_active (the config's exact count when there is
   one) plus only the causal attention that a context beyond the calibration context (4k) adds;
   the term-by-term count is kept in the breakdown. Frozen weights skip their weight gradients.
2. **recompute ratio**: the layout's recomputation (the memory check's choice when the user left
   it open) executes more FLOPs than the model needs; hardware / model FLOPs.
3. **MFU choice** (:func:`mfu_used`): the user's (converted from its ``mfu_convention``), the
   one an achieved TFLOP/s implies, or the prior divided by the recompute ratio (the prior
   describes runs at their usual hardware utilisation).
4. **price**: the user's, or the catalog's newest quote of the kind asked.
5. **cost band** (:func:`cost_band`): the central cost and the MFU band's ends
   (:mod:`.hardware.cost`).
6. **warnings** (:mod:`.estimate_checks`): inputs that look like mistakes, as codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .estimate_checks import estimate_warnings, run_defaults
from .estimate_result import (
    MAX_PLAN_DAYS,
    EstimateWarning,
    Feasibility,
    FlopsMethod,
    MfuUsed,
    RunEstimate,
)
from .hardware.catalog import Accelerator, Precision, load_catalog, source_label
from .hardware.cost import CostEstimate, cost_from_flops
from .hardware.energy import energy_of
from .hardware.mfu import mfu_prior
from .memory.estimate import MemoryEstimate, estimate_memory
from .model.flops import (
    FlopCounts,
    FlopsBreakdown,
    convert_mfu,
    flop_counts,
    flops_per_token as flops_per_token_of,
    hardware_flops_per_token,
    mfu_from_achieved,
    rule_of_thumb,
)
from .run_spec import RunSpec
from .vocabulary import FLOPS_PER_PARAM_PER_TOKEN, HOURS_PER_DAY

__all__ = ["MAX_PLAN_DAYS", "EstimateWarning", "Feasibility", "RunEstimate", "estimate_run",
           "token_flops"]

FROZEN_SAVING_PER_PARAM = 2.0
"""FLOPs per frozen parameter per token not spent: its weight gradient (2 of the 6)."""
Range = tuple[float, float]


@dataclass(frozen=True)
class TokenFlops:
    """Model FLOPs per training token, how they were counted, and the terms recomputation
    scales."""

    per_token: float
    method: FlopsMethod
    terms: FlopsBreakdown
    """What recomputation executes again (the breakdown, or 6·N as one matmul term)."""
    breakdown: FlopsBreakdown | None
    counts: FlopCounts | None
    frozen: float
    """Frozen parameters whose weight gradients are skipped."""


class CostBand(NamedTuple):
    """The cost at the central MFU and at the ends of the band."""

    point: CostEstimate
    fast: CostEstimate
    slow: CostEstimate


def token_flops(spec: RunSpec, given: float | None = None,
                method: FlopsMethod = "distillation") -> TokenFlops:
    """Step 1: model FLOPs per token of ``spec`` (or ``given``, counted by ``method``)."""
    model, seq_len = spec.model, spec.resolved_seq_len
    shape, n = model.shape, model.active
    breakdown: FlopsBreakdown | None = None
    counts: FlopCounts | None = None
    if given is not None:
        per_token, terms = given, rule_of_thumb(given / FLOPS_PER_PARAM_PER_TOKEN)
    elif model.architecture is not None:
        breakdown = terms = flops_per_token_of(model.architecture, seq_len)
        counts = flop_counts(breakdown.six_n, seq_len, arch=model.architecture)
        per_token, method = counts.estimate, "architecture"
    elif spec.seq_len is not None:  # a context but no architecture: the guessed shape's
        breakdown = terms = rule_of_thumb(n, layers=shape.layers, hidden=shape.hidden,
                                          seq_len=seq_len)
        counts = flop_counts(breakdown.six_n, seq_len, layers=shape.layers, hidden=shape.hidden)
        per_token, method = counts.estimate, "6N+attention"
    else:
        terms = rule_of_thumb(n)
        per_token, method = terms.total, "6N"
        counts = flop_counts(terms.six_n, seq_len, layers=shape.layers, hidden=shape.hidden)
    frozen = 0.0
    if model.trainable < model.total and given is None:
        # Frozen weights still pass gradients back to their inputs (2 FLOPs) but compute none
        # for themselves (the other 2 of the backward's 4): Kaplan et al. 2020's 6 → 4. LoRA
        # adapters train beside the frozen base: 6 FLOPs per active adapter weight.
        trained_base = 0.0 if model.adapters else model.trainable
        frozen = max(0.0, n - trained_base)
        per_token -= FROZEN_SAVING_PER_PARAM * frozen
        per_token += FLOPS_PER_PARAM_PER_TOKEN * model.adapters * n / model.total
    return TokenFlops(per_token, method, terms, breakdown, counts, frozen)


def mfu_used(spec: RunSpec, acc: Accelerator, precision: Precision, peak: float,
             flops: TokenFlops, ratio: float) -> tuple[float, MfuUsed]:
    """Step 3: the MFU (in the estimate's FLOP count) and where it comes from. A given or
    measured MFU is an upper bound on end-to-end speed, so it caps the band's fast end (and
    widens its slow end when it lies below the prior)."""
    prior = mfu_prior(spec.resolved_family, acc, precision, params=spec.model.active)
    common = dict(prior=prior, family=spec.resolved_family, family_inferred=spec.family is None,
                  achieved_tflops=spec.achieved_tflops)
    if spec.mfu is None and spec.achieved_tflops is None:
        central = prior.central / ratio
        return central, MfuUsed(origin="prior", range=(prior.low / ratio, prior.high / ratio),
                                convention=None, given=None, recompute_divided=ratio > 1,
                                **common)
    convention = spec.mfu_convention or "6n"
    if spec.mfu is not None:
        given = spec.mfu
    else:
        assert spec.achieved_tflops is not None  # one of the two is given here
        given = mfu_from_achieved(spec.achieved_tflops, peak, flops.per_token,
                                  flops.per_token * ratio)
    mfu = given if flops.counts is None else convert_mfu(given, convention, flops.counts)
    return mfu, MfuUsed(origin="user" if spec.mfu is not None else "achieved",
                        range=(min(prior.low / ratio, mfu), mfu), convention=convention,
                        given=given, recompute_divided=False, **common)


def cost_band(flops: float, spec: RunSpec, peak: float, mfu: float, band: Range,
              price: float | None) -> CostBand:
    """Step 5: the cost at the central MFU and at either end of the band."""
    def at(utilisation: float) -> CostEstimate:
        return cost_from_flops(flops, spec.gpu_count, peak, utilisation, price,
                               spec.failure_budget)

    return CostBand(at(mfu), at(band[1]), at(band[0]))


def _range(a: float, b: float) -> Range:
    return (min(a, b), max(a, b))


def _feasibility(memory: MemoryEstimate | None, wall_days: float) -> Feasibility:
    if memory is not None and memory.fits is False:
        return "does_not_fit"
    return "too_long" if wall_days > MAX_PLAN_DAYS else "ok"


def estimate_run(spec: RunSpec, *, flops_per_token: float | None = None,
                 flops_method: FlopsMethod = "distillation",
                 check_memory: bool = True) -> RunEstimate:
    """Estimate FLOPs, time, GPU-hours and dollars for ``spec``, with the MFU band as the range
    (the steps of the module docstring). ``flops_per_token`` replaces the count of step 1
    (``flops_method`` says how it was obtained: distillation adds the teacher's forward pass
    2·N_teacher per token); without ``check_memory`` the memory check is skipped."""
    acc, precision = spec.accelerator, spec.resolved_precision
    peak = spec.peak_tflops if spec.peak_tflops is not None else acc.peak(precision)
    flops = token_flops(spec, flops_per_token, flops_method)
    memory = estimate_memory(spec) if check_memory else None
    recompute = memory.recompute if memory is not None else spec.recompute or "none"
    ratio = hardware_flops_per_token(flops.terms, recompute).hardware_over_model
    mfu, used = mfu_used(spec, acc, precision, peak, flops, ratio)
    price = acc.price(spec.usd_per_gpu_hour, kind=spec.price_kind)
    band = cost_band(flops.per_token * spec.tokens, spec, peak, mfu, used.range,
                     price.usd_per_gpu_hour)
    point, fast, slow = band
    model, arch = spec.model, spec.model.architecture
    return RunEstimate(
        **point.model_dump(), **_ranges(band),
        params=model.total, active_params=_active(spec), tokens=spec.tokens,
        trainable_params=model.trainable if model.trainable < model.total else None,
        kind=spec.resolved_kind, accelerator=acc.name, accelerator_key=acc.key,
        precision=precision, precision_inferred=spec.precision is None,
        peak_origin="user" if spec.peak_tflops is not None else "catalog",
        peak_source=None if spec.peak_tflops is not None else acc.spec_source,
        peak_label=None if spec.peak_tflops is not None else source_label(acc.spec_source),
        catalog_compiled=load_catalog().compiled, mfu_used=used, price=price,
        seq_len=spec.resolved_seq_len, seq_len_inferred=spec.seq_len is None,
        flops_per_token=flops.per_token, flops_method=flops.method, flop_counts=flops.counts,
        flops_breakdown=flops.breakdown, param_breakdown=model.counts,
        frozen_flops_saved_per_token=FROZEN_SAVING_PER_PARAM * flops.frozen,
        recompute=recompute, recompute_slowdown=ratio,
        hardware_flops=flops.per_token * ratio * spec.tokens,
        hardware_flops_per_token=flops.per_token * ratio, hfu=mfu * ratio,
        tokens_per_second_per_gpu=spec.tokens / point.wall_seconds / spec.gpu_count,
        architecture_name=arch.name if arch is not None else None,
        architecture_source=arch.source if arch is not None else None,
        defaults_used=run_defaults(spec, used, price),
        config_notes=arch.defaults_used if arch is not None else (),
        memory=memory, feasibility=_feasibility(memory, point.wall_days),
        max_plan_days=MAX_PLAN_DAYS,
        wall_days_at_min_gpu_count=(
            point.gpu_hours / memory.min_gpu_count / HOURS_PER_DAY
            if memory is not None and memory.fits is False and memory.min_gpu_count else None),
        warnings=estimate_warnings(spec, acc, precision),
        energy=energy_of(_Timed(acc, spec.gpu_count, point.wall_hours,
                                _range(fast.wall_hours, slow.wall_hours)),
                         board_power_w=spec.board_power_w, pue=spec.pue,
                         grid_kg_co2_per_kwh=spec.grid_kg_co2_per_kwh),
    )


def _active(spec: RunSpec) -> float | None:
    """Active parameters: the config's when fewer than the total, else the user's."""
    counts = spec.model.counts
    if counts is None:
        return spec.active_params
    return float(counts.active) if counts.active < counts.total else None


def _ranges(band: CostBand) -> dict[str, object]:
    """The band's low–high pairs."""
    _, fast, slow = band

    def dollars(field: str) -> Range | None:
        lo, hi = getattr(fast, field), getattr(slow, field)
        return None if lo is None or hi is None else _range(lo, hi)

    return dict(
        wall_hours_range=_range(fast.wall_hours, slow.wall_hours),
        wall_days_range=_range(fast.wall_days, slow.wall_days),
        gpu_hours_range=_range(fast.gpu_hours, slow.gpu_hours),
        dollar_cost_range=dollars("dollar_cost"),
        dollar_cost_with_failures_range=dollars("dollar_cost_with_failures"),
    )


@dataclass(frozen=True)
class _Timed:
    """What the energy needs of a run: its device, count and wall hours."""

    accelerator: Accelerator
    gpu_count: int
    wall_hours: float
    wall_hours_range: Range
