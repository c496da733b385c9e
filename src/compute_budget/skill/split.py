"""The budget-split table of the scaling-and-budgets lesson.

For a budget of C FLOPs, each row is a model size N with the tokens it can afford,
D = C / (6·N), the tokens per parameter D / N, and the time the budget takes at a sustained
rate: seconds = C / (FLOP/s · utilisation). Every row costs the same; the table shows the
trade-off between size and data. The ratio row splits C so that D = ratio·N (20 tokens per
parameter is compute-optimal in Hoffmann et al. 2022, for their data and setup).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .catalog import get_accelerator
from .cost import DEFAULT_FAILURE_BUDGET, FailureBudget, Mfu
from .errors import InputError
from .lesson import split_budget, tokens_for_budget, training_seconds
from .mfu import mfu_prior
from .quantities import FlopCount, ParamCount, PositiveQuantity, Price, UsdAmount

__all__ = ["COMPUTE_OPTIMAL_RATIO", "BudgetSplit", "SplitRow", "SplitSpec", "budget_split"]

RateBasis = Literal["none", "your_rate", "gpu_with_prior", "gpu_with_your_mfu"]

COMPUTE_OPTIMAL_RATIO = 20.0
"""Tokens per parameter at the compute optimum (Hoffmann et al. 2022, "Chinchilla")."""


class SplitSpec(BaseModel):
    """A compute budget to split, and the rate at which it is spent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    budget_flops: FlopCount | None = Field(
        default=None, description="Compute budget C in FLOPs (e.g. 6e14 or '1e24')."
    )
    budget_usd: UsdAmount | None = Field(
        default=None,
        description="Or a budget in US dollars, turned into FLOPs with gpu, gpu_count, MFU and "
                    "price, after setting the failure budget aside.",
    )
    failure_budget: FailureBudget = DEFAULT_FAILURE_BUDGET
    ratio: PositiveQuantity = Field(
        default=COMPUTE_OPTIMAL_RATIO,
        description="Tokens per parameter for the highlighted split (default 20, Chinchilla).",
    )
    params: list[ParamCount] | None = Field(
        default=None, max_length=50,
        description="Model sizes for the rows (default: four decades around the optimum).",
    )
    flops_per_sec: PositiveQuantity | None = Field(
        default=None,
        description="FLOP/s of the whole machine, for the time columns (the lesson uses 1e12); "
                    "or give gpu. Without either, no time is shown.",
    )
    utilization: Mfu = Field(default=1.0)
    gpu: str | None = Field(default=None, description="Accelerator to derive the FLOP/s from.")
    gpu_count: int = Field(default=1, ge=1, le=10_000_000, description="Number of devices.")
    mfu: Mfu | None = Field(default=None, description="MFU with gpu (default: dense prior).")
    usd_per_gpu_hour: Price | None = Field(
        default=None, description="Price for budget_usd (default: catalog)."
    )

    @model_validator(mode="after")
    def _one_budget(self) -> SplitSpec:
        if (self.budget_flops is None) == (self.budget_usd is None):
            raise InputError("budget_flops", self.budget_flops,
                             "exactly one of budget_flops or budget_usd")
        if self.budget_usd is not None and self.gpu is None:
            raise InputError("gpu", None, "an accelerator, to turn budget_usd into FLOPs")
        if self.gpu is not None and self.utilization != 1.0:
            raise InputError("utilization", self.utilization,
                             "only with flops_per_sec; with gpu give mfu instead")
        if self.gpu is not None and self.flops_per_sec is not None:
            raise InputError("flops_per_sec", self.flops_per_sec,
                             "not together with gpu (the FLOP/s then come from the device)")
        if self.gpu is not None:
            acc = get_accelerator(self.gpu)
            acc.peak(acc.default_precision)
            if self.budget_usd is not None and self.usd_per_gpu_hour is None \
                    and acc.default_price is None:
                raise InputError("usd_per_gpu_hour", None,
                                 f"a price: the catalog has none for {acc.name}")
        if self.gpu is None and self.mfu is not None:
            raise InputError("mfu", self.mfu, "only with gpu (otherwise use utilization)")
        return self


class SplitRow(BaseModel):
    """One way to spend the budget."""

    model_config = ConfigDict(frozen=True)

    params: float = Field(description="Parameters N.")
    tokens: float = Field(description="Tokens D = C / (6·N).")
    tokens_per_param: float = Field(description="D / N.")
    seconds: float | None = Field(
        description="Seconds to spend C at the sustained FLOP/s; None when no rate was given."
    )
    hours: float | None = Field(description="The same in hours; None when no rate was given.")


class BudgetSplit(BaseModel):
    """The split table for one budget."""

    model_config = ConfigDict(frozen=True)

    budget_flops: float = Field(description="Compute budget C in FLOPs.")
    budget_usd: float | None = Field(description="The dollar budget it came from, if any.")
    sustained_flops_per_sec: float | None = Field(
        description="FLOP/s actually achieved (peak × use); None when no rate was given."
    )
    failure_budget: float | None = Field(
        description="Multiplier set aside from budget_usd for failures, if a dollar budget."
    )
    rate_basis: RateBasis = Field(description="Where the FLOP/s comes from.")
    utilization: float | None = Field(description="Share of the given FLOP/s achieved.")
    accelerator: str | None = Field(description="Device the FLOP/s is derived from, if any.")
    gpu_count: int | None = Field(description="Number of devices, with an accelerator.")
    peak_tflops_per_gpu: float | None = Field(description="Dense peak per device, TFLOP/s.")
    mfu: float | None = Field(description="MFU applied to the peak, with an accelerator.")
    mfu_basis: str | None = Field(description="The MFU prior's basis, when the prior is used.")
    usd_per_gpu_hour: float | None = Field(description="Price used for budget_usd, if any.")
    ratio: float = Field(description="Tokens per parameter of the highlighted split.")
    ratio_split: SplitRow = Field(description="The split with D = ratio·N.")
    rows: list[SplitRow]


def _row(c: float, n: float, rate: float | None) -> SplitRow:
    d = tokens_for_budget(c, n)
    seconds = None if rate is None else training_seconds(c, rate)
    return SplitRow(params=n, tokens=d, tokens_per_param=d / n, seconds=seconds,
                    hours=None if seconds is None else seconds / 3600)


def _default_sizes(c: float) -> list[float]:
    # Four decades: two below the size where D = N, one above (the lesson's 1e5 … 1e8 for 6e14).
    middle = math.floor(math.log10(math.sqrt(c / 6)))
    return [10.0**k for k in range(middle - 2, middle + 2)]


def budget_split(spec: SplitSpec) -> BudgetSplit:
    """Rows of N with D = C/(6N), tokens per parameter and time, plus the ratio split."""
    price = None
    rate_basis: RateBasis
    mfu: float | None = None
    mfu_basis = None
    peak = None
    accelerator = None
    if spec.gpu is not None:
        acc = get_accelerator(spec.gpu)
        precision = acc.default_precision
        peak = acc.peak(precision)
        accelerator = acc.name
        if spec.mfu is not None:
            mfu, rate_basis = spec.mfu, "gpu_with_your_mfu"
        else:
            prior = mfu_prior("dense", acc, precision)
            mfu, mfu_basis, rate_basis = prior.central, prior.basis, "gpu_with_prior"
        rate = spec.gpu_count * peak * 1e12 * mfu
        quote = acc.default_price
        price = spec.usd_per_gpu_hour or (quote.usd_per_gpu_hour if quote else None)
    elif spec.flops_per_sec is not None:
        rate, rate_basis = spec.flops_per_sec * spec.utilization, "your_rate"
    else:
        rate, rate_basis = None, "none"
    if spec.budget_usd is not None and price is not None and rate is not None:
        # The failure budget is set aside first, so the split matches a costed run's dollars.
        wall_seconds = spec.budget_usd / spec.failure_budget / price / spec.gpu_count * 3600
        c = wall_seconds * rate
    elif spec.budget_flops is not None:
        c = spec.budget_flops
    else:  # SplitSpec guarantees one budget and a price for a dollar budget
        raise InputError("budget_usd", spec.budget_usd, "a price and a device to convert it")
    n_opt, _ = split_budget(c, spec.ratio)
    sizes = spec.params or _default_sizes(c)
    return BudgetSplit(
        budget_flops=c,
        budget_usd=spec.budget_usd,
        sustained_flops_per_sec=rate,
        failure_budget=spec.failure_budget if spec.budget_usd is not None else None,
        rate_basis=rate_basis,
        utilization=spec.utilization if spec.gpu is None else None,
        accelerator=accelerator,
        gpu_count=spec.gpu_count if spec.gpu is not None else None,
        peak_tflops_per_gpu=peak,
        mfu=mfu,
        mfu_basis=mfu_basis,
        usd_per_gpu_hour=price if spec.budget_usd is not None else None,
        ratio=spec.ratio,
        ratio_split=_row(c, n_opt, rate),
        rows=[_row(c, n, rate) for n in sizes],
    )
