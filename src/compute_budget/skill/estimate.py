"""Time and money for a training run: FLOPs, wall time, GPU-hours and dollars, with a range.

The arithmetic (the stage-3 compute-budget skill; Kaplan et al. 2020 for 6·N·T)::

    flops        = 6 · N · T                         model FLOPs (N = active parameters for MoE)
    throughput   = devices · peak · MFU              FLOP/s the whole job sustains
    wall_seconds = flops / throughput
    gpu_hours    = wall_hours · devices
    dollars      = gpu_hours · $/device-hour
    with failures: × failure budget (1.5 by default: one partial re-run)

The range of time and money comes from the MFU band: the high MFU gives the low cost.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .architecture import ParamBreakdown, count_params
from .catalog import Accelerator, Precision, get_accelerator, load_catalog
from .errors import InputError
from .flops import (
    FlopsBreakdown,
    hardware_flops_per_token,
    mfu_from_achieved,
    rule_of_thumb,
)
from .flops import flops_per_token as flops_per_token_of
from .lesson import FLOPS_PER_PARAM_PER_TOKEN
from .memory import MemoryEstimate, MemorySpec, Recompute, estimate_memory, guess_shape
from .mfu import MfuPrior, ModelFamily, mfu_prior
from .model_source import ModelAndLayout, check_layout, check_seq_len, differs
from .quantities import ParamCount, Price, TflopsPerDevice, TokenCount, check_positive

__all__ = [
    "DEFAULT_FAILURE_BUDGET",
    "CostEstimate",
    "MemoryFit",
    "Mfu",
    "RunEstimate",
    "RunSpec",
    "cost_from_flops",
    "estimate_run",
    "estimate_run_cost",
    "memory_at",
]

DEFAULT_FAILURE_BUDGET = 1.5
"""Multiplier on nominal cost for failures and re-runs (the stage-3 compute-budget skill)."""

SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
FROZEN_SAVING_PER_PARAM = 2.0
"""FLOPs per frozen parameter per token not spent: its weight gradient (2 of the 6)."""
MFU_SUSPICIOUSLY_HIGH = 0.75
"""Above this MFU, warn: the best published end-to-end runs stay well below it."""

Mfu = Annotated[
    float,
    Field(gt=0, le=1, allow_inf_nan=False,
          description="Model FLOPs utilisation as a fraction of the dense peak, in (0, 1]."),
]
FailureBudget = Annotated[
    float,
    Field(ge=1, le=10, allow_inf_nan=False,
          description="Multiplier on nominal cost for failures and re-runs, in [1, 10]; 1.5 "
                      "(one partial re-run) by default."),
]
Range = tuple[float, float]
FlopsMethod = Literal["6N", "6N+attention", "architecture", "distillation", "scaled"]


class CostEstimate(BaseModel):
    """Time and money for a given amount of compute on a given set of devices."""

    model_config = ConfigDict(frozen=True)

    flops: float = Field(description="Model FLOPs for the whole run.")
    gpu_count: int = Field(description="Number of devices.")
    peak_tflops_per_gpu: float = Field(description="Dense peak per device in TFLOP/s.")
    mfu: float = Field(description="Model FLOPs utilisation used (fraction of the peak).")
    effective_tflops_per_gpu: float = Field(description="peak × MFU per device, in TFLOP/s.")
    wall_seconds: float = Field(description="Wall-clock time in seconds.")
    wall_hours: float = Field(description="Wall-clock time in hours.")
    wall_days: float = Field(description="Wall-clock time in days.")
    gpu_hours: float = Field(description="Device-hours: wall hours × devices.")
    usd_per_gpu_hour: float | None = Field(
        description="Price in US dollars per device-hour; None when unknown."
    )
    dollar_cost: float | None = Field(
        description="Cost in US dollars without failures; None when the price is unknown."
    )
    failure_budget: float = Field(description="Multiplier for failures and re-runs.")
    gpu_hours_with_failures: float = Field(description="Device-hours × failure budget.")
    dollar_cost_with_failures: float | None = Field(
        description="US dollars × failure budget; None when the price is unknown."
    )


def cost_from_flops(
    flops: float,
    gpus: int,
    peak_tflops: float,
    mfu: float,
    usd_per_gpu_hour: float | None,
    failure_budget: float = DEFAULT_FAILURE_BUDGET,
) -> CostEstimate:
    """The one place time and money are computed from FLOPs (see the module docstring)."""
    throughput = gpus * peak_tflops * 1e12 * mfu  # FLOP/s for the whole job
    wall_seconds = flops / throughput
    wall_hours = wall_seconds / SECONDS_PER_HOUR
    gpu_hours = wall_hours * gpus
    dollars = None if usd_per_gpu_hour is None else gpu_hours * usd_per_gpu_hour
    return CostEstimate(
        flops=flops,
        gpu_count=gpus,
        peak_tflops_per_gpu=peak_tflops,
        mfu=mfu,
        effective_tflops_per_gpu=peak_tflops * mfu,
        wall_seconds=wall_seconds,
        wall_hours=wall_hours,
        wall_days=wall_hours / HOURS_PER_DAY,
        gpu_hours=gpu_hours,
        usd_per_gpu_hour=usd_per_gpu_hour,
        dollar_cost=dollars,
        failure_budget=failure_budget,
        gpu_hours_with_failures=gpu_hours * failure_budget,
        dollar_cost_with_failures=None if dollars is None else dollars * failure_budget,
    )


def _check_count(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, value, "a whole number of devices, at least 1")
    if not math.isfinite(value) or value < 1 or float(value) != int(value):
        raise InputError(field, value, "a whole number of devices, at least 1")
    return int(value)


def _check_mfu(value: object, field: str = "mfu") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, value, "a fraction in (0, 1], e.g. 0.4")
    if not (math.isfinite(value) and 0 < value <= 1):
        raise InputError(field, value, "a fraction in (0, 1], e.g. 0.4")
    return float(value)


def estimate_run_cost(
    N_params: float,
    T_tokens: float,
    gpus: int,
    gpu_tflops: float,
    mfu: float,
    dollar_per_gpu_hour: float,
    *,
    failure_budget: float = DEFAULT_FAILURE_BUDGET,
) -> CostEstimate:
    """Cost of training N parameters on T tokens: the stage-3 skill's function.

    FLOPs = 6·N·T (Kaplan et al. 2020); wall time = FLOPs / (gpus · gpu_tflops·10¹² · mfu);
    dollars = wall hours · gpus · dollar_per_gpu_hour. ``gpu_tflops`` must be the *dense* peak
    for the precision used. Every argument is checked; a ``ValueError`` names the one at fault.
    """
    n = check_positive(N_params, "N_params")
    t = check_positive(T_tokens, "T_tokens")
    count = _check_count(gpus, "gpus")
    peak = check_positive(gpu_tflops, "gpu_tflops")
    utilisation = _check_mfu(mfu)
    price = check_positive(dollar_per_gpu_hour, "dollar_per_gpu_hour")
    budget = check_positive(failure_budget, "failure_budget")
    if budget < 1:
        raise InputError("failure_budget", failure_budget, "a multiplier of at least 1")
    return cost_from_flops(FLOPS_PER_PARAM_PER_TOKEN * n * t, count, peak, utilisation, price,
                           budget)


class RunSpec(ModelAndLayout):
    """What the user plans to run: the four inputs of step 1 and the optional overrides.

    The model is given by ``params`` (and ``active_params`` for MoE), or exactly by a ``config``
    or ``preset``, which also gives the attention and LM-head FLOPs and the shape for memory.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    params: ParamCount | None = Field(
        default=None,
        description="Total parameters N (e.g. 7e9 or '7B'); for MoE the total across experts. "
                    "May be omitted when a config or preset gives the architecture.",
    )
    tokens: TokenCount = Field(
        description="Training tokens T (e.g. 1e11 or '100B', '1.5T')."
    )
    gpu: str = Field(
        description="Accelerator name from the catalog, e.g. 'h100', 'a100-80gb', 'tpu-v5p'."
    )
    gpu_count: int = Field(ge=1, le=10_000_000, description="Number of devices, at least 1.")
    active_params: ParamCount | None = Field(
        default=None,
        description="Parameters active per token (MoE); at most params. Omit for dense models.",
    )
    precision: Precision | None = Field(
        default=None,
        description="Training precision whose dense peak is used: bf16, fp16 or fp8. Default: "
                    "bf16, or fp16 on devices without bf16.",
    )
    mfu: Mfu | None = Field(
        default=None,
        description="Model FLOPs utilisation in (0, 1]. Default: the calibrated prior for the "
                    "model family and hardware generation.",
    )
    achieved_tflops: TflopsPerDevice | None = Field(
        default=None,
        description="Measured hardware TFLOP/s per device (from a one-step benchmark or a "
                    "paper; recomputation counted, as `recompute` says). Converted to MFU; not "
                    "together with mfu.",
    )
    usd_per_gpu_hour: Price | None = Field(
        default=None,
        description="Price in US dollars per device-hour (e.g. 2.1 or '$2.10'). Default: the "
                    "catalog's newest dated price, if it has one.",
    )
    peak_tflops: TflopsPerDevice | None = Field(
        default=None,
        description="Override the dense peak per device in TFLOP/s (use the dense figure, not "
                    "the sparse datasheet one).",
    )
    family: ModelFamily | None = Field(
        default=None,
        description="Model family for the MFU prior: dense, moe, cnn or snn. Default: moe when "
                    "fewer parameters are active than exist, else dense.",
    )
    failure_budget: FailureBudget = DEFAULT_FAILURE_BUDGET
    trainable_params: ParamCount | None = Field(
        default=None,
        description="Trainable parameters when the rest are frozen (LoRA, adapters); at most "
                    "params. Frozen weights skip their weight gradients (4 instead of 6 FLOPs "
                    "per parameter per token) and have no optimizer state.",
    )
    zero: int | None = Field(
        default=None, ge=0, le=3,
        description="ZeRO stage for the memory check (default: the lowest stage that fits).",
    )

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, value: str) -> str:
        return get_accelerator(value).key

    @model_validator(mode="after")
    def _consistent(self) -> RunSpec:
        arch = self.architecture
        if self.params is None and arch is None:
            raise InputError("params", None, "a parameter count, or a config or preset")
        if self.active_params is not None and self.active_params > self.total_params:
            raise InputError(
                "active_params",
                self.active_params,
                f"at most the total params ({self.total_params:.4g})",
            )
        if self.trainable_params is not None and self.trainable_params > self.total_params:
            raise InputError("trainable_params", self.trainable_params,
                             f"at most the total params ({self.total_params:.4g})")
        if self.mfu is not None and self.achieved_tflops is not None:
            raise InputError("achieved_tflops", self.achieved_tflops,
                             "not together with mfu: give one or the other")
        if self.peak_tflops is None:
            self.accelerator.peak(self.resolved_precision)  # raises when the peak is unknown
        check_layout(self.gpu_count, self.tp, self.pp, arch)
        check_seq_len(self.resolved_seq_len, arch)
        return self

    @property
    def accelerator(self) -> Accelerator:
        """The catalog entry for ``gpu``."""
        return get_accelerator(self.gpu)

    @property
    def param_counts(self) -> ParamBreakdown | None:
        """Exact counts from the architecture, when there is one."""
        arch = self.architecture
        return None if arch is None else count_params(arch)

    @property
    def total_params(self) -> float:
        """The config's exact count when there is one, else ``params``."""
        counts = self.param_counts
        return float(counts.total) if counts is not None else float(self.params or 0)

    @property
    def compute_params(self) -> float:
        """Parameters that do work per token: the config's active count, or active_params for
        MoE, else all."""
        counts = self.param_counts
        if counts is not None:
            return float(counts.active)
        return self.active_params if self.active_params is not None else self.total_params

    @property
    def resolved_family(self) -> ModelFamily:
        """The family given, or MoE when fewer parameters are active than exist, else dense."""
        if self.family is not None:
            return self.family
        return "moe" if self.compute_params < self.total_params else "dense"

    @property
    def resolved_precision(self) -> Precision:
        """The precision given, or the device's default training precision."""
        return self.precision or self.accelerator.default_precision



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
    flops_per_token: float = Field(description="Model FLOPs per training token.")
    flops_method: FlopsMethod = Field(
        description="How FLOPs were counted: 6N (6·N_active), 6N+attention (plus causal "
                    "attention at the given sequence length, from a shape guessed from N), "
                    "architecture (matmul + attention + LM head from the config), distillation "
                    "(student 6·N + teacher forward 2·N_t), scaled (the original's per-token "
                    "FLOPs scaled with the model)."
    )
    flops_breakdown: FlopsBreakdown | None = Field(
        description="Per-token FLOPs by term, when the architecture is known."
    )
    param_breakdown: ParamBreakdown | None = Field(
        description="Exact parameter counts by component, when the architecture is known."
    )
    architecture_name: str | None = Field(description="Model name from the config or preset.")
    architecture_source: str | None = Field(description="Where the architecture comes from.")
    defaults_used: tuple[str, ...] = Field(
        description="Config fields that were absent and took a documented default."
    )
    seq_len: int = Field(description="Training sequence length in tokens.")
    seq_len_inferred: bool = Field(description="True when the sequence length is the default.")
    recompute: Recompute = Field(description="Activation recomputation mode.")
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
        description="Memory per device at the layout the check settled on (see memory_fit); "
                    "None for a FLOPs-only estimate (alternatives)."
    )
    memory_fit: MemoryFit | None = Field(
        description="How the memory check's layout was found: given (the user's, at the given "
                    "ZeRO stage), lowest_fitting (the user's, at the lowest ZeRO stage that "
                    "fits), adjusted (more recomputation or tensor parallelism than planned was "
                    "needed), none_fits (nothing tried fits)."
    )
    warnings: list[str] = Field(description="Things in the inputs that look like mistakes.")


def _peak_warnings(spec: RunSpec, acc: Accelerator, precision: Precision) -> list[str]:
    if spec.peak_tflops is None:
        return []
    dense = acc.peak_tflops.get(precision)
    if dense is None:
        return []
    if math.isclose(spec.peak_tflops, 2 * dense, rel_tol=0.02):
        return [
            f"peak_tflops {spec.peak_tflops:g} is twice the dense {precision} peak of {acc.name} "
            f"({dense:g} TFLOP/s): it looks like the datasheet's 2:4-sparsity figure, which "
            "dense training never reaches. Time and cost would be 2x too optimistic."
        ]
    if spec.peak_tflops > dense * 1.05:
        return [
            f"peak_tflops {spec.peak_tflops:g} is above the catalog's dense {precision} peak of "
            f"{acc.name} ({dense:g} TFLOP/s); check it is a dense figure for this precision."
        ]
    return []


def _mfu_warnings(mfu: float | None) -> list[str]:
    if mfu is None or mfu < MFU_SUSPICIOUSLY_HIGH:
        return []
    return [
        f"mfu {mfu:g} treats the device as if it ran at (nearly) its peak all the time; real "
        "runs reach about 0.3–0.5 end to end, so time and cost would be 2–4x too optimistic "
        "(the commonest budgeting mistake)."
    ]


def _count_warnings(spec: RunSpec, counts: ParamBreakdown | None) -> list[str]:
    if counts is None:
        return []
    notes = []
    if differs(spec.params, counts.total):
        notes.append(f"params {spec.params:.4g} differs from the architecture's exact count "
                     f"{counts.total:,}; the exact count is used.")
    if differs(spec.active_params, counts.active):
        notes.append(f"active_params {spec.active_params:.4g} differs from the architecture's "
                     f"active count {counts.active:,}; the exact count is used.")
    return notes


def _family_warnings(spec: RunSpec) -> list[str]:
    if spec.family == "moe" and spec.architecture is None and spec.active_params is None:
        return ["family is moe but no active_params were given: the FLOPs count every "
                "parameter, as if each token went through every expert. Give the active "
                "parameters per token (or a config)."]
    return []


def _memory_warnings(memory: MemoryEstimate | None, chosen: str | None) -> list[str]:
    if memory is None:
        return []
    if chosen == "none_fits":
        return ["the run does not fit in device memory at any layout tried (ZeRO up to 3, "
                "recomputation up to full, tensor parallelism up to 8 where the devices and heads "
                "allow): use more or larger devices, offload the optimizer state to CPU, train "
                "fewer parameters (LoRA), or shorten the micro-batch or sequence."]
    if chosen == "given" and memory.fits is False:
        return [f"the run does not fit in device memory at ZeRO {memory.zero} as planned."]
    return []


def _range(low_mfu_value: float, high_mfu_value: float) -> Range:
    return (min(low_mfu_value, high_mfu_value), max(low_mfu_value, high_mfu_value))


MemoryFit = Literal["given", "lowest_fitting", "adjusted", "none_fits"]
TRIED_TP = (2, 4, 8)
"""Tensor-parallel degrees the memory check tries when none was given (within one node)."""


def memory_at(
    spec: RunSpec,
    zero: int,
    recompute: Recompute | None = None,
    tp: int | None = None,
    sp: bool | None = None,
) -> MemoryEstimate:
    """Memory per device for ``spec``'s model and layout at ZeRO stage ``zero``, optionally
    with another recomputation mode or tensor-parallel degree."""
    return estimate_memory(MemorySpec(
        config=spec.config, preset=spec.preset,
        params=None if spec.architecture is not None else spec.total_params,
        active_params=None if spec.architecture is not None else spec.active_params,
        trainable_params=spec.trainable_params,
        gpu_count=spec.gpu_count, gpu=spec.gpu, zero=zero, tp=tp or spec.tp, pp=spec.pp,
        sp=spec.sp if sp is None else sp, seq_len=spec.resolved_seq_len,
        micro_batch=spec.micro_batch, recompute=recompute or spec.recompute,
    ))


def _layouts(spec: RunSpec) -> list[tuple[int, Recompute, int, bool, MemoryFit]]:
    """Layouts to try, cheapest first: the user's (lowest ZeRO stage first unless one was
    given), then, for what the user left open, more recomputation and more tensor parallelism."""
    given = spec.model_fields_set
    zeros = [spec.zero] if spec.zero is not None else [0, 1, 2, 3]
    planned: MemoryFit = "given" if spec.zero is not None else "lowest_fitting"
    layouts: list[tuple[int, Recompute, int, bool, MemoryFit]] = [
        (z, spec.recompute, spec.tp, spec.sp, planned) for z in zeros]
    recomputes: list[Recompute] = (
        [spec.recompute] if "recompute" in given else ["none", "selective", "full"])
    heads = spec.architecture.heads if spec.architecture is not None else None
    degrees = [spec.tp] if "tp" in given else [spec.tp, *(
        t for t in TRIED_TP if t > spec.tp and spec.gpu_count % (t * spec.pp) == 0
        and (heads is None or heads % t == 0))]
    for recompute in recomputes:
        for tp in degrees:
            for z in zeros:
                adjusted: MemoryFit = "adjusted"  # repeats of the user's layout are skipped
                layouts.append((z, recompute, tp, spec.sp or tp > 1, adjusted))
    return layouts


def _memory_check(spec: RunSpec) -> tuple[MemoryEstimate, MemoryFit]:
    """Memory per device: at the user's layout if it fits (lowest ZeRO stage first), else at the
    first layout that fits among those the user left open; ``none_fits`` when none does."""
    memory: MemoryEstimate | None = None
    seen: set[tuple[int, str, int, bool]] = set()
    for zero, recompute, tp, sp, kind in _layouts(spec):
        if (zero, recompute, tp, sp) in seen:
            continue
        seen.add((zero, recompute, tp, sp))
        memory = memory_at(spec, zero, recompute, tp, sp)
        if memory.fits is not False:
            return memory, kind
    assert memory is not None  # _layouts always yields the user's layout
    return memory, "none_fits"


def estimate_run(
    spec: RunSpec,
    *,
    flops_per_token: float | None = None,
    flops_method: FlopsMethod = "distillation",
    check_memory: bool = True,
) -> RunEstimate:
    """Estimate FLOPs, time, GPU-hours and dollars for ``spec``, with the MFU band as the range.

    Per-token model FLOPs come from the architecture when there is one (matmul + attention + LM
    head, :func:`~compute_budget.skill.flops.flops_per_token`), else from 6·N_active.
    ``flops_per_token`` replaces them (``flops_method`` says how it was obtained: distillation
    adds the teacher's forward pass 2·N_teacher per token). MFU is the user's, the one an
    achieved hardware TFLOP/s implies (model / hardware FLOPs × achieved / peak), or the prior.
    """
    acc = spec.accelerator
    precision = spec.resolved_precision
    peak = spec.peak_tflops if spec.peak_tflops is not None else acc.peak(precision)
    family = spec.resolved_family
    prior = mfu_prior(family, acc, precision)
    arch = spec.architecture
    counts = spec.param_counts
    seq_len = spec.resolved_seq_len
    n_compute = spec.compute_params

    breakdown: FlopsBreakdown | None = None
    if flops_per_token is not None:
        per_token, method = flops_per_token, flops_method
        terms = rule_of_thumb(per_token / FLOPS_PER_PARAM_PER_TOKEN)
    elif arch is not None:
        breakdown = flops_per_token_of(arch, seq_len)
        per_token, method, terms = breakdown.total, "architecture", breakdown
    elif spec.seq_len is not None:
        # A context was given but no architecture: attention from a shape guessed from N.
        shape = guess_shape(n_compute)
        breakdown = rule_of_thumb(n_compute, layers=shape.layers, hidden=shape.hidden,
                                  seq_len=seq_len)
        per_token, method, terms = breakdown.total, "6N+attention", breakdown
    else:
        terms = rule_of_thumb(n_compute)
        per_token, method = terms.total, "6N"
    frozen = 0.0
    if spec.trainable_params is not None and flops_per_token is None:
        # Frozen weights still pass gradients back to their inputs (2 FLOPs) but compute none
        # for themselves (the other 2 of the backward's 4): Kaplan et al. 2020's 6 → 4.
        frozen = max(0.0, n_compute - spec.trainable_params)
        per_token -= FROZEN_SAVING_PER_PARAM * frozen
    hardware = hardware_flops_per_token(terms, spec.recompute)
    hw_per_token = per_token * hardware.hardware_over_model

    if spec.achieved_tflops is not None:
        mfu = mfu_from_achieved(spec.achieved_tflops, peak, per_token, hw_per_token)
        mfu_source: Literal["user", "prior", "achieved"] = "achieved"
    elif spec.mfu is not None:
        mfu, mfu_source = spec.mfu, "user"
    else:
        mfu, mfu_source = prior.central, "prior"
    # The band: the prior's; a given or measured MFU is an upper bound on end-to-end speed, so
    # it caps the fast end (and widens the slow end if it lies below the prior).
    band = ((prior.low, prior.high) if mfu_source == "prior"
            else (min(prior.low, mfu), mfu))

    quote = acc.default_price
    if spec.usd_per_gpu_hour is not None:
        price: float | None = spec.usd_per_gpu_hour
        price_source: Literal["user", "catalog"] | None = "user"
    elif quote is not None:
        price, price_source = quote.usd_per_gpu_hour, "catalog"
    else:
        price, price_source = None, None

    flops = per_token * spec.tokens
    args = (flops, spec.gpu_count, peak)
    point = cost_from_flops(*args, mfu, price, spec.failure_budget)
    slow = cost_from_flops(*args, band[0], price, spec.failure_budget)
    fast = cost_from_flops(*args, band[1], price, spec.failure_budget)

    def dollars(field: str) -> Range | None:
        lo, hi = getattr(fast, field), getattr(slow, field)
        return None if lo is None or hi is None else _range(lo, hi)

    memory, chosen = _memory_check(spec) if check_memory else (None, None)
    warnings = (_mfu_warnings(spec.mfu) + _peak_warnings(spec, acc, precision)
                + _count_warnings(spec, counts) + _family_warnings(spec)
                + _memory_warnings(memory, chosen))
    return RunEstimate(
        **point.model_dump(),
        params=spec.total_params,
        active_params=(spec.active_params if counts is None
                       else float(counts.active) if counts.active < counts.total else None),
        tokens=spec.tokens,
        trainable_params=spec.trainable_params,
        frozen_flops_saved_per_token=FROZEN_SAVING_PER_PARAM * frozen,
        flops_per_token=per_token,
        flops_method=method,
        flops_breakdown=breakdown,
        param_breakdown=counts,
        architecture_name=arch.name if arch is not None else None,
        architecture_source=arch.source if arch is not None else None,
        defaults_used=arch.defaults_used if arch is not None else (),
        seq_len=seq_len,
        seq_len_inferred=spec.seq_len is None,
        recompute=spec.recompute,
        hardware_flops=hw_per_token * spec.tokens,
        hardware_flops_per_token=hw_per_token,
        hfu=mfu * hardware.hardware_over_model,
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
        price_source=price_source,
        price_kind=quote.kind if price_source == "catalog" and quote else None,
        price_as_of=quote.as_of if price_source == "catalog" and quote else None,
        price_reference=quote.source if price_source == "catalog" and quote else None,
        memory=memory,
        memory_fit=chosen,
        warnings=warnings,
    )
