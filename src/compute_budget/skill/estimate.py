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

from .catalog import Accelerator, Precision, get_accelerator, load_catalog
from .errors import InputError
from .lesson import FLOPS_PER_PARAM_PER_TOKEN
from .mfu import MfuPrior, ModelFamily, mfu_prior
from .quantities import ParamCount, Price, TflopsPerDevice, TokenCount, check_positive

__all__ = [
    "DEFAULT_FAILURE_BUDGET",
    "CostEstimate",
    "Mfu",
    "RunEstimate",
    "RunSpec",
    "cost_from_flops",
    "estimate_run",
    "estimate_run_cost",
]

DEFAULT_FAILURE_BUDGET = 1.5
"""Multiplier on nominal cost for failures and re-runs (the stage-3 compute-budget skill)."""

SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
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


class RunSpec(BaseModel):
    """What the user plans to run: the four inputs of step 1 and the optional overrides."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    params: ParamCount = Field(
        description="Total parameters N (e.g. 7e9 or '7B'); for MoE the total across experts.",
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
        description="Model FLOPs utilisation in (0, 1]. Default: the prior for the model family.",
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
                    "active_params < params, else dense.",
    )
    failure_budget: FailureBudget = DEFAULT_FAILURE_BUDGET

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, value: str) -> str:
        return get_accelerator(value).key

    @model_validator(mode="after")
    def _active_not_above_total(self) -> RunSpec:
        if self.active_params is not None and self.active_params > self.params:
            raise InputError(
                "active_params",
                self.active_params,
                f"at most the total params ({self.params:.4g})",
            )
        if self.peak_tflops is None:
            self.accelerator.peak(self.resolved_precision)  # raises when the peak is unknown
        return self

    @property
    def accelerator(self) -> Accelerator:
        """The catalog entry for ``gpu``."""
        return get_accelerator(self.gpu)

    @property
    def resolved_family(self) -> ModelFamily:
        """The family given, or MoE when fewer parameters are active than exist, else dense."""
        if self.family is not None:
            return self.family
        if self.active_params is not None and self.active_params < self.params:
            return "moe"
        return "dense"

    @property
    def resolved_precision(self) -> Precision:
        """The precision given, or the device's default training precision."""
        return self.precision or self.accelerator.default_precision

    @property
    def compute_params(self) -> float:
        """Parameters that do work per token: active parameters for MoE, else all."""
        return self.active_params if self.active_params is not None else self.params


class RunEstimate(CostEstimate):
    """A full estimate for a run spec: the cost, the range, the assumptions and their sources."""

    params: float = Field(description="Total parameters N.")
    active_params: float | None = Field(description="Active parameters per token (MoE).")
    tokens: float = Field(description="Training tokens T.")
    flops_per_token: float = Field(description="Model FLOPs per training token (6·N_active).")
    flops_method: Literal["6N", "distillation"] = Field(
        description="How FLOPs were counted: 6·N_active, or student 6·N + teacher forward 2·N_t."
    )
    family: ModelFamily = Field(description="Model family used for the MFU prior.")
    family_inferred: bool = Field(description="True when the family was inferred, not given.")
    accelerator: str = Field(description="Full accelerator name.")
    accelerator_key: str = Field(description="Catalog key of the accelerator.")
    precision: Precision = Field(description="Precision whose dense peak is used.")
    precision_inferred: bool = Field(description="True when the precision is the default.")
    peak_source: str = Field(description="Where the peak comes from (user or catalog source).")
    catalog_compiled: str = Field(description="Date the catalog was compiled.")
    mfu_source: Literal["user", "prior"] = Field(description="Whether MFU was given or a prior.")
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


def _range(low_mfu_value: float, high_mfu_value: float) -> Range:
    return (min(low_mfu_value, high_mfu_value), max(low_mfu_value, high_mfu_value))


def estimate_run(spec: RunSpec, *, flops_per_token: float | None = None) -> RunEstimate:
    """Estimate FLOPs, time, GPU-hours and dollars for ``spec``, with the MFU band as the range.

    ``flops_per_token`` replaces 6·N_active (used for distillation, where the teacher's forward
    pass adds 2·N_teacher per token).
    """
    acc = spec.accelerator
    precision = spec.resolved_precision
    peak = spec.peak_tflops if spec.peak_tflops is not None else acc.peak(precision)
    family = spec.resolved_family
    prior = mfu_prior(family, acc, precision)
    mfu = spec.mfu if spec.mfu is not None else prior.central
    # The band: the prior's, widened to include a user's MFU that falls outside it.
    band = (min(prior.low, mfu), max(prior.high, mfu))

    quote = acc.default_price
    if spec.usd_per_gpu_hour is not None:
        price: float | None = spec.usd_per_gpu_hour
        price_source: Literal["user", "catalog"] | None = "user"
    elif quote is not None:
        price, price_source = quote.usd_per_gpu_hour, "catalog"
    else:
        price, price_source = None, None

    per_token = (flops_per_token if flops_per_token is not None
                 else FLOPS_PER_PARAM_PER_TOKEN * spec.compute_params)
    flops = per_token * spec.tokens
    args = (flops, spec.gpu_count, peak)
    point = cost_from_flops(*args, mfu, price, spec.failure_budget)
    slow = cost_from_flops(*args, band[0], price, spec.failure_budget)
    fast = cost_from_flops(*args, band[1], price, spec.failure_budget)

    def dollars(field: str) -> Range | None:
        lo, hi = getattr(fast, field), getattr(slow, field)
        return None if lo is None or hi is None else _range(lo, hi)

    warnings = _mfu_warnings(spec.mfu) + _peak_warnings(spec, acc, precision)
    return RunEstimate(
        **point.model_dump(),
        params=spec.params,
        active_params=spec.active_params,
        tokens=spec.tokens,
        flops_per_token=per_token,
        flops_method="6N" if flops_per_token is None else "distillation",
        family=family,
        family_inferred=spec.family is None,
        accelerator=acc.name,
        accelerator_key=acc.key,
        precision=precision,
        precision_inferred=spec.precision is None,
        peak_source="given by you" if spec.peak_tflops is not None else acc.spec_source,
        catalog_compiled=load_catalog().compiled,
        mfu_source="user" if spec.mfu is not None else "prior",
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
        warnings=warnings,
    )
