"""The calibrated MFU prior table: the priors published training runs give, and their record.

Dense and MoE transformers use priors calibrated on published training runs (``data/
mfu_priors.json``, derived by ``benchmarks/derive_priors.py`` from the packaged calibration set
``data/calibration_runs.csv``: papers, model cards and technical reports, each row with its
source and how its GPU-hours were derived). The rule, in one sentence: log10 of the *end-to-end*
MFU (6·N·T over reported GPU-hours × the BF16 dense peak) is one pooled level plus the terms
(:attr:`MfuPriorTable.form`) that lower the error on runs held out one organisation, then one
model family, at a time — a level per generation with at least ``min_runs`` dense runs, one size
slope in log10 of the active parameters shared by all generations (clamped to the calibration
runs' range), an MoE ratio (at most 1) — fitted robustly (soft-L1) to the published dense runs;
each prior's band covers ``coverage_target`` of those held-out runs, from the central ÷
:attr:`MfuPriorEntry.band_factor` to × :attr:`MfuPriorEntry.band_high_factor` (each end leaving
out at most half the rest; the slow side is the longer; wider for a class with few runs and for
the pooled fallback), its fast end no higher than :attr:`MfuPriorTable.highest_mfu`, the fastest
run the fit used. Encoder and encoder–decoder runs stay out of that fit; their own prior (family
``encoder``) is one level, their median end-to-end MFU in the same 6·N·T convention, with a band
holding every one of them (never narrower than the dense one).

:class:`MfuPriorTable` holds the fitted levels (:class:`MfuPriorEntry`, one per family and
generation, plus the pooled fallback), the slope and the bands, the candidate forms with their
held-out error (:class:`FormScore`), the end-to-end MFU the runs reached by generation and
family (:class:`ObservedMfu`, which replies quote with the count of runs), and the record of
every run used or left out (:class:`CalibrationRun`, :class:`SkippedRun`);
:func:`load_mfu_priors` reads the packaged table. The prior for a device is computed from it in
:mod:`.mfu`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ALL_GENERATIONS",
    "MIDDLE_SHARE",
    "MIN_MIDDLE_RUNS",
    "POOLED",
    "CalibratedFamily",
    "CalibrationRun",
    "FormScore",
    "MfuPriorEntry",
    "MfuPriorTable",
    "ObservedMfu",
    "PriorFamily",
    "SkippedRun",
    "generation_label",
    "load_mfu_priors",
    "observed_ranges",
]

CalibratedFamily = Literal["dense", "moe"]
"""Families the published runs' fit calibrates (a level per generation, the size slope)."""

PriorFamily = Literal["dense", "moe", "encoder"]
"""Families with a prior in the table: those of the fit, and encoders (one level, no terms)."""

POOLED = "pooled"
"""The ``generation`` of the priors pooled across all generations (the fallback)."""

ALL_GENERATIONS = "all"
"""The ``scope`` of an observed MFU range over every generation."""

MIDDLE_SHARE = 0.8
"""Share of the runs an observed range spans when there are enough of them (the middle 80%)."""

MIN_MIDDLE_RUNS = 10
"""Runs an observed range needs to quote its middle 80%; with fewer it spans all of them (the
lowest to the highest: a percentile of a handful of runs says less than the runs themselves)."""

_GENERATION_LABELS = {
    "volta": "Volta", "ampere": "Ampere", "ada": "Ada Lovelace", "hopper": "Hopper",
    "blackwell": "Blackwell", "cdna2": "CDNA 2 (MI250, MI250X)", "cdna3": "CDNA 3 (MI300)",
    "tpu-v3": "TPU v3", "tpu-v4": "TPU v4", "tpu-v5e": "TPU v5e", "tpu-v5p": "TPU v5p",
    "gaudi2": "Gaudi 2", "gaudi3": "Gaudi 3", "blackwell-ultra": "Blackwell Ultra",
    "cdna4": "CDNA 4 (MI350)", "tpu-v6e": "TPU v6e", "tpu-v7": "TPU7x", "trainium2": "Trainium2",
    "turing": "Turing",
}


def generation_label(generation: str) -> str:
    """A readable name for a catalog generation id: ``'hopper'`` → ``'Hopper'``."""
    return _GENERATION_LABELS.get(generation, generation)


class MfuPriorEntry(BaseModel):
    """One calibrated prior: a family on a generation (or pooled), against the BF16 dense peak."""

    model_config = ConfigDict(frozen=True)

    family: PriorFamily
    generation: str = Field(description="Catalog generation id, or 'pooled' for the fallback "
                                         "(and the encoder prior, one level for all).")
    central: float = Field(description="Default MFU (fraction of the BF16 dense peak).")
    low: float = Field(description="Low end of the band.")
    high: float = Field(description="High end of the band.")
    n_runs: int = Field(description="Number of published runs the prior rests on.")
    runs: tuple[str, ...] = Field(description="Names of those runs.")
    basis: str = Field(description="One sentence shown to the user.")
    source: str = Field(description="The calibration set and its date.")
    as_of: str = Field(description="Date of the calibration set (YYYY-MM-DD).")
    reference_params: float = Field(
        default=1e10, description="Active parameters at which central/low/high are quoted.")
    band_factor: float | None = Field(
        default=None,
        description="÷ factor from the central to the band's low end; None: the table's.")
    band_high_factor: float | None = Field(
        default=None,
        description="× factor from the central to the band's high end; None: band_factor (a "
                    "symmetric band, as older tables have).")


class ObservedMfu(BaseModel):
    """The end-to-end MFU published runs reached, computed from the calibration table."""

    model_config = ConfigDict(frozen=True)

    scope: str = Field(description="Catalog generation id, or 'all' for every generation.")
    label: str | None = Field(description="The generation's readable name; None for 'all'.")
    family: PriorFamily | None = Field(
        description="The family of the runs (dense, moe or encoder); None: dense and moe.")
    n_runs: int = Field(description="Published runs the range is computed from.")
    spread: Literal["middle_80", "all"] = Field(
        description="middle_80: low and high are the 10th and 90th percentiles (at least "
                    "MIN_MIDDLE_RUNS runs); all: the lowest and the highest run.")
    low: float = Field(description="Low end of the range (fraction of the BF16 dense peak).")
    high: float = Field(description="High end of the range (fraction of the BF16 dense peak).")
    highest: float = Field(description="The highest end-to-end MFU of these runs.")


class FormScore(BaseModel):
    """One candidate form of the prior and its grouped cross-validation error."""

    model_config = ConfigDict(frozen=True)

    terms: tuple[str, ...] = Field(
        description="Terms beyond one pooled level: generation, size, moe_ratio.")
    organisation_error: float = Field(
        description="Mean |log10 error| of held-out runs, one organisation left out at a time.")
    family_error: float = Field(
        description="Mean |log10 error| of held-out runs, one model family left out at a time.")
    kept: bool = Field(description="Whether this is the form the table uses.")


class CalibrationRun(BaseModel):
    """One published run of the calibration set as the derivation used it (for review)."""

    model_config = ConfigDict(frozen=True)

    name: str
    accelerator: str = Field(description="Catalog key the hardware text maps to.")
    generation: str
    family: CalibratedFamily
    fp8: bool = Field(description="Trained in FP8: its MFU against the BF16 peak is inflated.")
    end_to_end_mfu: float = Field(description="6·N·T / (GPU-hours · 3600 · BF16 dense peak).")
    params: float = Field(default=0.0, description="Active parameters N of the run.")
    fitted_mfu: float | None = Field(
        default=None, description="The prior's central for this run (in-sample), if used.")
    used: bool = Field(description="Whether the derivation used it.")
    architecture: str = Field(
        default="dense", description="dense, moe or encoder (encoder-only or encoder–decoder).")
    family_group: str = Field(default="", description="The model family (grouped CV).")
    organisation: str = Field(default="", description="Who trained it (grouped CV).")
    note: str = Field(description="Why it was left out, or what to keep in mind; '' if nothing.")


class SkippedRun(BaseModel):
    """A row of the calibration set that could not be used at all, and why."""

    model_config = ConfigDict(frozen=True)

    name: str
    reason: str


class MfuPriorTable(BaseModel):
    """The calibrated priors and the record of how they were derived."""

    model_config = ConfigDict(frozen=True)

    calibration_set: str = Field(description="What the priors are calibrated on.")
    as_of: str = Field(description="Date of the calibration set (YYYY-MM-DD).")
    rule: str = Field(description="The derivation rule in one sentence.")
    min_runs: int = Field(description="Dense runs a generation needs for its own prior.")
    coverage_target: float = Field(description="Share of runs the band factor covers.")
    band_factor: float = Field(description="÷ factor to the low end of the per-generation bands.")
    band_high_factor: float | None = Field(
        default=None, description="× factor to their high end; None: band_factor (symmetric).")
    pooled_band_factor: float = Field(description="÷ factor to the low end of the pooled bands.")
    pooled_band_high_factor: float | None = Field(
        default=None,
        description="× factor to their high end; None: pooled_band_factor (symmetric).")
    moe_ratio: float = Field(description="MoE prior / dense prior on the same generation.")
    highest_mfu: float | None = Field(
        default=None,
        description="End-to-end MFU of the fastest run the fit used: no prior's band reaches "
                    "above it (None: an older table, which caps at MAX_PRIOR_MFU).")
    size_slope: float = Field(
        default=0.0, description="Fitted change of log10 MFU per tenfold more active parameters.")
    reference_params: float = Field(
        default=1e10, description="Active parameters at which the generation levels are quoted.")
    params_range: tuple[float, float] = Field(
        default=(1e9, 1e12),
        description="Active-parameter range of the runs the fit used; the size term is clamped "
                    "to it.")
    form: tuple[str, ...] = Field(
        default=("generation", "size", "moe_ratio"),
        description="Terms the prior uses beyond one pooled level, chosen by grouped "
                    "cross-validation: generation, size, moe_ratio.")
    form_scores: tuple[FormScore, ...] = Field(
        default=(), description="Every candidate form's grouped cross-validation error.")
    observed_ranges: tuple[ObservedMfu, ...] = Field(
        default=(),
        description="End-to-end MFU of the runs used, by generation (and 'all') and by family "
                    "(dense, moe, or None for both), as :func:`observed_ranges` computes it.")
    priors: tuple[MfuPriorEntry, ...]
    runs: tuple[CalibrationRun, ...]
    skipped: tuple[SkippedRun, ...]

    def observed(self, generation: str = ALL_GENERATIONS,
                 family: CalibratedFamily | None = None) -> ObservedMfu | None:
        """The end-to-end MFU the runs the derivation used reached: those of ``family`` on
        ``generation``, else every family's on it, else ``family``'s on every generation, else
        every run's; None when the table records none."""
        for scope, kind in ((generation, family), (generation, None),
                            (ALL_GENERATIONS, family), (ALL_GENERATIONS, None)):
            for observed in self.observed_ranges:
                if observed.scope == scope and observed.family == kind:
                    return observed
        return None

    def encoder_observed(self) -> ObservedMfu | None:
        """The end-to-end MFU the encoder prior's runs reached, on every generation; None when
        the table has no encoder prior."""
        names = {name for e in self.priors if e.family == "encoder" for name in e.runs}
        values = [r.end_to_end_mfu for r in self.runs if r.name in names]
        return _observed_range(ALL_GENERATIONS, "encoder", values) if values else None

    def entry(self, family: PriorFamily, generation: str) -> MfuPriorEntry:
        """The prior for ``family`` on ``generation``, or the pooled one when it has none."""
        pooled: MfuPriorEntry | None = None
        for entry in self.priors:
            if entry.family != family:
                continue
            if entry.generation == generation:
                return entry
            if entry.generation == POOLED:
                pooled = entry
        if pooled is None:
            raise LookupError(f"no pooled {family} prior in the MFU prior table")
        return pooled


def _quantile(values: list[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default) of a non-empty list."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def observed_ranges(runs: tuple[CalibrationRun, ...]) -> tuple[ObservedMfu, ...]:
    """The observed range of the used runs for every generation (most runs first, then 'all')
    and every family (dense, moe, both) that has runs."""
    used = [r for r in runs if r.used]
    generations = sorted({r.generation for r in used},
                         key=lambda g: (-sum(r.generation == g for r in used), g))
    out = []
    for scope in [*generations, ALL_GENERATIONS]:
        for family in ("dense", "moe", None):
            values = [r.end_to_end_mfu for r in used
                      if scope in (ALL_GENERATIONS, r.generation) and family in (None, r.family)]
            if values:
                out.append(_observed_range(scope, family, values))
    return tuple(out)


def _observed_range(scope: str, family: PriorFamily | None,
                    values: list[float]) -> ObservedMfu:
    tail = (1 - MIDDLE_SHARE) / 2
    middle = len(values) >= MIN_MIDDLE_RUNS
    low, high = ((_quantile(values, tail), _quantile(values, 1 - tail)) if middle
                 else (min(values), max(values)))
    return ObservedMfu(
        scope=scope, label=None if scope == ALL_GENERATIONS else generation_label(scope),
        family=family, n_runs=len(values), spread="middle_80" if middle else "all",
        low=round(low, 2), high=round(high, 2), highest=round(max(values), 2))


@cache
def load_mfu_priors() -> MfuPriorTable:
    """Load the packaged calibrated priors (cached)."""
    text = resources.files("compute_budget.skill").joinpath("data/mfu_priors.json").read_text(
        encoding="utf-8"
    )
    return MfuPriorTable.model_validate(json.loads(text))
