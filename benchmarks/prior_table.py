"""One form of the MFU prior fitted to published runs, and the packaged table it makes.

log10 of the end-to-end MFU of a run is modelled as

    level (one per hardware generation with at least MIN_RUNS dense runs, else one pooled level)
    + slope × log10(active parameters / REFERENCE_PARAMS)          [the size term]
    + log10(MoE ratio) for a mixture of experts                     [the MoE ratio]

fitted robustly (soft-L1, scipy.optimize.least_squares) to the dense runs the derivation uses;
the MoE ratio is the median ratio of the MoE runs to the dense prior at their active parameters
(at most 1). Encoder and encoder–decoder runs (BERT, RoBERTa, T5 style) stay out of that fit and
get a prior of their own (:func:`encoder_level`): one level for every generation and size, their
median end-to-end MFU, in the same 6·N·T convention. A :class:`Form` says which terms are in;
:mod:`.grouped_cv` chooses the form and the band factors, :func:`build_table` assembles the table
the package reads (every entry with its sentence, the record of every run, the observed MFU range
of each generation).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from compute_budget.skill.hardware.mfu import FAMILY_PRIORS
from compute_budget.skill.hardware.mfu_table import (
    POOLED,
    CalibratedFamily,
    CalibrationRun,
    FormScore,
    MfuPriorEntry,
    MfuPriorTable,
    SkippedRun,
    generation_label,
    observed_ranges,
)

from .published_runs import EXCLUDED, PublishedRun

__all__ = [
    "AS_OF",
    "COVERAGE",
    "FORMS",
    "MIN_RUNS",
    "REFERENCE_PARAMS",
    "Band",
    "Bands",
    "Fit",
    "Form",
    "build_table",
    "encoder_level",
    "encoder_runs",
    "fit",
]

AS_OF = "2026-12-06"
"""Date of the calibration set (when its rows were last sourced)."""

MIN_RUNS = 3
"""Dense runs a generation needs for its own level; fewer and it borrows the nearest one's."""

COVERAGE = 0.85
"""Share of held-out runs the band covers under grouped cross-validation (issue 17)."""

REFERENCE_PARAMS = 1e10
"""Active parameters at which the generation levels are quoted (10B)."""

ROBUST_SCALE = 0.05
"""Soft-L1 scale of the fit, in log10 MFU (a factor of 1.12): residuals beyond it count less."""

SKILL_MOE_RATIO = FAMILY_PRIORS["moe"].central / FAMILY_PRIORS["dense"].central
"""The skill's MoE/dense ratio, used only if no published MoE run is usable."""

TERM_LABELS = {"generation": "a level per hardware generation", "size": "a size slope",
               "moe_ratio": "an MoE ratio"}


@dataclass(frozen=True)
class Form:
    """Which terms the prior has beyond one pooled level."""

    generation: bool = True
    size: bool = True
    moe_ratio: bool = True

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(t for t, on in (("generation", self.generation), ("size", self.size),
                                     ("moe_ratio", self.moe_ratio)) if on)

    @property
    def label(self) -> str:
        return " + ".join(TERM_LABELS[t] for t in self.terms) or "one pooled level"


FORMS = tuple(Form(g, s, m) for g in (False, True) for s in (False, True) for m in (False, True))
"""Every candidate form, from one pooled level to all three terms."""


@dataclass(frozen=True)
class Band:
    """A band around the central: ÷ ``down`` to its slow (low-MFU) end, × ``up`` to its fast
    end."""

    down: float = 1.5
    up: float = 1.5

    def widest(self, *others: Band) -> Band:
        """The band wide enough on each side for this one and ``others``."""
        bands = (self, *others)
        return Band(max(b.down for b in bands), max(b.up for b in bands))

    @property
    def phrase(self) -> str:
        """The band as the basis sentences quote it."""
        return f"÷ {self.down:g} to × {self.up:g}"


@dataclass(frozen=True)
class Bands:
    """The bands: dense runs on a calibrated generation, MoE runs, a generation without its
    own level (pooled or borrowed), and encoder runs."""

    dense: Band = Band()
    moe: Band = Band()
    pooled: Band = Band()
    encoder: Band = Band()


def encoder_runs(runs: Sequence[PublishedRun]) -> list[PublishedRun]:
    """The encoder and encoder–decoder runs the encoder prior rests on: usable, not FP8, not
    left out of the derivation for their hours (:data:`.published_runs.EXCLUDED`)."""
    return [r for r in runs if r.usable and r.architecture == "encoder"
            and r.precision != "fp8" and r.name not in EXCLUDED]


def encoder_level(runs: Sequence[PublishedRun]) -> float:
    """The encoder prior's MFU: the median end-to-end MFU of :func:`encoder_runs` (6·N·T over
    all parameters and tokens, as for a decoder), rounded as the other levels are."""
    return round(statistics.median(r.end_to_end_mfu for r in encoder_runs(runs)), 3)


def _x(run: PublishedRun) -> float:
    return math.log10(run.compute_params / REFERENCE_PARAMS)


def _y(run: PublishedRun) -> float:
    return math.log10(run.end_to_end_mfu)


def _generation(run: PublishedRun) -> str:
    if run.accelerator is None:
        raise ValueError(f"{run.name}: no catalog accelerator ({run.skip_reason})")
    return run.accelerator.generation


@dataclass(frozen=True)
class Fit:
    """The fitted terms of one form (log10 levels at REFERENCE_PARAMS)."""

    form: Form
    calibrated: dict[str, list[PublishedRun]]
    levels: dict[str, float]
    slope: float
    pooled_level: float
    moe_ratio: float
    dense: list[PublishedRun]
    moe: list[PublishedRun]
    by_generation: dict[str, list[PublishedRun]] = field(default_factory=dict)

    def predicted(self, run: PublishedRun) -> float:
        """log10 of the dense prior's central for ``run``'s generation and size, before the
        run-time fallback for a generation without its own level (the in-sample record)."""
        return self.levels.get(_generation(run), self.pooled_level) + self.slope * _x(run)


def _robust_fit(groups: dict[str, list[PublishedRun]], size: bool) -> tuple[
        dict[str, float], float]:
    """A log10 level per group and the shared slope (0 without the size term)."""
    names = sorted(groups)
    start = [statistics.median(_y(r) for r in groups[g]) for g in names]
    if not size:
        return dict(zip(names, start, strict=True)), 0.0
    rows = [(i, r) for i, g in enumerate(names) for r in groups[g]]
    design = np.zeros((len(rows), len(names) + 1))
    target = np.array([_y(r) for _, r in rows])
    for k, (i, r) in enumerate(rows):
        design[k, i] = 1.0
        design[k, -1] = _x(r)
    solution = optimize.least_squares(lambda b: design @ b - target, [*start, 0.0],
                                      loss="soft_l1", f_scale=ROBUST_SCALE).x
    return {g: float(solution[i]) for i, g in enumerate(names)}, float(solution[-1])


def fit(runs: Sequence[PublishedRun], form: Form) -> Fit:
    """Fit ``form`` to the runs the derivation uses among ``runs``."""
    used = [r for r in runs if r.used]
    dense = [r for r in used if r.family == "dense"]
    moe = [r for r in used if r.family == "moe"]
    if not dense:
        raise ValueError("no usable dense runs to calibrate on")
    by_generation: dict[str, list[PublishedRun]] = {}
    for run in dense:
        by_generation.setdefault(_generation(run), []).append(run)
    calibrated = ({g: rs for g, rs in by_generation.items() if len(rs) >= MIN_RUNS}
                  if form.generation else {})
    if calibrated:
        levels, slope = _robust_fit(calibrated, form.size)
        slope = round(slope, 3)
        pooled_level = statistics.median(_y(r) - slope * _x(r) for r in dense)
    else:
        pooled, slope = _robust_fit({POOLED: dense}, form.size)
        slope = round(slope, 3)
        levels, pooled_level = {}, pooled[POOLED]
    result = Fit(form, calibrated, levels, slope, pooled_level, 1.0, dense, moe, by_generation)
    if not form.moe_ratio:
        return result
    ratio = (min(1.0, statistics.median(10 ** (_y(r) - result.predicted(r)) for r in moe))
             if moe else SKILL_MOE_RATIO)
    return Fit(form, calibrated, levels, slope, pooled_level, round(ratio, 2), dense, moe,
               by_generation)


def _labels(generations: Sequence[str]) -> str:
    names = [generation_label(g) for g in generations]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _source(runs: Sequence[PublishedRun]) -> str:
    return (f"compute-budget calibration set calibration_runs.csv: {len(runs)} published training "
            "runs from papers, model cards and technical reports, GPU-hours as reported or "
            f"derived from device count × duration as each row says, {AS_OF}")


def _entry(family: CalibratedFamily, generation: str, central: float, band: Band,
           members: Sequence[PublishedRun], basis: str, source: str) -> MfuPriorEntry:
    return MfuPriorEntry(
        family=family, generation=generation, central=central,
        low=round(central / band.down, 3), high=round(central * band.up, 3), n_runs=len(members),
        runs=tuple(r.name for r in members), basis=basis, source=source, as_of=AS_OF,
        reference_params=REFERENCE_PARAMS, band_factor=band.down, band_high_factor=band.up)


_PEAK_NOTE = "6·N·T ÷ reported GPU-hours ÷ BF16 dense peak"
_HELD_OUT = "the published runs held out one organisation or model family at a time"


def _moe_clause(f: Fit) -> str:
    """How the MoE prior follows from the dense one, as the rest of a sentence."""
    gens = _labels(sorted({_generation(r) for r in f.moe})) if f.moe else ""
    if f.form.moe_ratio and f.moe:
        return (f"× {f.moe_ratio:.2f}, the median ratio of the {len(f.moe)} published BF16 MoE "
                f"runs (on {gens}) to the dense prior at their active parameters")
    if f.form.moe_ratio:
        return f"× {f.moe_ratio:.2f}, the skill's MoE-to-dense ratio (no published MoE run)"
    return (f"at the active parameters with no MoE ratio (the {len(f.moe)} published MoE runs, "
            f"on {gens}, do not support one under grouped cross-validation)")


def _moe_members(f: Fit, dense: Sequence[PublishedRun]) -> list[PublishedRun]:
    """The runs an MoE prior rests on: the dense ones, and the MoE runs only when their ratio is
    in the form (without it they set nothing, and a reply would count them as runs on a
    generation some of them did not run on)."""
    return [*dense, *f.moe] if f.form.moe_ratio else list(dense)


def _encoder_entry(runs: Sequence[PublishedRun], band: Band,
                   source: str) -> list[MfuPriorEntry]:
    """The encoder prior (module docstring), when the set has encoder runs."""
    members = encoder_runs(runs)
    if not members:
        return []
    central = encoder_level(runs)
    generations = _labels(sorted({_generation(r) for r in members},
                                 key=lambda g: (-sum(_generation(r) == g for r in members), g)))
    return [_entry(
        "encoder", POOLED, central, band, members,
        f"End-to-end MFU ({_PEAK_NOTE}, 6·N per token as for a decoder) of the {len(members)} "
        f"published encoder and encoder–decoder runs (BERT, RoBERTa, T5 style) on {generations}: "
        f"their median, {central:.2f}, one level for every device and size, with a band of "
        f"{band.phrase} that holds every one of them (too few runs for a held-out band; never "
        "narrower than the dense one).", source)]


def _entries(f: Fit, bands: Bands, source: str) -> list[MfuPriorEntry]:
    size_note = (f"at {REFERENCE_PARAMS / 1e9:g}B active parameters, ×{10 ** f.slope:.2f} per "
                 "tenfold more (one slope fitted across generations)" if f.form.size
                 else "whatever the model size")
    entries: list[MfuPriorEntry] = []
    for generation in sorted(f.calibrated, key=lambda g: -len(f.calibrated[g])):
        members, label = f.calibrated[generation], generation_label(generation)
        central = round(10 ** f.levels[generation], 3)
        entries.append(_entry(
            "dense", generation, central, bands.dense, members,
            f"End-to-end MFU ({_PEAK_NOTE}) fitted to the {len(members)} published dense runs "
            f"on {label}: {central:.2f} {size_note}, with a band of {bands.dense.phrase} that "
            f"covers {COVERAGE:.0%} of {_HELD_OUT}.", source))
        entries.append(_entry(
            "moe", generation, round(central * f.moe_ratio, 3), bands.moe, _moe_members(f, members),
            f"The {label} dense prior for MoE ({len(members)} published runs, {central:.2f} "
            f"{size_note}) {_moe_clause(f)}, with a band of {bands.moe.phrase}.", source))
    generations = _labels(sorted(f.by_generation, key=lambda g: -len(f.by_generation[g])))
    pooled = round(10 ** f.pooled_level, 3)
    entries.append(_entry(
        "dense", POOLED, pooled, bands.pooled, f.dense,
        f"End-to-end MFU ({_PEAK_NOTE}) of the {len(f.dense)} published dense runs pooled across "
        f"{generations}: {pooled:.2f} {size_note}, with a band of {bands.pooled.phrase} that "
        f"covers {COVERAGE:.0%} of {_HELD_OUT} with one level for every generation.", source))
    moe_band = bands.pooled.widest(bands.moe)
    entries.append(_entry(
        "moe", POOLED, round(pooled * f.moe_ratio, 3), moe_band, _moe_members(f, f.dense),
        f"The pooled dense prior for MoE ({len(f.dense)} published runs across {generations}, "
        f"{pooled:.2f} {size_note}) {_moe_clause(f)}, with a band of {moe_band.phrase}.",
        source))
    return entries


def _rule(form: Form) -> str:
    return (
        f"Default MFU = {form.label}, the form that predicts held-out runs best when each "
        "organisation or model family is left out in turn (a term is kept only if it lowers "
        "that error under both groupings); a generation with fewer than "
        f"{MIN_RUNS} dense runs takes the calibrated generation nearest in dense peak, or the "
        "pooled level when lower, with the pooled band; the size term is clamped to the "
        f"calibration range; bands that cover {COVERAGE:.0%} of the held-out runs, leaving out "
        "at most half the rest on each side (the slow side is the longer), wider for a class "
        "with few runs, their fast end no faster than the fastest run the fit used; end-to-end "
        "6·N·T over the BF16 dense peak, rescaled for FP8; encoder and encoder–decoder models: "
        "the median of their runs, with a band holding every one."
    )


def _record(run: PublishedRun, f: Fit) -> CalibrationRun:
    assert run.accelerator is not None
    fitted = None
    if run.used:
        ratio = f.moe_ratio if run.family == "moe" else 1.0
        fitted = round(10 ** f.predicted(run) * ratio, 4)
    return CalibrationRun(
        name=run.name, accelerator=run.accelerator.key, generation=run.accelerator.generation,
        family=run.family, fp8=run.precision == "fp8", end_to_end_mfu=round(run.end_to_end_mfu, 4),
        params=run.compute_params, fitted_mfu=fitted, used=run.used,
        architecture=run.architecture, family_group=run.group("family"),
        organisation=run.group("organisation"), note=run.note)


def build_table(runs: Sequence[PublishedRun], form: Form, bands: Bands = Bands(), *,
                scores: Sequence[FormScore] = (), record: bool = True) -> MfuPriorTable:
    """The prior table of ``form`` fitted to ``runs`` with ``bands``; ``record=False`` leaves
    out the per-run record (the cross-validation folds need only the priors)."""
    f = fit(runs, form)
    source = _source(runs)
    used = [r for r in runs if r.used]
    fit_runs = [r for r in used if not f.calibrated or _generation(r) in f.calibrated]
    sizes = [r.compute_params for r in fit_runs] or [REFERENCE_PARAMS]
    records = (tuple(_record(r, f) for r in runs if r.usable and r.accelerator is not None)
               if record else ())
    return MfuPriorTable(
        calibration_set=source, as_of=AS_OF, rule=_rule(form), min_runs=MIN_RUNS,
        coverage_target=COVERAGE, band_factor=bands.dense.down,
        band_high_factor=bands.dense.up, pooled_band_factor=bands.pooled.down,
        pooled_band_high_factor=bands.pooled.up,
        moe_ratio=f.moe_ratio, size_slope=f.slope, reference_params=REFERENCE_PARAMS,
        highest_mfu=round(max(r.end_to_end_mfu for r in used), 3),
        params_range=(min(sizes), max(sizes)), form=form.terms, form_scores=tuple(scores),
        priors=(*_entries(f, bands, source), *_encoder_entry(runs, bands.encoder, source)),
        observed_ranges=observed_ranges(records), runs=records,
        skipped=tuple(SkippedRun(name=r.name, reason=r.skip_reason)
                      for r in runs if r.skip_reason is not None) if record else (),
    )
