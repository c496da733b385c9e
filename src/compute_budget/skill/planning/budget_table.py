"""The budget-split table of the scaling-and-budgets lesson, priced like a run estimate.

For a budget of C FLOPs, each row is a model size N with the tokens it can afford,
D = C / (6·N), and the tokens per parameter D / N. Every row spends the same FLOPs; the table
shows the trade-off between size and data. The ratio row splits C so that D = ratio·N (20 tokens
per parameter is compute-optimal in Hoffmann et al. 2022, for their data and setup).

Time and money come from the run estimate's cost formula on a named accelerator or at a given
FLOP/s (:mod:`.budget_pricing`, which also turns a dollar budget into C FLOPs at the central MFU
and C_safe at the slow end of the MFU band, after the failure budget is set aside). The ratio
split of C is the best size if the run reaches the median MFU; at the slow end of the band it
costs budget × central / low. The safe split is the ratio split of C_safe: it stays within the
budget even at the slow end. For a dollar budget both are given as the replies show them, N and
D rounded down to three digits and priced as such (:mod:`.budget_shown`): the numbers a user
reads, run through the estimate or the verdict on the same devices, fit the budget.

With the MFU prior each row runs at the prior for its size, so the same FLOPs cost more on a
smaller model; below and above the calibrated sizes the prior stops changing, and adjacent rows
there take the same days and cost (``mfu_clamps``; one row in ``row_groups`` when they also fit
alike). With a dollar budget each row says whether it stays within it (``budget_status``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from ..errors import ComputeBudgetError, InputError
from ..estimate import MAX_PLAN_DAYS, estimate_run
from ..estimate_result import LayoutCost, MfuUsed
from ..hardware.catalog import (
    Accelerator,
    DeviceUnit,
    Precision,
    PriceUsed,
    get_accelerator,
    load_catalog,
    source_label,
)
from ..hardware.measured import measured_mfu
from ..hardware.mfu import mfu_prior
from ..hardware.mfu_table import load_mfu_priors
from ..hardware.own_runs import Calibration, own_runs_mfu, own_runs_prior
from ..run_spec import RunSpec
from ..scaling.lesson import split_budget
from ..vocabulary import FiniteResult
from .budget_pricing import (
    BudgetRowGroup,
    BudgetTableRow,
    Machine,
    default_sizes,
    flops_for_usd,
    group_rows,
    mfu_clamps,
    price_row,
)
from .budget_shown import shown_split
from .budget_spec import DEFAULT_GPU_COUNT, BudgetTableSpec

__all__ = [
    "DEFAULT_GPU_COUNT",
    "BudgetRowGroup",
    "BudgetTable",
    "BudgetTableRow",
    "BudgetTableSpec",
    "budget_table",
]

RateBasis = Literal["none", "your_rate", "gpu_with_prior", "gpu_with_your_mfu",
                    "gpu_with_own_runs", "gpu_with_probe"]

class BudgetTable(FiniteResult):
    """The split table for one budget."""

    model_config = ConfigDict(frozen=True)

    budget_flops: float = Field(
        description="Compute budget C in FLOPs (for a dollar budget: what it buys at the "
                    "central MFU)."
    )
    budget_usd: float | None = Field(description="The dollar budget it came from, if any.")
    sustained_flops_per_sec: float | None = Field(
        description="FLOP/s actually achieved at the central MFU (peak × MFU); None when no "
                    "rate was given."
    )
    failure_budget: float | None = Field(
        description="Multiplier for failures and re-runs: set aside from budget_usd and applied "
                    "to the dollars; None without an accelerator."
    )
    rate_basis: RateBasis = Field(description="Where the FLOP/s comes from.")
    utilization: float | None = Field(
        description="Deprecated, the same as mfu when the rate is flops_per_sec; None otherwise."
    )
    accelerator: str | None = Field(description="Device the FLOP/s is derived from, if any.")
    device_unit: DeviceUnit = Field(
        default="GPU", description="What the price's device-hours count: GPU-hours, or "
                                   "chip-hours (TPU, Trainium, Gaudi).")
    gpu_count: int | None = Field(description="Number of devices, with an accelerator.")
    gpu_count_source: Literal["user", "default"] | None = Field(
        description="Whether the device count was given or the default (one 8-device server)."
    )
    precision: Precision | None = Field(description="Precision whose dense peak is used.")
    peak_tflops_per_gpu: float | None = Field(description="Dense peak per device, TFLOP/s.")
    peak_source: str | None = Field(description="Catalog source of the peak.")
    peak_label: str | None = Field(
        default=None, description="That source in a few words, for a short reply.")
    catalog_compiled: str | None = Field(description="Date the catalog was compiled.")
    mfu: float | None = Field(
        description="Share of the peak achieved at the central estimate: the MFU with an "
                    "accelerator, the utilisation with flops_per_sec."
    )
    mfu_used: MfuUsed | None = Field(
        description="Where the MFU comes from and its band [low, high] (the dense prior's at "
                    "the ratio split's size, or (min(prior low, your MFU), your MFU)); None "
                    "without an accelerator.")
    mfu_as_of: str | None = Field(
        default=None,
        description="Date of the calibration set the MFU prior rests on; None without an "
                    "accelerator or for the flat prior.")
    usd_per_gpu_hour: float | None = Field(
        description="Price in US dollars per device-hour; None without an accelerator or price."
    )
    price: PriceUsed | None = Field(
        description="The price and where it comes from; None without an accelerator.")
    ratio: float = Field(description="Tokens per parameter of the highlighted split.")
    ratio_source: Literal["user", "default"] = Field(
        default="default",
        description="Whether the ratio was given or the default (20: Hoffmann et al. 2022).")
    ratio_split: BudgetTableRow = Field(
        description="The split of budget_flops with D = ratio·N: for a dollar budget, the best "
                    "size if the run reaches the central MFU, N and D rounded down to the three "
                    "digits shown so that they cost at most budget_usd (flops a little under "
                    "budget_flops)."
    )
    safe_split: BudgetTableRow | None = Field(
        description="With a dollar budget: the split with D = ratio·N that costs at most "
                    "budget_usd (with failures) even at the slow end of the MFU band, rounded "
                    "down as ratio_split; None for a FLOP budget."
    )
    rows: list[BudgetTableRow] = Field(description="Model sizes N spending budget_flops each.")
    row_groups: list[BudgetRowGroup] = Field(
        default_factory=list,
        description="The rows by distinct outcome, in order: adjacent rows the MFU prior "
                    "prices alike (below or above its calibrated sizes) with the same time, "
                    "cost and fit form one group; every other row is a group of its own.")
    mfu_clamps: list[BudgetRowGroup] = Field(
        default_factory=list,
        description="Runs of two or more adjacent rows priced at one MFU because the prior's "
                    "size term stops at mfu_prior_params, the end of its calibrated sizes: the "
                    "same days and cost (one row in row_groups when their fit matches too).")
    max_plan_days: float = Field(
        description="Longest wall time a plan is taken to survive (as in the run estimate)."
    )


_NO_DEVICE: dict[str, Any] = dict.fromkeys((
    "accelerator", "gpu_count", "gpu_count_source", "precision", "peak_tflops_per_gpu",
    "peak_source", "peak_label", "catalog_compiled", "mfu_used", "mfu_as_of",
    "usd_per_gpu_hour", "price", "failure_budget"))
"""The accelerator fields of a split without an accelerator."""


def _on_accelerator(spec: BudgetTableSpec, acc: Accelerator
                    ) -> tuple[Machine, RateBasis, dict[str, Any]]:
    """The machine of ``gpu_count`` devices of ``acc``, the rate basis and the header fields
    (the MFU's are added once the size is known, :func:`_mfu_fields`)."""
    precision = acc.default_precision
    peak = acc.peak(precision)
    prior, runs = mfu_prior("dense", acc, precision), spec.calibration
    rate_basis: RateBasis = "gpu_with_prior" if runs is None else "gpu_with_own_runs"
    given = spec.mfu
    measured = None if spec.probe is None else measured_mfu(spec.probe, peak, 1.0)
    if measured is not None:
        given, rate_basis = measured.step_mfu, "gpu_with_probe"
    if given is not None:
        # A given or measured MFU caps the fast end and widens the slow end if below the prior
        # (as in estimate_run).
        mfu, band = given, (min(prior.low, given), given)
        rate_basis = "gpu_with_your_mfu" if measured is None else rate_basis
    else:
        level = own_runs_prior(runs, prior)
        mfu, band = level.central, (level.low, level.high)
    gpus = spec.gpu_count if spec.gpu_count is not None else DEFAULT_GPU_COUNT
    chosen = acc.price(spec.usd_per_gpu_hour, gpu_count=gpus)
    machine = Machine(gpus, peak, mfu, band, chosen.usd_per_gpu_hour, spec.failure_budget,
                      acc.key, prior_at=None if given is not None else (
                          lambda n: own_runs_prior(runs, mfu_prior("dense", acc, precision,
                                                                   params=n))),
                      layout_at=_layout_of(acc.key, gpus, precision, runs))
    hardware = dict(
        accelerator=acc.name, device_unit=acc.device_unit, gpu_count=gpus,
        gpu_count_source="user" if spec.gpu_count is not None else "default",
        precision=precision, peak_tflops_per_gpu=peak, peak_source=acc.spec_source,
        peak_label=f"{source_label(acc.spec_source)}, {acc.spec_as_of}",
        catalog_compiled=load_catalog().compiled,
        usd_per_gpu_hour=chosen.usd_per_gpu_hour, price=chosen,
        failure_budget=spec.failure_budget, mfu_used=MfuUsed(
            origin="measured" if measured is not None else "user" if spec.mfu is not None
            else "prior" if runs is None else "own_runs",
            range=band, prior=prior, family="dense", family_inferred=True,
            convention="6n" if given is not None else None, given=given,
            achieved_tflops=None if measured is None else measured.achieved_tflops,
            recompute_divided=False, probe=measured),
    )
    return machine, rate_basis, hardware


def _layout_of(gpu: str, gpus: int, precision: Precision, runs: Calibration | None
               ) -> Callable[[float, float], LayoutCost | None]:
    """The layout cost of a model of N parameters spending C FLOPs on ``gpus`` × ``gpu``: the
    run estimate's (one computation of it), remembered per (N, C)."""
    known: dict[tuple[float, float], LayoutCost | None] = {}

    def layout(params: float, flops: float) -> LayoutCost | None:
        key = (params, flops)
        if key not in known:
            try:
                run = RunSpec(params=params, tokens=max(1.0, flops / (6 * params)), gpu=gpu,
                              gpu_count=gpus, precision=precision, calibration=runs)
                known[key] = estimate_run(run, in_time=False).layout_cost
            except (ComputeBudgetError, ValidationError):
                known[key] = None  # a split outside what a run spec takes: priced as is
        return known[key]

    return layout


def _mfu_fields(used: MfuUsed, machine: Machine, n_opt: float, c: float,
                runs: Calibration | None) -> dict[str, Any]:
    """The header's MFU fields for the ratio split of ``n_opt`` parameters spending ``c``: with
    the prior, the prior at that size (shrunk toward ``runs``) divided by its layout's cost, and
    its band (as ``estimate_run`` uses for that run)."""
    if machine.prior_at is None:
        prior = used.prior
    else:
        acc = get_accelerator(machine.gpu or "")
        prior = mfu_prior("dense", acc, acc.default_precision, params=n_opt)  # as prior_at's
        own = None if runs is None else own_runs_mfu(runs, prior)
        used = used.model_copy(update=dict(range=machine.at(n_opt, c).band, prior=prior,
                                           own_runs=own))
    as_of = None if prior.scope == "flat" else load_mfu_priors().as_of
    return dict(mfu_used=used, mfu_as_of=as_of)


def _machine(spec: BudgetTableSpec) -> tuple[Machine | None, RateBasis, dict[str, Any]]:
    """The machine the budget is spent on (None without a rate), the rate basis and the
    header's accelerator fields."""
    if spec.gpu is not None:
        return _on_accelerator(spec, get_accelerator(spec.gpu))
    if spec.flops_per_sec is not None:
        # The machine's FLOP/s as one device of that peak, so the same formula gives the time.
        mfu = spec.mfu if spec.mfu is not None else 1.0
        return (Machine(1, spec.flops_per_sec / 1e12, mfu, None, None, spec.failure_budget),
                "your_rate", {})
    return None, "none", {}


def _budget(spec: BudgetTableSpec, machine: Machine | None
            ) -> tuple[float, BudgetTableRow | None]:
    """The budget C in FLOPs and, for a dollar budget, the safe split (as shown)."""
    if spec.budget_usd is not None and machine is not None and machine.band is not None:
        c = flops_for_usd(spec.budget_usd, spec.ratio, machine, slow=False)
        c_safe = flops_for_usd(spec.budget_usd, spec.ratio, machine, slow=True)
        return c, shown_split(c_safe, spec.ratio, machine, spec.budget_usd, slow=True)
    if spec.budget_flops is not None:
        return spec.budget_flops, None
    # BudgetTableSpec guarantees one budget, and a device and price for a dollar budget
    raise InputError("budget_usd", spec.budget_usd, "a price and a device to convert it")


def _ratio_split(spec: BudgetTableSpec, machine: Machine | None, c: float) -> BudgetTableRow:
    """The ratio split of C: for a dollar budget as shown (:func:`.budget_shown.shown_split`,
    N and D rounded down to the digits the replies show and within the budget at the central
    MFU); for a FLOP budget exactly, 6·N·D = C."""
    if spec.budget_usd is not None and machine is not None:
        return shown_split(c, spec.ratio, machine, spec.budget_usd, slow=False)
    return price_row(c, split_budget(c, spec.ratio)[0], machine, spec.budget_usd)


def budget_table(spec: BudgetTableSpec) -> BudgetTable:
    """Rows of N with D = C/(6N), tokens per parameter, time and money, plus the ratio split
    and, for a dollar budget, the split that stays within it at the slow end of the MFU band."""
    machine, rate_basis, hardware = _machine(spec)
    c, safe_split = _budget(spec, machine)
    best = _ratio_split(spec, machine, c)
    sizes = spec.params or default_sizes(c)
    rows = [price_row(c, n, machine, spec.budget_usd) for n in sizes]
    if machine is not None and "mfu_used" in hardware:
        hardware |= _mfu_fields(hardware["mfu_used"], machine, best.params, best.flops,
                                spec.calibration)
    # the header's rate: the ratio split's
    at_opt = None if machine is None else machine.at(best.params, best.flops)
    rate = None if at_opt is None else at_opt.cost(best.flops, at_opt.mfu)
    return BudgetTable(
        **(_NO_DEVICE | hardware),
        budget_flops=c,
        budget_usd=spec.budget_usd,
        sustained_flops_per_sec=None if rate is None else best.flops / rate.wall_seconds,
        rate_basis=rate_basis,
        utilization=at_opt.mfu if at_opt is not None and rate_basis == "your_rate" else None,
        mfu=None if at_opt is None else at_opt.mfu,
        ratio=spec.ratio,
        ratio_source="user" if "ratio" in spec.model_fields_set else "default",
        ratio_split=best,
        safe_split=safe_split,
        rows=rows,
        row_groups=group_rows(rows),
        mfu_clamps=mfu_clamps(rows),
        max_plan_days=MAX_PLAN_DAYS,
    )
