"""The run estimate: FLOPs, time, GPU-hours and dollars of a run spec, with the MFU band as the
range, the memory check at the cheapest layout that fits, and every assumption's source.

FLOPs per token are counted in the convention the MFU prior was calibrated on (:mod:`.flops`):
6·N_active (the config's exact count when there is one) plus only the causal attention that a
context beyond the calibration context (4k) adds; the term-by-term count is kept in the
breakdown. A given MFU or achieved TFLOP/s is converted from its ``mfu_convention``. Time and
money from :mod:`.cost`; the layout from :mod:`.layout`. When the memory check chooses (or
the user sets) activation recomputation, the hardware executes more FLOPs than the model needs:
a prior MFU, which describes runs at their usual hardware utilisation, is divided by the ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .hardware.catalog import Accelerator, Precision, load_catalog
from .hardware.cost import CostEstimate, cost_from_flops
from .hardware.energy import EnergyEstimate, energy_of, load_energy_defaults
from .hardware.mfu import MfuPrior, ModelFamily, mfu_prior
from .memory.estimate import MemoryEstimate, estimate_memory
from .model.architecture import ParamBreakdown
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
from .model.source import differs
from .run_spec import RunSpec
from .scaling.lesson import train_flops
from .vocabulary import (
    COMPUTE_OPTIMAL_RATIO,
    FLOPS_PER_PARAM_PER_TOKEN,
    HOURS_PER_DAY,
    MfuConvention,
    Recompute,
    RunKind,
)

__all__ = ["MAX_PLAN_DAYS", "EstimateWarning", "Feasibility", "RunEstimate", "estimate_run"]

FROZEN_SAVING_PER_PARAM = 2.0
"""FLOPs per frozen parameter per token not spent: its weight gradient (2 of the 6)."""
MFU_SUSPICIOUSLY_HIGH = 0.75
"""Above this MFU, warn: the best published end-to-end runs stay well below it."""
MAX_PLAN_DAYS = 365.0
"""A run longer than a year outlives its plan: hardware, data and the question change."""
Range = tuple[float, float]
FlopsMethod = Literal["6N", "6N+attention", "architecture", "distillation", "scaled"]
Feasibility = Literal["ok", "does_not_fit", "too_long"]
WarningCode = Literal["sparse_peak", "peak_above_catalog", "mfu_near_peak", "params_differ",
                      "active_params_differ", "moe_without_active_params", "under_trained"]


class RunEstimate(CostEstimate):
    """A full estimate for a run spec: the cost, the range, the assumptions and their sources."""

    params: float = Field(description="Total parameters N.")
    active_params: float | None = Field(description="Active parameters per token (MoE).")
    tokens: float = Field(description="Training tokens T.")
    trainable_params: float | None = Field(
        description="Trainable parameters, when the rest are frozen (LoRA, adapters)."
    )
    frozen_flops_saved_per_token: float = Field(
        description="FLOPs per token not spent on the weight gradients of frozen parameters."
    )
    flops_per_token: float = Field(
        description="Model FLOPs per training token in the estimate's convention (the one the "
                    "MFU prior is calibrated on): 6·N_active + attention beyond the calibration "
                    "context.")
    flops_method: FlopsMethod = Field(
        description="How FLOPs were counted: 6N (6·N_active), 6N+attention (plus the causal "
                    "attention beyond the calibration context at the given sequence length, "
                    "from a shape guessed from N), architecture (6·N_active from the config's "
                    "exact count plus the causal attention beyond the calibration context; the "
                    "term-by-term count is in flops_breakdown), distillation (student 6·N + "
                    "teacher forward 2·N_t), scaled (the original's per-token FLOPs scaled with "
                    "the model)."
    )
    flop_counts: FlopCounts | None = Field(
        description="6·N, the attention terms at the context and at the calibration context, "
                    "and the estimate's count per token; None when FLOPs per token were given.")
    mfu_convention: MfuConvention | None = Field(
        description="FLOP convention of the given MFU or achieved TFLOP/s (6n, causal, full); "
                    "None when the prior was used.")
    mfu_given: float | None = Field(
        description="The MFU as given or as the achieved TFLOP/s imply it, in its own "
                    "convention, before conversion to the estimate's count; None for the prior.")
    flops_breakdown: FlopsBreakdown | None = Field(
        description="Per-token FLOPs by term, when the architecture is known."
    )
    param_breakdown: ParamBreakdown | None = Field(
        description="Exact parameter counts by component, when the architecture is known."
    )
    architecture_name: str | None = Field(description="Model name from the config or preset.")
    architecture_source: str | None = Field(description="Where the architecture comes from.")
    defaults_used: tuple[str, ...] = Field(
        description="Every default the estimate relied on: the inputs it filled in itself "
                    "(name=value (source)) and the config fields that took a documented "
                    "default."
    )
    seq_len: int = Field(description="Training sequence length in tokens.")
    seq_len_inferred: bool = Field(description="True when the sequence length is the default.")
    recompute: Recompute = Field(
        description="Activation recomputation the FLOPs count: the layout's (the memory "
                    "check's choice when the user left it open)."
    )
    recompute_slowdown: float = Field(
        description="Hardware / model FLOPs of that recomputation. A prior MFU is divided by it: "
                    "at the same hardware utilisation the recomputed run takes that much longer."
    )
    hardware_flops: float = Field(
        description="FLOPs the hardware executes for the run, recomputation included."
    )
    hardware_flops_per_token: float = Field(description="Hardware FLOPs per training token.")
    hfu: float = Field(description="Hardware FLOPs utilisation: MFU × hardware / model FLOPs.")
    family: ModelFamily = Field(description="Model family used for the MFU prior.")
    family_inferred: bool = Field(description="True when the family was inferred, not given.")
    accelerator: str = Field(description="Full accelerator name.")
    accelerator_key: str = Field(description="Catalog key of the accelerator.")
    precision: Precision = Field(description="Precision whose dense peak is used.")
    precision_inferred: bool = Field(description="True when the precision is the default.")
    peak_source: str = Field(description="Where the peak comes from (user or catalog source).")
    catalog_compiled: str = Field(description="Date the catalog was compiled.")
    mfu_source: Literal["user", "prior", "achieved"] = Field(
        description="Whether MFU was given, a prior, or converted from achieved TFLOP/s."
    )
    achieved_tflops: float | None = Field(description="Measured hardware TFLOP/s per device.")
    mfu_prior: MfuPrior = Field(description="The prior for this family, hardware and precision.")
    mfu_range: Range = Field(description="MFU band [low, high] used for the ranges.")
    tokens_per_second_per_gpu: float = Field(description="Training tokens per second per device.")
    wall_hours_range: Range = Field(description="Wall hours [low, high] over the MFU band.")
    wall_days_range: Range = Field(description="Wall days [low, high] over the MFU band.")
    gpu_hours_range: Range = Field(description="Device-hours [low, high] over the MFU band.")
    dollar_cost_range: Range | None = Field(
        description="US dollars [low, high] over the MFU band; None when the price is unknown."
    )
    dollar_cost_with_failures_range: Range | None = Field(
        description="US dollars with the failure budget [low, high]; None when price unknown."
    )
    price_source: Literal["user", "catalog"] | None = Field(
        description="Whether the price was given or the catalog default; None when unknown."
    )
    price_kind: str | None = Field(description="Kind of the catalog price (on-demand, ...).")
    price_as_of: str | None = Field(description="Date of the catalog price.")
    price_reference: str | None = Field(description="Source of the catalog price.")
    memory: MemoryEstimate | None = Field(
        description="The memory check: memory per device at the cheapest layout that fits (its "
                    "layout says how it was chosen); None for a FLOPs-only estimate."
    )
    kind: RunKind = Field(description="Kind of run: pretrain, continued-pretrain, fine-tune, "
                                      "ablation.")
    feasibility: Feasibility = Field(
        description="ok; does_not_fit (no layout fits these devices: see memory.min_gpu_count); "
                    "too_long (the central estimate exceeds max_plan_days)."
    )
    max_plan_days: float = Field(description="Longest wall time a plan is taken to survive.")
    wall_days_at_min_gpu_count: float | None = Field(
        description="When it does not fit: the wall days on memory.min_gpu_count devices at "
                    "the same MFU; None otherwise.")
    warnings: list[EstimateWarning] = Field(
        description="Things in the inputs that look like mistakes (codes with numbers).")
    energy: EnergyEstimate = Field(
        description="kWh and CO2 of the run from board power, PUE and grid intensity, each an "
                    "assumption with its source; kWh None when the board power is unknown.")


class EstimateWarning(BaseModel):
    """Something in the inputs that looks like a mistake, as a code with its numbers."""

    model_config = ConfigDict(frozen=True)

    code: WarningCode
    numbers: dict[str, float | str | None] = Field(default_factory=dict)


def _peak_warnings(spec: RunSpec, acc: Accelerator,
                   precision: Precision) -> list[EstimateWarning]:
    if spec.peak_tflops is None:
        return []
    dense = acc.peak_tflops.get(precision)
    if dense is None:
        return []
    numbers: dict[str, float | str | None] = {"given": spec.peak_tflops, "dense": dense,
                                              "precision": precision, "device": acc.name}
    if math.isclose(spec.peak_tflops, 2 * dense, rel_tol=0.02):
        return [EstimateWarning(code="sparse_peak", numbers=numbers)]
    if spec.peak_tflops > dense * 1.05:
        return [EstimateWarning(code="peak_above_catalog", numbers=numbers)]
    return []


def _mfu_warnings(mfu: float | None) -> list[EstimateWarning]:
    if mfu is None or mfu < MFU_SUSPICIOUSLY_HIGH:
        return []
    return [EstimateWarning(code="mfu_near_peak", numbers={"mfu": mfu})]


def _count_warnings(spec: RunSpec, counts: ParamBreakdown | None) -> list[EstimateWarning]:
    if counts is None:
        return []
    notes = []
    if differs(spec.params, counts.total):
        notes.append(EstimateWarning(code="params_differ",
                                     numbers={"given": spec.params, "exact": counts.total}))
    if differs(spec.active_params, counts.active):
        notes.append(EstimateWarning(code="active_params_differ",
                                     numbers={"given": spec.active_params,
                                              "exact": counts.active}))
    return notes


UNDER_TRAINED_WARNING = 0.5
"""Warn below this share of the compute-optimal tokens per parameter (10 of 20)."""


def _training_warnings(spec: RunSpec, params: float) -> list[EstimateWarning]:
    """A dense model pre-trained from scratch on less than half the tokens per parameter of
    the compute-optimal split: at the same compute a smaller model on more tokens reaches a
    clearly lower loss (closer to 20, the loss cost is a few thousandths of a nat, not worth
    a warning)."""
    if (spec.resolved_kind != "pretrain" or spec.resolved_family != "dense"
            or spec.model.trainable < spec.model.total
            or spec.tokens / params >= UNDER_TRAINED_WARNING * COMPUTE_OPTIMAL_RATIO):
        return []
    from .scaling.published import compute_optimal

    split = compute_optimal(train_flops(params, spec.tokens), proposed_params=params,
                            proposed_tokens=spec.tokens)
    if split.proposed is None or split.proposed.placement != "under_trained":
        return []
    return [EstimateWarning(code="under_trained", numbers={
        "tokens_per_param": split.proposed.tokens_per_param, "optimal": split.rule_ratio,
        "optimal_params": split.params, "optimal_tokens": split.tokens})]


def _family_warnings(spec: RunSpec) -> list[EstimateWarning]:
    if spec.family == "moe" and spec.architecture is None and spec.active_params is None:
        return [EstimateWarning(code="moe_without_active_params")]
    return []


def _run_defaults(spec: RunSpec, mfu: float, price_source: str | None, price: float | None,
                  seq_len: int) -> tuple[str, ...]:
    """``name=value (where from)`` for every input the estimate filled in itself."""
    out = []
    if spec.mfu is None and spec.achieved_tflops is None:
        out.append(f"mfu={mfu:.3g} (calibrated prior)")
    elif spec.mfu_convention is None:
        out.append("mfu_convention=6n (default)")
    if spec.usd_per_gpu_hour is None:
        out.append(f"usd_per_gpu_hour={price:g} (catalog)" if price_source == "catalog"
                   else "usd_per_gpu_hour=unknown (no catalog price)")
    if spec.precision is None:
        out.append(f"precision={spec.resolved_precision} (device default)")
    if spec.seq_len is None:
        out.append(f"seq_len={seq_len} (default)")
    if "failure_budget" not in spec.model_fields_set:
        out.append(f"failure_budget={spec.failure_budget:g} (default)")
    if spec.kind is None:
        out.append(f"kind={spec.resolved_kind} (default)")
    if spec.stack is None:
        out.append(f"stack={spec.resolved_stack} (default for this run)")
    if spec.pue is None:
        out.append(f"pue={load_energy_defaults().pue.value:g} (default)")
    if spec.grid_kg_co2_per_kwh is None:
        out.append(f"grid_kg_co2_per_kwh={load_energy_defaults().grid_kg_co2_per_kwh.value:g}"
                   " (default)")
    open_knobs = [k for k in ("zero", "tp", "pp", "recompute", "offload")
                  if getattr(spec, k) is None]
    if open_knobs:
        out.append(f"{'/'.join(open_knobs)}=searched (memory check)")
    return tuple(out)


@dataclass(frozen=True)
class _Timed:
    """What the energy needs of a run: its device, count and wall hours."""

    accelerator: Accelerator
    gpu_count: int
    wall_hours: float
    wall_hours_range: Range


def _range(low_mfu_value: float, high_mfu_value: float) -> Range:
    return (min(low_mfu_value, high_mfu_value), max(low_mfu_value, high_mfu_value))


def estimate_run(
    spec: RunSpec,
    *,
    flops_per_token: float | None = None,
    flops_method: FlopsMethod = "distillation",
    check_memory: bool = True,
) -> RunEstimate:
    """Estimate FLOPs, time, GPU-hours and dollars for ``spec``, with the MFU band as the range.

    Per-token model FLOPs come from the architecture when there is one (matmul + attention + LM
    head, :func:`~compute_budget.skill.model.flops.flops_per_token`), else from 6·N_active.
    ``flops_per_token`` replaces them (``flops_method`` says how it was obtained: distillation
    adds the teacher's forward pass 2·N_teacher per token). MFU is the user's, the one an
    achieved hardware TFLOP/s implies (model / hardware FLOPs × achieved / peak), or the prior.
    """
    acc = spec.accelerator
    precision = spec.resolved_precision
    peak = spec.peak_tflops if spec.peak_tflops is not None else acc.peak(precision)
    family = spec.resolved_family
    model = spec.model
    arch, counts = model.architecture, model.counts
    seq_len = spec.resolved_seq_len
    n_compute = model.active
    prior = mfu_prior(family, acc, precision, params=n_compute)

    breakdown: FlopsBreakdown | None = None
    convention_counts: FlopCounts | None = None
    if flops_per_token is not None:
        per_token, method = flops_per_token, flops_method
        terms = rule_of_thumb(per_token / FLOPS_PER_PARAM_PER_TOKEN)
    elif arch is not None:
        # The prior's convention: 6·N_active from the exact count, attention only beyond the
        # calibration context; the term-by-term count stays in the breakdown.
        breakdown = flops_per_token_of(arch, seq_len)
        convention_counts = flop_counts(breakdown.six_n, seq_len, arch=arch)
        per_token, method, terms = convention_counts.estimate, "architecture", breakdown
    elif spec.seq_len is not None:
        # A context was given but no architecture: attention from the given or guessed shape.
        breakdown = rule_of_thumb(n_compute, layers=model.shape.layers,
                                  hidden=model.shape.hidden, seq_len=seq_len)
        convention_counts = flop_counts(breakdown.six_n, seq_len, layers=model.shape.layers,
                                        hidden=model.shape.hidden)
        per_token, method, terms = convention_counts.estimate, "6N+attention", breakdown
    else:
        terms = rule_of_thumb(n_compute)
        per_token, method = terms.total, "6N"
        convention_counts = flop_counts(terms.six_n, seq_len, layers=model.shape.layers,
                                        hidden=model.shape.hidden)
    frozen = 0.0
    frozen_base = model.trainable < model.total
    if frozen_base and flops_per_token is None:
        # Frozen weights still pass gradients back to their inputs (2 FLOPs) but compute none
        # for themselves (the other 2 of the backward's 4): Kaplan et al. 2020's 6 → 4. LoRA
        # adapters train beside the frozen base: 6 FLOPs per active adapter weight.
        trained_base = 0.0 if model.adapters else model.trainable
        frozen = max(0.0, n_compute - trained_base)
        per_token -= FROZEN_SAVING_PER_PARAM * frozen
        per_token += FLOPS_PER_PARAM_PER_TOKEN * model.adapters * n_compute / model.total

    memory = estimate_memory(spec) if check_memory else None
    recompute: Recompute = (memory.recompute if memory is not None
                            else spec.recompute or "none")
    hardware = hardware_flops_per_token(terms, recompute)
    ratio = hardware.hardware_over_model
    hw_per_token = per_token * ratio

    convention: MfuConvention | None = None
    given: float | None = None
    if spec.achieved_tflops is not None or spec.mfu is not None:
        convention = spec.mfu_convention or "6n"
        given = (spec.mfu if spec.mfu is not None
                 else mfu_from_achieved(spec.achieved_tflops or 0.0, peak, per_token,
                                        hw_per_token))
    if given is not None:
        mfu = (given if convention_counts is None or convention is None
               else convert_mfu(given, convention, convention_counts))
        mfu_source: Literal["user", "prior", "achieved"] = (
            "user" if spec.mfu is not None else "achieved")
    else:
        mfu, mfu_source = prior.central / ratio, "prior"
    # The band: the prior's (at the layout's hardware FLOPs); a given or measured MFU is an
    # upper bound on end-to-end speed, so it caps the fast end (and widens the slow end if it
    # lies below the prior).
    band = ((prior.low / ratio, prior.high / ratio) if mfu_source == "prior"
            else (min(prior.low / ratio, mfu), mfu))

    chosen = acc.price(spec.usd_per_gpu_hour, kind=spec.price_kind)
    price, price_source = chosen.usd_per_gpu_hour, chosen.source

    flops = per_token * spec.tokens
    args = (flops, spec.gpu_count, peak)
    point = cost_from_flops(*args, mfu, price, spec.failure_budget)
    slow = cost_from_flops(*args, band[0], price, spec.failure_budget)
    fast = cost_from_flops(*args, band[1], price, spec.failure_budget)

    def dollars(field: str) -> Range | None:
        lo, hi = getattr(fast, field), getattr(slow, field)
        return None if lo is None or hi is None else _range(lo, hi)

    feasibility: Feasibility = "ok"
    if memory is not None and memory.fits is False:
        feasibility = "does_not_fit"
    elif point.wall_days > MAX_PLAN_DAYS:
        feasibility = "too_long"
    warnings = (_mfu_warnings(spec.mfu) + _peak_warnings(spec, acc, precision)
                + _count_warnings(spec, counts) + _family_warnings(spec)
                + _training_warnings(spec, model.total))
    energy = energy_of(
        _Timed(acc, spec.gpu_count, point.wall_hours, _range(fast.wall_hours, slow.wall_hours)),
        board_power_w=spec.board_power_w, pue=spec.pue,
        grid_kg_co2_per_kwh=spec.grid_kg_co2_per_kwh)
    return RunEstimate(
        **point.model_dump(),
        params=model.total,
        active_params=(spec.active_params if counts is None
                       else float(counts.active) if counts.active < counts.total else None),
        tokens=spec.tokens,
        trainable_params=model.trainable if frozen_base else None,
        frozen_flops_saved_per_token=FROZEN_SAVING_PER_PARAM * frozen,
        flops_per_token=per_token,
        flops_method=method,
        flop_counts=convention_counts,
        mfu_convention=convention,
        mfu_given=given,
        flops_breakdown=breakdown,
        param_breakdown=counts,
        architecture_name=arch.name if arch is not None else None,
        architecture_source=arch.source if arch is not None else None,
        defaults_used=(*_run_defaults(spec, mfu, price_source, price, seq_len),
                       *(arch.defaults_used if arch is not None else ())),
        seq_len=seq_len,
        seq_len_inferred=spec.seq_len is None,
        recompute=recompute,
        recompute_slowdown=ratio,
        hardware_flops=hw_per_token * spec.tokens,
        hardware_flops_per_token=hw_per_token,
        hfu=mfu * ratio,
        family=family,
        family_inferred=spec.family is None,
        accelerator=acc.name,
        accelerator_key=acc.key,
        precision=precision,
        precision_inferred=spec.precision is None,
        peak_source="given by you" if spec.peak_tflops is not None else acc.spec_source,
        catalog_compiled=load_catalog().compiled,
        mfu_source=mfu_source,
        achieved_tflops=spec.achieved_tflops,
        mfu_prior=prior,
        mfu_range=band,
        tokens_per_second_per_gpu=spec.tokens / point.wall_seconds / spec.gpu_count,
        wall_hours_range=_range(fast.wall_hours, slow.wall_hours),
        wall_days_range=_range(fast.wall_days, slow.wall_days),
        gpu_hours_range=_range(fast.gpu_hours, slow.gpu_hours),
        dollar_cost_range=dollars("dollar_cost"),
        dollar_cost_with_failures_range=dollars("dollar_cost_with_failures"),
        **chosen.provenance(),
        memory=memory,
        kind=spec.resolved_kind,
        feasibility=feasibility,
        max_plan_days=MAX_PLAN_DAYS,
        wall_days_at_min_gpu_count=(
            point.gpu_hours / memory.min_gpu_count / HOURS_PER_DAY
            if memory is not None and memory.fits is False and memory.min_gpu_count else None),
        warnings=warnings,
        energy=energy,
    )
