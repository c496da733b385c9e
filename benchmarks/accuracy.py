"""Accuracy of the GPU-hour estimate on published runs it was not fitted to: grouped CV first.

    uv run python -m benchmarks.accuracy   # exit 1 when the targets are missed

For every usable run of the calibration set (``src/compute_budget/skill/data/
calibration_runs.csv``: tokens, GPU-hours and hardware known), the estimate's GPU-hours against
the reported ones: the error ``|log10(estimate / reported)|``, whether the band covers the
reported value, and the band's width (high / low). Five methods, each given the same run spec
(parameters, active parameters, tokens, device, precision as the authors state it):

- **grouped CV, by organisation**: the whole derivation (:func:`.derive_priors.derive`: the
  form, the levels and the bands, itself chosen by grouped cross-validation on what is left) is
  redone without the run's organisation, and the run estimated with that prior — what a team
  whose runs are not in the set can expect. The targets (:data:`TARGETS`) are checked on it;
- **grouped CV, by model family**: the same, one model family held out at a time;
- **calibrated, in-sample**: ``estimate_run`` with the packaged prior (fitted to every run);
- **peak**: ``mfu=1.0``, the device's dense peak with no MFU (a band of width 1);
- **flat**: ``mfu=0.4`` with the band 0.3–0.5 computed directly (a user MFU would otherwise
  widen the package's band to include the prior).

The summary (median error, coverage, median band width) is printed for the runs the derivation
uses (on which the targets are checked) and for every usable run, then per hardware generation
and per architecture class, the candidate forms of the prior with their held-out error, a
per-run table and the skipped rows. :func:`run_benchmark` returns the same numbers for tests.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from compute_budget.skill.estimate import estimate_run
from compute_budget.skill.hardware.mfu import prior_from_table
from compute_budget.skill.hardware.mfu_table import MfuPriorTable, load_mfu_priors
from compute_budget.skill.run_spec import RunSpec

from .calibration_groups import GROUPINGS, Grouping, lineage
from .derive_priors import CSV_PATH, PublishedRun, derive, load_runs, usable_runs

__all__ = [
    "BY_FAMILY",
    "BY_ORGANISATION",
    "CALIBRATED",
    "FLAT",
    "FLAT_BAND",
    "METHODS",
    "PEAK",
    "TARGETS",
    "AccuracyReport",
    "Estimate",
    "RunResult",
    "Summary",
    "accuracy_summary",
    "render",
    "run_benchmark",
]

BY_ORGANISATION = "grouped_organisation"
BY_FAMILY = "grouped_family"
CALIBRATED = "calibrated"
PEAK = "peak"
FLAT = "flat"
METHODS = (BY_ORGANISATION, BY_FAMILY, CALIBRATED, PEAK, FLAT)
GROUPED: dict[Grouping, str] = {"organisation": BY_ORGANISATION, "family": BY_FAMILY}
LABELS = {
    BY_ORGANISATION: "Calibrated prior, grouped CV: one organisation held out",
    BY_FAMILY: "Calibrated prior, grouped CV: one model family held out",
    CALIBRATED: "Calibrated prior, in-sample",
    PEAK: "Baseline: peak FLOP/s, no MFU",
    FLAT: "Baseline: flat MFU 0.4, band 0.3–0.5",
}
TARGETS = {"median_error": 0.08, "coverage": 0.85, "median_width": 2.5}
"""Issue 17's targets, under both groupings, on the runs the derivation uses: median |log10
error| at most 0.08, band coverage at least 85%, median band width at most 2.5x."""
FLAT_BAND = (0.3, 0.4, 0.5)
"""Low, central and high MFU of the flat baseline."""


@dataclass(frozen=True)
class Estimate:
    """One method's GPU-hours for one run, with its band."""

    gpu_hours: float
    low: float
    high: float
    reported: float

    @property
    def error(self) -> float:
        """|log10(estimate / reported)|: 0.1 is a factor of 1.26, 0.3 a factor of 2."""
        return abs(math.log10(self.gpu_hours / self.reported))

    @property
    def covered(self) -> bool:
        return self.low <= self.reported <= self.high

    @property
    def width(self) -> float:
        """High / low of the band (= high / low MFU)."""
        return self.high / self.low


@dataclass(frozen=True)
class RunResult:
    """A run of the calibration set and every method's estimate for it."""

    run: PublishedRun
    reported_gpu_hours: float
    end_to_end_mfu: float
    estimates: dict[str, Estimate]


@dataclass(frozen=True)
class Summary:
    """Median error, coverage and median band width of one method over a set of runs."""

    method: str
    n: int
    median_error: float
    mean_error: float
    covered: int
    median_width: float

    @property
    def coverage(self) -> float:
        return self.covered / self.n


@dataclass(frozen=True)
class AccuracyReport:
    """Everything the benchmark prints."""

    table: MfuPriorTable
    runs: list[PublishedRun]
    results: list[RunResult]
    summary: dict[str, Summary]
    """By method, over the runs the derivation uses: the set the targets are checked on."""
    all_usable_summary: dict[str, Summary]
    """By method, over every usable run."""
    by_generation: dict[str, dict[str, Summary]]
    """Generation id → method → summary, over every usable run on it."""
    by_class: dict[str, dict[str, Summary]]
    """Architecture class (dense, moe, encoder) → method → summary, over every usable run."""
    packaged_priors_current: bool
    notes: list[str] = field(default_factory=list)

    @property
    def missed(self) -> list[str]:
        """Each target a grouped-CV method misses, as 'method: figure'; empty when all met."""
        out = []
        for method in GROUPED.values():
            s = self.summary[method]
            if s.median_error > TARGETS["median_error"]:
                out.append(f"{LABELS[method]}: median error {s.median_error:.3f}")
            if s.coverage < TARGETS["coverage"]:
                out.append(f"{LABELS[method]}: coverage {s.coverage:.0%}")
            if s.median_width > TARGETS["median_width"]:
                # three decimals where two would round onto the target (2.504x, not 2.50x)
                places = 2 if round(s.median_width, 2) > TARGETS["median_width"] else 3
                out.append(f"{LABELS[method]}: median band width {s.median_width:.{places}f}x")
        return out


def _spec(run: PublishedRun, mfu: float | None = None) -> RunSpec:
    assert run.accelerator is not None and run.tokens is not None
    return RunSpec(
        params=run.params,
        active_params=run.active_params,
        tokens=run.tokens,
        gpu=run.accelerator.key,
        gpu_count=run.gpu_count or 1,  # GPU-hours do not depend on the count
        precision=run.precision,
        mfu=mfu,
        # The priors are end-to-end MFU at the runs' own layouts: no layout cost is charged on
        # top (estimates run without the memory check, which would choose one on one device).
        recompute="none",
    )


def _from_table(run: PublishedRun, table: MfuPriorTable) -> Estimate:
    """The estimate with the prior of ``table`` for this run's family, device and size."""
    assert run.gpu_hours is not None
    spec = _spec(run)
    prior = prior_from_table(table, spec.resolved_family, spec.accelerator,
                             spec.resolved_precision, params=spec.compute_params)
    hours = estimate_run(_spec(run, prior.central), check_memory=False).gpu_hours
    return Estimate(hours, hours * prior.central / prior.high,
                    hours * prior.central / prior.low, run.gpu_hours)


def _baselines(run: PublishedRun) -> dict[str, Estimate]:
    assert run.gpu_hours is not None
    reported = run.gpu_hours
    packaged = estimate_run(_spec(run), check_memory=False)
    peak = estimate_run(_spec(run, 1.0), check_memory=False).gpu_hours
    low, central, high = FLAT_BAND
    flat = estimate_run(_spec(run, central), check_memory=False).gpu_hours
    return {CALIBRATED: Estimate(packaged.gpu_hours, *packaged.gpu_hours_range, reported),
            PEAK: Estimate(peak, peak, peak, reported),
            FLAT: Estimate(flat, flat * central / high, flat * central / low, reported)}


def _held_out(runs: Sequence[PublishedRun], grouping: Grouping) -> dict[int, Estimate]:
    """Every usable run estimated with the whole derivation redone without its group."""
    usable = usable_runs(runs)
    out: dict[int, Estimate] = {}
    for group in sorted({r.group(grouping) for r in usable}):
        table = derive([r for r in runs if r.group(grouping) != group])
        out.update({id(r): _from_table(r, table) for r in usable if r.group(grouping) == group})
    return out


def _summary(method: str, ests: Sequence[Estimate]) -> Summary:
    return Summary(
        method=method,
        n=len(ests),
        median_error=statistics.median(e.error for e in ests),
        mean_error=statistics.fmean(e.error for e in ests),
        covered=sum(e.covered for e in ests),
        median_width=statistics.median(e.width for e in ests),
    )


def _summarise(results: Sequence[RunResult]) -> dict[str, Summary]:
    return {method: _summary(method, [r.estimates[method] for r in results])
            for method in METHODS}


def _split(results: Sequence[RunResult], key: Callable[[RunResult], str]) -> dict[
        str, dict[str, Summary]]:
    keys = sorted({key(r) for r in results},
                  key=lambda k: (-sum(key(r) == k for r in results), k))
    return {k: _summarise([r for r in results if key(r) == k]) for k in keys}


def _generation(result: RunResult) -> str:
    acc = result.run.accelerator
    return acc.generation if acc is not None else "?"


@cache
def run_benchmark(csv_path: Path = CSV_PATH) -> AccuracyReport:
    """Estimate every usable run of the calibration set with every method and summarise."""
    runs = load_runs(csv_path)
    held = {GROUPED[g]: _held_out(runs, g) for g in GROUPINGS}
    results = []
    for run in usable_runs(runs):
        assert run.gpu_hours is not None
        estimates = {method: by_run[id(run)] for method, by_run in held.items()}
        results.append(RunResult(run, run.gpu_hours, run.end_to_end_mfu,
                                 estimates | _baselines(run)))
    fallback = sorted({r.name for r in runs if not lineage(r.name).matched})
    notes = [
        "Error = |log10(estimated / reported GPU-hours)|: 0.1 is a factor of 1.26, 0.3 a factor "
        "of 2. Band width = high / low GPU-hours = high / low MFU.",
        "Grouped CV redoes the whole derivation without the held-out group (the form, the "
        "levels and the band factors, each chosen by grouped CV on the rest), so the band is "
        "never set on the runs it is scored on.",
        "Every method gets the same run spec, including the precision the authors state: an FP8 "
        "run is estimated at FP8, so the baselines' MFU applies to the FP8 peak and the "
        "calibrated prior is rescaled to it (FP8 speed-up 1.0–1.5x).",
        "The baselines are not fitted, so in-sample and held-out are the same for them.",
    ]
    if fallback:
        notes.append("Grouped by their names (no lineage in benchmarks/calibration_groups.py): "
                     + ", ".join(fallback) + ".")
    full = derive(runs)
    used = [r for r in results if r.run.used]
    return AccuracyReport(
        table=full, runs=runs, results=results, summary=_summarise(used),
        all_usable_summary=_summarise(results), by_generation=_split(results, _generation),
        by_class=_split(results, lambda r: r.run.architecture),
        packaged_priors_current=load_mfu_priors() == full, notes=notes,
    )


def accuracy_summary(csv_path: Path = CSV_PATH) -> dict[str, Summary]:
    """The summary over the runs the derivation uses, by method (:data:`METHODS`)."""
    return run_benchmark(csv_path).summary


def render(report: AccuracyReport) -> str:
    """The markdown the benchmark prints (:mod:`.accuracy_report`)."""
    from .accuracy_report import render as markdown

    return markdown(report)


def main(write: Callable[[str], object] = sys.stdout.write) -> int:
    report = run_benchmark()
    write(render(report))
    return 1 if report.missed else 0


if __name__ == "__main__":
    sys.exit(main())
